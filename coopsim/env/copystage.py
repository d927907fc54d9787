"""The module kinds of Python code on the ``copies`` batch backend (:mod:`coopsim.env.copies`):
stages around the compiled call, every copy measured in one call of the kind.

A kind with no compiled ``kernel_sense`` (``lidar``, ``light``, ``camera``, a
plugin's kind of Python code) does not send the batch to the ``world`` backend: after the
composed ``sense`` call (:class:`~coopsim.env.copysense.CopyKinds`), its ``measure`` runs once
a step over every copy's robots, as over one world's, on a
:class:`~coopsim.model.module.Frame` made by the template simulation's own
:meth:`~coopsim.sim.sensing.Sensors.frame` that lays the copies out as the ``world`` backend
does: copy k at an offset on a grid (:func:`~coopsim.env.batch.grid_offsets`, the copies
farther apart than twice the farthest ``range`` or ``max_range`` of any robot's module), its
robots' poses, its targets and its objects moved there, its robots named ``c{k}_NAME`` and
their groups told apart (copy k's robot of group g is g + k G, G one more than the template's
largest), one board (``extra``: the floor map, and what the kinds keep there: the lidar's
scans by robot name, which the batch's snapshot carries). So a kind relating robots (a
camera's blobs, a radio's range) meets its own copy's alone. The ray geometry
(:class:`CopyGeometry`) casts each ray in its copy's own frame against the template's static
shapes and its copy's chassis. A copy measures as the template scenario run alone would, to
rounding, and a kind costs its own Python once a step, whatever the number of copies. The
acting kinds of Python code (the ``leds``, a plugin's drive) run their ``actuate``
before the call, as a world's stages run before its composed call, on a frame that holds
each copy in its own frame (the frame of the batch's actions and of what the drivers
command, a ``track`` reference), with the batch's actions for the agents' kind and the
zeros a batch stores for the others.

The engine (``frame.physics``) answers as the kinematic engine answers of one-body robots
among objects it never moves, its drive commands included (:class:`CopyPhysics`); a kind
reaching past those calls raises
:class:`~coopsim.env.mapping.Unsupported`, which sends the batch to the ``world`` backend
when it happens while the batch is made (its first observation and one actuation).

Frames and units: the measuring frame's poses, targets and objects: the copies' grid, m, rad;
the acting frame's, readings and the batch itself: each copy's own frame (the template
scenario's world frame), m, rad, s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from ..model.arm import MAX_JOINTS
from ..model.kernel import read_only
from ..model.plugins import MODULES
from ..model.threads import kernel_threads
from ..physics.kinematic.engine import write_drive, write_velocity
from ..raycast.jitcast import PARALLEL_MIN, contiguous, fan_directions, static_grids
from ..raycast.jitfan import fan_gather
from .batch import copy_gap, grid_offsets
from .mapping import Unsupported


def _c(a, dtype=np.float64) -> np.ndarray:
    """``a`` of ``dtype`` in the one layout the ray kernels are compiled for."""
    return contiguous(np.asarray(a, dtype=dtype))


class CopyGeometry:
    """Every copy's ray geometry in its own frame (the interface of
    :class:`~coopsim.sim.sensing.Geometry`): the template's static shapes, binned once, and
    each copy's chassis; a ray meets its own copy's shapes alone.

    Args:
        stage: The :class:`CopyStage` (its static grid set, the group stride).
        offsets: (K, 2) where the frame puts each copy (the origins' and groups' frame), m.
        pose: (N, 3) every copy's robots, x, y m, yaw rad, each in its copy's frame.
        radius: (N,) m. group: (N,) the template's groups, tiled (not told apart by copy).
    """

    def __init__(self, stage: "CopyStage", offsets, pose, radius, group) -> None:
        self.stage, self.offsets, self.pose = stage, offsets, pose
        self.radius, self.group = radius, group
        self.heading = np.column_stack((np.cos(pose[:, 2]), np.sin(pose[:, 2])))
        self.circles = np.column_stack((pose[:, :2], radius))

    def cast_fan(self, rows: np.ndarray, angles: np.ndarray, reach: np.ndarray,
                 origins: np.ndarray | None = None, edge: np.ndarray | None = None
                 ) -> np.ndarray:
        """:meth:`Geometry.cast_fan <coopsim.sim.sensing.Geometry.cast_fan>`, each robot's
        rays against its own copy (``origins`` where the frame puts the copies):
        (len(rows), len(angles)) m."""
        rows = np.asarray(rows, dtype=np.int64)
        copy = rows // self.stage.width
        o = self.pose[rows, :2] if origins is None else origins - self.offsets[copy]
        edge = self.radius[rows] if edge is None else edge
        return self._cast(o, self.heading[rows], fan_directions(
            np.zeros(0), np.asarray(angles, float))[1], reach, edge, self.group[rows], copy)

    def cast(self, origins, directions, max_range, ray_group=None) -> np.ndarray:
        """:meth:`Geometry.cast <coopsim.sim.sensing.Geometry.cast>` for rays cast by robots
        (``origins`` where the frame puts the copies, ``directions`` unit): ``ray_group``
        (the frame's groups, told apart by copy) says whose copy each ray is cast in: (R,) m.

        Raises:
            Unsupported: a ray of no group (its copy unknown).
        """
        o = np.asarray(origins, float).reshape(-1, 2)
        rg = np.zeros(len(o), np.int64) if ray_group is None else np.asarray(ray_group)
        if (rg <= 0).any():
            raise Unsupported("a ray cast with no group: the copies backend cannot tell whose "
                              "copy it is in (backend='world' can)")
        copy, own = np.divmod(rg.astype(np.int64), self.stage.stride)
        return self._cast(o - self.offsets[copy], directions, _AHEAD, max_range,
                          np.zeros(len(o)), own, copy)[:, 0]

    def _cast(self, o, d, angles, reach, edge, rg, copy) -> np.ndarray:
        """(M, K) rays from ``o`` (M, 2) in the copies' frames along ``d`` (M, 2) turned by
        ``angles`` (K, 2), each against its ``copy``'s shapes: the ray caster's
        :func:`~coopsim.raycast.jitfan.fan_gather`, m."""
        out = np.empty((len(o), len(angles)))
        with kernel_threads(out.size, PARALLEL_MIN, 1):
            fan_gather(_c(o), _c(d), angles, _c(np.broadcast_to(np.asarray(reach, float),
                                                                len(o))),
                       _c(edge), _c(rg, np.int64), self.stage.grids, out, _c(copy, np.int64),
                       np.int64(self.stage.width), self.circles, _c(self.group, np.int64))
        return out


_AHEAD = np.array([[1.0, 0.0]])  # one ray along its direction: a fan of one angle, 0


class CopiedObjects(Sequence):
    """Every copy's objects (``frame.objects``), copy after copy, each named ``c{k}_NAME`` and
    moved to its copy's place on the grid: an object's spec is made when read (most kinds read
    none; a camera reads them once a layout).

    Args:
        objects: The template's objects (:class:`~coopsim.model.specs.ObjectSpec`), in order.
        offsets: (K, 2) each copy's offset, m.
    """

    def __init__(self, objects: tuple, offsets: np.ndarray) -> None:
        self._objects, self._offsets = objects, offsets.tolist()

    def __len__(self) -> int:
        return len(self._objects) * len(self._offsets)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"object {i} of {n}")
        k, j = divmod(i % n, len(self._objects))
        o, (dx, dy) = self._objects[j], self._offsets[k]
        return replace(o, name=f"c{k}_{o.name}",
                       position=(o.position[0] + dx, o.position[1] + dy, *o.position[2:]))


class CopyPhysics:
    """``frame.physics`` of the stage's frames: what the kinematic engine answers of the
    copies' robots, one body each, among objects it never moves: a part of a role the robot
    names is its one body (its pose, as the frame places it; another robot's: NaN, as a world
    answers for a robot without it), a named point is on that body, there is no joint or arm
    (NaN; their commands skip every robot), the objects are where they were put (as
    :attr:`~coopsim.model.module.Frame.objects` lists them), and the drive commands
    (``drive``, ``set_velocity``) are written into the copies' command arrays. What the
    kinematic engine has not (``apply_wrench``, images) raises
    :class:`~coopsim.env.mapping.Unsupported` (see the module).

    Args:
        objects: (O, 3) every copy's objects' x, y (m) and yaw (rad), in the frame's order.
        robots: The template's robots (their ``refs`` and ``points``; copy row r is robot
            r mod len(robots)).
        now: ``label``: the kind running now (what the refusal names); ``engine``: the
            copies' (cmd, mode, driven) arrays (:class:`~coopsim.env.copies.CopyBatch`'s);
            ``state``: the frame's (N, 6) state.
    """

    def __init__(self, objects: np.ndarray, robots: tuple, now: SimpleNamespace) -> None:
        self._objects, self._robots, self._now = objects, robots, now

    def _rows(self, rows, has) -> tuple[np.ndarray, np.ndarray]:
        """(``rows`` as int64, whether each one's template robot ``has(robot)``)."""
        rows = np.asarray(rows, dtype=np.int64)
        mask = np.array([has(r) for r in self._robots], dtype=bool)
        return rows, mask[rows % len(self._robots)]

    def poses(self, rows: np.ndarray, role: str) -> np.ndarray:
        rows, has = self._rows(rows, lambda r: role in r.refs)
        out = np.full((len(rows), 3), np.nan)
        out[has] = self._now.state[rows[has], :3]
        return out

    def points(self, rows: np.ndarray, name: str) -> np.ndarray:
        rows, has = self._rows(rows, lambda r: name in r.points)
        offsets = np.array([r.points[name][1][:2] if name in r.points else (np.nan, np.nan)
                            for r in self._robots], float)[rows % len(self._robots)]
        pose = self._now.state[rows, :3]
        c, s = np.cos(pose[:, 2]), np.sin(pose[:, 2])
        out = np.column_stack((pose[:, :2] + np.column_stack((
            c * offsets[:, 0] - s * offsets[:, 1], s * offsets[:, 0] + c * offsets[:, 1])),
            pose[:, 2]))
        out[~has] = np.nan
        return out

    def joint_state(self, rows: np.ndarray, roles: tuple) -> np.ndarray:
        return np.full((len(rows), len(roles), 2), np.nan)

    def joint_force(self, rows: np.ndarray, role: str) -> np.ndarray:
        return np.full(len(rows), np.nan)

    def set_motor_rates(self, rows: np.ndarray, roles: tuple, rates: np.ndarray) -> None:
        pass  # no robot has a joint

    def arms(self, rows: np.ndarray) -> tuple:
        return (None,) * len(rows)

    def arm_state(self, rows: np.ndarray) -> np.ndarray:
        return np.full((len(rows), MAX_JOINTS, 3), np.nan)

    def set_arm_targets(self, rows: np.ndarray, q: np.ndarray, qd: np.ndarray) -> None:
        pass  # no robot has an arm

    def wrist_wrench(self, rows: np.ndarray) -> np.ndarray:
        return np.full((len(rows), 6), np.nan)

    def described_positions(self, rows: np.ndarray, width: int) -> np.ndarray:
        return np.full((len(rows), width), np.nan)

    def servo_targets(self, rows: np.ndarray, targets: np.ndarray | None) -> np.ndarray:
        return np.full((len(rows), 32), np.nan)

    def object_poses(self, which: np.ndarray) -> np.ndarray:
        return self._objects[np.asarray(which, dtype=np.int64)]

    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        write_drive(*self._now.engine, rows, forward, turn)

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        write_velocity(*self._now.engine, rows, velocity)

    def __getattr__(self, name: str):
        raise Unsupported(f"module {self._now.label!r} asks the engine for {name} "
                          "(frame.physics), which the copies backend does not carry "
                          "(backend='world' does)")


class CopyStage:
    """The kinds of Python code over every copy's robots (see the module).

    Args:
        sim: The template Simulation (one copy). copies: K. labels: The measured kinds of
            Python code (observed, read by a task or carried by a driven robot), in the
            simulation's module order. acts: The acting kinds of Python code, in module
            order, that run before the compiled call as a world's stages do (``motion``
            among them when it has no compiled kernel: its commands, the batch's actions;
            the others': the zeros a batch stores for them).
        motion: The agents' acting kind's label. gap: The measuring frame's distance between
            copies, m (:func:`~coopsim.env.batch.copy_gap`, as the world backend's).
    """

    def __init__(self, sim, copies: int, labels: tuple, acts: tuple, motion: str,
                 gap: float | None = None) -> None:
        self.sim, self.copies, self.motion = sim, copies, motion
        c, cg, s, sg = sim.world.engine.static_geometry()
        self.grids = static_grids(c, s, cg, sg)  # the template's, in every copy's frame
        a = self.width = len(sim.robots.names)
        group = np.asarray(sim.robots.group, np.int64)
        self.stride = int(group.max(initial=0)) + 1
        self.groups = (np.arange(copies)[:, None] * self.stride + group).ravel()
        self.groups[np.tile(group, copies) == 0] = 0  # no group stays none
        self.labels, self.acts = tuple(labels), tuple(acts)
        gap = copy_gap(sim.scenario, gap)  # the world backend's layout
        self._now = SimpleNamespace(label="", engine=None, state=None)
        #: the copies on the world backend's grid (measuring) and each in its own frame
        #: (acting: the frame the batch's actions and the drivers' commands are given in)
        self.grid = self._placed(grid_offsets(sim.world.floor, copies, gap)[0])
        self.own = self._placed(np.zeros((copies, 2)))
        #: label -> (module, its carriers' rows over every copy, their parameter arrays)
        self.kinds = {}
        for label in (*self.labels, *self.acts):
            rows, values = sim.params.rows[label], sim.params.values[label]
            every = (np.arange(copies)[:, None] * a + rows).ravel()
            self.kinds[label] = (MODULES.get(label), every, {
                k: np.tile(v, (copies,) + (1,) * (np.ndim(v) - 1)) for k, v in values.items()})
        self.commands = {label: read_only(np.zeros((copies * a, len(
            MODULES.get(label).command_fields)))) for label in self.acts if label != motion}
        self.board: dict = {}
        self.actuated: dict = {}
        self.restart()

    def _placed(self, offsets: np.ndarray) -> SimpleNamespace:
        """The copies put at ``offsets`` (K, 2) m: their offsets, targets, objects and the
        engine's answers about them (:class:`CopyPhysics`)."""
        world, copies = self.sim.world, self.copies
        targets = np.array([t.position[:2] for t in world.targets], float).reshape(-1, 2)
        placed = tuple(spec for spec, _ in world.objects.values())
        poses = np.array([(*o.position[:2], o.yaw) for o in placed], float).reshape(1, -1, 3)
        poses = np.repeat(poses, copies, axis=0)
        poses[:, :, :2] += offsets[:, None]
        return SimpleNamespace(
            offsets=offsets, shift=np.repeat(offsets, self.width, axis=0),
            targets=read_only((offsets[:, None] + targets).reshape(-1, 2)),
            colors=tuple(t.color for t in world.targets) * copies,
            objects=CopiedObjects(placed, offsets),
            physics=CopyPhysics(read_only(poses.reshape(-1, 3)), tuple(world.robots),
                                self._now))

    def restart(self) -> None:
        """The board back to the template's start (its floor map alone), nothing actuated."""
        self.board = {k: v for k, v in self.sim.extra.items() if k == "map"}
        self.actuated = {}

    def public(self) -> dict:
        """What the kinds posted on the board (the batch's snapshot's ``extra``)."""
        return {k: v for k, v in self.board.items() if not k.startswith("_") and k != "map"}

    def _frame(self, batch, at: SimpleNamespace):
        """The frame of every copy's robots now, the copies placed ``at`` (:attr:`grid` or
        :attr:`own`; see the module)."""
        sim, shared = self.sim, batch._shared
        table = SimpleNamespace(radius=shared["radius"], axle=shared["axle"],
                                group=self.groups, names=batch._names)
        pose = batch.state[:, :3]
        state = batch.state.copy()
        state[:, :2] += at.shift
        state.flags.writeable = False
        self._now.engine, self._now.state = (batch.cmd, batch.mode, shared["driven"]), state
        frame = sim.sensors.frame(sim.world, state, table,
                                  {self.motion: batch.act_view, **self.commands},
                                  self.actuated, sim.dt, at.physics, self.board,
                                  batch.step, batch.time)
        frame.targets, frame.target_colors, frame.objects = at.targets, at.colors, at.objects
        frame.defer("geometry", lambda: CopyGeometry(self, at.offsets, pose, shared["radius"],
                                                     shared["group"]))
        frame.contacts = batch.contact
        return frame

    def act(self, batch) -> None:
        """The acting kinds' ``actuate`` over every copy's robots, in module order, each copy
        in its own frame, with their stored commands (the motion kind's: the batch's
        actions; the others': zeros, nothing stores them in a batch); what the drive calls
        of ``frame.physics`` ask is written into the copies' commands (before the compiled
        call's drive, as a world's stages act before its composed call); what each returns
        is what the measuring frame's ``actuated`` holds (the ``leds``' colours)."""
        if not self.acts:
            return
        frame = self._frame(batch, self.own)
        self.actuated = frame.actuated = {}
        for label in self.acts:
            module, every, values = self.kinds[label]
            self._now.label = label
            found = module.actuate(frame, every, values, frame.commands[label][every])
            if found is not None:
                self.actuated[label] = found

    def measure(self, batch, rng, prev: dict, out: dict, due: dict | None,
                noise: tuple | None) -> None:
        """Each measured kind's reading of every copy's robots into ``out`` (label -> (N,
        width), new arrays), ``prev`` the last readings (kept where a ``rate`` holds them), in
        module order, the copies on the grid. ``due``: label -> which of its carriers
        (copy-major over every copy's) measure now (a mask or a slice; None or absent: all).
        ``noise``: (the step's noise key, the draw's layout) when the step draws (the kinds'
        blocks of it, as a world's stages take theirs:
        :func:`~coopsim.sim.noiseplan.draw_some`), else None."""
        from ..sim.noiseplan import draw_some

        frame = self._frame(batch, self.grid)
        if noise is not None:
            frame.noise = draw_some(noise[0], noise[1], self.labels)
        for label in self.labels:
            module, every, values = self.kinds[label]
            pick = (due or {}).get(label)
            rows = every if pick is None else every[pick]
            into = out[label] = prev[label].copy()
            if not len(rows):
                continue
            p = values if pick is None else {k: v[pick] for k, v in values.items()}
            self._now.label = label
            into[rows] = module.measure(frame, rows, p, prev[label][rows], rng)
