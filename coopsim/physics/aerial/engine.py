"""The ``aerial`` engine: rigid bodies free in 3D without contacts, compiled (flying swarms).

What ``kinematic`` is to ground swarms, this engine is to flying ones: thousands of quadrotors
a step at a few hundred hertz. What it models, one step of ``dt`` seconds per body:

* **Free bodies** (``BodySpec(free=True)``: mass, principal moments ``inertia`` (Ixx, Iyy, Izz)
  along the body axes, or those of a solid cylinder of the member's radius and the body's height
  when ``()``) move under gravity (9.81 m/s^2 along -z) and the body-frame wrench that
  :meth:`apply_wrench` holds until set again (force and torque at the centre of mass: what the
  ``rotors`` drive sets). Semi-implicit Euler, as MuJoCo's Euler integrator: the forces at the
  step's start give the new velocities, which move the body: v += (R f / m + g) dt (world
  frame); Euler's equations in the body frame, I w' = tau - w x I w, give w += w' dt; then
  p += v dt and the quaternion is turned by the exact rotation by |w| dt about w and
  normalised. A body falls, hovers under m g of thrust, and precesses as a rigid body does.
* **The floor** at z = 0: a body's centre of mass never goes below its ground clearance (half
  the body's ``height``; a body of height 0 counts half its radius as its height). A step that
  would take it below lands it: its velocity into the floor is removed, its roll and pitch rates
  too (it rests on its legs), and ground friction (Coulomb, the body's ``floor_friction``, or
  :data:`GROUND_FRICTION` when that is 0) takes mu times the removed vertical speed off its
  horizontal speed and off its yaw spin at its radius. So a landed quadrotor stays where it
  landed until its thrust lifts it.
* **Walls** at the floor's edges: a body's centre stays its radius inside each edge (clamped,
  its velocity into the wall stopped). There is no ceiling.
* **Ground robots** (``free=False``) drive as on the ``kinematic`` engine, at the height their
  body gives (0 for ground robots): the differential drive along the exact arc, the velocity
  drive (world vx, vy, yaw rate) in a straight line; their velocity is what they moved / dt.
  Flying and ground robots share one world.

What it does not model: **no contacts** between bodies (robots pass through each other and
through objects: objects are static boxes, cylinders and spheres the sensors see, nothing a
body collides with; movable objects are refused), no joints, no carried parts, no aerodynamics
(drag, ground effect: a module may add them as wrenches), no bounce. :meth:`contacts` reports
none.

Compiled: the step is one numba kernel over the rows (:mod:`coopsim.physics.aerial.kernels`),
shared among numba's threads from ``aerial.kernels.PARALLEL_MIN`` rows on; at any thread
count it gives the same bits (no libm calls, no reordering), so a run is
reproducible bit for bit. The kernel checks each row after its step
(:mod:`coopsim.model.health`: finite, speed, angular rate, altitude): a row that diverged is put
back at its pose at the step's start, at rest, its wrench and command dropped, and
:meth:`AerialEngine.diverged` names it; the other rows go on.

Frames and units: world frame (z up), metres, kilograms, radians, seconds; :meth:`state3d` as
:data:`coopsim.physics.engine.STATE3D` (angular velocity in the body frame); :meth:`robot_state`
the planar projection (yaw from the quaternion, yaw rate about world z).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...model import held
from ...model.errors import SimulationError
from ...model.robot_type import Assembly, BodySpec, MemberSpec
from ...model.specs import FloorSpec, ObjectSpec
from . import kernels as jit
from . import rays as aerial_rays
from .kernels import CLEAR, DIFFERENTIAL, FREE, IDLE, MU, RADIUS, VELOCITY
from ..engine import Engine, Handles
from ..shapes import as_geometry, outline_geometry
from ...model.health import Divergence, why

GROUND_FRICTION = 1.0  # Coulomb coefficient on the floor of a free body whose floor_friction is 0
_EMPTY = as_geometry([], [])
_MODES = {"differential": DIFFERENTIAL, "velocity": VELOCITY}


@dataclass(eq=False)
class _Body:
    """A robot's handle: its rows while it is out of the layout, its row index while in it."""

    name: str
    free: bool
    state: np.ndarray  # (13,) STATE3D
    param: np.ndarray  # (7,) aerial.kernels param row
    wrench: np.ndarray = field(default_factory=lambda: np.zeros(6))
    cmd: np.ndarray = field(default_factory=lambda: np.zeros(3))
    mode: int = IDLE  # a ground robot's drive mode now
    row: int = -1
    solids: np.ndarray = field(default_factory=lambda: np.zeros((0, 8)))  # aerial.rays's


