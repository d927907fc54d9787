"""The transport leader in Octave (clients/octave/transport_leader.m) leads team1 through the
transport showcase with the other three robots on their in-process drivers: the same success,
and the very same delivery times as the Python driver it twins (lockstep makes the two
controllers' runs comparable step for step). It runs the showcase cut short (the teams start on
their last stretch, an obstacle between each and its goal): avoiding, arriving and stopping take
the same code as the whole run, at a quarter of the Octave time."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from usecasehelpers import ROOT, TRANSPORT_SHORT, coopsim, run_to_end, stepper

OCTAVE = "octave-cli --no-history --quiet --no-init-file"

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module")
def octave():
    """Octave with its zeromq package; skipped (failed in CI, which installs it) without."""
    why = ""
    if shutil.which("octave-cli") is None:
        why = "octave-cli not installed"
    elif subprocess.run(["octave-cli", "--eval", "pkg load zeromq"], capture_output=True,
                        timeout=60).returncode:
        why = "Octave's zeromq package does not load (octave-zeromq)"
    if why and os.environ.get("CI"):
        pytest.fail(f"{why}; CI must have it (see .ci/run)")
    if why:
        pytest.skip(why)


def test_the_octave_leader_delivers_team1s_bar_as_the_python_driver_does(octave):
    _, python = run_to_end(stepper(TRANSPORT_SHORT))
    leader = (f"team1_leader={OCTAVE} -p {ROOT / 'clients' / 'octave'} "
              f"--eval 'transport_leader team1_leader magenta 0.32'")
    proc = coopsim("run", TRANSPORT_SHORT, "--headless", "--port", "0", "--controller", leader,
                   timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ended = next(line for line in proc.stdout.splitlines() if line.startswith("ended"))
    assert python.startswith("transport: PASS:"), python
    assert ended.split(None, 1)[1] == python  # PASS, with the same times to 0.1 s
    assert "controller of" not in proc.stdout  # it neither crashed, hung nor got errors
