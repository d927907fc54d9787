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

On an engine that casts rays in 3D (``mujoco``, ``aerial``) the lidar casts from its real pose
(the chassis's middle height plus ``z``, tilted with the body) and may have ``channels``
vertical channels spread over ``vfov`` degrees: its scan is then channels x beams distances,
channel after channel from the lowest, and it gives a point cloud (command ``points``,
:meth:`point_cloud`; :mod:`.ranging3d`). Other engines cast one level sweep as before, bit for
bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ...model.commands import Command
from ...model.module import LaserScan, Module
from ...model.params import ParamSpec
from . import ranging, ranging3d
from .common import rate, taken_since

MAX_BEAMS = 4096
MAX_CHANNELS = 128  # the most channels a sensor sold has
MAX_RAYS = 131072  # rays a scan (channels x beams): 64 channels of 2048 beams, 1 MiB a scan


@dataclass(frozen=True)
class Scans:
    """The latest scan of every robot carrying a lidar (immutable: it travels in snapshots).

    Attributes:
        index: Robot name -> row of ``ranges``.
        ranges: (robots, widest scan) read-only distances, m (NaN past a robot's own beams).
        layers: Robot name -> (elevations (channels,) rad, max_range m, the lidar's origin
            (3,) m in the body frame) of the scans cast in 3D (:mod:`.ranging3d`), which
            :meth:`points` turns into a point cloud.
    """

    index: Mapping[str, int]
    ranges: np.ndarray
    layers: Mapping[str, tuple] = field(default_factory=dict)

    def of(self, robot: str) -> np.ndarray | None:
        """The scan of ``robot`` (its beams only), or None."""
        row = self.index.get(robot)
        if row is None:
            return None
        scan = self.ranges[row]
        return scan[~np.isnan(scan)]

    def points(self, robot: str, azimuth: np.ndarray, layer: tuple | None = None
               ) -> np.ndarray | None:
        """(m, 3) points, m, of ``robot``'s latest 3D scan in the lidar's frame (its mounting
        point, the body's axes), its beams along ``azimuth`` (rad from the heading); no
        return and nothing seen give no point. None when its scan was not cast in 3D (and no
        ``layer``, (elevations, max_range), says how it was)."""
        layer, scan = layer or self.layers.get(robot), self.of(robot)
        if layer is None or scan is None or len(scan) != len(layer[0]) * len(azimuth):
            return None
        elevation, reach = layer[:2]
        return ranging3d.points(scan, ranging3d.directions(azimuth, elevation), reach)


class Lidar(Module):
    """A planar laser scanner: beam count, field of view, range, noise, dropout, mounting.

    ``beams`` beams over ``fov`` degrees about the sensor's axis (``yaw`` from the heading),
    cast from the mounting point (``x``, ``y``) and measured from it. Over 360° the first beam
    points straight behind (−180°) and the beams are 360°/beams apart (a ROS ``LaserScan``'s
    layout); over a narrower field they run from −fov/2 to +fov/2 inclusive. A return gets
    Gaussian ``noise`` (kept within 0..``max_range``); it reads 0 (no return) when closer than
    ``min_range`` or when the beam drops out (``dropout`` % per beam); ``max_range`` when
    nothing is within it. Robots may carry different beam counts, so the scan is not a reading
    of fixed width: it is published with each step (the snapshot's board entry ``lidar``) and
    served by ``read`` (2100); the module's reading (``info``, 2101, ``reading("lidar")`` for
    rules and drivers) is a six-value summary.

    In 3D (an engine that casts in 3D: ``mujoco``, ``aerial``):

    - **Vertical channels.** A lidar with ``channels`` > 1 casts ``channels`` sweeps of
      ``beams`` beams, their elevations spread evenly over ``vfov`` degrees about the sensor's
      level (one channel: level): ``param lidar.channels 16``, ``param lidar.vfov 30`` is a
      VLP-16. Its scan (``read`` 2100, the snapshot's ``lidar`` board, recordings) is then
      ``channels x beams`` distances, channel after channel from the lowest, each a sweep right
      to left; ``info`` summarises all of them (the bearing of the nearest return is its
      beam's). A scan may cast at most 131,072 rays: ``channels 64`` with ``beams 4096`` is
      refused as ``path:line: tb.lidar: channels x beams is 262144, more than the 131072 rays a
      scan may cast`` (exit 2) or error 4 over the network; ``channels 0`` or ``200`` as any
      parameter out of its range.
    - **Point clouds.** Such a lidar also gives its returns as a point cloud (no return and
      nothing within ``max_range`` give no point): over the protocol ``points`` (2102, the
      protocol: ``[x0, y0, z0, ...]`` m in the lidar's frame, origin at the lidar, the body's
      axes); in Foxglove a ``foxglove.PointCloud`` on ``/robots/<name>/points`` (float32 x, y,
      z, posed at the lidar in the robot's frame); in ROS 2 a ``sensor_msgs/PointCloud2`` on
      ``/<name>/points`` in ``<name>/base_link`` (float32 x, y, z, one row, dense), live and in
      ``coopsim export --ros2``, at the lidar's rate (10 Hz without one). The ROS 2 and
      Foxglove ``LaserScan`` carry the channel nearest the level. Recordings keep each 3D
      lidar's origin, so an exported recording draws the same clouds.

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``read`` (2100): request nothing; reply the latest scan: ``lidar.beams`` distances
      (``channels x beams`` on an engine that casts in 3D, channel after channel, lowest
      first), m, from the sensor's mounting point, beam 0 at ``angle_min`` then every
      ``increment`` to the left (see ``info``); ``0`` = no return (closer than ``min_range``,
      or the beam dropped out), ``max_range`` = nothing within it
    - ``info`` (2101): request nothing; reply ``[nearest, bearing, beams, angle_min, increment,
      time]``: the nearest return (m) and its bearing (rad from the heading, + = left), the
      beam count, the first beam's angle and the angle between beams (rad from the heading),
      the simulated time the scan was taken (s)
    - ``points`` (2102): request nothing; reply the scan's point cloud, in a world on an engine
      that casts in 3D (``mujoco``, ``aerial``; docs/robots.md *Range sensing in 3D*): ``[x0,
      y0, z0, x1, y1, z1, ...]``, m, one point per return (no return and nothing within
      ``max_range`` give none), in the lidar's frame: origin at the lidar (its chassis's middle
      height plus ``x``, ``y``, ``z``), axes the robot body's (x ahead, y left, z up); channel
      after channel (lowest first), each a sweep right to left. ``[]`` on other engines. A 16 x
      360 cloud is 17,280 floats (~155 KiB of msgpack), a reply: the 64 KiB limit is on
      requests
    """

    label = "lidar"
    mount = "xyz_yaw_middle"  # a described robot's sensor line: x, y, z and yaw
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
        ParamSpec("channels", "int", "vertical channels, each a sweep of beams (3D engines; "
                  "others cast one level sweep)", 1, 1, MAX_CHANNELS),
        ParamSpec("vfov", "float", "vertical field of view the channels spread over, degrees, "
                  "centred on the level", 30.0, 0.0, 180.0, "deg"),
        ParamSpec("z", "float", "mounting height above the chassis's middle, m (3D engines)",
                  0.0, -5.0, 5.0, "m"),
    )
    commands = (
        Command(2100, "read", "lidar", kind="read",
                doc="the scan: beams distances, m, from angle_min by increment (right to "
                    "left); 0 = no return, max_range = nothing within it"),
        Command(2101, "info", "lidar", kind="read",
                doc="nearest (m), its bearing (rad), beams, angle_min (rad), increment (rad), "
                    "time the scan was taken (s)"),
        Command(2102, "points", "lidar", kind="read",
                doc="the scan's point cloud (3D engines): x, y, z (m) of each return, one "
                    "after the other, lidar frame (mounting point, body axes); [] elsewhere"),
    )
    fields = ("nearest", "bearing", "beams", "angle_min", "increment", "time")

    @classmethod
    def check_values(cls, values, robot=None) -> str:
        """The :class:`~coopsim.model.capabilities.ValueChecker` capability: at most
        :data:`MAX_RAYS` rays a scan (channels x beams)."""
        rays = int(values.get("channels", 1)) * int(values.get("beams", 1))
        if rays > MAX_RAYS:
            return (f"channels x beams is {rays}, more than the {MAX_RAYS} rays a scan may "
                    "cast")
        return ""

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        if ranging3d.active(frame):
            return _measure3d(frame, rows, p, rng)
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
        out = {"robots": names, "steps": when, "beams": [len(p) for p in parts],
               "mm": mm.tobytes()}
        if scans.layers:  # cast in 3D: where each lidar sat on its body (its point cloud's)
            out["origins"] = [[float(v) for v in scans.layers[n][2]] if n in scans.layers
                              else [0.0, 0.0, 0.0] for n in names]
        return out

    laser_rank = 1  # a robot's lidar, not its sonar, is its /R/scan

    @classmethod
    def laser_scan(cls, snap, robot, params, radius):
        """The latest scan from the mounting point; nothing seen (max_range) is +inf, no return
        (0) stays below range_min."""
        scans = snap.extra.get(cls.label)
        scan = scans.of(robot) if scans is not None else None
        if scan is None or not len(scan):
            return None
        scan = _level(scan, params)
        angles = ranging.beam_angles(len(scan), math.radians(float(params["fov"])))
        reach = float(params["max_range"])
        ranges = np.where(scan >= reach - 1e-9, np.inf, scan)
        step = float(angles[1] - angles[0]) if len(angles) > 1 else 0.0
        return LaserScan(float(angles[0]), step, ranges, float(params["min_range"]), reach)

    @classmethod
    def point_cloud(cls, snap, robot, params):
        """(origin (3,) m in the body frame, (m, 3) points m in the lidar's frame) of the
        robot's latest scan when it was cast in 3D with more than one channel, else None
        (:meth:`Scans.points`; a replayed scan takes its layers from ``params``)."""
        scans = snap.extra.get(cls.label)
        if scans is None or int(params.get("channels", 1)) < 2:
            return None
        layer = scans.layers.get(robot)  # a replay's knows the origin only
        origin = layer[2] if layer is not None else np.array(
            [float(params[k]) for k in ("x", "y", "z")])
        layer = (ranging3d.elevations(int(params["channels"]), math.radians(float(
            params["vfov"]))), float(params["max_range"]), origin)
        azimuth = ranging.beam_angles(int(params["beams"]), math.radians(float(params["fov"])),
                                      math.radians(float(params["yaw"])))
        cloud = scans.points(robot, azimuth, layer)
        return None if cloud is None else (layer[2], cloud)

    @classmethod
    def laser_mount(cls, params):
        return float(params["x"]), float(params["y"]), math.radians(float(params["yaw"]))

    @classmethod
    def replay(cls, data, board, robots):
        """The scans a recorded step carries (its ``record``: robots, beams, int32 mm), merged
        over the previous step's (robots that took none keep theirs)."""
        scans: dict[str, np.ndarray] = {}
        layers = {}
        if board is not None:
            scans = {n: board.of(n) for n in board.index if n in robots}
            layers = {n: v for n, v in board.layers.items() if n in robots}
        if data:
            mm = np.frombuffer(data["mm"], dtype="<i4") / 1000.0
            at = 0
            for name, beams in zip(data["robots"], data["beams"]):
                scans[name] = mm[at:at + beams]
                at += beams
            for name, origin in zip(data["robots"], data.get("origins", ())):
                layers[name] = (None, None, np.array(origin, dtype=float))  # its params: the rest
        if not scans:
            return board
        names = list(scans)
        ranges = np.full((len(names), max(len(v) for v in scans.values())), np.nan)
        for k, name in enumerate(names):
            ranges[k, :len(scans[name])] = scans[name]
        ranges.flags.writeable = False
        return Scans(MappingProxyType({n: i for i, n in enumerate(names)}), ranges,
                     MappingProxyType(layers))

    @classmethod
    def answer_robot(cls, command, robot, row, text, snap):
        if command.name == "info":
            return "", row.tolist()
        scans = snap.extra.get("lidar")
        if command.name == "points":  # the beams' bearings from the info row
            azimuth = row[3] + np.arange(int(row[2])) * row[4]
            cloud = scans.points(robot, azimuth) if scans is not None else None
            return "", [] if cloud is None else cloud.reshape(-1).tolist()
        scan = scans.of(robot) if scans is not None else None
        return "", [] if scan is None else scan.tolist()


