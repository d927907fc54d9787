"""A user maps someone else's sensor to ROS 2 without editing it: the adapter docs/plugins.md
shows, registered for a third-party range finder, makes the ROS 2 scene publish its /R/scan
(a real sensor_msgs/LaserScan, decoded by rosbags)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from coopsim.model.capabilities import LaserScanner, unregister_adapter
from coopsim.model.commands import Command
from coopsim.model.module import Module
from coopsim.model.params import ParamSpec
from coopsim.model.plugins import MODULES
from coopsim.ros2.scene import RosScene
from coopsim.sim.simulation import Simulation
from helpers import chassis_type, robot, scenario

rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) decodes the messages")
from rosbags.typesys import Stores, get_typestore  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LABEL = "ranger_caps_test"


class Ranger(Module):
    """Someone else's sensor: five distances (m), no ROS 2 hook of its own."""

    label = LABEL
    params = (ParamSpec("max_range", "float", "farthest distance, m", 3.0, 0.1, 10.0, "m"),)
    commands = (Command(9725, "read", LABEL, kind="read", doc="5 distances, m"),)
    fields = tuple(f"d{i}" for i in range(5))

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return np.minimum(np.array([[0.5, 1.0, 1.5, 2.0, 2.5]]).repeat(len(rows), 0),
                          p["max_range"][:, None])


if LABEL not in MODULES:
    MODULES.register(LABEL)(Ranger)
Rover = chassis_type("rover_caps_test", ("motors", LABEL))


def _doc_adapter() -> str:
    """The adapter example of docs/plugins.md, for this test's sensor."""
    text = (ROOT / "docs" / "plugins.md").read_text()
    block = re.search(r"```py\n(from coopsim.model.capabilities import LaserScan.*?)```", text,
                      flags=re.S).group(1)
    assert 'register_adapter(LaserScanner, "ranger", RangerScan)' in block
    return block.replace('"ranger"', f'"{LABEL}"')


def test_the_docs_adapter_makes_a_third_party_sensor_a_ros2_scan():
    sim = Simulation(scenario([robot("r1", 0.0, 0.0, type=Rover.label)]))
    sim.sense()
    snap, world = sim.snapshot, sim.world
    params = {r.name: {k: v.as_dict() for k, v in r.modules.items()} for r in world.robots}
    assert RosScene(world.describe(), snap, params).robots[0].scans == []   # not a scanner
    exec(_doc_adapter(), {})
    try:
        scene = RosScene(world.describe(), snap, params)
        scans = scene.robots[0].scans
        assert [(s.label, s.topic, s.frame) for s in scans] == [(LABEL, "/r1/scan", "r1/laser")]
        msg = get_typestore(Stores.ROS2_HUMBLE).deserialize_cdr(
            dict(scene.scans(snap, 5, every=True))["/r1/scan"], "sensor_msgs/msg/LaserScan")
        radius = world.robots[0].radius
        want = (snap.reading("r1", LABEL) + radius).astype(np.float32)
        assert np.array_equal(msg.ranges, want)
        assert msg.angle_min == pytest.approx(-0.6) and msg.angle_increment == pytest.approx(0.3)
        assert msg.range_max == pytest.approx(3.0 + radius)
    finally:
        unregister_adapter(LaserScanner, LABEL)
    assert RosScene(world.describe(), snap, params).robots[0].scans == []
