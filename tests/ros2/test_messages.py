"""coopsim's CDR encodings of ROS 2 messages, decoded by an independent implementation (the
``rosbags`` library's CDR deserializer over its own ROS 2 type definitions), and the ros2msg
schemas parsed by it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.ros2 import messages as m
from coopsim.ros2.cdr import CdrError, Reader, Writer

rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) reads the messages back")
from rosbags.typesys import Stores, get_types_from_msg, get_typestore  # noqa: E402

STORE = get_typestore(Stores.ROS2_HUMBLE)


def decode(data: bytes, short: str):
    return STORE.deserialize_cdr(data, m.ros_name(short))


def test_odometry_reads_back_field_for_field():
    tpl = m.OdomTemplate("robot1/odom", "robot1/base_link")
    msg = decode(tpl.fill(2_500_000_001, 1.5, -2.25, 0.5, 0.3, -0.1, 0.7), m.ODOMETRY)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (2, 500_000_001)
    assert msg.header.frame_id == "robot1/odom" and msg.child_frame_id == "robot1/base_link"
    p, q = msg.pose.pose.position, msg.pose.pose.orientation
    assert (p.x, p.y, p.z) == (1.5, -2.25, 0.0)
    assert math.isclose(2 * math.atan2(q.z, q.w), 0.5) and q.x == q.y == 0.0
    t = msg.twist.twist
    assert (t.linear.x, t.linear.y, t.angular.z) == (0.3, -0.1, 0.7)
    assert msg.pose.covariance.shape == (36,) and msg.pose.covariance[0] == 1e-6


def test_a_template_filled_twice_keeps_nothing_of_the_first_fill():
    tpl = m.OdomTemplate("a/odom", "a/base_link")
    tpl.fill(1, 9.0, 9.0, 1.0, 1.0, 1.0, 1.0)
    msg = decode(tpl.fill(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), m.ODOMETRY)
    assert msg.pose.pose.position.x == 0.0 and msg.twist.twist.angular.z == 0.0


def test_laser_scan_reads_back_with_its_geometry_and_ranges():
    geo = m.ScanGeometry(-math.pi / 2, math.pi / 2, math.pi / 10, 0.2, 2.2, 0.1, 11)
    ranges = np.linspace(0.3, 2.0, 11)
    ranges[3] = np.inf
    msg = decode(m.ScanTemplate("robot7/laser", geo).fill(10**9, ranges), m.SCAN)
    assert msg.header.frame_id == "robot7/laser"
    assert np.isclose(msg.angle_increment, math.pi / 10) and np.isclose(msg.range_max, 2.2)
    assert np.array_equal(msg.ranges, ranges.astype(np.float32))
    assert len(msg.intensities) == 0


def test_tf_clock_and_grid_read_back():
    tf = decode(m.transforms([(5, "map", "r/odom", 1.0, 2.0, 0.25),
                              (5, "r/odom", "r/base_link", -1.0, 0.5, -3.0)]), m.TF)
    assert [t.child_frame_id for t in tf.transforms] == ["r/odom", "r/base_link"]
    assert tf.transforms[1].transform.translation.x == -1.0
    assert decode(m.clock(3_000_000_007), m.CLOCK).clock.nanosec == 7
    cells = np.zeros((3, 4), dtype=np.int8)
    cells[0, :] = 100
    cells[2, 3] = -1
    grid = decode(m.occupancy_grid(0, "map", 0.05, (-0.1, -0.075), cells), m.GRID)
    assert (grid.info.width, grid.info.height) == (4, 3)
    assert np.isclose(grid.info.resolution, 0.05) and grid.info.origin.position.x == -0.1
    assert np.array_equal(np.asarray(grid.data).reshape(3, 4), cells)


def test_twist_from_an_independent_encoder():
    twist = STORE.types["geometry_msgs/msg/Twist"]
    vec = STORE.types["geometry_msgs/msg/Vector3"]
    data = STORE.serialize_cdr(twist(vec(0.4, 0.0, 0.0), vec(0.0, 0.0, -1.2)),
                               "geometry_msgs/msg/Twist")
    assert m.Twist.from_cdr(data) == m.Twist((0.4, 0.0, 0.0), (0.0, 0.0, -1.2))


@pytest.mark.parametrize("short", [m.ODOMETRY, m.SCAN, m.TF, m.GRID, m.CLOCK, m.TWIST])
def test_schemas_parse_as_ros2msg_and_match_the_reference_types(short):
    text = m.schema_text(short)
    sections = text.split("=" * 80 + "\n")
    types = get_types_from_msg(sections[0], m.ros_name(short))
    for dep in sections[1:]:
        header, _, body = dep.partition("\n")
        name = header.removeprefix("MSG: ")
        assert "/" in name
        pkg, typ = name.split("/")
        types.update(get_types_from_msg(body, f"{pkg}/msg/{typ}"))
    ours = [f[0] for f in types[m.ros_name(short)][1]]
    reference = [f[0] for f in STORE.fielddefs[m.ros_name(short)][1]]
    assert ours == reference


def test_a_short_or_big_endian_payload_is_refused():
    with pytest.raises(CdrError):
        Reader(b"\x00\x00\x00\x00" + bytes(48))  # big endian
    with pytest.raises(CdrError):
        m.Twist.from_cdr(b"\x00\x01\x00\x00" + bytes(20))


def test_alignment_counts_from_after_the_header():
    w = Writer()
    w.u32(1)
    w.f64(2.0)  # 4 bytes of padding: the double starts at body offset 8
    assert len(w.bytes()) == 4 + 16


def test_a_batch_of_odometry_is_each_robots_own_template():
    frames = [("a/odom", "a/base_link"), ("robot10/odom", "robot10/base_link")]
    batch = m.OdomBatch(frames).fill(7, [1.0, -2.0], [0.5, 3.0], [0.1, -2.0], [0.2, 0.0],
                                     [0.0, 0.1], [0.3, -0.4])
    for k, (frame, child) in enumerate(frames):
        one = m.OdomTemplate(frame, child).fill(7, [1.0, -2.0][k], [0.5, 3.0][k],
                                                [0.1, -2.0][k], [0.2, 0.0][k], [0.0, 0.1][k],
                                                [0.3, -0.4][k])
        assert batch[k] == one
