"""``camera``: a coloured-blob camera (ARGoS's omnidirectional camera, or one looking forward).

It does not render images: like ARGoS's colored-blob cameras it returns the *blobs* it sees,
each with its colour, distance, bearing and apparent size:

* other robots' lit LEDs (the ``leds`` module): one blob per robot and colour, at the robot's
  centre, as large as its chassis;
* targets, at their position (a 0.1 m marker), in their colour;
* objects, static or movable, whose colour is not the default grey (150, 150, 150) nor a
  map's walls (90, 90, 90), at their centre where they are now, as large as their footprint
  (a box: half its diagonal; a cylinder or sphere: its radius).

A blob is seen when it lies within ``range`` m and, for a camera with ``fov`` below 360 degrees,
within ``fov`` / 2 of the heading, and when the straight line to it meets no wall, object or
other robot first (occlusion: one ray per candidate, cast on the same geometry as every range
sensor). Gaussian ``noise`` is added to distances (m) and bearings (rad); each blob is lost with
chance ``lost`` %. Blobs are served by ``read`` (6 numbers each, nearest first); the module's
reading holds the number of blobs and the nearest one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ...model.commands import Command
from ...model.module import Module
from ...model.params import ParamSpec
from ...model.specs import COLORS
from .common import lost, rate, taken_since, wrap
from .leds import unpack

TARGET_RADIUS = 0.05  # m, a target marker's apparent radius
GREY = (150, 150, 150)
MAP_GREY = (90, 90, 90)


@dataclass(frozen=True)
class Blobs:
    """What every camera saw at its latest update (immutable: it travels in snapshots).

    Attributes:
        seen: Robot name -> (k, 6) read-only rows R, G, B, distance (m), bearing (rad), apparent
            size (rad), nearest first.
    """

    seen: Mapping[str, np.ndarray]


class Camera(Module):
    """Coloured blobs in view: other robots' LEDs, targets, coloured objects; occluded.

    A coloured-blob camera as ARGoS's: no image, the blobs it would find in one. Candidates are
    the lit LEDs of other robots (one blob per robot and colour, at the robot's centre, as
    large as its chassis), the targets (a 0.1 m marker in the target's colour) and objects,
    static or movable, whose colour is neither the default grey (150 150 150) nor a map's walls
    (90 90 90): at their centre where they are *now* (a pushed or carried object's blob moves
    with it), as large as a box's half diagonal or a cylinder's or sphere's radius. A candidate
    is seen when it is within ``range``, within ``fov``/2 of the heading (``fov`` 360: all
    round), and nothing (a wall, an object of any colour, another robot) meets the straight
    line to it before its own body: one ray per candidate on the same geometry as every range
    sensor. Its apparent size is 2 atan(radius / distance). ``noise`` is added to distances and
    bearings; ``lost`` drops a blob. Blobs are served by ``read`` (2300) and published in the
    snapshot's board (``camera``); the reading row is a summary. Blobs are recorded when a
    camera updates (at its ``rate``; recording format 3, docs/recording-format.md *Module
    records*: colour exact, distance to the millimetre, angles to 1e-4 rad) and come back in
    exports (``coopsim export``, the Foxglove and rosbag exports read the recording step by
    step).

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``read`` (2300): request nothing; reply 6 numbers per blob seen, nearest first: ``[R, G,
      B, distance m, bearing rad (+ = left), apparent size rad, ...]`` (other robots' lit LEDs,
      targets, coloured objects; docs/robots.md *The camera*); no data when nothing is seen
    """

    label = "camera"
    mount = "link"  # how a described robot's sensor line mounts it
    description = ("coloured blobs in view (LEDs, targets, coloured objects): colour, distance "
                   "(m), bearing (rad), apparent size (rad); occluded by walls and objects")
    params = (
        ParamSpec("fov", "float", "field of view, degrees (360: omnidirectional)", 360.0, 1.0,
                  360.0, "deg"),
        ParamSpec("range", "float", "farthest blob seen, m", 2.0, 0.01, 100.0, "m"),
        ParamSpec("noise", "float", "std of Gaussian noise on distances (m) and bearings (rad)",
                  0.0, 0.0, 1.0, "m, rad"),
        lost(),
        rate(),
    )
    commands = (Command(2300, "read", "camera", kind="read",
                        doc="6 numbers per blob, nearest first: R, G, B (0..255), distance (m), "
                            "bearing (rad, + = left), apparent size (rad)"),)
    fields = ("blobs", "nearest", "bearing")

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        out = np.zeros((len(rows), 3))
        old = frame.extra.get("camera")
        seen = dict(old.seen) if old is not None else {}
        views = _views(frame, rows, _candidates(frame), p, rng)
        for i, r in enumerate(rows.tolist()):
            blobs = views[i]
            seen[frame.names[r]] = blobs
            out[i, 0] = len(blobs)
            if len(blobs):
                out[i, 1], out[i, 2] = blobs[0, 3], blobs[0, 4]
        alive = set(frame.names)
        frame.extra["camera"] = Blobs(MappingProxyType(
            {n: b for n, b in seen.items() if n in alive}))
        return out

    @classmethod
    def record(cls, snap, after):
        """The blobs seen by cameras updated after step ``after``: ``{"robots": [name...],
        "steps": [step taken...], "counts": [blobs...], "blobs": bytes}``, every listed
        camera's blobs one after the other, each 4 little-endian int32: colour R * 65536 +
        G * 256 + B, distance mm, bearing and apparent size in 1e-4 rad
        (docs/recording-format.md); None if none."""
        board = snap.extra.get("camera")
        if board is None or not board.seen:
            return None
        names, when = taken_since(snap, "camera", board.seen, after)
        if not names:
            return None
        parts = [board.seen[n] for n in names]
        rows = np.concatenate(parts) if any(len(b) for b in parts) else np.zeros((0, 6))
        packed = np.empty((len(rows), 4), dtype="<i4")
        packed[:, 0] = rows[:, 0].astype(np.int64) * 65536 + rows[:, 1].astype(np.int64) * 256 \
            + rows[:, 2].astype(np.int64)
        packed[:, 1] = np.rint(rows[:, 3] * 1000.0)
        packed[:, 2:] = np.rint(rows[:, 4:6] * 1e4)
        return {"robots": names, "steps": when, "counts": [len(b) for b in parts],
                "blobs": packed.tobytes()}

    @classmethod
    def replay(cls, data, board, robots):
        """The blobs a recorded step carries (its ``record``), merged over the previous step's
        (cameras that took none keep theirs; robots gone are dropped)."""
        alive = set(robots)
        seen = {n: b for n, b in board.seen.items() if n in alive} if board is not None else {}
        if data:
            packed = np.frombuffer(data["blobs"], dtype="<i4").reshape(-1, 4).astype(float)
            rows = np.column_stack((unpack(packed[:, 0]), packed[:, 1] / 1000.0,
                                    packed[:, 2:] / 1e4))
            cut = np.concatenate(([0], np.cumsum(data["counts"])))
            for k, name in enumerate(data["robots"]):
                blobs = rows[cut[k]:cut[k + 1]].copy()
                blobs.flags.writeable = False
                seen[name] = blobs
        if not seen:
            return board
        return Blobs(MappingProxyType(seen))

    @classmethod
    def answer_robot(cls, command, robot, row, text, snap):
        blobs = snap.extra.get("camera")
        mine = blobs.seen.get(robot) if blobs is not None else None
        return "", [] if mine is None else mine.reshape(-1).tolist()


def _candidates(frame) -> tuple:
    """(xy (k, 2), radius (k,), rgb (k, 3), owner row or -1 (k,)) of everything a camera could
    see this step."""
    xy, rad, rgb, owner = [], [], [], []
    # the LEDs' colours shown this step, by robot row (0, off, for a robot without LEDs)
    shown = frame.state("leds").arrays["shown"]
    if shown.any():
        i, k = np.nonzero(shown > 0)  # each (robot, distinct colour) once
        key = np.unique(i.astype(np.int64) * (1 << 24) + shown[i, k].astype(np.int64))
        r, colour = key >> 24, key & ((1 << 24) - 1)
        xy += list(frame.pose[r, :2])
        rad += list(frame.radius[r])
        rgb += list(unpack(colour))
        owner += list(r)
    for position, color in zip(frame.targets, frame.target_colors):
        xy.append(np.asarray(position, float))
        rad.append(TARGET_RADIUS)
        rgb.append(np.asarray(COLORS.get(color, (255, 255, 255))))
        owner.append(-1)
    coloured, radius = _coloured(frame)
    if len(coloured):  # where they are now: movable objects move, static ones stay
        xy += list(frame.physics.object_poses(coloured)[:, :2])
        rad += list(radius)
        rgb += [np.asarray(frame.objects[i].color) for i in coloured.tolist()]
        owner += [-2] * len(coloured)
    if not xy:
        return np.zeros((0, 2)), np.zeros(0), np.zeros((0, 3)), np.zeros(0, np.int64)
    return np.array(xy, float), np.array(rad, float), np.array(rgb, float), np.array(owner)


def _coloured(frame) -> tuple[np.ndarray, np.ndarray]:
    """Indices (into ``frame.objects``) of the objects a camera sees, and their apparent radii
    (m): those not coloured grey nor a map's walls. Worked out once per layout (kept on the
    board under a private key, never published)."""
    cached = frame.extra.get("_camera_objects")
    if cached is not None and cached[0] is frame.objects:
        return cached[1], cached[2]
    which = [i for i, o in enumerate(frame.objects) if tuple(o.color) not in (GREY, MAP_GREY)]
    radius = [0.5 * (math.hypot(o.size[0], o.size[1]) if o.shape == "box" else o.size[0])
              for o in (frame.objects[i] for i in which)]
    out = (frame.objects, np.array(which, dtype=np.int64), np.array(radius, float))
    frame.extra["_camera_objects"] = out
    return out[1], out[2]


def _views(frame, rows, cand, p, rng) -> list[np.ndarray]:
    """Every camera's blobs, (k, 6) each, nearest first, for robots ``rows`` at once: the
    candidates within range found with a k-d tree, filtered by field of view, and one batched
    ray cast for the occlusion test of every (camera, candidate) pair left."""
    from scipy.spatial import cKDTree

    empty = np.zeros((0, 6))
    xy, rad, rgb, owner = cand
    if not len(xy) or not len(rows):
        return [empty] * len(rows)
    pose = frame.pose[rows]
    pairs = cKDTree(xy).query_ball_point(pose[:, :2], p["range"])
    cam = np.repeat(np.arange(len(rows)), [len(q) for q in pairs])
    if not len(cam):
        return [empty] * len(rows)
    obj = np.concatenate([np.asarray(q, dtype=np.int64) for q in pairs])
    dx, dy = xy[obj, 0] - pose[cam, 0], xy[obj, 1] - pose[cam, 1]
    d = np.hypot(dx, dy)
    bearing = wrap(np.arctan2(dy, dx) - pose[cam, 2])
    ok = (owner[obj] != rows[cam]) & (d > 1e-9) \
        & (np.abs(bearing) <= np.radians(p["fov"][cam]) / 2 + (p["fov"][cam] >= 360.0) * 10)
    cam, obj, d, bearing = cam[ok], obj[ok], d[ok], bearing[ok]
    if not len(cam):
        return [empty] * len(rows)
    # occlusion: the first thing on the line to the blob must be its own body (a robot or an
    # object: its surface, d - radius) or, for a target (no body), nothing before it
    dirs = np.column_stack(((xy[obj, 0] - pose[cam, 0]) / d, (xy[obj, 1] - pose[cam, 1]) / d))
    hit = frame.geometry.cast(pose[cam, :2], dirs, d, ray_group=frame.group[rows][cam])
    surface = np.where(owner[obj] == -1, d, d - rad[obj])
    ok = hit >= surface - 1e-6
    blobs = np.column_stack((rgb[obj], d, bearing, 2.0 * np.arctan2(rad[obj], d)))[ok]
    cam = cam[ok]
    lost = p["lost"][cam]
    if lost.any():
        keep = rng.random(len(blobs)) * 100.0 >= lost
        blobs, cam = blobs[keep], cam[keep]
    noise = p["noise"][cam]
    if noise.any():
        blobs[:, 3:5] += rng.standard_normal((len(blobs), 2)) * noise[:, None]
        blobs[:, 3] = np.maximum(blobs[:, 3], 0.0)
        blobs[:, 4] = wrap(blobs[:, 4])
    order = np.lexsort((blobs[:, 3], cam))  # by camera, then nearest first
    blobs, cam = blobs[order], cam[order]
    cut = np.searchsorted(cam, np.arange(len(rows) + 1))
    out = []
    for i in range(len(rows)):
        b = blobs[cut[i]:cut[i + 1]]
        b.flags.writeable = False
        out.append(b)
    return out
