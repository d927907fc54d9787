"""``lidar``: a configurable planar laser range finder (IR-SIM's and Stage's ranger).

``beams`` beams spread evenly over ``fov`` degrees about the sensor's axis (a full 360 degrees
starts straight behind, as a ROS ``LaserScan``), cast from the mounting point (``x``, ``y`` in
the robot's frame, turned by ``yaw``), measured from it. A beam reads the distance to the first
wall, object, robot or map cell it meets, with Gaussian ``noise``; ``max_range`` when nothing is
within it; 0 (no return) when closer than ``min_range`` or lost (``dropout`` % per beam).

The scan itself is not one column per beam: robots may carry different beam counts, and a
360-beam scan would cost 360 columns every step. It is published in the snapshot's board as
``lidar`` (:class:`Scans`) and served by ``read``; the reading row (``info``) holds a summary:
the nearest return and its bearing, the beam layout and the time the scan was taken.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ...model.commands import Command
from ...model.module import LaserScan, Module
from ...model.params import ParamSpec
from . import ranging
from .common import rate, taken_since

MAX_BEAMS = 4096


@dataclass(frozen=True)
class Scans:
    """The latest scan of every robot carrying a lidar (immutable: it travels in snapshots).

    Attributes:
        index: Robot name -> row of ``ranges``.
        ranges: (robots, widest scan) read-only distances, m (NaN past a robot's own beams).
    """

    index: Mapping[str, int]
    ranges: np.ndarray

    def of(self, robot: str) -> np.ndarray | None:
        """The scan of ``robot`` (its beams only), or None."""
        row = self.index.get(robot)
        if row is None:
            return None
        scan = self.ranges[row]
        return scan[~np.isnan(scan)]


class Lidar(Module):
    """A planar laser scanner: beam count, field of view, range, noise, dropout, mounting."""

    label = "lidar"
    mount = "xy_yaw"  # how a described robot's sensor line mounts it
    description = ("laser scan: beams distances (m) over fov degrees, right to left; 0 = no "
                   "return (closer than min_range or dropped), max_range = nothing seen")
    params = (
        ParamSpec("beams", "int", "number of beams", 360, 1, MAX_BEAMS),
        ParamSpec("fov", "float", "field of view, degrees (360: all round)", 360.0, 1.0, 360.0,
                  "deg"),
        ParamSpec("min_range", "float", "nearest distance measured (closer: 0, no return), m",
                  0.12, 0.0, 100.0, "m"),
        ParamSpec("max_range", "float", "farthest distance measured, m", 3.5, 0.05, 100.0, "m"),
        ParamSpec("noise", "float", "std of Gaussian noise added to each return, m", 0.0, 0.0,
                  1.0, "m"),
        ParamSpec("dropout", "float", "chance that a beam gives no return, %", 0.0, 0.0,
                  100.0, "%"),
        ParamSpec("x", "float", "mounting point ahead of the robot's centre, m", 0.0, -5.0,
                  5.0, "m"),
        ParamSpec("y", "float", "mounting point left of the robot's centre, m", 0.0, -5.0, 5.0,
                  "m"),
        ParamSpec("yaw", "float", "direction of the sensor's axis from the heading, degrees",
                  0.0, -180.0, 180.0, "deg"),
        rate(),
    )
    commands = (
        Command(2100, "read", "lidar", kind="read",
                doc="the scan: beams distances, m, from angle_min by increment (right to "
                    "left); 0 = no return, max_range = nothing within it"),
        Command(2101, "info", "lidar", kind="read",
                doc="nearest (m), its bearing (rad), beams, angle_min (rad), increment (rad), "
                    "time the scan was taken (s)"),
    )
    fields = ("nearest", "bearing", "beams", "angle_min", "increment", "time")

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        out = np.zeros((len(rows), len(cls.fields)))
        widest = int(p["beams"].max()) if len(rows) else 0
        ranges = np.full((len(rows), widest), np.nan)
        for (beams, fov, yaw), group in ranging.configurations(p["beams"], p["fov"], p["yaw"]):
            scan = _scan(frame, rows[group], {k: v[group] for k, v in p.items()}, int(beams),
                         math.radians(fov), math.radians(yaw), rng)
            ranges[group, :int(beams)] = scan
            out[group] = _summary(scan, int(beams), math.radians(fov), math.radians(yaw),
                                  frame.time)
        frame.extra["lidar"] = _merged(frame, rows, ranges)
        return out

    @classmethod
    def record(cls, snap, after):
        """The scans taken after step ``after``: ``{"robots": [name...], "steps": [step
        taken...], "beams": [count...], "mm": bytes}``, the ranges of every scan one after the
        other as little-endian int32 millimetres (docs/recording-format.md); None if none."""
        scans = snap.extra.get("lidar")
        if scans is None or not scans.index:
            return None
        names, when = taken_since(snap, "lidar", scans.index, after)
        if not names:
            return None
        parts = [scans.of(n) for n in names]
        mm = np.rint(np.concatenate(parts) * 1000.0).astype("<i4")
        return {"robots": names, "steps": when, "beams": [len(p) for p in parts],
                "mm": mm.tobytes()}

    laser_rank = 1  # a robot's lidar, not its sonar, is its /R/scan

    @classmethod
    def laser_scan(cls, snap, robot, params, radius):
        """The latest scan from the mounting point; nothing seen (max_range) is +inf, no return
        (0) stays below range_min."""
        scans = snap.extra.get(cls.label)
        scan = scans.of(robot) if scans is not None else None
        if scan is None or not len(scan):
            return None
        angles = ranging.beam_angles(len(scan), math.radians(float(params["fov"])))
        reach = float(params["max_range"])
        ranges = np.where(scan >= reach - 1e-9, np.inf, scan)
        step = float(angles[1] - angles[0]) if len(angles) > 1 else 0.0
        return LaserScan(float(angles[0]), step, ranges, float(params["min_range"]), reach)

    @classmethod
    def laser_mount(cls, params):
        return float(params["x"]), float(params["y"]), math.radians(float(params["yaw"]))

    @classmethod
    def replay(cls, data, board, robots):
        """The scans a recorded step carries (its ``record``: robots, beams, int32 mm), merged
        over the previous step's (robots that took none keep theirs)."""
        scans: dict[str, np.ndarray] = {}
        if board is not None:
            scans = {n: board.of(n) for n in board.index if n in robots}
        if data:
            mm = np.frombuffer(data["mm"], dtype="<i4") / 1000.0
            at = 0
            for name, beams in zip(data["robots"], data["beams"]):
                scans[name] = mm[at:at + beams]
                at += beams
        if not scans:
            return board
        names = list(scans)
        ranges = np.full((len(names), max(len(v) for v in scans.values())), np.nan)
        for k, name in enumerate(names):
            ranges[k, :len(scans[name])] = scans[name]
        ranges.flags.writeable = False
        return Scans(MappingProxyType({n: i for i, n in enumerate(names)}), ranges)

    @classmethod
    def answer_robot(cls, command, robot, row, text, snap):
        if command.name == "info":
            return "", row.tolist()
        scans = snap.extra.get("lidar")
        scan = scans.of(robot) if scans is not None else None
        return "", [] if scan is None else scan.tolist()


def _merged(frame, rows, ranges) -> Scans:
    """The board's scans with those of robots ``rows`` replaced by ``ranges``; robots holding
    their scan (a ``rate``) keep the one they took, robots gone from the world are dropped."""
    names = [frame.names[r] for r in rows.tolist()]
    old = frame.extra.get("lidar")
    held = []
    if old is not None:
        fresh, alive = set(names), set(frame.names)
        held = [(n, i) for n, i in old.index.items() if n not in fresh and n in alive]
    if held:
        width = max(ranges.shape[1], old.ranges.shape[1])
        merged = np.full((len(names) + len(held), width), np.nan)
        merged[:len(names), :ranges.shape[1]] = ranges
        merged[len(names):, :old.ranges.shape[1]] = old.ranges[[i for _, i in held]]
        names, ranges = names + [n for n, _ in held], merged
    ranges.flags.writeable = False
    return Scans(MappingProxyType({n: i for i, n in enumerate(names)}), ranges)


def _scan(frame, rows, p, beams, fov, yaw, rng) -> np.ndarray:
    """The scans (len(rows), beams) of robots sharing one beam layout, m."""
    angles = ranging.beam_angles(beams, fov, yaw)
    reach = p["max_range"]
    dist = ranging.cast_mounted(frame, rows, angles, reach, p["x"], p["y"])
    hit = dist < reach[:, None]
    dist = np.where(hit, np.clip(ranging.noisy(dist, p["noise"], rng), 0.0, reach[:, None]),
                    dist)
    gone = ranging.dropped(dist.shape, p["dropout"], rng)
    void = dist < p["min_range"][:, None]
    if gone is not None:
        void |= gone
    dist[void] = 0.0
    return dist


def _summary(scan, beams, fov, yaw, time) -> np.ndarray:
    """Rows of (nearest, bearing, beams, angle_min, increment, time) for scans (n, beams)."""
    angles = ranging.beam_angles(beams, fov, yaw)
    valid = np.where(scan > 0.0, scan, np.inf)
    k = np.argmin(valid, axis=1)
    nearest = valid[np.arange(len(scan)), k]
    out = np.empty((len(scan), 6))
    out[:, 0] = np.where(np.isfinite(nearest), nearest, 0.0)
    out[:, 1] = np.where(np.isfinite(nearest), angles[k], 0.0)
    out[:, 2], out[:, 3] = beams, angles[0]
    out[:, 4], out[:, 5] = ranging.increment(beams, fov), time
    return out
