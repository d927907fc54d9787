"""ROS 2 in a 3D world, message by message: a robot with an inertial module (declared fields
ax..gz) publishes sensor_msgs/Imu in its base_link (REP 145), and odometry and /tf carry its
height, orientation and 6-DoF twist; decoded by rosbags' own CDR reader."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.model.snapshot import Snapshot, quat_matrices
from coopsim.ros2 import messages as m
from coopsim.ros2.scene import RosScene

rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) reads the messages back")
from rosbags.typesys import Stores, get_typestore  # noqa: E402

STORE = get_typestore(Stores.ROS2_HUMBLE)
FIELDS = ("ax", "ay", "az", "gx", "gy", "gz")
Q = np.array([0.9, 0.1, -0.2, 0.3]) / np.linalg.norm([0.9, 0.1, -0.2, 0.3])  # w, x, y, z


def _snap(pose3d=True) -> Snapshot:
    poses = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 0.0]])
    return Snapshot(
        step=3, time=0.03, robots=("cf", "rover"), poses=poses, velocities=np.zeros((2, 3)),
        commands={}, readings={"ins": np.array([[0.1, -0.2, 9.8, 0.01, 0.02, -0.03],
                                                [0.0] * 6])},
        fields={"ins": FIELDS}, objects=(), object_poses=np.zeros((0, 3)), parts=(),
        part_poses=np.zeros((0, 3)), targets=(), layout_version=0,
        index={"cf": 0, "rover": 1},
        pose3d=np.array([[1.0, 2.0, 1.5, *Q], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]])
        if pose3d else None,
        twist3d=np.array([[0.5, -0.1, 0.2, 0.3, -0.4, 0.05], [0.0] * 6]) if pose3d else None)


LAYOUT = {"robots": [{"name": "cf", "modules": ["ins"], "radius": 0.05},
                     {"name": "rover", "modules": [], "radius": 0.2}],
          "modules": {"ins": {"fields": list(FIELDS)}}, "floor": {"length": 4, "width": 4}}


def test_a_robot_with_an_inertial_module_publishes_imu_in_its_base_link():
    scene = RosScene(LAYOUT, _snap())
    assert ("/cf/imu", m.IMU) in scene.topics() and ("/rover/imu", m.IMU) not in scene.topics()
    (topic, data), = scene.imu(_snap(), 30_000_000)
    msg = STORE.deserialize_cdr(data, m.ros_name(m.IMU))
    assert topic == "/cf/imu" and msg.header.frame_id == "cf/base_link"
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (0, 30_000_000)
    o = msg.orientation
    assert (o.w, o.x, o.y, o.z) == pytest.approx(tuple(Q))
    assert msg.orientation_covariance[0] > 0  # the truth, known
    v, a = msg.angular_velocity, msg.linear_acceleration
    assert (v.x, v.y, v.z, a.x, a.y, a.z) == (0.01, 0.02, -0.03, 0.1, -0.2, 9.8)


def test_imu_marks_an_orientation_it_has_none_of_as_not_estimated():
    data = m.imu(0, "r/base_link", None, (0.0, 0.0, 1.0), (0.0, 0.0, 9.81))
    msg = STORE.deserialize_cdr(data, m.ros_name(m.IMU))
    assert msg.orientation_covariance[0] == -1.0  # REP 145


def test_3d_odometry_and_tf_carry_height_orientation_and_body_twist():
    start = _snap(False)  # the origin: x 1, y 2, yaw 0.5 (a 2D first sight)
    scene = RosScene(LAYOUT, _snap(), origins=RosScene(LAYOUT, start).origins)
    assert not scene.fits(start) and scene.fits(_snap())
    odom = STORE.deserialize_cdr(scene.odometry(_snap(), 0)[0][1], m.ros_name(m.ODOMETRY))
    p, o = odom.pose.pose.position, odom.pose.pose.orientation
    assert (p.x, p.y, p.z) == pytest.approx((0.0, 0.0, 1.5))
    turn = quat_matrices([[np.cos(0.25), 0, 0, np.sin(0.25)]])[0]  # the start's yaw 0.5
    np.testing.assert_allclose(turn @ quat_matrices([[o.w, o.x, o.y, o.z]])[0],
                               quat_matrices([Q])[0], atol=1e-12)
    v, w = odom.twist.twist.linear, odom.twist.twist.angular
    body = quat_matrices([Q])[0].T @ np.array([0.5, -0.1, 0.2])
    assert (v.x, v.y, v.z) == pytest.approx(tuple(body)) and (w.x, w.y, w.z) == (0.3, -0.4, 0.05)
    assert odom.pose.covariance[14] == pytest.approx(1e-6)  # z known in 3D
    tf = STORE.deserialize_cdr(scene.transforms(_snap(), 0), m.ros_name(m.TF))
    t = tf.transforms[0].transform
    assert (t.translation.z, t.rotation.w) == pytest.approx((1.5, o.w))
