"""Snapshots: the immutable per-step state the stepper publishes for every other thread.

:class:`SnapshotMaker` builds a :class:`~coopsim.model.snapshot.Snapshot` from a step's frame
and readings; the simulation holds one per run (it keeps what snapshots take from the layout
and the last snapshot's command tables).

A snapshot's robot arrays (poses and velocities, 3D poses and twists, the command tables a step
touched) are read-only views into blocks of a small :class:`Ring` the step writes into, not
fresh copies: at 10,000 robots a fresh array a field a step meant as many allocations and page
faults. A block is written again only when nothing refers to it any more -- no snapshot, no
view taken from one (a reader may keep a snapshot, or only its ``poses``, as long as it likes:
the recorder's queue, a bridge, a reply waiting for its step). When every kept block is still
held, the step takes a fresh array instead, as before the ring.
"""

from __future__ import annotations

import sys

import numpy as np

from ..model.capabilities import reading_fields
from ..model.module import Frame
from ..model.plugins import MODULES
from ..model.snapshot import Snapshot, frozen
from .sensing import CommandTables


_NO_POSES = frozen(np.zeros((0, 3)))  # the poses of no object or part, shared
_NO_POSES3D = frozen(np.zeros((0, 7)))  # the 3D poses of no object, shared
_NO_STATE3D = {"pose3d": None, "twist3d": None}  # a 2D world's snapshot fields (a copy each)
#: Snapshot's fields in the order ``Snapshot(**fields)`` was given them (its ``__dict__``)
_FIELDS = ("step", "time", "robots", "poses", "velocities", "commands", "readings", "fields",
           "objects", "object_poses", "parts", "part_poses", "targets", "layout_version",
           "index", "rules", "extra", "object_specs", "object_pose3d", "pose3d", "twist3d")
DEPTH = 4  # blocks kept per field: the latest snapshot's, one a reader encodes, spares
#: Robots from which snapshots take ring blocks: below, a fresh copy costs less than the
#: ring's bookkeeping (~1 us against ~3 us a field); above, the allocation and its page
#: faults cost more (at 100,000 robots, 2.5x a contiguous copy into a block).
RING_ROWS = 256


class Ring:
    """Preallocated blocks, a few per field, that snapshots' read-only views look into.

    Args:
        depth: Blocks kept per field; when all are held, :meth:`put` returns fresh arrays.
    """

    def __init__(self, depth: int = DEPTH) -> None:
        self.depth = depth
        self._fields: dict = {}  # field key -> its _Blocks (one shape)

    def put(self, key, source: np.ndarray, widths: tuple = ()) -> tuple[np.ndarray, ...]:
        """A copy of ``source`` ((N, W) array) in a block of field ``key``: read-only views
        of its column groups ``widths`` (default: one, the whole width), in order. A block
        nothing refers to is written again; the field's blocks are dropped when its shape
        changes (a new layout)."""
        blocks = self._fields.get(key)
        if blocks is None or blocks.shape != source.shape or blocks.widths != widths:
            blocks = self._fields[key] = _Blocks(source, widths, self.depth)
        return blocks.put(source)

    def held(self, key) -> int:
        """How many of field ``key``'s kept blocks something still refers to (tests)."""
        blocks = self._fields.get(key)
        return 0 if blocks is None else sum(not blocks.free(k) for k in range(len(blocks.kept)))


