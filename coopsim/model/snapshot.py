"""The immutable per-step state every other thread reads: servers, publishers, the recorder.

A :class:`Snapshot` is built by the stepper after each step and never changed afterwards (its
arrays are marked read-only), so readers need no lock: they take the current reference. In a
large world its robot arrays are views into blocks the stepper reuses (coopsim.sim.snapshots),
but only once nothing refers to them: a snapshot, or any view taken from one, may be kept as long
as a reader likes. Do not make its arrays writable again (``setflags``): copy instead.
"""

from __future__ import annotations

import math
from collections import abc
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .specs import TargetSpec


_FEW_ANGLES = 8  # up to this many, wrap_angle works in Python floats (cheaper)
_TWO_PI = 2 * math.pi


def wrap_angle(angle):
    """Angles wrapped to (-pi, pi], rad: the one convention of every yaw users see (the wire,
    the state document and stream, replays, exports; docs/protocol.md section 1). The engine
    and recordings keep a body's continuous angle, which may run past +-pi."""
    a = np.asarray(angle, dtype=float)
    if a.size <= _FEW_ANGLES:  # a small world's few angles: Python floats, no numpy calls
        return _wrap_few(a)
    inside = (a > -math.pi) & (a <= math.pi)
    if inside.all():  # the usual case: four numpy calls fewer
        return a.copy()
    wrapped = -((-a + math.pi) % _TWO_PI - math.pi)
    # angles already in range pass unchanged: the modulo would move them by an ulp, and a
    # compass must read exactly the yaw /sim lists
    return np.where(inside, a, wrapped)


def _wrap_few(a: np.ndarray) -> np.ndarray:
    """:func:`wrap_angle` of a few angles in Python floats: the same formula, the same bits
    (Python's ``%`` is numpy's remainder: fmod, then the divisor's sign), no numpy calls."""
    values = a.ravel().tolist()
    for v in values:
        if not -math.pi < v <= math.pi:  # NaN: not inside
            break
    else:
        return a.copy()
    return np.array([v if -math.pi < v <= math.pi else -((-v + math.pi) % _TWO_PI - math.pi)
                     for v in values], dtype=float).reshape(a.shape)


def wrapped_poses(poses: np.ndarray) -> np.ndarray:
    """A copy of (n, 3) x, y, yaw poses with yaw wrapped to (-pi, pi]."""
    out = np.array(poses, dtype=float).reshape(-1, 3)
    out[:, 2] = wrap_angle(out[:, 2])
    return out


def frozen(array: np.ndarray) -> np.ndarray:
    """Return ``array`` marked read-only (a copy is not made)."""
    array.setflags(False)  # write=False: positional, a third of flags.writeable = False
    return array


@dataclass(frozen=True)
class Snapshot:
    """World state after step ``step``.

    Attributes:
        step: Number of steps taken since load or reset.
        time: Simulated time, s (step * dt, summed).
        robots: Robot network names; a robot's index here is its row in every array.
        poses: (N, 3) x, y (m), yaw (rad), world frame.
        velocities: (N, 3) vx, vy (m/s), yaw rate (rad/s).
        commands: Module label -> (N, width) last stored command of each robot (for
            ``motors``: left, right wheel speeds commanded, m/s, before limits).
        readings: Module label -> (N, width) reading array.
        fields: Module label -> names of its reading's columns.
        objects: Object names.
        object_poses: (M, 3) x, y (m), yaw (rad) of each object, in the order of ``objects``.
        object_specs: Each object's :class:`~coopsim.model.specs.ObjectSpec` as inserted or
            updated, in the order of ``objects``: ``shape`` (its kind: box, cylinder, sphere),
            ``size`` m, ``mass`` kg (0 = static), ``color`` RGB (a replay leaves it empty).
        parts: Part names (``team1.bar``).
        part_poses: (K, 3) x, y (m), yaw (rad) of each part's body, in the order of ``parts``.
        targets: Target markers (:class:`~coopsim.model.specs.TargetSpec`: ``color`` name,
            ``position`` m, ``rgb``), in the order the target module reports.
        layout_version: Changes whenever something is inserted, updated or removed.
        index: Robot name -> row.
        rules: Rule label -> the JSON-ready fields it reports this step.
        extra: What plugins publish for readers on other threads (immutable values): ``map``
            (a MapSpec for planners), ``radio`` (the radio's recent deliveries), ``squads``
            (the squads' latest orders); see :attr:`coopsim.sim.simulation.Simulation.extra`.
        pose3d: (N, 7) x, y, z (m, world frame) and orientation quaternion w, x, y, z (body to
            world) of every robot, or None in a 2D world (an engine without ``flight``): the
            wire, recordings and exports then stay planar.
        twist3d: (N, 6) vx, vy, vz (m/s, world frame) and wx, wy, wz (rad/s, body frame), or
            None in a 2D world.
        object_pose3d: (M, 7) x, y, z (m) and quaternion w, x, y, z of every object in the
            order of ``objects`` (a cube lifted by an arm, a stack), or None in a 2D world.
    """

    step: int
    time: float
    robots: tuple[str, ...]
    poses: np.ndarray
    velocities: np.ndarray
    commands: Mapping[str, np.ndarray]
    readings: Mapping[str, np.ndarray]
    fields: Mapping[str, tuple[str, ...]]
    objects: tuple[str, ...]
    object_poses: np.ndarray
    parts: tuple[str, ...]
    part_poses: np.ndarray
    targets: tuple[TargetSpec, ...]
    layout_version: int
    index: Mapping[str, int] = field(default_factory=dict)
    rules: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    object_specs: tuple = ()
    pose3d: np.ndarray | None = None
    twist3d: np.ndarray | None = None
    object_pose3d: np.ndarray | None = None

    def robot_index(self, name: str) -> int:
        """Row of robot ``name``; KeyError when it is not in this snapshot."""
        return self.index[name]

    def object_spec(self, name: str):
        """Object ``name``'s ObjectSpec (mass, shape, colour); KeyError when it is not here."""
        try:
            return self.object_specs[self.objects.index(name)]
        except (ValueError, IndexError):
            raise KeyError(name) from None

    def reading(self, name: str, module: str) -> np.ndarray:
        """One robot's reading of one module (a read-only row)."""
        return self.readings[module][self.index[name]]


