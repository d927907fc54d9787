"""The ROS 2 messages coopsim speaks: their definitions (for rosbag2's ``ros2msg`` schemas and
the DDS type names) and fast encoders.

Message layouts follow the ROS 2 interface definitions (``builtin_interfaces``, ``std_msgs``,
``geometry_msgs``, ``sensor_msgs``, ``nav_msgs``, ``tf2_msgs``, ``rosgraph_msgs``). A message
that goes out every step for every robot (odometry, scans) is built once as a CDR template per
robot and then only its stamp, pose and readings are written into a copy (:class:`OdomTemplate`,
:class:`ScanTemplate`): a few microseconds a message, whatever the robot count.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

from .cdr import Reader, Writer

# Each type's fields as its .msg file has them (comments left out), dependencies fully named.
DEFINITIONS = {
    "builtin_interfaces/Time": "int32 sec\nuint32 nanosec\n",
    "std_msgs/Header": "builtin_interfaces/Time stamp\nstring frame_id\n",
    "geometry_msgs/Point": "float64 x\nfloat64 y\nfloat64 z\n",
    "geometry_msgs/Vector3": "float64 x\nfloat64 y\nfloat64 z\n",
    "geometry_msgs/Quaternion": "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n",
    "geometry_msgs/Pose": "geometry_msgs/Point position\ngeometry_msgs/Quaternion orientation\n",
    "geometry_msgs/PoseWithCovariance": "geometry_msgs/Pose pose\nfloat64[36] covariance\n",
    "geometry_msgs/PoseStamped": "std_msgs/Header header\ngeometry_msgs/Pose pose\n",
    "geometry_msgs/Twist": "geometry_msgs/Vector3 linear\ngeometry_msgs/Vector3 angular\n",
    "geometry_msgs/TwistWithCovariance": "geometry_msgs/Twist twist\nfloat64[36] covariance\n",
    "geometry_msgs/Transform": ("geometry_msgs/Vector3 translation\n"
                                "geometry_msgs/Quaternion rotation\n"),
    "geometry_msgs/TransformStamped": ("std_msgs/Header header\nstring child_frame_id\n"
                                       "geometry_msgs/Transform transform\n"),
    "geometry_msgs/Wrench": "geometry_msgs/Vector3 force\ngeometry_msgs/Vector3 torque\n",
    "geometry_msgs/WrenchStamped": "std_msgs/Header header\ngeometry_msgs/Wrench wrench\n",
    "nav_msgs/Odometry": ("std_msgs/Header header\nstring child_frame_id\n"
                          "geometry_msgs/PoseWithCovariance pose\n"
                          "geometry_msgs/TwistWithCovariance twist\n"),
    "nav_msgs/MapMetaData": ("builtin_interfaces/Time map_load_time\nfloat32 resolution\n"
                             "uint32 width\nuint32 height\ngeometry_msgs/Pose origin\n"),
    "nav_msgs/OccupancyGrid": "std_msgs/Header header\nnav_msgs/MapMetaData info\nint8[] data\n",
    "sensor_msgs/LaserScan": ("std_msgs/Header header\nfloat32 angle_min\nfloat32 angle_max\n"
                              "float32 angle_increment\nfloat32 time_increment\n"
                              "float32 scan_time\nfloat32 range_min\nfloat32 range_max\n"
                              "float32[] ranges\nfloat32[] intensities\n"),
    "sensor_msgs/PointField": "string name\nuint32 offset\nuint8 datatype\nuint32 count\n",
    "sensor_msgs/PointCloud2": ("std_msgs/Header header\nuint32 height\nuint32 width\n"
                                "sensor_msgs/PointField[] fields\nbool is_bigendian\n"
                                "uint32 point_step\nuint32 row_step\nuint8[] data\n"
                                "bool is_dense\n"),
    "sensor_msgs/Imu": ("std_msgs/Header header\ngeometry_msgs/Quaternion orientation\n"
                        "float64[9] orientation_covariance\n"
                        "geometry_msgs/Vector3 angular_velocity\n"
                        "float64[9] angular_velocity_covariance\n"
                        "geometry_msgs/Vector3 linear_acceleration\n"
                        "float64[9] linear_acceleration_covariance\n"),
    "sensor_msgs/JointState": ("std_msgs/Header header\nstring[] name\nfloat64[] position\n"
                               "float64[] velocity\nfloat64[] effort\n"),
    "tf2_msgs/TFMessage": "geometry_msgs/TransformStamped[] transforms\n",
    "rosgraph_msgs/Clock": "builtin_interfaces/Time clock\n",
    "std_msgs/String": "string data\n",
}

# sensor_msgs/Image and CameraInfo: camera3d's images (written by .images)
IMAGE, CAMERA_INFO = "sensor_msgs/Image", "sensor_msgs/CameraInfo"
DEFINITIONS.update({
    IMAGE: ("std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\n"
            "uint8 is_bigendian\nuint32 step\nuint8[] data\n"),
    "sensor_msgs/RegionOfInterest": ("uint32 x_offset\nuint32 y_offset\nuint32 height\n"
                                     "uint32 width\nbool do_rectify\n"),
    CAMERA_INFO: ("std_msgs/Header header\nuint32 height\nuint32 width\n"
                  "string distortion_model\nfloat64[] d\nfloat64[9] k\nfloat64[9] r\n"
                  "float64[12] p\nuint32 binning_x\nuint32 binning_y\n"
                  "sensor_msgs/RegionOfInterest roi\n"),
})

ODOMETRY, SCAN, TF, GRID, CLOCK, TWIST = ("nav_msgs/Odometry", "sensor_msgs/LaserScan",
                                          "tf2_msgs/TFMessage", "nav_msgs/OccupancyGrid",
                                          "rosgraph_msgs/Clock", "geometry_msgs/Twist")
IMU = "sensor_msgs/Imu"
JOINT_STATE = "sensor_msgs/JointState"
CLOUD = "sensor_msgs/PointCloud2"
STRING = "std_msgs/String"  # /R/robot_description
_SEPARATOR = "=" * 80


def ros_name(short: str) -> str:
    """``nav_msgs/Odometry`` -> ``nav_msgs/msg/Odometry`` (the name rosbag2 and ROS tools use)."""
    pkg, name = short.split("/")
    return f"{pkg}/msg/{name}"


def _dependencies(short: str, out: list[str]) -> list[str]:
    """Every type ``short`` uses, depth first, each once."""
    for line in DEFINITIONS[short].splitlines():
        kind = line.split()[0].split("[")[0]
        if "/" in kind and kind not in out:
            out.append(kind)
            _dependencies(kind, out)
    return out


def schema_text(short: str) -> str:
    """The ``ros2msg`` schema of a type: its definition, then each dependency's after a line of
    80 ``=`` and ``MSG: pkg/Type`` (the concatenation rosbag2 writes)."""
    parts = [DEFINITIONS[short]]
    for dep in _dependencies(short, []):
        parts.append(f"{_SEPARATOR}\nMSG: {dep}\n{DEFINITIONS[dep]}")
    return "".join(parts)


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation by ``yaw`` rad about z."""
    return 0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)