def _measure3d(frame, rows, p, rng) -> np.ndarray:
    """:meth:`Lidar.measure` in a world casting in 3D: channels x beams a scan, each layout
    (beams, fov, yaw, channels, vfov) one cast (:mod:`.ranging3d`)."""
    out = np.zeros((len(rows), len(Lidar.fields)))
    widest = int((p["beams"] * p["channels"]).max()) if len(rows) else 0
    ranges = np.full((len(rows), widest), np.nan)
    layers = {}
    for (beams, fov, yaw, channels, vfov), group in ranging.configurations(
            p["beams"], p["fov"], p["yaw"], p["channels"], p["vfov"]):
        beams, fov, yaw = int(beams), math.radians(fov), math.radians(yaw)
        elevation = ranging3d.elevations(int(channels), math.radians(vfov))
        sub = {k: v[group] for k, v in p.items()}
        scan = _scan(frame, rows[group], sub, beams, fov, yaw, rng, elevation)
        ranges[group, :scan.shape[1]] = scan
        out[group] = _summary(scan, beams, fov, yaw, frame.time)
        origin = np.column_stack((sub["x"], sub["y"], sub["z"]))
        origin[:, 2] += frame.physics.chassis_extent(rows[group]).mean(axis=1)
        for r, reach, at in zip(rows[group].tolist(), sub["max_range"].tolist(), origin):
            layers[frame.names[r]] = (elevation, reach, at)
    frame.extra["lidar"] = _merged(frame, rows, ranges, layers)
    return out