def column_values(snap: Snapshot, columns) -> np.ndarray:
    """(N, C) values of per-robot ``columns`` ((module label, Column) pairs) in ``snap``: a
    reading's field or a stored command's, NaN for robots without that module."""
    n = len(snap.robots)
    out = np.full((n, len(columns)), np.nan)
    for k, (label, col) in enumerate(columns):
        source = snap.readings if col.source == "reading" else snap.commands
        values = source.get(label)
        if values is not None and values.shape[0] == n and col.field < values.shape[1]:
            out[:, k] = values[:, col.field]
    return out


def _is_mapping(value) -> bool:
    """isinstance(value, Mapping), a plain dict first (typing's Mapping check costs ~1 us)."""
    return type(value) is dict or isinstance(value, abc.Mapping)


def rule_metrics(rules: Mapping[str, Any]) -> list[tuple[str, float]]:
    """(``label.name``, value) of every number in the rules' ``metrics`` fields (the
    ``monitors`` rule's, a plugin rule's), rules in their order: what the state stream carries
    after the per-robot columns. Null values read NaN."""
    out = []
    for label, fields in rules.items():
        metrics = fields.get("metrics") if _is_mapping(fields) else None
        if _is_mapping(metrics):
            out += [(f"{label}.{name}", float("nan") if v is None else float(v))
                    for name, v in metrics.items() if v is None or isinstance(v, (int, float))]
    return out


def metric_values(rules: Mapping[str, Any]) -> dict[str, Any]:
    """Metric name -> this step's value (None when it could not be computed), from every
    rule's ``metrics`` field: the names a ``[TASK]`` term and a learner's ``info`` use. A name
    two rules report reads the later rule's (the rules a scenario section brings, such as
    ``[MONITORS]``'s, come after the ``[RULE_n]`` ones)."""
    out: dict[str, Any] = {}
    for fields in rules.values():
        metrics = fields.get("metrics") if _is_mapping(fields) else None
        if _is_mapping(metrics):
            out.update(metrics)
    return out


#: Real time is broken when more than this share of the last second's realtime steps missed
#: their deadline AND those steps ran slower than (1 - this) x the speed asked. Late steps the
#: schedule caught up with (the run kept its speed) are jitter, not a broken real time.
RT_BREAK = 0.05


def realtime_broken(late: float, recent_rtf: float, speed: float) -> bool:
    """The one definition of a broken real time (the CLI, ``/sim state`` and the viewer).

    Args:
        late: Share of the last second's realtime steps that missed their deadline, 0..1.
        recent_rtf: Real-time factor of those steps, sim s per wall s.
        speed: Speed factor asked (0: as fast as possible, which has no deadlines).
    """
    return late > RT_BREAK and recent_rtf < (1.0 - RT_BREAK) * speed


def realtime_words(late: float, recent_rtf: float, speed: float) -> str:
    """The one wording of a broken real time, with its figures (see :func:`realtime_broken`)."""
    return (f"real time broken: {recent_rtf:.2f}x real time over the last second, "
            f"{speed:g}x asked ({late:.0%} of its steps late)")


# -- 3D poses (Snapshot.pose3d: x, y, z, qw, qx, qy, qz; body to world) ----------------------------

def quat_matrices(quats) -> np.ndarray:
    """(n, 3, 3) rotation matrices (body to world) of (n, 4) unit quaternions w, x, y, z."""
    q = np.asarray(quats, dtype=float).reshape(-1, 4)
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1)


def zyx_euler(quats) -> np.ndarray:
    """(n, 3) roll, pitch, yaw (rad) of (n, 4) quaternions w, x, y, z: the ZYX (yaw, then
    pitch, then roll, about the body's moving axes) Euler angles of aerospace and REP 103;
    roll and yaw in (-pi, pi], pitch in [-pi/2, pi/2] (clamped at the gimbal lock)."""
    q = np.asarray(quats, dtype=float).reshape(-1, 4)
    w, x, y, z = q.T
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.column_stack((roll, pitch, yaw))


def yaw_quats(yaw) -> np.ndarray:
    """(n, 4) quaternions w, x, y, z of turns by ``yaw`` rad about the world's z axis."""
    half = np.asarray(yaw, dtype=float).reshape(-1) * 0.5
    zero = np.zeros_like(half)
    return np.column_stack((np.cos(half), zero, zero, np.sin(half)))