def _stamp(buf: bytearray, at: int, ns: int) -> None:
    sec, nsec = divmod(int(ns), 1_000_000_000)
    struct.pack_into("<iI", buf, at, sec, nsec)


# A planar robot's covariance: x, y and yaw known to a millimetre / milliradian (the simulator
# knows the truth); z, roll and pitch unobserved (a large variance, the usual 2D convention).
_COVARIANCE = np.diag([1e-6, 1e-6, 1e6, 1e6, 1e6, 1e-6]).ravel().tolist()
# A 3D world's robot: all six known as well (the simulator knows the truth)
_COVARIANCE_3D = np.diag([1e-6] * 6).ravel().tolist()


class OdomTemplate:
    """nav_msgs/Odometry of one robot: pose in ``frame``, twist in ``child`` (its base)."""

    def __init__(self, frame: str, child: str, three_d: bool = False) -> None:
        covariance = _COVARIANCE_3D if three_d else _COVARIANCE
        w = Writer()
        self._stamp = w.header(0, frame)
        w.string(child)
        self._pose = w.f64(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        w.f64(*covariance)
        self._twist = w.f64(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        w.f64(*covariance)
        self.data = w.buf

    def fill(self, ns: int, x: float, y: float, yaw: float, forward: float, side: float,
             turn: float) -> bytes:
        """The message at ``ns``: pose (m, rad) in the odometry frame, velocity in the base
        frame (forward and sideways m/s, yaw rate rad/s)."""
        buf = bytearray(self.data)
        _stamp(buf, self._stamp, ns)
        struct.pack_into("<7d", buf, self._pose, x, y, 0.0, *yaw_quaternion(yaw))
        struct.pack_into("<6d", buf, self._twist, forward, side, 0.0, 0.0, 0.0, turn)
        return bytes(buf)


class OdomBatch:
    """nav_msgs/Odometry of many robots at once: their templates back to back in one buffer,
    filled with a few numpy writes per step instead of a few per robot (``three_d``: the
    covariance of a 3D world, where z, roll and pitch are known too)."""

    def __init__(self, frames, three_d: bool = False) -> None:
        parts = [OdomTemplate(frame, child, three_d) for frame, child in frames]
        self.data = np.frombuffer(b"".join(bytes(p.data) for p in parts), np.uint8).copy()
        starts = np.cumsum([0] + [len(p.data) for p in parts])
        self.bounds = list(zip(starts[:-1].tolist(), starts[1:].tolist()))
        # the bytes each step writes, as flat indices into the buffer (made once, not a step)
        self._stamp = _spans([a + p._stamp for a, p in zip(starts, parts)], 8)
        self._pose = _spans([a + p._pose for a, p in zip(starts, parts)], 56)
        self._twist = _spans([a + p._twist for a, p in zip(starts, parts)], 48)

    def fill(self, ns: int, x, y, yaw, forward, side, turn) -> list[bytes]:
        """Every robot's message at ``ns`` (arrays in the order of the frames: pose in the
        odometry frame, m and rad; velocity in the base frame, m/s and rad/s)."""
        n = len(self.bounds)
        half = np.asarray(yaw, dtype=float) / 2.0
        zero = np.zeros(n)
        pose = np.stack([x, y, zero, zero, zero, np.sin(half), np.cos(half)], 1)
        twist = np.stack([forward, side, zero, zero, zero, turn], 1)
        return self.fill_full(ns, pose, twist)

    def fill_full(self, ns: int, pose: np.ndarray, twist: np.ndarray) -> list[bytes]:
        """Every robot's message at ``ns`` from (n, 7) poses x, y, z (m), qx, qy, qz, qw in
        the odometry frame and (n, 6) twists vx, vy, vz (m/s), wx, wy, wz (rad/s) in the base
        frame (a 3D world's odometry)."""
        n = len(self.bounds)
        buf = self.data.copy()
        buf[self._stamp] = np.tile(_stamp_bytes(ns), n)
        buf[self._pose] = np.ascontiguousarray(pose, dtype="<f8").view(np.uint8).ravel()
        buf[self._twist] = np.ascontiguousarray(twist, dtype="<f8").view(np.uint8).ravel()
        raw = buf.tobytes()
        return [raw[a:b] for a, b in self.bounds]


def _spans(starts, width: int) -> np.ndarray:
    """Flat byte indices of ``width`` bytes from each of ``starts`` (in their order)."""
    return (np.asarray(starts, dtype=np.intp)[:, None] + np.arange(width)).ravel()


def _stamp_bytes(ns: int) -> np.ndarray:
    """builtin_interfaces/Time at ``ns`` as its 8 CDR bytes (int32 sec, uint32 nanosec)."""
    sec, nsec = divmod(int(ns), 1_000_000_000)
    return np.frombuffer(struct.pack("<iI", sec, nsec), np.uint8)


@dataclass(frozen=True)
class ScanGeometry:
    """A LaserScan's fixed fields: angles (rad, counter-clockwise from the laser's x axis),
    ranges (m) and the time one scan takes (s)."""

    angle_min: float
    angle_max: float
    increment: float
    range_min: float
    range_max: float
    scan_time: float
    count: int


class ScanTemplate:
    """sensor_msgs/LaserScan of one ranging module of one robot."""

    def __init__(self, frame: str, geometry: ScanGeometry) -> None:
        g = geometry
        w = Writer()
        self._stamp = w.header(0, frame)
        w.f32(g.angle_min, g.angle_max, g.increment, 0.0, g.scan_time, g.range_min, g.range_max)
        self._ranges = w.f32_seq(np.zeros(g.count))
        w.f32_seq(())
        self.data, self.count = w.buf, g.count

    def fill(self, ns: int, ranges: np.ndarray) -> bytes:
        """The scan at ``ns`` with ``ranges`` (m, ``count`` of them, from the laser frame)."""
        buf = bytearray(self.data)
        _stamp(buf, self._stamp, ns)
        a = self._ranges
        buf[a:a + 4 * self.count] = np.asarray(ranges, dtype="<f4").tobytes()
        return bytes(buf)


def point_cloud(ns: int, frame: str, points: np.ndarray) -> bytes:
    """sensor_msgs/PointCloud2 of ``points`` (m, 3) m in ``frame``: one row of float32 x, y,
    z (PointField FLOAT32 = 7), 12 bytes a point, little-endian, dense (no NaN)."""
    w = Writer()
    w.header(ns, frame)
    w.u32(1, len(points))
    w.seq(3)
    for k, name in enumerate("xyz"):
        w.string(name)
        w.u32(4 * k)
        w.buf += bytes((7,))  # uint8 datatype
        w.u32(1)
    w.buf += bytes((0,))  # is_bigendian
    w.u32(12, 12 * len(points))
    data = np.ascontiguousarray(points, dtype="<f4").tobytes()
    w.u32(len(data))
    w.buf += data + bytes((1,))  # is_dense
    return bytes(w.buf)


class TfTemplate:
    """tf2_msgs/TFMessage of a fixed list of (parent, child) frame pairs."""

    def __init__(self, pairs) -> None:
        w = Writer()
        w.seq(len(pairs))
        self._at = []
        for parent, child in pairs:
            stamp = w.header(0, parent)
            w.string(child)
            self._at.append((stamp, w.f64(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)))
        self.data = w.buf
        self._buf = np.frombuffer(bytes(w.buf), np.uint8)
        # every transform's stamp and pose bytes as flat indices (one numpy write each a step)
        self._stamps = _spans([a for a, _ in self._at], 8)
        self._poses = _spans([b for _, b in self._at], 56)

    def fill(self, ns: int, x, y, yaw) -> bytes:
        """The message at ``ns`` with planar transforms (arrays of x, y in m, yaw in rad, in
        the order of the pairs)."""
        half = np.asarray(yaw, dtype=float) / 2.0
        zero = np.zeros(len(self._at))
        return self.fill_full(ns, np.stack([np.asarray(x, float), np.asarray(y, float), zero,
                                            zero, zero, np.sin(half), np.cos(half)], 1))

    def fill_full(self, ns: int, pose: np.ndarray) -> bytes:
        """The message at ``ns`` with (n, 7) transforms x, y, z (m), qx, qy, qz, qw."""
        buf = self._buf.copy()
        buf[self._stamps] = np.tile(_stamp_bytes(ns), len(self._at))
        buf[self._poses] = np.ascontiguousarray(pose, dtype="<f8").view(np.uint8).ravel()
        return buf.tobytes()


#: REP 145: covariance[0] = -1 marks a field the sensor does not estimate
NO_ESTIMATE = (-1.0,) + (0.0,) * 8
_KNOWN = tuple(np.diag([1e-6] * 3).ravel().tolist())  # the truth, to a milliradian


def imu(ns: int, frame: str, orientation, gyro, accel) -> bytes:
    """sensor_msgs/Imu at ``ns`` in ``frame`` (the robot's base_link): ``orientation`` (qx,
    qy, qz, qw, body to the world, ENU) or None (REP 145: covariance[0] = -1, not
    estimated); ``gyro`` wx, wy, wz (rad/s) and ``accel`` ax, ay, az (m/s^2, specific force)
    in the body frame."""
    w = Writer()
    w.header(ns, frame)
    w.f64(*(orientation if orientation is not None else (0.0, 0.0, 0.0, 1.0)))
    w.f64(*(_KNOWN if orientation is not None else NO_ESTIMATE))
    w.f64(*gyro)
    w.f64(*(0.0,) * 9)
    w.f64(*accel)
    w.f64(*(0.0,) * 9)
    return w.bytes()


def string(text: str) -> bytes:
    """std_msgs/String holding ``text`` (UTF-8)."""
    w = Writer()
    w.string(text)
    return w.bytes()


def clock(ns: int) -> bytes:
    """rosgraph_msgs/Clock at ``ns``."""
    w = Writer()
    w.time(ns)
    return w.bytes()


def transforms(items) -> bytes:
    """tf2_msgs/TFMessage of ``(ns, parent, child, x, y, yaw)`` items (planar transforms)."""
    w = Writer()
    w.seq(len(items))
    for ns, parent, child, x, y, yaw in items:
        w.header(ns, parent)
        w.string(child)
        w.f64(x, y, 0.0, *yaw_quaternion(yaw))
    return w.bytes()


def occupancy_grid(ns: int, frame: str, resolution: float, origin: tuple[float, float],
                   cells: np.ndarray) -> bytes:
    """nav_msgs/OccupancyGrid: ``cells`` (rows along y, columns along x, row 0 at the
    origin's y) of 0 free, 100 occupied, -1 unknown; ``origin`` the (x, y) of cell (0, 0)'s
    corner, m, in ``frame``."""
    height, width = cells.shape
    w = Writer()
    w.header(ns, frame)
    w.time(ns)
    w.f32(resolution)
    w.u32(width, height)
    w.f64(origin[0], origin[1], 0.0, 0.0, 0.0, 0.0, 1.0)
    w.i8_seq(cells.ravel())
    return w.bytes()


@dataclass(frozen=True)
class Twist:
    """geometry_msgs/Twist: linear (m/s) and angular (rad/s) velocity in the robot's base
    frame (x forward, y left, z up)."""

    linear: tuple[float, float, float]
    angular: tuple[float, float, float]

    @classmethod
    def from_cdr(cls, data: bytes) -> "Twist":
        r = Reader(data)
        return cls(r.f64(3), r.f64(3))
