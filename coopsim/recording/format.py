"""The recording format: what a coopsim MCAP file holds, and the decoder of its step frames (their
encoder is :mod:`coopsim.recording.encoding`).

A recording is an MCAP file (profile ``coopsim``, zstd-compressed chunks, msgpack messages):

* Metadata ``coopsim`` (written first, outside any chunk): format version, scenario name and path,
  seed, dt, settings, record interval, keyframe interval, start time (UTC) and the column tables
  below, each value a string (JSON for the structured ones).
* Attachments: the scenario file's and the world file's full text.
* Channel ``/layout``: ``World.describe()`` whenever ``layout_version`` changes (insertion,
  update, removal, reset), with the sim step and time. Layout messages are numbered 0, 1, ...
  in the order written (their *ordinal*).
* Channel ``/frames``: blocks of consecutive recorded steps of one layout (one block per writer
  wake-up, so about 1 to 100 steps). A message's ``log_time`` is the *recording time* of its
  first step in ns: 0 at the first recorded step, then the sim time since, kept increasing across
  resets. Robots carry the columns of :func:`robot_columns` (pose, velocity, then every
  registered module's columns: wheel commands, sonar, a plugin's...), objects and parts those of
  :data:`BODY_COLUMNS`; values are quantized to the column's
  unit. A block that starts with a *keyframe* holds absolute values for its first step; every
  other step holds differences (first or second order, per column) from the step before. Every
  chunk starts with a keyframe, so a seek decodes one chunk. (A chunk's index time range ends at
  the first step of its last block; the steps' own times are in the blocks.)
* Metadata ``coopsim.end`` (only when the recorder closed normally): steps written, steps
  dropped because the disk fell behind, end time.

Units: x/y world frame in metres, yaw in radians (unwrapped: the body's angle), velocities in
m/s and rad/s (world frame), wheel commands in m/s, sonar distances in metres.
docs/recording-format.md is the normative description, for readers in other languages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import msgpack
import numpy as np

from ..model.errors import RecordingError
from ..model.module import Column

PROFILE = "coopsim"
#: The version written into a new recording's metadata (``format``). Readers read every version
#: up to it (format 1 files: module-less column entries, team ``bars`` instead of ``parts``, no
#: per-block dt or rules; format 2 files: no camera blobs; format 3 files: no 3D poses; format 4
#: files: no objects' 3D poses; format 5 files: no camera3d images; format 6 files: no shared
#: control feedback); a
#: change to what is written bumps it, with an entry in the changelog that opens
#: docs/recording-format.md.
FORMAT_VERSION = 7
ENCODING = "msgpack"
FRAMES_TOPIC = "/frames"
LAYOUT_TOPIC = "/layout"
META_START = "coopsim"
META_END = "coopsim.end"


_POSE = (Column("x", 1e-4, 2), Column("y", 1e-4, 2), Column("yaw", 1e-4, 2))
#: Per-robot columns every recording starts with: pose, then velocity.
CORE_COLUMNS = _POSE + (Column("vx", 1e-3, 2), Column("vy", 1e-3, 2), Column("omega", 1e-3, 2))
#: Per-object and per-part columns.
BODY_COLUMNS = _POSE
#: Per-robot columns of a 3D world's steps (format 4, a block's ``3``), beside the robots' x, y,
#: vx, vy of :data:`CORE_COLUMNS`: height (m, world frame), orientation quaternion w, x, y, z
#: (body to world), vertical speed (m/s, world frame), angular velocity (rad/s, body frame).
THREE_D_COLUMNS = (Column("z", 1e-4, 2), Column("qw", 1e-6, 2), Column("qx", 1e-6, 2),
                   Column("qy", 1e-6, 2), Column("qz", 1e-6, 2), Column("vz", 1e-3, 2),
                   Column("wx", 1e-3, 2), Column("wy", 1e-3, 2), Column("wz", 1e-3, 2))
#: Per-object columns of a block's ``O`` (format 5: a 3D world, whose objects an arm lifts and
#: stacks), beside the objects' x, y of :data:`BODY_COLUMNS`: height
#: (m, world frame, the object's centre) and orientation quaternion w, x, y, z (body to world).
OBJECT_3D_COLUMNS = (Column("z", 1e-4, 2), Column("qw", 1e-6, 2), Column("qx", 1e-6, 2),
                     Column("qy", 1e-6, 2), Column("qz", 1e-6, 2))


def robot_columns(module_columns=()) -> tuple[Column, ...]:
    """The per-robot columns of a new recording: :data:`CORE_COLUMNS` then the modules' (given
    as (label, Column) pairs, see coopsim.model.plugins.module_columns)."""
    return CORE_COLUMNS + tuple(Column(c.name, c.unit, c.order, module=label)
                                for label, c in module_columns)


FRAME_SCHEMA = json.dumps({
    "title": "coopsim block of recorded steps (msgpack map)",
    "type": "object",
    "properties": {
        "i": {"type": "integer", "description": "index of the block's first step in the file"},
        "k": {"type": "boolean", "description": "the first step is a keyframe (absolute)"},
        "L": {"type": "integer", "description": "ordinal of the /layout message in force"},
        "s": {"type": "array", "description": "simulation step of each step"},
        "t": {"type": "array", "description": "simulation time of each step, s"},
        "p": {"type": "array", "description": "recording time of each step, ns"},
        "r": {"description": "robots: [widths, bytes]: per column (one width digit each, 1, 2, "
                             "4 or 8 bytes) a (steps, robots) little-endian int array of "
                             "quantized values or differences"},
        "b": {"description": "objects then parts: [widths, bytes], the same for x, y, yaw"},
        "d": {"type": "number", "description": "the physics step of these steps, s"},
        "R": {"type": "array", "description": "per step, the rules' fields (map of rule label "
                                              "to map); absent when the run has no rules"},
        "3": {"description": "3D worlds only (format 4): robots' z, qw, qx, qy, qz, vz, wx, wy, "
                             "wz as [widths, bytes] like r; absent in a 2D world"},
        "O": {"description": "3D worlds only (format 5): objects' z, qw, qx, qy, qz as "
                             "[widths, bytes] like r; absent in a 2D world"},
        "F": {"type": "array", "description": "per step, shared control's squads (format 7): "
                                              "map of squad to its feedback row (step, seq, "
                                              "steer, feedback data); absent when none"},
    },
})
LAYOUT_SCHEMA = json.dumps({
    "title": "coopsim layout (msgpack map)",
    "type": "object",
    "properties": {
        "ordinal": {"type": "integer"}, "step": {"type": "integer"}, "time": {"type": "number"},
        "layout": {"type": "object", "description": "World.describe(): floor, objects, robots, "
                                                    "parts, targets, sections"},
    },
})


@dataclass(frozen=True)
class Frame:
    """One recorded step, decoded.

    Attributes:
        index: 0-based number of the step in the recording.
        position: Recording time, s (the playback position of this step).
        step: The simulation's step number.
        time: The simulation's time, s.
        layout: Ordinal of the layout in force (see :meth:`Recording.layout`).
        robots: (N, C) robot values in the recording's robot column order, SI.
        bodies: (M + K, 3) x, y, yaw of the objects, then the parts.
        rules: Rule label -> its fields at this step (empty when the run had no rules).
        dt: The physics step this step was taken with, s (0 when the recording predates it).
        modules: Module label -> what the module recorded at this step beyond its columns
            (``Recordable.record``: the lidar's scans taken since the previous recorded step).
        pose3d: (N, 7) x, y, z (m, world), qw, qx, qy, qz (body to world) of a 3D world's
            robots (format 4), or None (a 2D world, an older recording).
        twist3d: (N, 6) vx, vy, vz (m/s, world), wx, wy, wz (rad/s, body frame), or None.
        object_pose3d: (M, 7) x, y, z (m, world), qw, qx, qy, qz of the objects (format 5,
            a 3D world), or None.
        feedback: Squad -> its shared-control feedback row at this step (format 7:
            :data:`coopsim.model.steering.RECORD_FIELDS`); empty without.
    """

    index: int
    position: float
    step: int
    time: float
    layout: int
    robots: np.ndarray
    bodies: np.ndarray
    rules: Mapping = field(default_factory=dict)
    dt: float = 0.0
    modules: Mapping = field(default_factory=dict)
    pose3d: np.ndarray | None = None
    twist3d: np.ndarray | None = None
    object_pose3d: np.ndarray | None = None
    feedback: Mapping = field(default_factory=dict)


def columns_to_json(columns: Sequence[Column]) -> str:
    """The column table as JSON text (stored in the start metadata): [name, unit, order,
    module] per column, module "" for the pose and velocity."""
    return json.dumps([[c.name, c.unit, c.order, c.module] for c in columns])


def columns_from_json(text: str) -> tuple[Column, ...]:
    """Parse :func:`columns_to_json` output (older files have no module); raise RecordingError
    when malformed."""
    try:
        cols = tuple(Column(str(n), float(u), int(o), module=str(rest[0]) if rest else "")
                     for n, u, o, *rest in json.loads(text))
    except (ValueError, TypeError) as exc:
        raise RecordingError(f"bad column table in the recording's metadata ({exc})") from None
    if not cols or any(c.unit <= 0 or c.order not in (1, 2) for c in cols):
        raise RecordingError("bad column table in the recording's metadata")
    return cols


def _scale(unit: float) -> float:
    """1 / unit, exact when it is a whole number: dividing by 10000 gives -3.0351 where
    multiplying by 1e-4 gives -3.0351000000000004."""
    inverse = 1.0 / unit
    return float(round(inverse)) if abs(inverse - round(inverse)) < 1e-6 * inverse else inverse


# a packed column's integer types, by its width digit (encoding.py packs, _unpack reads)
_DTYPES = ("<i1", "<i2", "<i4", "<i8")
_WIDTHS = ("1", "2", "4", "8")


def _unpack(item, frames: int, columns: int) -> np.ndarray:
    """(F, n, C) int64 from a packed [widths, bytes] of F steps and C columns."""
    try:
        widths, raw = item
        sizes = [int(w) for w in widths]
        per_body = sum(sizes) * frames
        if len(sizes) != columns or any(w not in (1, 2, 4, 8) for w in sizes) \
                or len(raw) % per_body:
            raise ValueError(widths)
    except (TypeError, ValueError):
        raise RecordingError("bad array in a recorded block") from None
    n = len(raw) // per_body
    out = np.empty((frames, n, columns), dtype=np.int64)
    offset = 0
    for c, w in enumerate(sizes):
        end = offset + w * frames * n
        out[..., c] = np.frombuffer(raw[offset:end], dtype=_DTYPES[_WIDTHS.index(str(w))]) \
            .reshape(frames, n)
        offset = end
    return out


def _undo_differences(q: np.ndarray, columns: Sequence[Column]) -> np.ndarray:
    """(F, n, C) SI values of one keyframe segment: q[0] absolute, the rest differences."""
    second = np.array([c.order == 2 for c in columns])
    diffs = q[1:]
    diffs[..., second] = np.cumsum(diffs[..., second], axis=0)
    q[1:] = q[0] + np.cumsum(diffs, axis=0)
    return q / np.array([_scale(c.unit) for c in columns])


def decode_frames(payloads: Sequence[bytes], robot_columns: Sequence[Column],
                  body_columns: Sequence[Column] = BODY_COLUMNS) -> list[Frame]:
    """Decode the ``/frames`` messages of one chunk (which starts with a keyframe), in order."""
    blocks = [_unpack_block(data) for data in payloads]
    if blocks and not blocks[0]["k"]:
        raise RecordingError("bad chunk: it does not start with a keyframe")
    starts = [i for i, b in enumerate(blocks) if b["k"]] + [len(blocks)]
    frames: list[Frame] = []
    for a, b in zip(starts, starts[1:]):
        segment = blocks[a:b]
        try:
            robots = np.concatenate([_unpack(m["r"], len(m["s"]), len(robot_columns))
                                     for m in segment])
            bodies = np.concatenate([_unpack(m["b"], len(m["s"]), len(body_columns))
                                     for m in segment])
        except ValueError:
            raise RecordingError("bad chunk: the number of bodies changed without a "
                                 "keyframe") from None
        robots = _undo_differences(robots, robot_columns)
        bodies = _undo_differences(bodies, body_columns)
        robots.flags.writeable = bodies.flags.writeable = False  # frames share them
        pose3d, twist3d = _three_d(segment, robots, robot_columns)
        objects3d = _objects_3d(segment, bodies)
        j = 0
        for m in segment:
            rules = m.get("R") or [{}] * len(m["s"])
            extra = m.get("X") or [{}] * len(m["s"])
            fed = _feedback_rows(m)  # format 7
            for k, (step, time, position) in enumerate(zip(m["s"], m["t"], m["p"])):
                frames.append(Frame(m["i"] + k, position / 1e9, step, time, m["L"],
                                    robots[j], bodies[j], rules[k] if k < len(rules) else {},
                                    float(m.get("d", 0.0)),
                                    extra[k] if k < len(extra) else {},
                                    None if pose3d is None else pose3d[j],
                                    None if twist3d is None else twist3d[j],
                                    None if objects3d is None else objects3d[j],
                                    fed[k] if k < len(fed) else {}))
                j += 1
    return frames


def _feedback_rows(block: Mapping) -> list:
    """A block's ``F`` (format 7): per step a map of squad -> feedback row; empty maps when it
    has none.

    Raises:
        RecordingError: an ``F`` that is not a list of maps.
    """
    fed = block.get("F") or [{}] * len(block["s"])
    if not isinstance(fed, list) or not all(isinstance(m, dict) for m in fed):
        raise RecordingError("bad recorded block: its shared-control feedback (F) is not a "
                             "list of maps")
    return fed


def _optional(segment: Sequence[Mapping], key: str, columns: Sequence[Column],
              what: str) -> np.ndarray | None:
    """A keyframe segment's optional ``key`` blocks as (F, rows, columns) values, the
    differences undone; None when it has none (they start and stop only at a keyframe)."""
    flags = {key in m for m in segment}
    if flags == {False}:
        return None
    if len(flags) > 1:
        raise RecordingError(f"bad chunk: {what} start or stop without a keyframe")
    try:
        q = np.concatenate([_unpack(m[key], len(m["s"]), len(columns)) for m in segment])
    except ValueError:
        raise RecordingError(f"bad chunk: the {what} do not match the rows") from None
    return _undo_differences(q, columns)


def _objects_3d(segment: Sequence[Mapping], bodies: np.ndarray) -> np.ndarray | None:
    """(F, M, 7) object poses of a keyframe segment's ``O`` blocks (format 5), or None when
    it has none; x, y come from the bodies' columns (objects first), the quaternions are
    normalized again."""
    three = _optional(segment, "O", OBJECT_3D_COLUMNS, "objects' 3D values")
    if three is None:
        return None
    n = three.shape[1]
    if three.shape[0] != bodies.shape[0] or n > bodies.shape[1]:
        raise RecordingError("bad chunk: the objects' 3D values do not match the bodies")
    quat = _unit(three[..., 1:5])
    pose = np.concatenate([bodies[:, :n, :2], three[..., :1], quat], -1)
    pose.flags.writeable = False
    return pose


def _unit(quat: np.ndarray) -> np.ndarray:
    """Quaternions (..., 4) normalized again (identity where all four quantized to 0)."""
    norm = np.linalg.norm(quat, axis=-1, keepdims=True)
    return np.where(norm > 0, quat / np.where(norm > 0, norm, 1.0), (1.0, 0.0, 0.0, 0.0))


def _three_d(segment: Sequence[Mapping], robots: np.ndarray, robot_columns) -> tuple:
    """(F, N, 7) poses and (F, N, 6) twists of a keyframe segment's 3D blocks (format 4), or
    (None, None) when it has none; x, y, vx, vy come from the core columns, the quaternions
    are normalized again (quantized to 1e-6 each)."""
    three = _optional(segment, "3", THREE_D_COLUMNS, "3D values")
    if three is None:
        return None, None
    if three.shape[:2] != robots.shape[:2]:
        raise RecordingError("bad chunk: the 3D values do not match the robots")
    names = [c.name for c in robot_columns]
    x, y, vx, vy = (robots[..., names.index(n)] for n in ("x", "y", "vx", "vy"))
    pose = np.concatenate([np.stack([x, y, three[..., 0]], -1), _unit(three[..., 1:5])], -1)
    twist = np.concatenate([np.stack([vx, vy, three[..., 5]], -1), three[..., 6:9]], -1)
    pose.flags.writeable = twist.flags.writeable = False
    return pose, twist


def first_index(data: bytes) -> int:
    """The recording-wide index of the first step of a ``/frames`` message."""
    return int(_unpack_block(data)["i"])


def _unpack_block(data: bytes) -> Mapping:
    try:
        m = msgpack.unpackb(data, raw=False)
    except (ValueError, msgpack.UnpackException) as exc:
        raise RecordingError(f"bad recorded block ({type(exc).__name__})") from None
    if not isinstance(m, dict) or not {"i", "k", "L", "s", "t", "p", "r", "b"} <= m.keys():
        raise RecordingError("bad recorded block: fields are missing")
    if not len(m["s"]) == len(m["t"]) == len(m["p"]) > 0:
        raise RecordingError("bad recorded block: step lists of different lengths")
    return m


def encode_layout(ordinal: int, step: int, time: float, layout: Mapping) -> bytes:
    """A ``/layout`` message: the ordinal, the sim step and time, and ``World.describe()``."""
    return msgpack.packb({"ordinal": ordinal, "step": int(step), "time": float(time),
                          "layout": layout}, use_bin_type=True)


def decode_layout(data: bytes) -> dict:
    """The ``World.describe()`` dict of a ``/layout`` message (ordinal, step, time added)."""
    try:
        m = msgpack.unpackb(data, raw=False)
        layout = dict(m["layout"])
        layout.update(ordinal=m["ordinal"], step=m["step"], time=m["time"])
    except (ValueError, KeyError, TypeError, msgpack.UnpackException) as exc:
        raise RecordingError(f"bad layout message ({type(exc).__name__})") from None
    return _upgrade(layout)


def _upgrade(layout: dict) -> dict:
    """A layout of an older recording in today's form: its team ``bars`` become ``parts``."""
    if "parts" not in layout:
        layout["parts"] = [
            {"name": b.get("name", ""), "section": b.get("name", ""), "color": [150, 110, 60],
             "x": b.get("x", 0.0), "y": b.get("y", 0.0), "yaw": b.get("yaw", 0.0),
             "shapes": [{"kind": "box", "radius": 0.0, "size": [b.get("length", 0.0),
                                                                b.get("width", 0.0)],
                         "vertices": [], "offset": [0.0, 0.0]}]}
            for b in layout.pop("bars", ())]
    return layout
