"""The 3D topics of ``coopsim run --ros2`` to stock ROS 2 (rclpy from the ``ros-*`` wheels,
Kilted on Fast DDS 3 and Jazzy on Fast DDS 2; tests/ros2/rclprobe.py): in one mujoco run, the
shared-control example's three crazyflies (``cf1``'s and ``cf2``'s cameras publishing), an
``irb120`` arm and a turtlebot3 whose lidar casts 4 channels: ``/cf1/imu`` equal to the imu
module's reading, ``/irb/joint_states`` equal to the arm's angles, ``/cf1/camera3d/image_raw``
(``rgb8``) and ``/depth`` (``32FC1``) equal to the camera's images with their CameraInfo (and
``cf2``'s depth to a reader made after the images flowed), ``/tb/points``
(``sensor_msgs/PointCloud2``) equal to the lidar's points, and ``/squads/flock/feedback`` equal
to the squad's feedback force."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")
pytest.importorskip("mujoco")
pytest.importorskip("tests.ros2.rosnode", reason="tests/ros2/rosnode.py (the ROS 2 harness) "
                    "is not in this checkout")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.armstate import joint_angles  # noqa: E402
from coopsim.model.images import intrinsics  # noqa: E402
from coopsim.model.plugins import MODULES  # noqa: E402
from coopsim.model.specs import ParamSetting, RobotSpec  # noqa: E402
from tests.nethelpers import live  # noqa: E402
from tests.ros2.rosnode import RosNode, domain, ros_distro  # noqa: E402,F401 - a fixture
from tests.ros2.test_ros2_stock_topics import ns_of, stamp, step_until  # noqa: E402

EXAMPLE = "examples/shared-control/shared_flight.scenario"
W, H = 32, 24  # the camera's image, pixels
IMU, JOINTS = "sensor_msgs/msg/Imu", "sensor_msgs/msg/JointState"
IMAGE, INFO = "sensor_msgs/msg/Image", "sensor_msgs/msg/CameraInfo"
CLOUD, WRENCH = "sensor_msgs/msg/PointCloud2", "geometry_msgs/msg/WrenchStamped"


def _spec():
    spec = load(EXAMPLE)
    cam = tuple(ParamSetting("camera3d", k, v) for k, v in
                (("publish", 1), ("width", W), ("height", H), ("rate", 50), ("depth", 1)))
    robots = [dataclasses.replace(r, params=r.params + cam) if r.name in ("cf1", "cf2") else r
              for r in spec.robots]
    robots.append(RobotSpec("irb120", "irb", (1.5, 1.5, 0.0)))
    lidar = tuple(ParamSetting("lidar", k, v) for k, v in (("channels", 4), ("rate", 100)))
    robots.append(RobotSpec("turtlebot3", "tb", (1.5, -1.5, 0.0), params=lidar))
    return dataclasses.replace(spec, robots=tuple(robots))


@pytest.fixture(scope="module")
def sensed(ros_distro):
    name, python = ros_distro
    dom = domain() + (5 if name == "jazzy" else 4)
    with live(_spec(), paused=True, ros2=True, ros2_domain=dom, ros2_rate=500.0,
              duration=600.0) as run, RosNode(python, domain=dom) as node:
        # the camera's readers before its first image (before the bridge's writers); a
        # reader made once the images flow, by a second node, is the depth test's below
        for topic, kind in (("image_raw", IMAGE), ("depth", IMAGE), ("camera_info", INFO)):
            node("sub", topic=f"/cf1/camera3d/{topic}", type=kind, keep=50)
        yield run, node


def test_imu_equals_the_imu_modules_reading(sensed):
    run, node = sensed
    node("sub", topic="/cf1/imu", type=IMU)
    snap, msg = step_until(run, node, "/cf1/imu")
    row = snap.index["cf1"]
    names, reading = snap.fields["imu"], snap.readings["imu"][row]
    got = dict(zip(names, reading.tolist()))
    a, g = msg["linear_acceleration"], msg["angular_velocity"]
    assert [a["x"], a["y"], a["z"]] == [got["ax"], got["ay"], got["az"]]
    assert [g["x"], g["y"], g["z"]] == [got["gx"], got["gy"], got["gz"]]
    q = msg["orientation"]
    qw, qx, qy, qz = snap.pose3d[row, 3:7].tolist()
    assert [q["x"], q["y"], q["z"], q["w"]] == [qx, qy, qz, qw]
    assert msg["header"]["frame_id"] == "cf1/base_link"


def test_joint_states_equal_the_arms_angles(sensed):
    run, node = sensed
    node("sub", topic="/irb/joint_states", type=JOINTS)
    snap, msg = step_until(run, node, "/irb/joint_states")
    angles = joint_angles(snap)[snap.index["irb"]]
    assert msg["name"] == [f"joint_{k}" for k in range(1, 7)]
    assert msg["position"] == pytest.approx(angles[:6].tolist(), abs=0.0)
    assert len(msg["velocity"]) == len(msg["effort"]) == 6


def _by_stamp(node, topic: str) -> dict:
    """The messages the probe kept on ``topic`` (its last 50), by header stamp (ns)."""
    return {stamp(m): m for m in node("take", topic=topic, n=50, timeout=0.5)["msgs"]}


def _one_shot(run, node, batches: int = 200):
    """Step the paused run one camera period at a time (10 steps: a 50 Hz camera, dt 0.002 s),
    noting each image the camera published, until the bridge's rgb, depth and camera_info of
    one of them came: (image, rgb message, depth message, info message), matched by their
    stamp, the sim time of the step the image shows. The bridge publishes the latest image
    when it gets to a snapshot, so on a loaded machine it skips some and publishes others
    after the test looked: stepping on brings the next; ``batches`` is a hang guard."""
    shots, topic = {}, "/cf1/camera3d/"
    for _ in range(batches):
        before = run.stepper.snapshot.step
        run.stepper.step(10)
        snap = run.stepper.wait_step(before + 9, 60.0)
        assert snap is not None, "the run took no step"
        board = snap.extra.get("camera3d")
        if board is not None and "cf1" in board.seen:
            shot = board.seen["cf1"]
            shots[round(shot.time * 1e9)] = shot
        got = [_by_stamp(node, topic + t) for t in ("image_raw", "depth", "camera_info")]
        both = [ns for ns in shots if all(ns in msgs for msgs in got)]
        if both:
            return (shots[both[0]], *(msgs[both[0]] for msgs in got))
    came = {t: sorted(msgs)[-3:] for t, msgs in zip(("rgb", "depth", "info"), got)}
    raise AssertionError(f"no image with its depth and camera_info in {batches} periods: the "
                         f"last images' stamps {sorted(shots)[-3:]}, the last that came {came}, "
                         f"the bridge {run.ros2.counts}")


def test_camera_images_and_their_camera_info(sensed):
    run, node = sensed
    shot, image, far, info = _one_shot(run, node)
    assert bytes(image["data"]) == np.ascontiguousarray(shot.rgb, np.uint8).tobytes()
    assert bytes(far["data"]) == np.ascontiguousarray(shot.depth, "<f4").tobytes()
    assert (image["encoding"], image["width"], image["height"], image["step"]) == \
        ("rgb8", W, H, 3 * W)
    assert (far["encoding"], far["step"]) == ("32FC1", 4 * W)
    fx, fy, cx, cy = intrinsics(W, H, shot.fov)
    assert info["k"] == pytest.approx([fx, 0, cx, 0, fy, cy, 0, 0, 1])
    assert (info["width"], info["height"], info["distortion_model"]) == (W, H, "plumb_bob")
    assert image["header"]["frame_id"] == info["header"]["frame_id"] == "cf1/camera3d"


def _lister(run, node, rounds: int = 4, each: int = 3):
    """A second node that lists the first node's ``/only/the/probe``: it looked the Image type
    up from the first node, whose reply Cyclone overheard (the scenario the depth test guards).

    A Fast DDS 3 node without an Image endpoint of its own often never resolves the type while
    a writer of it announcing no type information (coopsim's) is in the graph, and then lists
    no Fast DDS endpoint of it (2-3 fresh nodes of 4; never without that writer: docs/ros2.md);
    the wait used to run out after 60 s without a word and the test went on without its
    scenario. Those that resolve it list it within 3 s, so ``each`` fresh nodes are started
    together and given 6 s, the first that lists it kept; up to ``rounds`` times."""
    python, dom = Path(node.proc.args[0]), run.ros2.dds.domain_id
    for _ in range(rounds):
        nodes = [RosNode(python, domain=dom) for _ in range(each)]
        found = next((n for n in nodes if n("graph", wait_topic="/only/the/probe",
                                            timeout=6)["found"]), None)
        for n in nodes:
            if n is not found:
                n.close()
        if found is not None:
            return found
    raise AssertionError(f"{rounds * each} fresh nodes never listed the first node's Image "
                         "reader")


def test_a_depth_reader_made_after_the_images_flowed_gets_them(sensed):
    """A second node's reader of sensor_msgs/Image made once images flow (``cf2``'s depth):
    that node, discovering the first node's Image readers, looks their type up from it; Cyclone
    overheard the reply, marked the type invalid (it cannot validate Fast DDS's type object)
    and dropped the discovery of every later Fast DDS endpoint of it, so the reader matched no
    writer all run, until coopsim told Cyclone to ignore Fast DDS's type information
    (coopsim.ros2.dds.IGNORE_FAST_DDS_TYPES; docs/ros2.md)."""
    run, node = sensed
    _one_shot(run, node)  # Cyclone knows the first node's Image readers, matched
    node("sub", topic="/only/the/probe", type=IMAGE)  # an Image reader no writer matches
    topic = "/cf2/camera3d/depth"
    with _lister(run, node) as second:
        second("sub", topic=topic, type=IMAGE, keep=50)
        for _ in range(200):  # camera periods; a hang guard: the reader matches within a few
            before = run.stepper.snapshot.step
            run.stepper.step(10)
            assert run.stepper.wait_step(before + 9, 60.0) is not None, "the run took no step"
            got = second("take", topic=topic, n=1, timeout=0.2)["msgs"]
            if got:
                break
        writer = run.ros2._writers.get(topic)  # asked while the second node is there
        assert got, (f"no {topic} in 200 periods; its writer matched "
                     f"{writer.matched() if writer else 'no writer'} readers")
    assert (got[-1]["encoding"], got[-1]["width"], got[-1]["height"]) == ("32FC1", W, H)


def test_point_clouds_equal_the_lidars_points(sensed):
    run, node = sensed
    node("sub", topic="/tb/points", type=CLOUD)
    snap, msg = step_until(run, node, "/tb/points")
    robot = next(r for r in run.ros2._scene[1].robots if r.name == "tb")
    origin, points = MODULES.get("lidar").point_cloud(snap, "tb", robot.scans[0].params)
    want = np.asarray(points + origin, "<f4")
    assert [f["name"] for f in msg["fields"]] == ["x", "y", "z"]
    assert (msg["height"], msg["width"], msg["point_step"]) == (1, len(want), 12)
    got = np.frombuffer(bytes(msg["data"]), "<f4").reshape(-1, 3)
    assert np.array_equal(got, want) and len(got) > 0
    assert msg["header"]["frame_id"] == "tb/base_link"


def test_the_squads_feedback_wrench(sensed):
    run, node = sensed
    node("sub", topic="/squads/flock/feedback", type=WRENCH, keep=50)
    for _ in range(40):  # a step at a time, until the reader has matched and the step's came
        before = run.stepper.snapshot.step
        run.stepper.step(1)
        snap = run.stepper.wait_step(before, 60.0)
        fb = snap.extra["feedback"]["flock"]  # the force of the latest step computed
        mine = [m for m in node("take", topic="/squads/flock/feedback", n=50,
                                timeout=1.0)["msgs"] if stamp(m) == round(fb.time * 1e9)]
        if mine:
            break
    assert len(mine) == 1, "one message a step"
    f = mine[0]["wrench"]["force"]
    assert (f["x"], f["y"], f["z"]) == tuple(fb.force)
    assert mine[0]["header"]["frame_id"] == "map"