def _merged(frame, rows, ranges, layers: dict | None = None) -> Scans:
    """The board's scans with those of robots ``rows`` replaced by ``ranges``; robots holding
    their scan (a ``rate``) keep the one they took, robots gone from the world are dropped.
    ``layers``: the 3D scans' elevations and reach (:attr:`Scans.layers`), by robot name."""
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
    index = MappingProxyType({n: i for i, n in enumerate(names)})
    if layers is None:
        return Scans(index, ranges)
    if old is not None:  # the held scans keep their layers
        layers = {**{n: old.layers[n] for n, _ in held if n in old.layers}, **layers}
    return Scans(index, ranges, MappingProxyType(layers))


def _scan(frame, rows, p, beams, fov, yaw, rng, elevation=None) -> np.ndarray:
    """The scans (len(rows), beams) of robots sharing one beam layout, m; cast in 3D
    (len(rows), channels x beams) when ``elevation`` gives the channels' angles, rad."""
    angles = ranging.beam_angles(beams, fov, yaw)
    reach = p["max_range"]
    if elevation is None:
        dist = ranging.cast_mounted(frame, rows, angles, reach, p["x"], p["y"])
    else:
        mount = np.column_stack((p["x"], p["y"], p["z"]))
        dist = ranging3d.cast(frame, rows, ranging3d.directions(angles, elevation), reach,
                              mount)
    hit = dist < reach[:, None]
    dist = np.where(hit, np.clip(ranging.noisy(dist, p["noise"], rng), 0.0, reach[:, None]),
                    dist)
    gone = ranging.dropped(dist.shape, p["dropout"], rng)
    void = dist < p["min_range"][:, None]
    if gone is not None:
        void |= gone
    dist[void] = 0.0
    return dist


