"""The ``kinematic`` engine: every robot moves as commanded, then overlaps are resolved (swarms).

No forces, no mass, no joints. Robots are circles (their member radius); objects stand still
(cylinders and spheres: circles; boxes: solid oriented rectangles, whose edges the ray caster
sees): an object with mass is not pushed, but it can be *attached* to a robot (:meth:`attach`,
a gripper's hold), and then moves rigidly with it (pin and weld alike), colliding with nothing
while carried, until it is detached where it is. What it cannot run -- joints (``team2``'s
carried bar), carried parts -- is refused with a reason by :meth:`Engine.refuses_assembly`.

One step of ``dt`` seconds:

1. Motion. Each robot moves by its last command: differential drive (:meth:`drive`: forward
   speed along its heading, yaw rate) along the exact arc; velocity drive (:meth:`set_velocity`:
   world vx, vy and yaw rate) in a straight line. Undriven robots stay put. When the fastest
   robot would move more than half the smallest robot radius, the step is split into equal
   substeps (at most :data:`MAX_SUBSTEPS`), so nothing tunnels through a wall or a robot.
2. Overlap resolution, in Jacobi passes over the positions after the motion: every robot is
   pushed by half of each overlap with another robot, along the line of centres, away from it
   (the pair symmetrically; coincident centres part along x); then out of the static shapes of
   its cell, one after the other (out of a circle along the centre line, out of a box through
   the nearest point of its boundary, or its nearest face if the centre is inside); then clamped
   onto the floor (the floor's edges are walls). Passes repeat until none moves a robot by more
   than :data:`~coopsim.physics.kinematic.kernels.EPS`, at most :data:`ITERATIONS` times; what
   a dense jam leaves over is resolved in the next steps (a few mm at 0.6 m/s and dt 0.02 s).
   Robots slide along each other and along walls: there is no friction. Robot pairs are found
   in a uniform grid of cells (side >= 3 robot radii, about one robot a cell) rebuilt each
   substep; static shapes in a grid built once per layout. A pass after the first recomputes
   only the robots within reach of one the last pass moved: the others would come out as they
   went in, so the result is that of full passes.
3. Reported velocity: the actual displacement / dt (world frame) and the commanded yaw rate
   (a robot's heading is never changed by a push).
4. Contacts (:meth:`contacts`, the bumper): a robot touches something when it overlaps it or is
   within :data:`~coopsim.physics.kinematic.kernels.GAP` of it in any pass of the step; the
   contact is front when the direction from the robot's centre to the contact point is within
   90 degrees of its heading, else rear (as the pymunk engine reports).

Determinism: the same inputs give bit-identical outputs whatever the number of threads: each
robot's new position is computed from the previous pass's positions alone, its neighbours and
shapes visited in a fixed order (see :mod:`coopsim.physics.kinematic.kernels`, compiled).
Up to :data:`SMALL_N` robots the whole step is one compiled call (``step_small``: the same
kernels' per-robot bodies in the same order, so the same bits; a kernel call's dispatch costs
more than a small world's work). numba's threads share the robots from
``kernels.PARALLEL_MIN`` robots on (8,192; how many threads: :mod:`coopsim.model.threads`).

Frames and units: world frame, metres, radians (yaw counter-clockwise from +x, reported in
[-pi, pi]), seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ...model.errors import SimulationError
from ...model.robot_type import Assembly
from ...model.specs import FloorSpec, ObjectSpec
from . import kernels as jit
from . import small
from ..engine import CopyTemplate, Engine, Handles
from ..shapes import as_geometry, box_corners, outline_geometry
from .kernels import BOX, CIRCLE, GAP, NONE, grid_geometry
# the static shapes' grid and its cache, importable from here as before
from .static import STATIC_CELLS, binned, static_grid, static_shapes  # noqa: F401

_NONE_MOVING = as_geometry([], [])  # moving_geometry without carried objects (read-only)
for _empty in _NONE_MOVING:
    _empty.flags.writeable = False
del _empty
ITERATIONS = 32  # resolution passes per substep, at most (a jam needs many; free robots 1-2)
MAX_SUBSTEPS = 16  # substeps per step, at most
SUBSTEP_REACH = 0.5  # largest move per substep, in smallest robot radii
CELL_RADII = 3.0  # robot grid cell side, in largest robot radii: a pair of robots that overlap
# after a pass was found by the binning before it unless one moved more than a radius since
SMALL_N = 64  # robots up to which a step is one compiled call (kinematic.small.step_small)


@dataclass(eq=False)
class _Robot:
    """A robot's handle: its state while it is out of the layout, its row while in it."""

    x: float
    y: float
    yaw: float
    radius: float
    group: int
    row: int = -1  # row in the engine's arrays, -1 when not in the current layout
    velocity: tuple = (0.0, 0.0, 0.0)
    command: tuple = (0.0, 0.0, 0.0)
    mode: int = NONE


