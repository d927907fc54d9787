"""Arms as every reader outside the engine sees them: the arm's spec as a JSON document (the
state document's ``arm`` entry, kept in recordings' layouts), the joint angles of a snapshot,
and the world frames of an arm's links from a robot's 3D pose.

The data path is one for live runs, replays, the viewer, Foxglove and ROS 2: the angles are the
joints module's reading (fields ``dof, q1..q7...``; recorded and streamed as the columns
``arm_q1``..``arm_q7``), the frames are :func:`coopsim.model.arm.world_frames` of the arm
mounted on the robot's body at its ``pose3d`` row. Units: m, rad, kg, s; world frame x, y
on the floor, z up.
"""

from __future__ import annotations

import math
from dataclasses import asdict, fields
from typing import Any, Mapping

import numpy as np

from .arm import MAX_JOINTS, ArmSpec, GripperSpec, LinkSpec, world_frames

#: The reading fields of the module that reports an arm's joints (the ``joints`` module's
#: declaration: ``dof, q1..q7, qd1..qd7, e1..e7``): angles rad, rates rad/s, torques N m. A
#: reader finds that module by these fields, never by its label.
ANGLE_FIELDS = tuple(f"q{i}" for i in range(1, MAX_JOINTS + 1))
RATE_FIELDS = tuple(f"qd{i}" for i in range(1, MAX_JOINTS + 1))
EFFORT_FIELDS = tuple(f"e{i}" for i in range(1, MAX_JOINTS + 1))
#: Its streamed and recorded angle columns, joint 1 first (rad, 1e-4 rad in recordings).
ANGLE_COLUMNS = tuple(f"arm_q{i}" for i in range(1, MAX_JOINTS + 1))


def arm_document(arm: ArmSpec) -> dict:
    """``arm`` as a JSON-ready dict (docs/protocol.md, a robot's ``arm``): every field of the
    :class:`ArmSpec` by its name, tuples as lists, its links as a list of every
    :class:`LinkSpec` field, its gripper as a dict of the :class:`GripperSpec` or None. An
    arm from a description file (:class:`~coopsim.description.arm.ImportedArmSpec`) says
    the same fields: what the engine alone needs stays out of the document."""
    doc = asdict(arm)
    return _plain({f.name: doc[f.name] for f in fields(ArmSpec)})


def _plain(value):
    """JSON-ready copy: tuples as lists, all the way down."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _value(value):
    """A document's value as the spec holds it: numbers as finite floats, lists as tuples of
    them, text as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_value(v) for v in value)
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{value!r} is not a finite number")
    return out


def _spec(cls, doc: Mapping[str, Any], nested: dict):
    """An instance of the frozen dataclass ``cls`` from ``doc``: each of its fields by name
    (missing ones keep their defaults); ``nested`` turns a field's dict or list of dicts
    into specs (the arm's gripper and links)."""
    kwargs = {}
    for f in fields(cls):
        if f.name in doc:
            v = doc[f.name]
            if isinstance(v, Mapping):
                v = nested["dict"](v)
            elif isinstance(v, list) and v and isinstance(v[0], Mapping):
                v = tuple(nested["list"](item) for item in v)
            elif v is not None:
                v = _value(v)
            kwargs[f.name] = v
    return cls(**kwargs)


def arm_from_document(doc: Mapping[str, Any]) -> ArmSpec:
    """The :class:`ArmSpec` of an :func:`arm_document` dict (from the wire or a recording).

    Raises:
        ValueError: a field is missing or malformed, or the arm does not validate; one
            sentence naming the arm.
    """
    nested = {"dict": lambda d: _spec(GripperSpec, d, {}),
              "list": lambda d: _spec(LinkSpec, d, {})}
    try:
        arm = _spec(ArmSpec, doc, nested)
        arm.validate()
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        name = doc.get("key", "?") if isinstance(doc, Mapping) else "?"
        raise ValueError(f"bad arm document for arm {name}: {exc}") from None
    return arm


def layout_arms(layout: Mapping[str, Any]) -> dict[str, ArmSpec]:
    """Robot name -> :class:`ArmSpec` of every robot of a layout document with an ``arm``
    (malformed entries are skipped: a reader draws what it can)."""
    out = {}
    for robot in layout.get("robots", ()):
        doc = robot.get("arm")
        if doc:
            try:
                out[robot["name"]] = arm_from_document(doc)
            except ValueError:
                continue
    return out


def joints_reading(snap) -> tuple[Any, tuple]:
    """(reading array, its field names) of the module reporting arm joints in ``snap`` (the
    one whose fields include :data:`ANGLE_FIELDS`), or (None, ())."""
    for label, names in snap.fields.items():
        if set(ANGLE_FIELDS) <= set(names):
            values = snap.readings.get(label)
            if values is not None and values.shape[0] == len(snap.robots):
                return values, tuple(names)
    return None, ()


def _pick(snap, wanted: tuple) -> np.ndarray:
    """(N, MAX_JOINTS) of the joints reading's fields ``wanted``, NaN where absent."""
    out = np.full((len(snap.robots), MAX_JOINTS), np.nan)
    values, names = joints_reading(snap)
    if values is not None:
        for k, name in enumerate(wanted):
            if name in names and names.index(name) < values.shape[1]:
                out[:, k] = values[:, names.index(name)]
    return out


