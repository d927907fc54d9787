"""A flying external robot over real sockets (example 4d): a stand-in
process (examples/in-the-loop/flyer.py, its own clock) streams its full pose at 100 Hz, 1 m up
and rolled 20 degrees; on the mujoco engine the snapshot's pose3d is the streamed one to 1 mm
and 0.1 degree, the robot's altimeter read over the protocol casts along its tilted -z from
there, and when the process stops the robot goes stale (the scenario's rule ends the run on
it) and stays held where it was."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from coopsim.client.connection import Client
from coopsim.formats.files import load
from coopsim.model.plugins import RULES
from coopsim.plugins.rules.external import External

from helpers import finishes
from nethelpers import ROOT, live, wait_until

EXAMPLES = ROOT / "examples" / "in-the-loop"
ROLL = math.radians(20.0)
POSE = np.array([0.0, 0.0, 1.0, math.cos(ROLL / 2), math.sin(ROLL / 2), 0.0, 0.0])

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def held_at(snap, pose) -> bool:
    got = snap.pose3d[snap.index["flyer"]]
    turn = math.degrees(2 * math.acos(min(1.0, abs(float(np.dot(got[3:], pose[3:]))))))
    return bool(np.abs(got[:3] - pose[:3]).max() < 1e-3 and turn < 0.1)


def test_a_streamed_flyer_is_held_at_its_height_and_roll_and_reads_from_there():
    if "external" not in RULES:  # the rule by hand until coopsim is installed again
        RULES.put("external", External)
    with live(load(EXAMPLES / "flying_external.scenario")) as run:
        proc = subprocess.Popen([sys.executable, str(EXAMPLES / "flyer.py"), "--nameserver",
                                 run.network.endpoint, "--seconds", "20"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                cwd=EXAMPLES)
        try:
            wait_until(lambda: run.stepper.sim.external.state()["robots"]["flyer"][
                "received"] >= 20)
            snap = run.stepper.wait_step(run.stepper.snapshot.step + 2, 30.0)
            assert held_at(snap, POSE)
            with Client(run.network.endpoint) as client:
                height = client.robot("flyer").altimeter.read()[0]
        finally:
            proc.kill()
            out = proc.communicate()[0]
        assert "refused" not in out
        # along the body's -z, tilted 20 degrees: the floor 1 m down is 1 / cos 20 m away
        # from the centre, less the underside's few millimetres
        assert 1.0 / math.cos(ROLL) - 0.05 < height < 1.0 / math.cos(ROLL), height
        # the stream stopped: stale, and the scenario's external rule ends the run on it
        assert finishes(run.stepper), "the run never ended"
        assert "flyer went stale" in run.stepper.finished, run.stepper.finished
        assert run.stepper.sim.external.state()["robots"]["flyer"]["status"] == "stale"
        assert held_at(run.stepper.snapshot, POSE)  # held where it was, not fallen