@dataclass(eq=False)
class _Object:
    """An object: its spec (its position: where it stands when not carried) and pose (x, y,
    yaw); ``carrier``: (the robot carrying it, its pose in the robot's frame) or None."""

    spec: ObjectSpec
    pose: tuple
    carrier: tuple | None = None


def write_drive(cmd, mode, driven, rows, forward, turn) -> None:
    """:meth:`KinematicEngine.drive` into the command arrays ``cmd`` (N, 3), ``mode`` (N,)
    of robots ``driven`` (N,) (an engine's, or the copies batch backend's): robots ``rows``
    that are driven get (forward m/s, 0, turn rad/s), a value broadcast to every row, one not
    finite taken as 0: one compiled loop (:func:`~coopsim.physics.kinematic.small.
    drive_small`, a composed step's too; numpy's ~10 passes over the rows were a serial
    millisecond a step at 100,000 robots)."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    small.drive_small(cmd, mode, driven, rows, _shaped(forward, rows.shape),
                      _shaped(turn, rows.shape))


def write_velocity(cmd, mode, driven, rows, velocity) -> None:
    """:meth:`KinematicEngine.set_velocity` into the command arrays (as :func:`write_drive`):
    robots ``rows`` that are driven get ``velocity`` (len(rows), 3): world vx, vy m/s, yaw
    rate rad/s (one row broadcast to them all), a value not finite taken as 0: one compiled
    call (:func:`~coopsim.physics.kinematic.small.velocity_small`, a composed step's too)."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    small.velocity_small(cmd, mode, driven, rows, _shaped(velocity, (len(rows), 3)))


def _shaped(values, shape: tuple) -> np.ndarray:
    """``values`` as float64 of ``shape``: as given when it has it, else broadcast into an
    array of its own (not numpy's read-only broadcast view: the kernels are compiled for the
    arrays callers pass)."""
    values = np.asarray(values, dtype=float)
    return values if values.shape == shape else np.broadcast_to(values, shape).copy()


class KinematicEngine(Engine):
    """Kinematic integration with overlap resolution (one-body robots, static objects).

    Each robot moves by its commanded motion (a differential drive along the exact arc; split
    into substeps when a robot would move more than half its radius, so nothing tunnels), then
    robot overlaps are pushed apart symmetrically and robots pushed out of static shapes (boxes
    are solid) and kept on the floor; the reported velocity is the actual displacement over
    dt. No forces, no friction (robots slide along each other, and a robot can push a crowd),
    no joints; objects with mass stand still like static ones (nothing pushes them) until a
    gripper attaches one: it then moves rigidly with the robot, colliding with nothing, until
    released where it is. Compiled with numba: 10,000 robots' physics in about 1 ms a step. Use
    it for swarms of one-body robots (``single``); the module docstring gives the step.

    Args:
        floor: The floor; its edges are walls.
    """

    label = "kinematic"
    description = "swarm kinematics (numba): commanded motion, overlap resolution, no joints"
    features = frozenset({"differential", "velocity", "movable_objects", "attach", "swarm",
                          "batch", "copies"})

    def __init__(self, floor: FloorSpec) -> None:
        super().__init__(floor)
        self._k = jit
        self._half = np.array([floor.length / 2, floor.width / 2])
        self._objects: list[_Object] = []
        self._carried = 0  # objects attached now (none: nothing to move, no moving shapes)
        self._robots: list[_Robot] = []
        self._static: tuple | None = None  # static grid, rebuilt lazily after a change
        self._shapes: tuple | None = None  # static shapes for the ray caster
        self._pending: tuple | None = None  # (robots, drives) of a set_robots not yet applied
        self._fused = None  # its fused side (fused()), made when first asked for
        self._allocate(0)

    def _allocate(self, n: int) -> None:
        """Arrays for ``n`` robots, robot order (zeros)."""
        self.pos, self._buf = np.zeros((n, 2)), np.zeros((n, 2))
        self.yaw, self.radius = np.zeros(n), np.zeros(n)
        self._rmin = self._rmax = 0.0  # smallest positive and largest radius, m
        self.heading = np.zeros((n, 2))
        self.cmd = np.zeros((n, 3))  # see _Robot; the velocity is state[:, 3:]
        self.mode = np.zeros(n, np.int64)
        self.driven = np.zeros(n, bool)
        self.contact, self.state = np.zeros((n, 2)), np.zeros((n, 6))
        self._rows = np.arange(n, dtype=np.int64)  # a pass over every robot
        self._moved, self._flag = np.zeros(n, np.uint8), np.zeros(n, np.uint8)  # pass scratch

    # -- layout -----------------------------------------------------------------------------------

    def add_object(self, spec: ObjectSpec) -> _Object:
        self.check_object(spec)
        obj = _Object(spec, (spec.position[0], spec.position[1], spec.yaw))
        self._objects.append(obj)
        self._static = self._shapes = None
        return obj

    def remove_object(self, handle: _Object) -> None:
        if handle.carrier is not None:
            self.detach(handle)
        self._objects.remove(handle)
        self._static = self._shapes = None

    def attach(self, a, b, kind: str, anchor: tuple[float, float]) -> _Object:
        """A rigid attachment of object ``b`` to robot ``a`` (``kind`` and ``anchor`` do not
        matter: there are no joints); the object leaves the static shapes while carried."""
        if not (isinstance(a, _Robot) and isinstance(b, _Object)):
            raise SimulationError("the kinematic engine attaches an object to a robot only")
        if b.carrier is not None:
            raise SimulationError(f"{b.spec.name} is attached already")
        x, y, yaw = self.poses([a])[0]
        dx, dy = b.pose[0] - x, b.pose[1] - y
        c, s = math.cos(yaw), math.sin(yaw)
        b.carrier = (a, (c * dx + s * dy, -s * dx + c * dy, b.pose[2] - yaw))
        self._carried += 1
        self._static = self._shapes = None
        return b

    def detach(self, handle: _Object) -> None:
        """Put the object down where it is: a standing object again."""
        x, y, yaw = handle.pose
        handle.spec = replace(handle.spec, position=(x, y, handle.spec.position[2]), yaw=yaw)
        if handle.carrier is not None:
            self._carried -= 1
        handle.carrier = None
        self._static = self._shapes = None

    def _carry(self) -> None:
        """Move every carried object with its robot (after the robots moved)."""
        for obj in self._objects if self._carried else ():
            if obj.carrier is None:
                continue
            robot, (u, v, turn) = obj.carrier
            x, y, yaw = self.poses([robot])[0]
            c, s = math.cos(yaw), math.sin(yaw)
            obj.pose = (x + c * u - s * v, y + s * u + c * v, yaw + turn)

    def _standing(self) -> list:
        """The objects not carried: the static shapes."""
        return [o for o in self._objects if o.carrier is None]

    def add_assembly(self, assembly: Assembly, group: int) -> Handles:
        self.check_assembly(assembly)
        handles = Handles()
        for member in assembly.members:
            body = assembly.body(member.body)
            robot = _Robot(body.position[0], body.position[1], body.yaw, member.radius, group)
            handles.bodies[member.body] = robot
            handles.robots[member.name] = robot
        return handles

    def remove_assembly(self, handles: Handles) -> None:
        """Nothing to free: the robots leave with the next :meth:`set_robots`."""

    def set_robots(self, robots: list, drives: list[str]) -> None:
        """Fix the robot order. Robots already in the layout keep their pose, velocity and
        command (matched by handle); robots leaving it keep theirs in their handle.

        Applied at the next query or step: a world built robot by robot calls this after each
        insertion, and rebuilding the arrays every time would cost O(N^2).
        """
        self._pending = (robots, drives)

    def _sync(self) -> None:
        """Apply the last :meth:`set_robots`, if not yet done."""
        if self._pending is not None:
            robots, drives = self._pending
            self._pending = None
            self._relayout(list(robots), list(drives))

    def _relayout(self, robots: list, drives: list[str]) -> None:
        """See :meth:`set_robots`."""
        staying = {id(r) for r in robots}
        for robot in self._robots:
            if id(robot) not in staying:
                self._store(robot)
        rows = np.fromiter((r.row for r in robots), np.int64, len(robots))
        old = (self.pos, self.yaw, self.heading, self.state[:, 3:], self.cmd, self.mode)
        self._allocate(len(robots))
        kept = np.flatnonzero(rows >= 0)
        for new, was in zip((self.pos, self.yaw, self.heading, self.state[:, 3:], self.cmd,
                             self.mode), old):
            new[kept] = was[rows[kept]]
        for k in np.flatnonzero(rows < 0):
            r = robots[k]
            self.pos[k], self.yaw[k] = (r.x, r.y), r.yaw
            self.heading[k] = math.cos(r.yaw), math.sin(r.yaw)
            self.state[k, 3:], self.cmd[k], self.mode[k] = r.velocity, r.command, r.mode
        for k, robot in enumerate(robots):
            robot.row = k
        self._robots = list(robots)
        self.radius = np.array([r.radius for r in robots], dtype=float)
        positive = self.radius[self.radius > 0]
        self._rmin = float(positive.min()) if len(positive) else 0.0
        self._rmax = float(self.radius.max(initial=0.0))
        self.driven = np.array([bool(d) for d in drives], dtype=bool)
        self.state[:, :2], self.state[:, 2] = self.pos, self.yaw
        self._limits = (self._rmin, self._rmax, SUBSTEP_REACH, float(MAX_SUBSTEPS), CELL_RADII,
                        float(ITERATIONS))  # step_small's

    def _store(self, robot: _Robot) -> None:
        """Copy a robot's row into its handle (it leaves the layout)."""
        k = robot.row
        robot.x, robot.y, robot.yaw = float(self.pos[k, 0]), float(self.pos[k, 1]), \
            float(self.yaw[k])
        robot.velocity = tuple(self.state[k, 3:].tolist())
        robot.command = tuple(self.cmd[k].tolist())
        robot.mode, robot.row = int(self.mode[k]), -1

    # -- stepping ---------------------------------------------------------------------------------

    def step(self, dt: float) -> None:
        self._sync()
        n = len(self.pos)
        if not n:
            return
        static = self._static_grid()
        if n <= SMALL_N:  # one compiled call: the same bits, no dispatches
            small.step_small(self.pos, self._buf, self.yaw, self.cmd, self.mode, self.heading,
                           self.radius, self.state, self.contact, self._moved, self._flag,
                           self._rows, static, self._half, dt, self._limits)
        else:
            start = self.pos.copy()
            self.contact[:] = 0.0
            substeps = self._substeps(dt)
            with jit.threads(n):
                for _ in range(substeps):
                    self._k.move(self.pos, self.yaw, self.cmd, self.mode, dt / substeps,
                                 self.heading)
                    self._resolve(static)
                self._k.finish(self.pos, start, self.yaw, self.cmd, self.mode, dt, self.state)
        self._carry()

    def fused(self):
        """See :meth:`Engine.fused`: a :class:`~coopsim.physics.kinematic.fused.KinematicFused`
        (its small worlds' drive and step in a pass's call)."""
        if self._fused is None:
            from .fused import KinematicFused

            self._fused = KinematicFused(self, SMALL_N)
        return self._fused

    def _substeps(self, dt: float) -> int:
        """Substeps for this step: the fastest robot moves at most SUBSTEP_REACH of the
        smallest radius in one (|vx| + |vy| bounds the speed: no square roots)."""
        if self._rmin <= 0.0:
            return 1
        reach = self._k.top_speed(self.cmd, self.mode) * dt / (SUBSTEP_REACH * self._rmin)
        return int(max(1, math.ceil(min(reach, MAX_SUBSTEPS))))

    def _resolve(self, static: tuple) -> None:
        """Resolution passes over the robots binned where they are now (see the module): the
        first over every robot, the next ones over those near a robot the last one moved."""
        n = len(self.pos)
        side = CELL_RADII * self._rmax if self._rmax > 0 else 1.0
        geom = grid_geometry(*self._k.bounds(self.pos), side, n + 64)
        grid = self._k.robot_grid(self.pos, self.radius, geom)
        args = (self.radius, self.heading, grid, static, self._half, self.contact)
        moved = self._k.first_pass(self.pos, self._buf, self._moved, *args)
        self.pos, self._buf = self._buf, self.pos  # every robot: swap instead of copying back
        rows = self._rows
        for _ in range(ITERATIONS - 1):
            if not moved:
                break
            rows = self._k.activate(rows, self._moved, self._buf, self.pos, self.radius, grid,
                                    self._flag)
            with jit.threads(len(rows)):
                moved = self._k.resolve_pass(self.pos, rows, self._buf, self._moved, *args)
            self._k.scatter(self.pos, rows, self._buf)  # _buf: positions before the pass

    def robot_state(self) -> np.ndarray:
        self._sync()
        return self.state.copy()

    def copy_template(self) -> CopyTemplate:
        """See :meth:`Engine.copy_template`: the robots as laid out now, the static grid of the
        standing objects, and :func:`~coopsim.physics.kinematic.small.step_small`'s limits."""
        self._sync()
        copied = lambda arrays: tuple(np.array(a) for a in arrays)  # noqa: E731
        return CopyTemplate(*copied((self.pos, self.yaw, self.heading, self.radius,
                                     self.driven, self._half)),
                            static=copied(self._static_grid()),
                            limits=np.array(self._limits))

    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        """See :meth:`Engine.drive`; a value that is not a finite number is taken as 0."""
        self._sync()
        write_drive(self.cmd, self.mode, self.driven, rows, forward, turn)

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        """See :meth:`Engine.set_velocity`; a value that is not a finite number is taken as 0."""
        self._sync()
        write_velocity(self.cmd, self.mode, self.driven, rows, velocity)

    def reset_rows(self, rows: np.ndarray, state: np.ndarray) -> None:
        """See :meth:`Engine.reset_rows`: the rows' pose, heading, velocity and command are
        written in place (the contact flags stay those of the last step)."""
        self._sync()
        rows = np.asarray(rows, dtype=np.int64)
        state = np.asarray(state, dtype=np.float64).reshape(len(rows), 6)
        self.pos[rows] = state[:, :2]
        self.yaw[rows] = state[:, 2]
        self.heading[rows, 0] = np.cos(state[:, 2])
        self.heading[rows, 1] = np.sin(state[:, 2])
        self.state[rows] = state
        self.cmd[rows] = 0.0

    def contacts(self, pose: np.ndarray) -> np.ndarray:
        """(N, 2) front / rear contact flags of the last step (``pose`` unused: the headings
        of the step are the ones the flags were taken with)."""
        self._sync()
        return self.contact.copy()

    def poses(self, handles: list) -> np.ndarray:
        self._sync()
        out = np.empty((len(handles), 3))
        for k, h in enumerate(handles):
            if isinstance(h, _Object):
                out[k] = h.pose
            elif h.row >= 0:
                out[k] = self.pos[h.row, 0], self.pos[h.row, 1], self.yaw[h.row]
            else:
                out[k] = h.x, h.y, h.yaw
        return out

    # -- geometry ---------------------------------------------------------------------------------

    def _static_grid(self) -> tuple:
        """The static shapes binned for the robots' queries, rebuilt when objects or the
        largest robot radius grew beyond its padding."""
        pad = self._rmax + GAP + 1e-6  # 1e-6 m: more than any rounding of a cell index
        if self._static is None or self._static[-1] < pad:
            shapes, kinds = static_shapes(self._standing())
            self._static = (*binned(shapes, kinds, self._half, pad), pad)
        return self._static[:-1]

    def static_geometry(self):
        if self._shapes is None:
            self._shapes = outline_geometry(*self._half,
                                            [obj.spec for obj in self._standing()])
        return self._shapes

    def moving_geometry(self):
        """The carried objects where they are now (none: no moving shapes)."""
        if not self._carried:
            return _NONE_MOVING
        circles, segments = [], []
        for obj in self._objects:
            if obj.carrier is not None:
                x, y, yaw = obj.pose
                s = obj.spec
                if s.shape == "box":
                    c = box_corners(x, y, yaw, s.size[0], s.size[1])
                    segments += [(*c[k], *c[(k + 1) % 4], 0) for k in range(4)]
                else:
                    circles.append((x, y, s.radius, 0))
        return as_geometry(circles, segments)
