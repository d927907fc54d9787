"""Ctrl-C at any moment of a run's start-up: real ``python -m coopsim run``
processes sent SIGINT at points found by what they print, not by sleeps:

- while the command's own modules import (``-X importtime`` names each import as it ends: the
  signal follows the line of ``click``), where main printed a KeyboardInterrupt traceback;
- while the world loads (the line of the first ``coopsim.physics`` module), where click printed
  "Aborted!" and exited 1;
- just after the run started (the ``name server`` line), twice 0.1 s apart: the run ends with
  its summary and a complete recording; the same during a ``coopsim replay``: status 0.

Each ends with one line, no traceback, no "Aborted!", and the documented status (130 before the
run started, 0 with the summary after); the wait on each process only guards against a hang.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coopsim.recording.reader import Recording
from rechelpers import read_until

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "one_robot.scenario"
HANG_CAP = 60.0  # s: a run that does not end by then hangs (no timing is asserted)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _start(tmp_path: Path, *flags: str,
           command: tuple = ("run", str(SCENARIO), "--record", "run.mcap")) -> subprocess.Popen:
    """``coopsim COMMAND`` (a run of one robot, recording) until Ctrl-C, headless."""
    env = {**os.environ, "DISPLAY": ""}
    return subprocess.Popen(
        [sys.executable, *flags, "-m", "coopsim", *command, "--headless", "--port", "0"],
        cwd=tmp_path, env=env, text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)


def _until(proc: subprocess.Popen, pattern: str) -> list[str]:
    """The child's stderr up to the first line matching ``pattern`` (killed if none comes)."""
    try:
        return read_until(proc, pattern, HANG_CAP)
    except AssertionError:
        proc.kill()
        raise


def _end(proc: subprocess.Popen, seen: list[str]) -> tuple[str, str]:
    """Wait for the child (a hang fails); its stdout, and its whole stderr."""
    try:
        out, err = proc.communicate(timeout=HANG_CAP)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"the run did not end after Ctrl-C: {err[-2000:]}") from None
    return out, "".join(seen) + err


def _twice(proc: subprocess.Popen) -> tuple[str, str]:
    """Two Ctrl-C 0.1 s apart (the second of an impatient user: the interval is the point)
    once the command's ``name server`` line is out; its stdout and stderr, clean."""
    seen = _until(proc, r"^name server: tcp://")
    proc.send_signal(signal.SIGINT)
    time.sleep(0.1)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    out, err = _end(proc, seen)
    _clean(out, err)
    return out, err


def _clean(out: str, err: str) -> None:
    text = out + err
    assert "Traceback" not in text and "Aborted!" not in text, text[-3000:]
    assert "KeyboardInterrupt" not in text, text[-3000:]


@pytest.mark.parametrize("line", [r"\|\s+click$", r"\|\s+coopsim\.physics\."],
                         ids=["while the command imports", "while the world loads"])
def test_ctrl_c_before_the_run_starts_is_one_line_and_130(tmp_path, line):
    proc = _start(tmp_path, "-X", "importtime")
    seen = _until(proc, line)
    proc.send_signal(signal.SIGINT)
    out, err = _end(proc, seen)
    _clean(out, err)
    assert proc.returncode == 130, err[-2000:]
    assert err.rstrip().endswith("coopsim: interrupted (Ctrl-C)")
    assert "wall time" not in out  # the run never started: no summary


def test_two_ctrl_c_once_the_run_started_end_it_with_its_summary(tmp_path):
    proc = _start(tmp_path)
    out, err = _twice(proc)
    assert proc.returncode == 0, err[-2000:] + out[-2000:]  # docs/reliability.md: exit 0
    assert "wall time" in out and "steps" in out  # the summary
    with Recording(tmp_path / "run.mcap") as rec:  # closed with its summary and index
        assert rec.complete and rec.frame_count >= 1 and rec.check() == ()


def test_two_ctrl_c_during_a_replay_end_it_with_status_0(tmp_path):
    """``coopsim replay`` follows its player as a run is followed: the first Ctrl-C is a
    request its loop looks at, the second lands while the servers close and cuts nothing."""
    proc = _start(tmp_path, command=("replay", str(ROOT / "recordings" / "sample.mcap")))
    out, err = _twice(proc)
    assert proc.returncode == 0, err[-2000:] + out[-2000:]
    assert "interrupted" not in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["Ctrl-C", "SIGTERM"])
def test_a_command_that_catches_the_interrupt_still_ends_with_130(tmp_path, sig):
    """``coopsim gateway`` serves until Ctrl-C and catches the KeyboardInterrupt to close its
    server, as library code on any command's way may swallow one: the signal came outside a
    followed run, so the command ends as interrupted all the same (it exited 0)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "coopsim", "gateway", "tcp://127.0.0.1:9", "--json-port", "0"],
        cwd=tmp_path, text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    seen = _until(proc, r"^json gateway: ")
    proc.send_signal(sig)
    out, err = _end(proc, seen)
    _clean(out, err)
    assert proc.returncode == 130, err[-2000:]
    name = "Ctrl-C" if sig == signal.SIGINT else "SIGTERM"
    assert err.rstrip().endswith(f"coopsim: interrupted ({name})"), err[-2000:]


def test_a_signal_while_the_run_is_followed_raises_nothing_and_is_seen_by_the_loop():
    """Inside ``polled`` (the run's start and the loop following it) the first SIGINT only sets
    the request: a KeyboardInterrupt raised between two bytecodes of that loop could leave a
    stepper lock held or its clean-up half done. Outside, the first SIGINT raises."""
    from coopsim.app import interrupt

    previous, state = signal.getsignal(signal.SIGINT), dict(interrupt._STATE)
    signal.signal(signal.SIGINT, interrupt.on_signal)
    try:
        with interrupt.polled():
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the handler runs between two bytecodes of this loop
                pass
            assert interrupt.requested()
        interrupt._STATE.update(count=0, name="")
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
    finally:
        signal.signal(signal.SIGINT, previous)
        interrupt._STATE.clear()
        interrupt._STATE.update(state)