class _Blocks:
    """The kept blocks of one field: (writable block, its read-only column views) each."""

    __slots__ = ("shape", "dtype", "widths", "depth", "kept", "idle", "next")

    def __init__(self, source: np.ndarray, widths: tuple, depth: int) -> None:
        self.shape, self.dtype, self.widths, self.depth = source.shape, source.dtype, widths, depth
        self.kept: list[tuple[np.ndarray, tuple[np.ndarray, ...]]] = []
        self.idle: tuple = ()  # the reference counts of a block nobody else refers to
        self.next = 0  # where the search for a free block starts: the oldest first

    def put(self, source: np.ndarray) -> tuple[np.ndarray, ...]:
        kept, n = self.kept, len(self.kept)
        for i in range(n):
            k = (self.next + i) % n
            if self.free(k):
                block, views = kept[k]
                np.copyto(block, source)  # one copy, contiguous when the source is
                self.next = (k + 1) % n
                return views
        if n >= self.depth:  # every kept block is held by someone: a fresh one, not kept
            return split(source.copy(), self.widths)
        block = np.empty(self.shape, self.dtype)
        np.copyto(block, source)
        kept.append((block, split(block[:], self.widths)))
        del block  # the count below is of the ring's own references alone
        self.idle = self._counts(n)  # measured, not assumed: the interpreter's own counting
        self.next = 0
        return kept[n][1]

    def free(self, k: int) -> bool:
        """Whether nothing but the ring refers to block ``k`` or its views (a view taken
        from a view refers to the block itself)."""
        return self._counts(k) == self.idle

    def _counts(self, k: int) -> tuple[int, ...]:
        block, views = self.kept[k]
        return (sys.getrefcount(block),) + tuple(map(sys.getrefcount, views))


def split(block: np.ndarray, widths: tuple = ()) -> tuple[np.ndarray, ...]:
    """Read-only views of ``block``'s column groups of ``widths`` (default: all of it)."""
    if not widths:
        return (frozen(block.view()),)
    out, at = [], 0
    for width in widths:
        out.append(frozen(block[:, at:at + width]))
        at += width
    return tuple(out)


def whole_state(pose: np.ndarray, velocity: np.ndarray) -> np.ndarray | None:
    """The (N, 6) C-contiguous array whose columns 0-2 are ``pose`` and 3-5 ``velocity``
    (a frame's views of one robot state), or None when they are not (then copied apart)."""
    base = pose.base
    if base is None or velocity.base is not base or base.shape != (len(pose), 6) \
            or not base.flags.c_contiguous or pose.strides != base.strides:
        return None
    at = base.__array_interface__["data"][0]
    if pose.__array_interface__["data"][0] != at \
            or velocity.__array_interface__["data"][0] != at + 3 * base.itemsize:
        return None
    return base


# the ring's keys of the robot fields (module labels key the command tables)
_STATE, _POSES, _VELOCITIES, _STATE3D = ("state",), ("poses",), ("velocities",), ("state3d",)