def _level(scan: np.ndarray, params) -> np.ndarray:
    """The channel of a scan cast in 3D nearest the level (the scan itself with one)."""
    beams = int(params.get("beams", len(scan)))
    channels = len(scan) // beams if beams else 1
    if channels < 2 or len(scan) != channels * beams:
        return scan
    k = int(np.argmin(np.abs(ranging3d.elevations(channels, math.radians(float(
        params.get("vfov", 30.0)))))))
    return scan[k * beams:(k + 1) * beams]


def _summary(scan, beams, fov, yaw, time) -> np.ndarray:
    """Rows of (nearest, bearing, beams, angle_min, increment, time) for scans (n, beams)."""
    angles = ranging.beam_angles(beams, fov, yaw)
    valid = np.where(scan > 0.0, scan, np.inf)
    k = np.argmin(valid, axis=1)
    nearest = valid[np.arange(len(scan)), k]
    out = np.empty((len(scan), 6))
    out[:, 0] = np.where(np.isfinite(nearest), nearest, 0.0)
    out[:, 1] = np.where(np.isfinite(nearest), angles[k % beams], 0.0)  # channels: its beam
    out[:, 2], out[:, 3] = beams, angles[0]
    out[:, 4], out[:, 5] = ranging.increment(beams, fov), time
    return out
