"""Snapshots: the immutable per-step state the stepper publishes for every other thread.

:class:`SnapshotMaker` builds a :class:`~coopsim.model.snapshot.Snapshot` from a step's frame
and readings; the simulation holds one per run (it keeps what snapshots take from the layout
and the last snapshot's command tables).
"""

from __future__ import annotations

import numpy as np

from ..model.capabilities import reading_fields
from ..model.module import Frame
from ..model.plugins import MODULES
from ..model.snapshot import Snapshot, frozen
from .sensing import CommandTables


_NO_POSES = frozen(np.zeros((0, 3)))  # the poses of no object or part, shared


class SnapshotMaker:
    """Builds a run's snapshots (on the stepper thread); made anew with each run."""

    def __init__(self) -> None:
        self._layout: tuple = (None,)  # what snapshots take from the layout (see make)
        self._published: dict[str, np.ndarray] = {}  # the last snapshot's commands

    def make(self, sim, frame: Frame, readings: dict[str, np.ndarray]) -> Snapshot:
        """The snapshot of ``sim`` (a Simulation) after its step, from ``frame`` and the
        step's ``readings`` (read-only arrays)."""
        world = sim.world
        key = (world.layout_version, len(world.targets))
        if self._layout[0] != key:  # names, fields and shapes change only with the layout
            handles = [h for _, h in world.objects.values()]
            still = all(spec.static for spec, _ in world.objects.values())
            self._layout = (key, {k: reading_fields(m, key[1]) for k, m in MODULES.items()},
                            tuple(world.objects), tuple(p.name for p in world.parts),
                            (tuple(world.targets),
                             tuple(spec for spec, _ in world.objects.values())),
                            # static objects never move: their poses are read once
                            frozen(world.engine.poses(handles)) if still else handles,
                            [p.handle for p in world.parts], handles)
        _, fields, objects, parts, (targets, specs), object_poses, part_handles, handles = \
            self._layout
        engine = world.engine
        if isinstance(object_poses, list):
            object_poses = frozen(engine.poses(object_poses))
        return new_snapshot(
            step=sim.step, time=sim.time, robots=sim.robots.names,
            poses=frozen(frame.pose.copy()), velocities=frozen(frame.velocity.copy()),
            commands=self._frozen_commands(sim),
            readings=dict(readings),  # read-only arrays (Sensors.sense, Sensors.carried)
            fields=fields, objects=objects, object_poses=object_poses,
            parts=parts,
            part_poses=frozen(engine.poses(part_handles) if part_handles else _NO_POSES),
            targets=targets, layout_version=world.layout_version,
            index=sim.robots.index, rules=sim.rules.fields(),
            extra={k: v for k, v in sim.extra.items() if not k.startswith("_")},
            object_specs=specs, object_pose3d=frozen(engine.poses3d(handles))
            if "flight" in engine.features else None, **_state3d(frame.state3d))

    def _frozen_commands(self, sim) -> dict[str, np.ndarray]:
        """The snapshot's commands: a read-only copy of each table, but the last snapshot's
        copy of a table untouched since (:class:`~coopsim.sim.sensing.CommandTables`: the
        same bits; most are those of modules no robot carries)."""
        tables, last = sim.commands, self._published
        if isinstance(tables, CommandTables):
            out = {k: last[k] if k not in tables.touched and k in last else frozen(v.copy())
                   for k, v in dict.items(tables)}
            tables.touched = set()
        else:  # someone put a plain dict there: copy every table
            out = {k: frozen(v.copy()) for k, v in tables.items()}
        self._published = out
        return out


def _state3d(state3d: np.ndarray | None) -> dict:
    """The snapshot's ``pose3d`` and ``twist3d`` from a frame's full state (None in 2D)."""
    if state3d is None:
        return {"pose3d": None, "twist3d": None}
    return {"pose3d": frozen(state3d[:, :7].copy()), "twist3d": frozen(state3d[:, 7:].copy())}


def new_snapshot(**fields) -> Snapshot:
    """``Snapshot(**fields)`` (every field given) without the frozen dataclass's per-field
    ``object.__setattr__``: the same object (it has no ``__post_init__``), built every step."""
    out = object.__new__(Snapshot)
    object.__setattr__(out, "__dict__", fields)  # the keywords' own new dict: no one else's
    return out


def with_rules(snapshot: Snapshot, rules: dict) -> Snapshot:
    """``dataclasses.replace(snapshot, rules=rules)`` as :func:`new_snapshot` builds it."""
    out = object.__new__(Snapshot)
    object.__setattr__(out, "__dict__", {**snapshot.__dict__, "rules": rules})
    return out
