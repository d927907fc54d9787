"""benchmarks/suite/common.flyers, the world every Crazyflie case and the crazyflow duel time:
its drones take off and hold their hover at 1 m for 10 s of sim time, so a case never times
drones lying on the floor (with the ``flight`` driver at 100 Hz they oscillated from about
2.5 s and fell at about 5.5 s); the peer's side of the duel flies the same hover."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from suite.common import build, flyers  # noqa: E402
import pytest


@pytest.mark.slow
def test_the_benchmark_crazyflies_hold_their_hover_for_10_s():
    stepper = build(flyers(4), warm=1)
    lowest, tilt = np.inf, 0.0
    while stepper.snapshot.time < 10.0:
        snap = stepper.tick()
        if snap.time > 2.0:  # taken off
            pose = snap.pose3d[:, :7]
            lowest = min(lowest, float(pose[:, 2].min()))
            tilt = max(tilt, float(np.abs(pose[:, 4:6]).max()))  # quaternion x, y
    z = stepper.snapshot.pose3d[:, 2]
    assert np.abs(z - 1.0).max() < 0.05, z  # at 1 m after 10 s
    assert lowest > 0.95 and tilt < 0.01, (lowest, tilt)  # held all along, level