class SnapshotMaker:
    """Builds a run's snapshots (on the stepper thread); made anew with each run."""

    def __init__(self) -> None:
        self._layout: tuple = (None,)  # what snapshots take from the layout (see make)
        self._published: dict[str, np.ndarray] = {}  # the last snapshot's commands
        self._tables = None  # the command tables they were copied from
        self.ring = Ring()  # the blocks the snapshots' robot arrays look into
        self._names: tuple = (None, ())  # (the board's names, those snapshots leave): _public

    def make(self, sim, frame: Frame, readings: dict[str, np.ndarray]) -> Snapshot:
        """The snapshot of ``sim`` (a Simulation) after its step, from ``frame`` and the
        step's ``readings`` (read-only arrays)."""
        world = sim.world
        key = (world.layout_version, len(world.targets))
        if self._layout[0] != key:  # names, fields and shapes change only with the layout
            self._layout = (key, *self._take_layout(world, key[1]))
        _, fields, object_poses, part_handles, pose3d = self._layout
        fields = fields.copy()  # the layout's fields, in Snapshot's order; the step's below
        engine = world.engine
        if isinstance(object_poses, list):  # one batched call for every object
            fields["object_poses"] = frozen(engine.poses(object_poses))
            fields["object_pose3d"] = _poses3d(engine, pose3d)
        if part_handles:
            fields["part_poses"] = frozen(engine.poses(part_handles))
        fields["step"], fields["time"] = sim.step, sim.time
        fields["robots"], fields["index"] = sim.robots.names, sim.robots.index
        if type(frame) is StateFrame:  # a fused step's: one state, one copy
            fields["poses"], fields["velocities"] = self._whole_state(frame.state)
        else:
            fields["poses"], fields["velocities"] = self._robot_state(frame.pose,
                                                                      frame.velocity)
        fields["commands"] = self._frozen_commands(sim)
        fields["readings"] = dict(readings)  # read-only arrays (Sensors.sense, .carried)
        # no rule: no call for its empty mapping
        fields["rules"] = sim.rules.fields() if sim.rules.rules else {}
        fields["extra"] = self._public(sim.extra)
        if frame.state3d is not None:
            fields.update(self._state3d(frame.state3d))
        out = object.__new__(Snapshot)  # no per-field __setattr__; a dict of its own
        object.__setattr__(out, "__dict__", fields)
        return out

    @staticmethod
    def _take_layout(world, n_targets: int) -> tuple:
        """What snapshots take from the layout: (Snapshot's fields in its order, the step's
        left None; the objects' poses, or their handles while some move; the parts'
        handles; the objects' 3D poses, or their handles)."""
        handles = [h for _, h in world.objects.values()]
        still = all(spec.static for spec, _ in world.objects.values())
        # static objects never move: their poses are read once
        object_poses = frozen(world.engine.poses(handles)) if still else handles
        pose3d = _poses3d(world.engine, handles) if still else handles
        fields = dict.fromkeys(_FIELDS)
        fields.update(fields={k: reading_fields(m, n_targets) for k, m in MODULES.items()},
                      objects=tuple(world.objects), parts=tuple(p.name for p in world.parts),
                      targets=tuple(world.targets), layout_version=world.layout_version,
                      object_specs=tuple(spec for spec, _ in world.objects.values()),
                      object_poses=object_poses, object_pose3d=pose3d,
                      part_poses=_NO_POSES, **_NO_STATE3D)
        return fields, object_poses, [p.handle for p in world.parts], pose3d

    def _public(self, extra: dict) -> dict:
        """The board's entries a snapshot carries (names not starting with ``_``): their
        names picked again only when the board's names change."""
        names = tuple(extra)
        kept = self._names
        if kept[0] != names:
            kept = self._names = (names, tuple(k for k in names if k.startswith("_")))
        out = dict(extra)  # one C-level copy, the few private entries then taken out: ~0.2 us
        for k in kept[1]:  # less than a comprehension over the public ones
            del out[k]
        return out

    def _frozen_commands(self, sim) -> dict[str, np.ndarray]:
        """The snapshot's commands: a read-only copy of each table, but the last snapshot's
        copy of a table untouched since (:class:`~coopsim.sim.sensing.CommandTables`: the
        same bits; most are those of modules no robot carries)."""
        tables, last = sim.commands, self._published
        copy = self._copy
        if isinstance(tables, CommandTables):
            touched, out = tables.touched, None
            if tables is self._tables and not touched:  # nothing looked up since: the last
                return last  # snapshot's copies, the same mapping (no one writes into it)
            if tables is self._tables and len(touched) < len(last):  # a few looked up: the
                out = last.copy()  # last copies, those tables copied anew
                for k in touched:
                    if k in tables:  # (dict's own test: get() of a missing label touches it)
                        out[k] = copy(k, dict.__getitem__(tables, k))[0]
                if len(out) != dict.__len__(tables):  # a table taken away (one added is
                    out = None  # touched, so then too): every key again
            if out is None:
                out = {k: last[k] if k not in touched and k in last else copy(k, v)[0]
                       for k, v in dict.items(tables)}
            self._tables = tables
            tables.touched = set()
        else:  # someone put a plain dict there: copy every table
            out = {k: copy(k, v)[0] for k, v in tables.items()}
        self._published = out
        return out

    def _state3d(self, state3d: np.ndarray | None) -> dict:
        """The snapshot's ``pose3d`` and ``twist3d`` from a frame's full state (None in 2D):
        views of one block's columns 0-6 and 7-12."""
        if state3d is None:
            return {"pose3d": None, "twist3d": None}
        if len(state3d) < RING_ROWS:  # two fresh copies: the cheapest for a few robots
            return {"pose3d": frozen(state3d[:, :7].copy()),
                    "twist3d": frozen(state3d[:, 7:].copy())}
        pose3d, twist3d = self.ring.put(_STATE3D, state3d, (7, 6))
        return {"pose3d": pose3d, "twist3d": twist3d}

    def _robot_state(self, pose: np.ndarray, velocity: np.ndarray) -> tuple:
        """The snapshot's poses and velocities: one block's columns 0-2 and 3-5 when the
        frame's are one state's (one contiguous copy; two strided ones cost ~10x as much)."""
        if len(pose) < RING_ROWS:  # two fresh copies: the cheapest for a few robots
            return frozen(pose.copy()), frozen(velocity.copy())
        state = whole_state(pose, velocity)
        if state is not None:
            return self.ring.put(_STATE, state, (3, 3))
        return self.ring.put(_POSES, pose)[0], self.ring.put(_VELOCITIES, velocity)[0]

    def _whole_state(self, state: np.ndarray) -> tuple:
        """:meth:`_robot_state` of a planar (N, 6) ``state``: read-only views of columns
        0-2 and 3-5 of one copy (for a few robots one fresh copy and two views cost about
        half of two copies of its strided halves)."""
        if len(state) < RING_ROWS:
            whole = state.copy()
            whole.setflags(False)  # frozen()'s, without its call: its views are read-only too
            return whole[:, :3], whole[:, 3:6]
        return self.ring.put(_STATE, state, (3, 3))

    def _copy(self, key, source: np.ndarray, widths: tuple = ()) -> tuple[np.ndarray, ...]:
        """Read-only copies of ``source``'s column groups (:meth:`Ring.put`), in a ring block
        from :data:`RING_ROWS` rows on, else fresh."""
        if len(source) >= RING_ROWS:
            return self.ring.put(key, source, widths)
        return split(source.copy(), widths) if widths else (frozen(source.copy()),)