class AerialEngine(Engine):
    """Compiled 6-DoF bodies without contacts, beside planar ground robots (see the module).

    Each free body (``BodySpec(free=True)``) moves under gravity and the body-frame wrench its
    ``rotors`` drive holds (semi-implicit Euler as MuJoCo's Euler integrator, Euler's equations
    I w' = tau - w x I w in the body frame, the exact quaternion rotation, renormalised;
    MuJoCo's states within 1e-9 m over 1,000 tumbling steps); the floor stops it at its ground
    clearance (half its height: it lands and rests, Coulomb ground friction holds a landed
    quadrotor) and the floor's edges are walls; ground robots (``free=False``) drive as on
    ``kinematic``, without overlap resolution. No contacts between bodies or with objects
    (static boxes, cylinders and spheres the sensors see; movable objects refused), no joints,
    no aerodynamics. Compiled with numba, the same bits at any thread count. Use it for
    Crazyflie swarms, flying and ground robots in one world.

    Args:
        floor: The floor; its edges are walls.
    """

    label = "aerial"
    description = "flying swarms (numba): free 6-DoF bodies under wrenches, floor and walls, " \
                  "no contacts"
    features = frozenset({"flight", "velocity", "differential"})
    checks_health = True

    def __init__(self, floor: FloorSpec) -> None:
        super().__init__(floor)
        self._k = jit
        self._half = np.array([floor.length / 2, floor.width / 2])
        self._objects: list[ObjectSpec] = []
        self._shapes: tuple | None = None
        self._bodies: list[_Body] = []
        self._pending: tuple | None = None
        self._diverged: tuple = ()
        self._scene = aerial_rays.Scene(floor)  # range sensing in 3D
        self._fused = None  # its fused side (fused()), made when first asked for
        self._allocate(0)

    def _allocate(self, n: int) -> None:
        """Arrays for ``n`` rows (zeros), robot order."""
        self.state, self.wrench = np.zeros((n, 13)), np.zeros((n, 6))
        self.cmd, self.param = np.zeros((n, 3)), np.zeros((n, 7))
        self.kind, self.driven = np.zeros(n, np.int64), np.zeros(n, bool)
        # the kernel's health: why each row diverged, its value, the state at the step's start
        self._bad, self._what, self._start = np.zeros(n, np.int64), np.zeros(n), np.zeros((n, 13))
        self._read = (None, None)  # robot_state(), state3d(): read-only, until the state moves
        self._held = None  # rows held this step and their states at its start

    # -- what it can run --------------------------------------------------------------------------

    @classmethod
    def refuses_assembly(cls, assembly: Assembly) -> str:
        """Why it cannot build ``assembly``: joints, more than one body a robot, a ``rotors``
        drive on a ground body or a wheel drive on a free one ("" when it can)."""
        if assembly.joints:
            return "the aerial engine has no joints"
        if len(assembly.bodies) > len(assembly.members) or assembly.parts:
            return "the aerial engine runs only one-body robots (no carried parts)"
        for m in assembly.members:
            free = assembly.body(m.body).free
            if m.drive == "rotors" and not free:
                return (f"the aerial engine flies a rotors drive on a free body only: give "
                        f"{m.name}'s body free=True")
            if m.drive in _MODES and free:
                return (f"the aerial engine drives a free body by its wrench only: {m.name} "
                        f"has the {m.drive} drive")
            if m.drive and m.drive not in _MODES and m.drive != "rotors":
                return f"the aerial engine has no {m.drive} drive"
        return ""

    # -- layout -----------------------------------------------------------------------------------

    def add_object(self, spec: ObjectSpec) -> ObjectSpec:
        self.check_object(spec)
        self._objects.append(spec)
        self._shapes = None
        return spec

    def remove_object(self, handle: ObjectSpec) -> None:
        self._objects = [o for o in self._objects if o is not handle]
        self._shapes = None

    def add_assembly(self, assembly: Assembly, group: int) -> Handles:
        self.check_assembly(assembly)
        handles = Handles()
        for member in assembly.members:
            body = assembly.body(member.body)
            robot = _body(member, body)
            handles.bodies[member.body] = robot
            handles.robots[member.name] = robot
        return handles

    def remove_assembly(self, handles: Handles) -> None:
        """Nothing to free: the robots leave with the next :meth:`set_robots`."""

    def set_robots(self, robots: list, drives: list[str]) -> None:
        """Fix the robot order (applied at the next query or step, as the kinematic engine
        does): robots staying keep their state, wrench and command; leaving ones keep theirs
        in their handle."""
        self._pending = (list(robots), list(drives))

    def _sync(self) -> None:
        """Apply the last :meth:`set_robots`, if not yet done."""
        if self._pending is None:
            return
        robots, drives = self._pending
        self._pending = None
        staying = {id(r) for r in robots}
        for body in self._bodies:
            if id(body) not in staying:
                self._store(body)
        for body in robots:  # every row into its handle, then the handles into the new rows
            if body.row >= 0:
                self._store(body)
        self._allocate(len(robots))
        for k, body in enumerate(robots):
            self.state[k], self.param[k] = body.state, body.param
            self.wrench[k], self.cmd[k] = body.wrench, body.cmd
            self.kind[k] = FREE if body.free else body.mode
            body.row = k
        self.driven = np.array([bool(d) for d in drives], dtype=bool)
        self._bodies = robots

    def _store(self, body: _Body) -> None:
        """Copy a robot's row into its handle."""
        k = body.row
        body.state, body.wrench, body.cmd = self.state[k].copy(), self.wrench[k].copy(), \
            self.cmd[k].copy()
        body.mode = IDLE if body.free else int(self.kind[k])
        body.row = -1

    # -- stepping ---------------------------------------------------------------------------------

    def step(self, dt: float) -> None:
        self._sync()
        self._diverged = ()
        self._read = (None, None)
        if not len(self.state):
            return
        # two buffers: the step reads the last state (what a diverged row gets back) and
        # writes the other, so nothing is copied for the check
        self._start, self.state = self.state, self._start
        if self._k.step(self.state, self.wrench, self.cmd, self.param, self.kind, self._half,
                        float(dt), self._bad, self._what, self._start):
            rows = np.flatnonzero(self._bad)
            self.cmd[rows], self.wrench[rows] = 0.0, 0.0  # it stands still, its wrench dropped
            self._diverged = tuple(
                Divergence(k, f"robot {self._bodies[k].name}",
                           why(int(self._bad[k]), float(self._what[k]))) for k in rows.tolist())
        if self._held is not None:  # external robots carried, not simulated
            self._carry_held(dt)

    def fused(self):
        """See :meth:`Engine.fused`: an :class:`~coopsim.physics.aerial.fused.AerialFused` on
        its compiled step's kernels."""
        if self._fused is None:
            from .fused import AerialFused

            self._fused = AerialFused(self)
        return self._fused

    def diverged(self) -> tuple:
        """See :meth:`Engine.diverged`: the rows the kernel put back in the last step."""
        return self._diverged

    def state3d(self) -> np.ndarray:
        """See :meth:`Engine.state3d`: read-only, the same array until the state moves (a
        step, a new layout, :meth:`reset_rows`), so the actuators and sensors of one step share
        one copy."""
        self._sync()
        planar, full = self._read
        if full is None:
            full = self.state.copy()
            full.setflags(write=False)
            self._read = (planar, full)
        return full

    def robot_state(self) -> np.ndarray:
        """The planar projection of :meth:`state3d`: x, y, yaw (of the body's x axis about world
        z), vx, vy (world), yaw rate (the angular velocity's world z component); read-only,
        computed once until the state moves (as :meth:`state3d`)."""
        self._sync()
        planar, full = self._read
        if planar is None:
            planar = np.empty((len(self.state), 6))  # one compiled pass
            jit.planar(self.state, planar)
            planar.setflags(write=False)
            self._read = (planar, full)
        return planar

    def apply_wrench(self, rows: np.ndarray, force: np.ndarray, torque: np.ndarray) -> None:
        """See :meth:`Engine.apply_wrench`; ground rows keep theirs unused.

        Raises:
            SimulationError: a value is not a finite number (naming the robot).
        """
        self._sync()
        rows = np.asarray(rows, dtype=np.int64)
        force = np.asarray(force, dtype=float).reshape(len(rows), 3)
        torque = np.asarray(torque, dtype=float).reshape(len(rows), 3)
        # a sum is finite only if every term is: one reduction each, no temporaries
        finite = None
        if not math.isfinite(float(force.sum()) + float(torque.sum())):
            finite = np.isfinite(force).all(axis=1) & np.isfinite(torque).all(axis=1)
        if finite is not None and not finite.all():  # (not a sum that overflowed)
            bad = rows[np.flatnonzero(~finite)[0]]
            raise SimulationError(f"robot {self._bodies[bad].name}'s wrench is not finite: "
                                  "force and torque must be finite numbers (N, N m)")
        self.wrench[rows, :3], self.wrench[rows, 3:] = force, torque

    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        """See :meth:`Engine.drive` (ground robots; free bodies and undriven rows ignore it; a
        value that is not a finite number is taken as 0)."""
        rows, forward, turn = self._ground_rows(rows, forward, turn)
        self.cmd[rows, 0], self.cmd[rows, 1], self.cmd[rows, 2] = forward, 0.0, turn
        self.kind[rows] = DIFFERENTIAL

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        """See :meth:`Engine.set_velocity` (ground robots, as :meth:`drive`)."""
        rows, velocity = self._ground_rows(rows, np.asarray(velocity).reshape(-1, 3))
        self.cmd[rows] = velocity
        self.kind[rows] = VELOCITY

    def _ground_rows(self, rows, *values) -> tuple:
        """``rows`` that are driven ground robots, and the values aligned with them (non-finite
        values as 0)."""
        self._sync()
        rows = np.asarray(rows, dtype=np.int64)
        values = [np.nan_to_num(np.asarray(v, dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
                  for v in values]
        keep = self.driven[rows] & (self.kind[rows] != FREE)
        return (rows[keep], *(v[keep] for v in values))

    def reset_rows(self, rows: np.ndarray, state: np.ndarray) -> None:
        """See :meth:`Engine.reset_rows`: each row level at ``state``'s planar pose and velocity
        (its height kept, no vertical or roll and pitch motion), its wrench and command
        dropped."""
        self._sync()
        self._read = (None, None)
        rows = np.asarray(rows, dtype=np.int64)
        state = np.asarray(state, dtype=float).reshape(len(rows), 6)
        s = self.state
        s[rows, 0:2], s[rows, 7:9] = state[:, 0:2], state[:, 3:5]
        s[rows, 3], s[rows, 4:6], s[rows, 6] = np.cos(state[:, 2] / 2), 0.0, \
            np.sin(state[:, 2] / 2)
        s[rows, 9:12], s[rows, 12] = 0.0, state[:, 5]
        self.wrench[rows], self.cmd[rows] = 0.0, 0.0
        self.kind[rows] = np.where(self.kind[rows] == FREE, FREE, IDLE)

    def hold_rows(self, rows: np.ndarray, states: np.ndarray) -> None:
        """See :meth:`Engine.hold_rows`: each flying row's full state set; the next step
        carries it at its velocity alone (:func:`coopsim.model.held.advance`), its dynamics
        (gravity, the floor, the walls, its wrench) skipped. A ground row takes the planar
        part (:meth:`reset_rows`), as on ``mujoco``."""
        self._sync()
        self._read = (None, None)
        rows = np.asarray(rows, dtype=np.int64)
        states = np.array(states, dtype=float).reshape(len(rows), 13)
        ground = self.kind[rows] != FREE
        if ground.any():
            self.reset_rows(rows[ground], held.planar(states[ground]))
            rows, states = rows[~ground], states[~ground]
        self.state[rows] = states
        self.wrench[rows], self.cmd[rows] = 0.0, 0.0
        self._held = (rows, states)

    def _carry_held(self, dt: float) -> None:
        """After the kernel stepped every row: the held rows where their velocity takes them
        (what the kernel made of them is dropped)."""
        rows, start = self._held
        self._held = None
        self.state[rows] = held.advance(start, dt)

    def contacts(self, pose: np.ndarray) -> np.ndarray:
        """No contacts (see the module): (N, 2) zeros."""
        self._sync()
        return np.zeros((len(self.state), 2))

    def poses(self, handles: list) -> np.ndarray:
        self._sync()
        out = np.empty((len(handles), 3))
        planar = None
        for k, h in enumerate(handles):
            if isinstance(h, ObjectSpec):
                out[k] = h.position[0], h.position[1], h.yaw
                continue
            if h.row >= 0:
                planar = self.robot_state() if planar is None else planar
                out[k] = planar[h.row, :3]
            else:
                qw, qx, qy, qz = h.state[3:7]
                out[k] = h.state[0], h.state[1], math.atan2(2.0 * (qw * qz + qx * qy),
                                                            1.0 - 2.0 * (qy * qy + qz * qz))
        return out

    def poses3d(self, handles: list) -> np.ndarray:
        """See :meth:`Engine.poses3d`: the planar answer, with each object at the height it
        was placed at (objects never move here; ``Snapshot.object_pose3d`` of a flight
        engine is where they are)."""
        out = super().poses3d(handles)
        for k, h in enumerate(handles):
            if isinstance(h, ObjectSpec):
                out[k, 2] = h.position[2]
        return out

    # -- geometry ---------------------------------------------------------------------------------

    def static_geometry(self):
        if self._shapes is None:
            self._shapes = outline_geometry(*self._half, self._objects)
        return self._shapes

    def moving_geometry(self):
        """None: objects never move and robots have no parts."""
        return _EMPTY

    # -- range sensing in 3D (aerial.rays) --------------------------------------------------------

    def cast3d(self, rows: np.ndarray, origins: np.ndarray, directions: np.ndarray,
               reach: np.ndarray) -> np.ndarray:
        """Distances (len(rows), k), m, from world-frame ``origins`` (n, 3) along unit
        ``directions`` (n, k, 3) against the floor, its edge walls, the objects and the other
        robots' bodies, each robot's own skipped; ``reach`` (n,) m where nothing is within it
        (:mod:`coopsim.physics.aerial.rays`)."""
        self._sync()
        return self._scene.cast(self._objects, self._bodies, self.state, rows, origins,
                                directions, reach)

    def chassis_extent(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), 2) lowest and highest point of each robot's body along its body z
        axis, m, body frame (where its range sensors sit and its underside is)."""
        self._sync()
        return self._scene.extent(self._bodies, rows)


def _body(member: MemberSpec, body: BodySpec) -> _Body:
    """A handle for ``member`` at its body's pose (level, turned by its yaw, at rest)."""
    r = float(member.radius)
    height = body.height if body.height > 0 else 0.5 * r
    clear = 0.5 * height if body.free else 0.0
    state = np.zeros(13)
    state[0:3] = body.position[0], body.position[1], max(body.z, clear)
    state[3], state[6] = math.cos(body.yaw / 2), math.sin(body.yaw / 2)
    mass = float(body.mass) if body.mass > 0 else 1.0
    if body.inertia:
        inertia = tuple(float(i) for i in body.inertia)
    else:  # a solid cylinder of radius r and this height
        side = mass * (3.0 * r * r + height * height) / 12.0
        inertia = (side, side, 0.5 * mass * r * r)
    param = np.zeros(7)
    param[0], param[1:4] = mass, inertia
    param[CLEAR], param[RADIUS] = clear, r
    param[MU] = body.floor_friction if body.floor_friction > 0 else GROUND_FRICTION
    # what its rays meet (aerial.rays): a flyer as tall as its clearance says, a ground robot
    # as mujoco builds it
    solids = aerial_rays.body_solids(body, height if body.free else body.height)
    return _Body(member.name, bool(body.free), state, param, solids=solids)
