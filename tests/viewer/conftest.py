"""The viewer tests' X server: one private Xvfb for the whole session.

pyglet keeps its connection to the first display it opened for the life of the process, so
every viewer test module must use the same X server (a second one, after the first was stopped,
would leave pyglet talking to a dead display, which ends the process).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from xvfbhelpers import start_xvfb, stop_xvfb

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@pytest.fixture(scope="session")
def display():
    """A private Xvfb display for the session (DISPLAY restored afterwards)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb; .ci/run installs it)")
    proc, name = start_xvfb(xvfb)
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = name
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield name
    if old is None:
        os.environ.pop("DISPLAY", None)
    else:
        os.environ["DISPLAY"] = old
    stop_xvfb(proc)
