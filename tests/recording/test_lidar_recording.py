"""Readings at their own rate in a recording (format 2): a 5 Hz, 360-beam lidar swarm's scans
are recorded once per scan, compactly, and read back to the millimetre."""

import numpy as np
import pytest

from coopsim.recording.reader import Recording

from helpers import robot, scenario
from rechelpers import record


def _bots(n, rate):
    return [robot(f"t{i}", -4 + 0.5 * i, 0.0, type="turtlebot3",
                  params=[("lidar", "rate", rate)]) for i in range(n)]


def test_scans_are_recorded_once_each_at_their_rate_and_read_back(tmp_path):
    spec = scenario(_bots(10, 5.0), dt=0.02)
    path = tmp_path / "lidar.mcap"
    _, snaps = record(path, 40, spec=spec)
    rec = Recording(path)
    got = {}  # (robot, step taken) -> scan
    for frame in rec.iter_frames():
        scans = frame.modules.get("lidar")
        if not scans:
            continue
        mm = np.frombuffer(scans["mm"], dtype="<i4") / 1000.0
        at = 0
        for name, step, beams in zip(scans["robots"], scans["steps"], scans["beams"]):
            assert (name, step) not in got  # each scan once
            got[(name, step)] = mm[at:at + beams]
            at += beams
    # every robot scanned at load (step 0) and then every 10 steps: 40 steps -> 5 scans each
    assert len(got) == 10 * 5
    for snap in snaps:  # what the live run published matches, to the millimetre
        taken = snap.extra["taken"].steps["lidar"]
        for i, name in enumerate(snap.robots):
            if taken[i] == snap.step:
                assert got[(name, snap.step)] == pytest.approx(
                    snap.extra["lidar"].of(name), abs=0.0005)