class StateFrame:
    """A fused step's frame (:mod:`coopsim.sim.fused`): the planar ``state`` (N, 6: x, y, yaw,
    vx, vy, yaw rate; world frame; m, rad, m/s, rad/s) its readings were made from, C-contiguous,
    and the full ``state3d`` on a 3D engine (None in 2D); ``pose`` and ``velocity`` are views
    of ``state`` (what the kinds read after a pass take), the snapshot copies ``state`` once."""

    __slots__ = ("state", "state3d")  # made every fused step

    def __init__(self, state: np.ndarray, state3d: np.ndarray | None) -> None:
        self.state, self.state3d = state, state3d

    @property
    def pose(self) -> np.ndarray:
        """(N, 3) x, y, yaw: a view of :attr:`state`."""
        return self.state[:, :3]

    @property
    def velocity(self) -> np.ndarray:
        """(N, 3) vx, vy, yaw rate: a view of :attr:`state`."""
        return self.state[:, 3:6]


def _poses3d(engine, handles: list) -> np.ndarray | None:
    """The snapshot's ``object_pose3d`` of the bodies ``handles``: None on a 2D engine, no
    engine call when there is no object (the call costs ~20 us even then)."""
    if "flight" not in engine.features:
        return None
    return frozen(engine.poses3d(handles)) if handles else _NO_POSES3D


def with_rules(snapshot: Snapshot, rules: dict) -> Snapshot:
    """``dataclasses.replace(snapshot, rules=rules)`` without the frozen dataclass's per-field
    ``object.__setattr__`` (a snapshot has no ``__post_init__``)."""
    out = object.__new__(Snapshot)
    object.__setattr__(out, "__dict__", {**snapshot.__dict__, "rules": rules})
    return out
