"""What ROS 2 sees of a robot's modules, from the modules' own hooks: the TurtleBot3's lidar is
its /R/scan (360 beams, at the lidar's rate, from its mounting point), decoded by rosbags; a
Twist drives the motors by the module's rules."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from coopsim.formats.files import load
from coopsim.ros2 import messages as m
from coopsim.ros2.drive import TwistRefused, drive_of
from coopsim.ros2.scene import RosScene
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) decodes the messages")
from rosbags.typesys import Stores, get_typestore  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STORE = get_typestore(Stores.ROS2_HUMBLE)


@pytest.fixture(scope="module")
def turtlebot():
    stepper = Stepper(Simulation(load(str(ROOT / "scenarios" / "turtlebot3_wall_follow.scenario"))),
                      mode="lockstep")
    for _ in range(30):
        stepper.tick()
    world = stepper.sim.world
    params = {r.name: {k: v.as_dict() for k, v in r.modules.items()} for r in world.robots}
    return stepper, world, params


def test_the_lidar_is_the_turtlebots_scan(turtlebot):
    stepper, world, params = turtlebot
    snap = stepper.snapshot
    scene = RosScene(world.describe(), snap, params)
    robot = scene.robots[0]
    assert robot.scans[0].label == "lidar" and robot.scans[0].topic == "/tb3/scan"
    assert robot.scans[0].period == pytest.approx(1 / params["tb3"]["lidar"]["rate"])
    out = dict(scene.scans(snap, 123, every=True))
    msg = STORE.deserialize_cdr(out["/tb3/scan"], "sensor_msgs/msg/LaserScan")
    scan = snap.extra["lidar"].of("tb3")
    assert len(msg.ranges) == len(scan) == params["tb3"]["lidar"]["beams"]
    reach = params["tb3"]["lidar"]["max_range"]
    want = np.where(scan >= reach - 1e-9, np.inf, scan).astype(np.float32)
    assert np.array_equal(msg.ranges, want)
    assert math.isclose(msg.range_max, reach, rel_tol=1e-6)
    assert msg.header.frame_id == "tb3/laser"


def test_a_twist_becomes_wheel_speeds_by_the_motors_rules(turtlebot):
    _, world, params = turtlebot
    robot = world.robots[0]
    drive = drive_of(robot, params[robot.name])
    assert drive is not None and drive.module == "motors"
    left, right = drive.command((0.1, 0.0, 0.0), (0.0, 0.0, 0.5), 0.0)
    assert right - left == pytest.approx(0.5 * robot.axle)
    assert (left + right) / 2 == pytest.approx(0.1)
    with pytest.raises(TwistRefused):
        drive.command((500.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0)
    with pytest.raises(TwistRefused):
        drive.command((math.nan, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0)
    assert m.ODOMETRY == "nav_msgs/Odometry"


def _declared(topic: str, robots) -> str:
    """``topic`` as :data:`coopsim.ros2.bridge.TOPICS` names it (``/R/...``, ``/R/scan_LABEL``)."""
    for r in robots:
        if topic.startswith(f"/{r.ns}/"):
            topic = "/R/" + topic[len(r.ns) + 2:]
    return re.sub(r"^/R/scan_\w+$", "/R/scan_LABEL", topic)


def test_every_topic_the_scene_publishes_is_declared_with_its_type(turtlebot):
    from coopsim.ros2.bridge import TOPICS  # docs/reference/ros2.md is generated from it
    stepper, world, params = turtlebot
    scene = RosScene(world.describe(), stepper.snapshot, params)
    declared = {t.name: t.type for t in TOPICS if not t.subscribed}
    published = {_declared(topic, scene.robots): kind for topic, kind in scene.topics()}
    assert {"/R/odom", "/R/scan", "/clock", "/tf", "/map"} <= set(published)
    assert {t: k for t, k in published.items() if declared.get(t) != k} == {}
    assert _declared("/tb3/scan_sonar", scene.robots) == "/R/scan_LABEL"
