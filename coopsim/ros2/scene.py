"""A run's robots as ROS 2 sees them: topic names, frames and each message, from a layout and
its snapshots. The live bridge (:mod:`.bridge`) and the bag export (:mod:`.bag`) share it.

Frames (REP 103/105; x forward, y left, z up, metres, radians), per robot ``R``:
``map`` (the world) -> ``R/odom`` (where the robot started; static) -> ``R/base_link`` (the
chassis centre; moves) -> ``R/laser`` (the scan's origin; static, at the centre). Odometry is
the exact motion since the start (the simulator knows the truth), in ``R/odom``. A robot from a
description file whose scenario puts a sensor on a link (``sensor lidar base_scan``) has that
sensor's messages in the link's own frame (``R/base_scan``, on ``/tf`` with the file's other
links: :mod:`.links`) instead, and an URDF's text on ``/R/robot_description``
(:func:`described`).

In a 3D world (snapshots with ``pose3d``) odometry and ``/tf`` carry the height, the full
orientation and the 6-DoF twist (linear and angular velocity in ``R/base_link``), and a robot
with the ``imu`` module publishes ``sensor_msgs/Imu`` on ``/R/imu`` (REP 145). A robot with a
3D arm publishes ``/R/joint_states`` and its links on ``/tf`` (:mod:`.arms`).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

import numpy as np

from ..model.arm import quat_matrix
from ..model.armstate import matrix_quaternion
from ..model.capabilities import LaserScanner, capability
from ..model.linkposes import links_of
from ..model.plugins import MODULES, ROBOT_TYPES
from ..model.snapshot import quat_matrices, wrap_angle
from . import messages as m
from .arms import RosArms
from .links import BODY, RosLinks, _is_body
from .occupancy import Occupancy
from .scenery import planar, scenery_frames, transforms3d

SCAN_RATE = 10.0  # Hz a range finder without a rate of its own is published at
#: A module whose reading has these fields is an inertial unit (the ``imu``'s declaration,
#: docs/robots.md): specific force ax, ay, az (m/s^2) and rates gx, gy, gz (rad/s), body frame
IMU_FIELDS = ("ax", "ay", "az", "gx", "gy", "gz")


def ros_robot(name: str) -> str:
    """A robot name as a ROS name component (ROS names take no ``-``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


@dataclass
class Scan:
    """One range finder of one robot, as a LaserScan topic (``LaserScanner.laser_scan``)."""

    label: str
    topic: str
    frame: str
    params: dict
    mount: tuple[float, float, float]  # x, y (m), yaw (rad) in the robot's frame
    period: float  # s between two scans
    due: float = 0.0  # sim time of the next scan, s
    template: tuple | None = None  # (geometry key, ScanTemplate)
    cloud: bool = False  # its module gives a point cloud (a lidar with channels > 1)
    linked: bool = False  # its frame is a link of the robot's file (on /tf with the links)


@dataclass
class RosRobot:
    """One robot's topics, frames and odometry origin (x, y, yaw in the world)."""

    name: str
    ns: str
    row: int
    origin: tuple[float, float, float]
    radius: float
    scans: list[Scan]
    imu: str = ""  # the label of its inertial module (IMU_FIELDS), "" for none: /R/imu
    imu_frame: str = ""  # the frame of /R/imu: R/base_link, or the link the module is on
    imu_turn: tuple | None = None  # that link's rotation in R/base_link, (w, x, y, z)
    description: str | None = None  # an URDF's text: /R/robot_description


@dataclass(frozen=True)
class Described:
    """What a robot's description file gives its ROS topics.

    Attributes:
        urdf: The URDF file's text as it is on disk (``/R/robot_description``, as
            robot_state_publisher publishes it), or None (an MJCF, or not readable).
        sensors: Module label -> (the link its ``sensor`` line puts it on, that link's
            rotation in the robot's ``R/base_link`` frame at the zero pose, (w, x, y, z)),
            for links published on ``/tf`` (:mod:`.links`) or the body itself.
    """

    urdf: str | None
    sensors: dict


def described(robot: dict) -> Described | None:
    """A layout robot's :class:`Described`, when its type is imported from a description
    file registered in this process (the live run's; an export's when its scenario loads)."""
    from ..description.robot import ImportedType
    from ..description.frames import link_frames

    label, doc = robot.get("type"), links_of(robot)
    kind = ROBOT_TYPES.get(label) if label in ROBOT_TYPES else None
    if doc is None or not (isinstance(kind, type) and issubclass(kind, ImportedType)) \
            or kind.DESCRIPTION is None:
        return None
    d, spec = kind.DESCRIPTION, kind.SPEC
    urdf = _text(d.source) if d.kind == "urdf" else None
    root = doc["links"][0]
    on_tf = {link["name"] for link in doc["links"]}
    frames, sensors = link_frames(d), {}
    for module, link in spec.all("sensor") if spec is not None else ():
        if link not in on_tf or link not in frames:
            continue
        turn = quat_matrix(root["quat"]) @ frames[link][:3, :3]
        x, y, z, w = matrix_quaternion(turn)
        sensors[module] = (BODY if _is_body(root) and link == root["name"] else link,
                           (w, x, y, z))
    return Described(urdf, sensors)


def _text(path: str) -> str | None:
    """A file's text, read once for every robot of its type (None when it cannot be)."""
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return None
    return _read(path, stamp)


@functools.lru_cache(maxsize=64)
def _read(path: str, stamp: int) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


class RosScene:
    """Everything of one layout that ROS 2 topics need.

    Args:
        layout: A layout document (``World.describe()``, live or recorded).
        snap: A snapshot of that layout (odometry origins of robots not seen before).
        params: Robot name -> module label -> {param: value} (ranges, rates); missing ones
            take the module's defaults.
        origins: Odometry origins of robots already seen (kept across layouts).
    """

    def __init__(self, layout: dict, snap, params: dict | None = None,
                 origins: dict | None = None) -> None:
        self.layout = layout
        self.key = snap.robots
        self.three_d = snap.pose3d is not None
        self.origins = dict(origins or {})
        params = self.params = params or {}  # the cameras' mounts too (.images)
        self.robots: list[RosRobot] = []
        for robot in layout.get("robots", ()):
            name = robot["name"]
            row = snap.index[name]
            if name not in self.origins:
                x, y, yaw = (float(v) for v in snap.poses[row])
                self.origins[name] = (x, y, float(wrap_angle(yaw)))
            ns = ros_robot(name)
            file = described(robot)
            sensors = file.sensors if file is not None else {}
            imu = _inertial(layout, robot)
            link, turn = sensors.get(imu, (BODY, None))
            self.robots.append(RosRobot(
                name, ns, row, self.origins[name],
                float(robot.get("radius", 0.0)),
                _scans(ns, robot, params.get(name, {}), sensors), imu, f"{ns}/{link}",
                None if turn is None or np.allclose(turn, (1.0, 0.0, 0.0, 0.0)) else turn,
                file.urdf if file is not None else None))
        self.occupancy = Occupancy.of_layout(layout)
        self.pending: list[tuple[str, bytes]] = []  # point clouds made by scans()
        where = {r.name: (r.ns, r.row) for r in self.robots}
        # a described robot's links are its own frames (.links), its arm's chain is not sent
        self.arms = RosArms({**layout, "robots": [r for r in layout.get("robots", ())
                                                  if "links" not in r]}, where)
        self.links = RosLinks(layout, where)
        self._inertial = [r for r in self.robots if r.imu]  # /R/imu's robots, looked at a step
        self._rows = np.array([r.row for r in self.robots], dtype=int)
        self._origins = np.array([r.origin for r in self.robots], dtype=float).reshape(-1, 3)
        self._topics = [f"/{r.ns}/odom" for r in self.robots]
        frames = [(f"{r.ns}/odom", f"{r.ns}/base_link") for r in self.robots]
        self._tf = m.TfTemplate(frames)
        self._odom = m.OdomBatch(frames, self.three_d)

    def fits(self, snap) -> bool:
        return snap.robots == self.key and (snap.pose3d is not None) == self.three_d

    # -- messages -------------------------------------------------------------------------------

    def _motion(self, snap) -> tuple:
        """Every robot's pose in its odometry frame (x, y, yaw arrays) and velocity in its
        base frame (forward, sideways m/s; yaw rate rad/s); once per snapshot (odometry and
        /tf both use it)."""
        last = getattr(self, "_last_motion", None)
        if last is None or last[0] is not snap:
            last = self._last_motion = (snap, self._planar_motion(snap))
        return last[1]

    def _planar_motion(self, snap) -> tuple:
        pose = snap.poses[self._rows]
        o = self._origins
        dx, dy = pose[:, 0] - o[:, 0], pose[:, 1] - o[:, 1]
        c, s = np.cos(o[:, 2]), np.sin(o[:, 2])
        yaw = wrap_angle(pose[:, 2] - o[:, 2])
        vel = snap.velocities[self._rows]
        ch, sh = np.cos(pose[:, 2]), np.sin(pose[:, 2])
        return (dx * c + dy * s, -dx * s + dy * c, yaw, vel[:, 0] * ch + vel[:, 1] * sh,
                -vel[:, 0] * sh + vel[:, 1] * ch, vel[:, 2])

    def _motion3d(self, snap) -> tuple[np.ndarray, np.ndarray]:
        """A 3D world's robots: (n, 7) poses x, y, z, qx, qy, qz, qw in their odometry frames
        (the start's x, y and yaw taken off; z from the floor) and (n, 6) twists in their base
        frames (the world velocity turned into the body; the body rates as they are)."""
        pose, twist = snap.pose3d[self._rows], snap.twist3d[self._rows]
        o = self._origins
        dx, dy = pose[:, 0] - o[:, 0], pose[:, 1] - o[:, 1]
        c, s = np.cos(o[:, 2]), np.sin(o[:, 2])
        hw, hz = np.cos(-o[:, 2] / 2), np.sin(-o[:, 2] / 2)  # the turn by -start yaw about z
        w, x, y, z = pose[:, 3], pose[:, 4], pose[:, 5], pose[:, 6]
        odom = np.column_stack((dx * c + dy * s, -dx * s + dy * c, pose[:, 2], hw * x - hz * y,
                                hw * y + hz * x, hw * z + hz * w, hw * w - hz * z))
        linear = np.einsum("nji,nj->ni", quat_matrices(pose[:, 3:7]), twist[:, :3])  # R^T v
        return odom, np.column_stack((linear, twist[:, 3:6]))

    def odometry(self, snap, ns: int) -> list[tuple[str, bytes]]:
        """(topic, nav_msgs/Odometry) of every robot at ``snap``."""
        if not self.robots:
            return []
        if self.three_d:
            return list(zip(self._topics, self._odom.fill_full(ns, *self._motion3d(snap))))
        return list(zip(self._topics, self._odom.fill(ns, *self._motion(snap))))

    def transforms(self, snap, ns: int) -> bytes:
        """tf2_msgs/TFMessage: every robot's ``R/odom`` -> ``R/base_link``."""
        if self.three_d:
            return self._tf.fill_full(ns, self._motion3d(snap)[0])
        x, y, yaw = self._motion(snap)[:3]
        return self._tf.fill(ns, x, y, yaw)

    def arm_messages(self, snap, ns: int) -> list[tuple[str, str, bytes]]:
        """(topic, short type, message) of the arms at ``snap``: each arm's
        ``/R/joint_states`` and one ``/tf`` message of every link (none without arms)."""
        tf = self.arms.transforms(snap, ns)
        links = self.links.messages(snap, ns)
        if tf is None:
            return links
        return [("/tf", m.TF, tf)] + [(topic, m.JOINT_STATE, data)
                                      for topic, data in self.arms.joint_states(snap, ns)] + links

    def imu(self, snap, ns: int) -> list[tuple[str, bytes]]:
        """(topic, sensor_msgs/Imu) of every robot carrying the ``imu`` module: its reading's
        gx, gy, gz and ax, ay, az (body frame) and the true orientation in the world (a 2D
        world: the yaw; none when the snapshot has no reading of it)."""
        out = []
        for r in self._inertial:
            reading, names = snap.readings.get(r.imu), snap.fields.get(r.imu, ())
            if reading is None or not set(IMU_FIELDS) <= set(names):
                continue
            gyro = [names.index(n) for n in IMU_FIELDS[3:]]
            accel = [names.index(n) for n in IMU_FIELDS[:3]]
            if snap.pose3d is not None:
                qw, qx, qy, qz = snap.pose3d[r.row, 3:7].tolist()
                orientation = (qx, qy, qz, qw)
            else:
                orientation = m.yaw_quaternion(float(snap.poses[r.row, 2]))
            row = reading[r.row]
            rates, force = row[gyro], row[accel]
            if r.imu_turn is not None:  # on a link turned in the body: its axes, its attitude
                turn = quat_matrix(r.imu_turn)
                rates, force = turn.T @ rates, turn.T @ force
                body = quat_matrix((orientation[3], *orientation[:3]))
                orientation = matrix_quaternion(body @ turn)
            out.append((f"/{r.ns}/imu", m.imu(ns, r.imu_frame, orientation,
                                              rates.tolist(), force.tolist())))
        return out

    def descriptions(self) -> list[tuple[str, bytes]]:
        """(topic, std_msgs/String) of every robot with an URDF: ``/R/robot_description``
        (published transient local, as robot_state_publisher does)."""
        return [(f"/{r.ns}/robot_description", m.string(r.description))
                for r in self.robots if r.description is not None]

    def static_transforms(self, ns: int) -> bytes:
        """tf2_msgs/TFMessage for ``/tf_static``: ``map`` -> each ``R/odom`` (its start pose)
        and ``R/base_link`` -> each scan frame (not a link of the robot's file: those are on
        ``/tf``)."""
        items = []
        for r in self.robots:
            items.append((ns, "map", f"{r.ns}/odom", *r.origin))
            items += [(ns, f"{r.ns}/base_link", s.frame, *s.mount) for s in r.scans
                      if not s.linked]
        extra = scenery_frames(self.layout, ns)  # protocol 9: the world's meshes and terrain
        return transforms3d(planar(items) + extra) if extra else m.transforms(items)

    def scans(self, snap, ns: int, every: bool = False) -> list[tuple[str, bytes]]:
        """(topic, sensor_msgs/LaserScan) of the scans due at ``snap`` (all with ``every``)."""
        out = []
        for r in self.robots:
            for s in r.scans:
                if not every and snap.time + 1e-9 < s.due:
                    continue
                s.due = snap.time + s.period
                scan = _scanner(s.label).laser_scan(snap, r.name, s.params, r.radius)
                if scan is not None:
                    out.append((s.topic, _template(s, scan).fill(ns, scan.ranges)))
                    self._cloud(snap, ns, r, s)
        return out

    def _cloud(self, snap, ns: int, robot: RosRobot, scan: Scan) -> None:
        """Queue the sensor_msgs/PointCloud2 of a scan cast in 3D with channels (a module's
        ``point_cloud``) on ``/R/points``, in ``R/base_link`` (:meth:`clouds`)."""
        maker = getattr(MODULES.get(scan.label), "point_cloud", None) if scan.cloud else None
        cloud = maker(snap, robot.name, scan.params) if maker is not None else None
        if cloud is not None:
            origin, points = cloud
            self.pending.append((f"/{robot.ns}/points",
                                 m.point_cloud(ns, f"{robot.ns}/base_link", points + origin)))

    def clouds(self) -> list[tuple[str, bytes]]:
        """(topic, sensor_msgs/PointCloud2) of the point clouds the last :meth:`scans` made."""
        out, self.pending = self.pending, []
        return out

    def grid(self, ns: int) -> bytes:
        """nav_msgs/OccupancyGrid of the world's static geometry in ``map``."""
        o = self.occupancy
        return m.occupancy_grid(ns, "map", o.resolution, o.origin, o.cells)

    def topics(self) -> list[tuple[str, str]]:
        """(ROS topic, short type) of every topic this scene publishes."""
        out = [("/clock", m.CLOCK), ("/tf", m.TF), ("/tf_static", m.TF), ("/map", m.GRID)]
        for r in self.robots:
            out.append((f"/{r.ns}/odom", m.ODOMETRY))
            out += [(f"/{r.ns}/imu", m.IMU)] if r.imu else []
            out += [(s.topic, m.SCAN) for s in r.scans]
            out += [(f"/{r.ns}/points", m.CLOUD) for s in r.scans if s.cloud]
        return out + self.arms.topics() + self.links.topics()


def _inertial(layout: dict, robot: dict) -> str:
    """The label of ``robot``'s inertial module (declared fields include :data:`IMU_FIELDS`),
    or ""."""
    described = layout.get("modules") or {}
    for label in robot.get("modules") or ():
        fields = (described.get(label) or {}).get("fields")
        if fields is None and label in MODULES:
            fields = MODULES.get(label).fields
        if set(IMU_FIELDS) <= set(fields or ()):
            return label
    return ""


def _scans(ns: str, robot: dict, params: dict, links: dict | None = None) -> list[Scan]:
    """The robot's range finders (:class:`~coopsim.model.capabilities.LaserScanner` modules,
    or adapted to one), the highest
    ``laser_rank`` (a lidar before a sonar) on ``/R/scan`` in frame ``R/laser``, the others on
    ``/R/scan_LABEL`` in frame ``R/LABEL``; a module on a link of the robot's file (``links``:
    label -> (link, turn), :class:`Described`) in that link's frame ``R/LINK``."""
    links = links or {}
    found = [label for label in robot.get("modules") or () if label in MODULES and
             _scanner(label) is not None]
    found.sort(key=lambda label: -_scanner(label).laser_rank)
    out = []
    for k, label in enumerate(found):
        p = {**_defaults(label), **params.get(label, {})}
        rate = float(p.get("rate") or 0.0) or SCAN_RATE
        frame = f"{ns}/laser" if k == 0 else f"{ns}/{label}"
        if label in links:
            frame = f"{ns}/{links[label][0]}"
        topic = f"/{ns}/scan" if k == 0 else f"/{ns}/scan_{label}"
        cloud = k == 0 and hasattr(MODULES.get(label), "point_cloud") \
            and int(p.get("channels", 1)) > 1
        out.append(Scan(label, topic, frame, p, _scanner(label).laser_mount(p), 1.0 / rate,
                        cloud=cloud, linked=label in links))
    return out


def _scanner(label: str):
    """Module ``label`` as a :class:`~coopsim.model.capabilities.LaserScanner`, or None."""
    return capability(MODULES.get(label), LaserScanner)


def _template(scan: Scan, data) -> m.ScanTemplate:
    """The scan's CDR template for this geometry (made again when the geometry changes)."""
    key = (len(data.ranges), data.angle_min, data.increment, data.range_min, data.range_max)
    if scan.template is None or scan.template[0] != key:
        n = len(data.ranges)
        geometry = m.ScanGeometry(data.angle_min, data.angle_min + data.increment * (n - 1),
                                  data.increment, data.range_min, data.range_max,
                                  scan.period, n)
        scan.template = (key, m.ScanTemplate(scan.frame, geometry))
    return scan.template[1]


def _defaults(label: str) -> dict:
    if label not in MODULES:
        return {}
    return {spec.name: spec.default for spec in MODULES.get(label).params}
