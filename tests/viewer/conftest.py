"""The viewer tests' X server: one private Xvfb for the whole session.

pyglet keeps its connection to the first display it opened for the life of the process, so
every viewer test module must use the same X server (a second one, after the first was stopped,
would leave pyglet talking to a dead display, which ends the process).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@pytest.fixture(scope="session")
def display():
    """A private Xvfb display for the session (DISPLAY restored afterwards)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb; .ci/run installs it)")
    number = next(n for n in range(90, 400) if not Path(f"/tmp/.X11-unix/X{n}").exists()
                  and not Path(f"/tmp/.X{n}-lock").exists())
    proc = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "1280x900x24", "-nolisten",
                             "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{number}").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "Xvfb did not start"
        time.sleep(0.05)
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{number}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield f":{number}"
    if old is None:
        os.environ.pop("DISPLAY", None)
    else:
        os.environ["DISPLAY"] = old
    proc.terminate()
    try:  # a loaded machine may keep it busy past the grace period
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
