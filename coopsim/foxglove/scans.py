"""Range finders in Foxglove: each robot's main scan as a ``foxglove.LaserScan``.

Which modules are range finders is their own declaration (the
:class:`~coopsim.model.capabilities.LaserScanner` capability, as the ROS 2 bridge asks it;
``laser_rank`` picks a robot's main one, ``laser_mount`` says where it sits):
nothing here names a module. A module the scene already draws as rays (a ``draw`` hint of kind
``rays``, the sonar's) is left to the scene. A robot's scan goes on ``/robots/<name>/scan``
in the robot's frame, at the module's ``rate`` (every publication when it has none), beams with
no return and beams that saw nothing within range as NaN (Foxglove draws no point for them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.capabilities import LaserScanner, capability, draw_hint
from ..model.plugins import MODULES
from .proto import Msg, pose, timestamp
from .scene import Topic


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


def scan_topic(robot: str) -> Topic:
    """The LaserScan topic of one robot."""
    return Topic(f"/robots/{robot}/scan", "LaserScan")


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
            self.finders.append(_Finder(robot["name"], label, p, float(robot.get("radius", 0.0)),
                                        scanner.laser_mount(p), 1.0 / rate if rate > 0 else 0.0))

    def topics(self) -> list[Topic]:
        """Every LaserScan topic of the layout."""
        return [scan_topic(f.robot) for f in self.finders]

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
        return out


def main_finder(labels) -> str | None:
    """Of module labels ``labels``, the registered range finder of highest ``laser_rank`` not
    drawn as rays by the scene, or None."""
    found = [label for label in labels if label in MODULES
             and capability(MODULES.get(label), LaserScanner) is not None
             and (draw_hint(MODULES.get(label)) or {}).get("kind") != "rays"]
    return max(found, key=lambda label: capability(MODULES.get(label), LaserScanner).laser_rank,
               default=None)


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
