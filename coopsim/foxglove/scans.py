"""Range finders in Foxglove: each robot's main scan as a ``foxglove.LaserScan``.

Which modules are range finders is their own declaration (the
:class:`~coopsim.model.capabilities.LaserScanner` capability, as the ROS 2 bridge asks it;
``laser_rank`` picks a robot's main one, ``laser_mount`` says where it sits):
nothing here names a module. A module the scene already draws as rays (a ``draw`` hint of kind
``rays``, the sonar's) is left to the scene. A robot's scan goes on ``/robots/<name>/scan``
in the robot's frame, at the module's ``rate`` (every publication when it has none), beams with
no return and beams that saw nothing within range as NaN (Foxglove draws no point for them).
A range finder cast in 3D with vertical channels (a module with ``point_cloud``: the ``lidar``
with ``channels`` > 1 on ``mujoco``) also gives its returns as a ``foxglove.PointCloud`` on
``/robots/<name>/points``: float32 x, y, z (m) in the robot's frame, posed at the lidar.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

from ..model.capabilities import LaserScanner, capability, draw_hint
from ..model.plugins import MODULES
from .proto import Msg, pose, timestamp, varint
from .topics import Topic


@dataclass
class _Finder:
    """One robot's main range finder: where it sits and when its next scan is due."""

    robot: str
    label: str
    params: dict
    radius: float
    mount: tuple[float, float, float]  # x, y (m), yaw (rad) in the robot's frame
    period: float  # s between scans; 0 = every publication
    due: float = -math.inf
    cloud: bool = False  # it also gives a point cloud (channels > 1)


def scan_topic(robot: str) -> Topic:
    """The LaserScan topic of one robot: its main range finder that the scene does not draw as
    rays (any module offering ``LaserScanner``, the highest ``laser_rank``), in the robot's
    frame from its mounting point (``pose``), beams from ``start_angle`` to ``end_angle`` (rad,
    counter-clockwise); beams with no return or nothing within range are NaN (no point drawn).
    Sent at the module's ``rate`` (every publication without one): live to whoever subscribes;
    in an export from the recorded scans, with the beam layout and rate of the scenario the
    recording names (the modules' defaults when that file no longer loads). A replay's bridge
    sends none (its snapshots hold the recorded columns only)."""
    return Topic(f"/robots/{robot}/scan", "LaserScan")


def points_topic(robot: str) -> Topic:
    """The PointCloud topic of one robot's lidar with vertical channels (more than one): its
    points with the scan."""
    return Topic(f"/robots/{robot}/points", "PointCloud")


class Scans:
    """The layout's robots' main range finders, and their LaserScan messages step by step.

    Args:
        layout: The layout document (its robots' ``modules`` and ``radius``).
        params: Robot name -> module label -> parameter values (fov, ranges, mount, rate);
            missing ones take the module's defaults.
    """

    def __init__(self, layout: dict, params: dict | None = None) -> None:
        params = params or {}
        self.finders: list[_Finder] = []
        for robot in layout.get("robots", ()):
            label = main_finder(robot.get("modules") or ())
            if label is None:
                continue
            module = MODULES.get(label)
            scanner = capability(module, LaserScanner)
            p = {s.name: s.default for s in module.params}
            p.update(params.get(robot["name"], {}).get(label, {}))
            rate = float(p.get("rate") or 0.0)
            cloud = hasattr(module, "point_cloud") and int(p.get("channels", 1)) > 1
            self.finders.append(_Finder(robot["name"], label, p, float(robot.get("radius", 0.0)),
                                        scanner.laser_mount(p), 1.0 / rate if rate > 0 else 0.0,
                                        cloud=cloud))

    def topics(self) -> list[Topic]:
        """Every LaserScan topic of the layout, and PointCloud topic."""
        return [scan_topic(f.robot) for f in self.finders] + [
            points_topic(f.robot) for f in self.finders if f.cloud]

    def messages(self, snap, ns: int, wanted=None) -> list[tuple[Topic, bytes]]:
        """(topic, foxglove.LaserScan) of the scans due at ``snap`` (time ``ns``); with
        ``wanted`` (topic -> bool, e.g. whether anyone listens), only those topics'."""
        out = []
        for f in self.finders:
            if snap.time + 1e-9 < f.due or (wanted is not None and
                                            not wanted(scan_topic(f.robot))):
                continue
            scanner = capability(MODULES.get(f.label), LaserScanner)
            scan = scanner.laser_scan(snap, f.robot, f.params, f.radius)
            if scan is None:
                continue
            f.due = snap.time + f.period
            out.append((scan_topic(f.robot), laser_scan(scan, f.robot, f.mount, ns)))
            cloud = MODULES.get(f.label).point_cloud(snap, f.robot, f.params) if f.cloud \
                else None
            if cloud is not None and (wanted is None or wanted(points_topic(f.robot))):
                out.append((points_topic(f.robot), point_cloud(*cloud, f.robot, ns)))
        return out


def main_finder(labels) -> str | None:
    """Of module labels ``labels``, the registered range finder of highest ``laser_rank`` not
    drawn as rays by the scene, or None."""
    found = [label for label in labels if label in MODULES
             and capability(MODULES.get(label), LaserScanner) is not None
             and (draw_hint(MODULES.get(label)) or {}).get("kind") != "rays"]
    return max(found, key=lambda label: capability(MODULES.get(label), LaserScanner).laser_rank,
               default=None)


def point_cloud(origin, points: np.ndarray, frame: str, ns: int) -> bytes:
    """foxglove.PointCloud of ``points`` (m, 3) m given from ``origin`` (x, y, z m in
    ``frame``, the frame's axes): float32 x, y, z, 12 bytes a point."""
    msg = Msg().sub(1, timestamp(ns)).string(2, frame)
    msg.sub(3, pose(float(origin[0]), float(origin[1]), float(origin[2]), 0.0, 1.0))
    msg.data += varint(4 << 3 | 5) + struct.pack("<I", 12)  # point_stride, fixed32
    for k, name in enumerate("xyz"):  # PackedElementField: name, offset (fixed32), FLOAT32
        field = Msg().string(1, name)
        field.data += varint(2 << 3 | 5) + struct.pack("<I", 4 * k)
        msg.sub(5, field.uint(3, 7))
    return bytes(msg.raw(6, np.ascontiguousarray(points, dtype="<f4").tobytes()).data)


def laser_scan(scan, frame: str, mount: tuple[float, float, float], ns: int) -> bytes:
    """foxglove.LaserScan of a :class:`~coopsim.model.module.LaserScan` mounted at ``mount``
    (x, y m, yaw rad) in ``frame``: ranges outside [range_min, range_max] become NaN."""
    ranges = np.asarray(scan.ranges, dtype="<f8")
    ranges = np.where((ranges >= scan.range_min) & (ranges <= scan.range_max), ranges, np.nan)
    end = scan.angle_min + scan.increment * max(len(ranges) - 1, 0)
    x, y, yaw = mount
    msg = Msg().sub(1, timestamp(ns)).string(2, frame)
    msg.sub(3, pose(x, y, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)))
    msg.double(4, scan.angle_min).double(5, end)
    return bytes(msg.raw(6, ranges.astype("<f8").tobytes()).data)
