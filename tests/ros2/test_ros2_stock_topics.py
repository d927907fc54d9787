"""``coopsim run --ros2`` to stock ROS 2: a plain rclpy node from the ``ros-*`` wheels (Kilted on
Fast DDS 3, Jazzy on Fast DDS 2; tests/ros2/rclprobe.py, nothing of coopsim in its process)
finds the node ``/coopsim`` and every topic with its type, receives odometry equal to the robot's
state and scans equal to the ranging module's, the map as a late joiner, and drives a robot
with its own Twists. The 3D topics (imu, joint states, camera images and their CameraInfo,
point clouds) and the squads' feedback wrench are in test_ros2_stock_sensors.py.

No ``tf2_msgs`` wheel exists for either distribution, so no stock node here can subscribe
``/tf`` or ``/tf_static``: they are checked in the graph (name and type), and their payloads by
the DDS peer of test_ros2_bridge.py and by rosbags (test_bag.py).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")
pytest.importorskip("tests.ros2.rosnode", reason="tests/ros2/rosnode.py (the ROS 2 harness) "
                    "is not in this checkout")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.specs import ParamSetting  # noqa: E402
from coopsim.ros2.scene import _scanner  # noqa: E402
from tests.nethelpers import SCENARIOS, live  # noqa: E402
from tests.ros2.rosnode import RosNode, domain, ros_distro  # noqa: E402,F401 - a fixture

ODOM, SCAN = "nav_msgs/msg/Odometry", "sensor_msgs/msg/LaserScan"
GRID = "nav_msgs/msg/OccupancyGrid"
TWIST, CLOCK, TF = "geometry_msgs/msg/Twist", "rosgraph_msgs/msg/Clock", "tf2_msgs/msg/TFMessage"


@pytest.fixture(scope="module")
def stock(ros_distro):
    """A paused realtime demo run with --ros2 (the test steps it) and a stock rclpy node of
    the distribution on the same domain. Odometry, /tf and /clock go out every step (the
    bridge's rate at the demo's 100 Hz), and robot1's scan too (its sonar's rate): a step
    that publishes none would cost :func:`step_until` its whole wait for a message that
    never comes."""
    name, python = ros_distro
    dom = domain() + (3 if name == "jazzy" else 2)  # apart from the other ROS 2 modules'
    spec = load(str(SCENARIOS / "demo.scenario"))
    every = (ParamSetting("sonar", "rate", 100.0),)
    spec = dataclasses.replace(spec, robots=tuple(
        dataclasses.replace(r, params=r.params + every) if r.name == "robot1" else r
        for r in spec.robots))
    with live(spec, paused=True, ros2=True,
              ros2_domain=dom, ros2_rate=100.0, duration=600.0) as run, RosNode(python, domain=dom) as node:
        yield run, node


def ns_of(snap) -> int:
    return round(snap.time * 1e9)


def stamp(msg) -> int:
    s = msg["header"]["stamp"] if "header" in msg else msg["clock"]
    return s["sec"] * 1_000_000_000 + s["nanosec"]


def step_until(run, node, topic: str, tries: int = 60):
    """Step the paused run one step at a time until ``topic`` brings the message of the
    step just taken: (snapshot, message)."""
    for _ in range(tries):
        node("clear", topic=topic)
        before = run.stepper.snapshot.step
        run.stepper.step(1)
        snap = run.stepper.wait_step(before, 30.0)
        assert snap is not None, "the run took no step"
        got = node("take", topic=topic, n=1, timeout=2.0)["msgs"]
        if got and stamp(got[-1]) == ns_of(snap):
            return snap, got[-1]
    raise AssertionError(f"{topic}: no message of the step just taken in {tries} steps")


def test_coopsim_is_a_node_and_every_topic_has_its_type(stock):
    run, node = stock
    graph = node("graph", wait_node="/coopsim", wait_topic="/robot4/scan", timeout=60)
    assert "/coopsim" in graph["nodes"], graph["nodes"]
    topics = graph["topics"]
    expect = {"/clock": CLOCK, "/tf": TF, "/tf_static": TF, "/map": GRID}
    for r in ("robot1", "robot2", "robot3", "robot4"):
        expect.update({f"/{r}/odom": ODOM, f"/{r}/scan": SCAN, f"/{r}/cmd_vel": TWIST})
    for topic, kind in expect.items():
        assert topics.get(topic) == [kind], (topic, sorted(topics))


def test_the_map_reaches_a_late_joiner(stock):
    run, node = stock
    node("sub", topic="/map", type=GRID, transient=True, depth=1)
    msg = node("take", topic="/map", n=1, timeout=60)["msgs"][0]
    grid = run.ros2._scene[1].occupancy
    info = msg["info"]
    assert (info["width"], info["height"]) == (grid.cells.shape[1], grid.cells.shape[0])
    assert info["resolution"] == pytest.approx(grid.resolution)
    assert (info["origin"]["position"]["x"], info["origin"]["position"]["y"]) == \
        pytest.approx(grid.origin)
    assert msg["data"] == np.asarray(grid.cells, np.int8).ravel().tolist()
    assert msg["header"]["frame_id"] == "map"


def test_twists_from_rclpy_drive_and_odometry_equals_the_state(stock):
    run, node = stock
    node("sub", topic="/robot2/odom", type=ODOM)
    start = run.stepper.snapshot
    node("pub", topic="/robot2/cmd_vel", type=TWIST, count=40, period=0.05,
         msg={"linear": {"x": 0.3}, "angular": {"z": 0.6}})  # as a node does: again and again
    applied = lambda: run.ros2.counts.by_robot.get("robot2", 0)  # noqa: E731
    for _ in range(30):  # the Twist arrives on Cyclone's thread: steps until it is in
        if applied():
            break
        step_until(run, node, "/robot2/odom")
    for _ in range(20):
        snap, odom = step_until(run, node, "/robot2/odom")
    assert applied() >= 1, run.ros2.state()
    row = snap.index["robot2"]
    x, y, yaw = snap.poses[row]
    assert math.hypot(x - start.poses[row, 0], y - start.poses[row, 1]) > 0.01  # it moved
    ox, oy, oyaw = run.ros2._origins["robot2"]  # /tf_static's map -> robot2/odom
    p, q = odom["pose"]["pose"]["position"], odom["pose"]["pose"]["orientation"]
    c, s = math.cos(oyaw), math.sin(oyaw)
    assert ox + p["x"] * c - p["y"] * s == pytest.approx(x, abs=1e-9)
    assert oy + p["x"] * s + p["y"] * c == pytest.approx(y, abs=1e-9)
    odom_yaw = 2 * math.atan2(q["z"], q["w"])
    assert math.remainder(oyaw + odom_yaw - yaw, 2 * math.pi) == pytest.approx(0, abs=1e-9)
    vx, vy, w = snap.velocities[row]
    t = odom["twist"]["twist"]
    assert t["linear"]["x"] == pytest.approx(vx * math.cos(yaw) + vy * math.sin(yaw), abs=1e-9)
    assert t["linear"]["y"] == pytest.approx(-vx * math.sin(yaw) + vy * math.cos(yaw), abs=1e-9)
    assert t["angular"]["z"] == pytest.approx(w, abs=1e-9)
    assert (odom["header"]["frame_id"], odom["child_frame_id"]) == \
        ("robot2/odom", "robot2/base_link")


def test_scans_equal_the_ranging_modules(stock):
    run, node = stock
    node("sub", topic="/robot1/scan", type=SCAN)
    snap, msg = step_until(run, node, "/robot1/scan")
    scan = run.ros2._scene[1]
    robot = next(r for r in scan.robots if r.name == "robot1")
    s = robot.scans[0]
    want = _scanner(s.label).laser_scan(snap, "robot1", s.params, robot.radius)
    got = np.array([float(v) for v in msg["ranges"]], np.float32)
    assert got.tolist() == np.asarray(want.ranges, np.float32).tolist()
    assert msg["angle_min"] == pytest.approx(want.angle_min, abs=1e-6)
    assert msg["angle_increment"] == pytest.approx(want.increment, abs=1e-6)
    assert msg["header"]["frame_id"] == "robot1/laser"
    assert np.isfinite(got).sum() > 0  # the demo's walls are within range of some beams


def test_clock_is_the_sim_time(stock):
    run, node = stock
    node("sub", topic="/clock", type=CLOCK)
    for _ in range(3):  # a /clock of each step it goes out at (50 Hz of sim time)
        snap, clock = step_until(run, node, "/clock")
        assert stamp(clock) == ns_of(snap)
