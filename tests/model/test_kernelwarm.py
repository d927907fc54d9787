"""The suite's warm-up (tests/kernelwarm.py) ends on SIGTERM: coopsim's command line, which
its benchmark parts run in process, makes the signal an interrupt, and the warm-up lets the
interrupt through rather than going on with its next part."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent
SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def _catches_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGTERM (its SigCgt mask, /proc)."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & SIGTERM_BIT)
    return False


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_ends_the_warm_up_with_the_interrupts_exit_status():
    path = os.pathsep.join((str(HERE.parent), os.environ.get("PYTHONPATH", "")))
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.Popen([sys.executable, str(HERE / "kernelwarm.py"), "bench:kinematic",
                             "bench:aerial"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        # the first benchmark's command line has installed the handler: the signal is an
        # interrupt from now on (before, SIGTERM's default ends the process all the same)
        while proc.poll() is None and not _catches_sigterm(proc.pid):
            time.sleep(0.01)
        assert proc.poll() is None, proc.stderr.read()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(600)  # a hang guard: the warm-up has four benchmarks left at most
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, err