def joint_angles(snap) -> np.ndarray:
    """(N, MAX_JOINTS) joint angles (rad) of every robot of a snapshot, from the joints
    module's reading; NaN for robots without it."""
    return _pick(snap, ANGLE_FIELDS)


def joint_rates_efforts(snap) -> tuple[np.ndarray, np.ndarray]:
    """(N, MAX_JOINTS) joint rates (rad/s) and drive torques (N m) of every robot, from the
    joints module's reading; NaN where not known (a replay keeps the angles only)."""
    return _pick(snap, RATE_FIELDS), _pick(snap, EFFORT_FIELDS)


def usable_angles(arm: ArmSpec, q) -> np.ndarray:
    """(dof,) angles to draw ``arm`` at: ``q``'s first dof values, the arm's start angles where
    they are NaN (not measured yet, or a recording without the ``joints`` module)."""
    q = np.asarray(q, dtype=float)[:arm.dof]
    if len(q) < arm.dof:
        q = np.concatenate([q, np.full(arm.dof - len(q), np.nan)])
    if np.isfinite(q).all():  # the usual case: no start angles to work out
        return q
    return np.where(np.isfinite(q), q, arm.start)


def robot_pose7(snap, row: int) -> np.ndarray:
    """(7,) x, y, z, qw, qx, qy, qz of robot ``row``: its ``pose3d`` in a 3D world, else its
    planar pose on the floor turned by yaw."""
    if snap.pose3d is not None:
        return np.asarray(snap.pose3d[row], dtype=float)
    x, y, yaw = (float(v) for v in snap.poses[row])
    return np.array([x, y, 0.0, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])


def arm_world_frames(arm: ArmSpec, pose7, q) -> np.ndarray:
    """(dof + 2, 4, 4) world frames of the base, each joint and the tool of ``arm`` mounted on
    a body at ``pose7`` (x, y, z m; qw, qx, qy, qz), at angles ``q`` (rad; NaN: start)."""
    state = np.zeros(13)
    state[:7] = pose7
    return world_frames(arm, state, usable_angles(arm, q))


def matrix_quaternion(r) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a 3 x 3 rotation matrix (Shepperd's method: stable near every turn);
    the order Foxglove's and ROS 2's messages write."""
    r = np.asarray(r, dtype=float)
    t = float(np.trace(r))
    if t > 0:
        s = 2.0 * math.sqrt(t + 1.0)
        return (float((r[2, 1] - r[1, 2]) / s), float((r[0, 2] - r[2, 0]) / s),
                float((r[1, 0] - r[0, 1]) / s), 0.25 * s)
    i = int(np.argmax(np.diag(r)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * math.sqrt(max(1.0 + r[i, i] - r[j, j] - r[k, k], 1e-12))
    q = [0.0, 0.0, 0.0, 0.0]
    q[i], q[j], q[k] = 0.25 * s, (r[j, i] + r[i, j]) / s, (r[k, i] + r[i, k]) / s
    q[3] = (r[k, j] - r[j, k]) / s
    if q[3] < 0:  # the same rotation; w >= 0 for one answer per turn
        q = [-v for v in q]
    return tuple(float(v) for v in q)


def matrix_quaternions(r) -> np.ndarray:
    """(n, 4) x, y, z, w of (n, 3, 3) rotation matrices (Shepperd's method, vectorized; w >=
    0): :func:`matrix_quaternion` for many at once."""
    r = np.asarray(r, dtype=float).reshape(-1, 3, 3)
    t = np.trace(r, axis1=1, axis2=2)
    d0, d1, d2 = r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]
    pick = np.argmax(np.stack([t, d0, d1, d2], 1), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = 2.0 * np.sqrt(np.maximum(np.stack([1 + t, 1 + d0 - d1 - d2, 1 + d1 - d0 - d2,
                                               1 + d2 - d0 - d1], 1), 1e-12))
        a, b = lambda i, j: r[:, i, j] + r[:, j, i], lambda i, j: r[:, i, j] - r[:, j, i]
        cases = np.stack([  # each: x, y, z, w for the largest of w, x, y, z
            np.stack([b(2, 1) / s[:, 0], b(0, 2) / s[:, 0], b(1, 0) / s[:, 0], s[:, 0] / 4], 1),
            np.stack([s[:, 1] / 4, a(0, 1) / s[:, 1], a(0, 2) / s[:, 1], b(2, 1) / s[:, 1]], 1),
            np.stack([a(0, 1) / s[:, 2], s[:, 2] / 4, a(1, 2) / s[:, 2], b(0, 2) / s[:, 2]], 1),
            np.stack([a(0, 2) / s[:, 3], a(1, 2) / s[:, 3], s[:, 3] / 4, b(1, 0) / s[:, 3]], 1)],
            1)
    q = cases[np.arange(len(r)), pick]
    return np.where(q[:, 3:4] < 0, -q, q)


def snapshot_arm_frames(snap, arms: Mapping[str, ArmSpec]) -> dict[str, np.ndarray]:
    """Robot name -> :func:`arm_world_frames` of every robot of ``snap`` with an arm in
    ``arms`` (see :func:`layout_arms`)."""
    if not arms:
        return {}
    q = joint_angles(snap)
    rows = {name: i for i, name in enumerate(snap.robots)}
    return {name: arm_world_frames(arm, robot_pose7(snap, rows[name]), q[rows[name]])
            for name, arm in arms.items() if name in rows}
