"""A robot from an URDF, as a stock rclpy node sees it (Kilted and Jazzy wheels, Fast DDS):
``examples/descriptions/rover.urdf`` with its scenario's ``sensor lidar base_scan`` and
``sensor imu imu_link``. ``/rover1/robot_description`` holds the file's text (transient local, as
robot_state_publisher publishes it, for rviz2's RobotModel); the scan is stamped in the file's
``rover1/base_scan`` and the imu in its ``rover1/imu_link``, frames ``/tf`` carries with the
file's other links (0.172 m and 0.068 m up), not in a made-up ``rover1/laser`` at the chassis
centre and in ``rover1/base_link`` (docs/ros2.md, *Topics*)."""

from __future__ import annotations

import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")
pytest.importorskip("mujoco")

from coopsim.formats.files import load  # noqa: E402
from tests.nethelpers import ROOT, live  # noqa: E402
from tests.ros2.rosnode import RosNode, domain, ros_distro  # noqa: E402,F401 - a fixture

pytestmark = pytest.mark.slow

ROVER = ROOT / "examples" / "descriptions"
STRING = "std_msgs/msg/String"


@pytest.fixture(scope="module")
def rover(tmp_path_factory, ros_distro):
    """The rover's example in realtime, bridged, and a stock node of the distribution."""
    name, python = ros_distro
    dom = domain() + (15 if name == "jazzy" else 14)
    text = (ROVER / "rover.scenario").read_text()
    text = text.replace("../../worlds/", f"{ROOT / 'worlds'}/").replace(
        "rover.urdf", str(ROVER / "rover.urdf")).replace("lockstep", "realtime")
    path = tmp_path_factory.mktemp("rover") / "rover.scenario"
    path.write_text(text)
    with live(load(str(path)), ros2=True, ros2_domain=dom, duration=3600.0) as run, \
            RosNode(python, domain=dom) as node:
        yield run, node


def test_the_urdf_is_on_robot_description_for_a_late_joiner(rover):
    run, node = rover
    node("sub", topic="/rover1/robot_description", type=STRING, transient=True, depth=1)
    got = node("take", topic="/rover1/robot_description", n=1, timeout=60)
    assert got["count"] >= 1, "no /rover1/robot_description"
    assert got["msgs"][-1]["data"] == (ROVER / "rover.urdf").read_text()


@pytest.mark.parametrize("topic,kind,frame", [
    ("/rover1/scan", "sensor_msgs/msg/LaserScan", "rover1/base_scan"),
    ("/rover1/imu", "sensor_msgs/msg/Imu", "rover1/imu_link")])
def test_sensors_are_stamped_in_the_files_links(rover, topic, kind, frame):
    run, node = rover
    node("sub", topic=topic, type=kind)
    got = node("take", topic=topic, n=1, timeout=60, fields=["header.frame_id"])
    assert got["count"] >= 1, f"no {topic}"
    assert got["msgs"][-1]["header.frame_id"] == frame


def test_the_sensor_links_are_on_tf_and_no_made_up_frame_is(rover):
    run, node = rover
    scene = run.ros2._scene[1]
    snap = run.stepper.snapshot
    tf = b"".join(data for topic, _, data in scene.arm_messages(snap, 0) if topic == "/tf")
    assert b"rover1/base_scan\x00" in tf and b"rover1/imu_link\x00" in tf
    static = scene.static_transforms(0)
    assert b"rover1/laser" not in static and b"rover1/base_scan" not in static
