"""The ``mujoco`` engine: rigid bodies in 3D on MuJoCo, ground robots and flyers in one world.

* The world is a MuJoCo model built from the engine-neutral specs with ``mujoco.MjSpec``: the
  floor plane (z = 0, up), four walls ``WALL_HEIGHT`` m tall standing just outside the floor's
  edges, objects (boxes, cylinders, spheres, standing on the floor unless their bottom is above
  it; static when their mass is 0, else on a free joint, sliding with floor friction), and the
  robots' bodies. Adding or removing something between steps marks the model stale; it is
  compiled again before the next step or query, and every body that stays keeps its state
  (its joint positions and velocities copied across the compile by body).
* Ground robots (``BodySpec(free=False)``) stand on the floor on three joints (slide x, slide
  y, hinge z, world axes), their shapes ``height`` m tall above their origin (``z``). Their
  drives work like pymunk's control body: every substep a force and a torque pull the chassis's
  velocity to the commanded one (world frame), capped by the member's ``max_force`` and
  ``max_torque``, so a robot pushes light objects and stalls against a wall. A ground robot
  does not touch the floor (the two never collide): it neither sinks nor rubs.
* Free bodies (``BodySpec(free=True)``, quadrotors) sit on a free joint under gravity; a
  wrench given in the body frame (:meth:`MujocoEngine.apply_wrench`) is turned into the world
  frame every substep and held until set again.
* One :meth:`MujocoEngine.step` of ``dt`` is ``ceil(dt / MAX_SUBSTEP)`` MuJoCo steps
  (semi-implicit Euler), so contacts stay stiff at the simulation's 0.02 s steps.
* The ray caster is 2D: :meth:`MujocoEngine.static_geometry` and
  :meth:`MujocoEngine.moving_geometry` give the floor projection of what reaches into the slice
  ``z <= SLICE_TOP`` (a body whose lowest point is higher is left out: a shelf, a flying
  object), boxes as their four edges turned by their yaw, cylinders and spheres as circles.

MuJoCo is deterministic on one thread: the same scenario and seed give the same bits. A
non-finite state or a MuJoCo divergence warning after a step raises
:class:`~coopsim.model.errors.SimulationError` naming the robot (the stepper ends the run).
MuJoCo is optional (``pip install 'coopsim[3d]'``): only this module imports it, and only
when the engine is chosen (engines load lazily).

Frames and units: world frame (z up), metres, kilograms, seconds, radians; quaternions (w, x,
y, z) turn the body frame into the world frame.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.errors import SimulationError
from ..model.robot_type import Assembly, BodySpec, MemberSpec, ShapeSpec
from ..model.specs import FloorSpec, ObjectSpec
from . import mujoco_state as ms
from .engine import Engine, Handles, as_geometry

try:
    import mujoco
except ImportError:  # the engine is optional: choosing it says how to install it
    mujoco = None

INSTALL = "pip install 'coopsim[3d]'"
GRAVITY = 9.81  # m/s^2
MAX_SUBSTEP = 0.005  # s, the longest MuJoCo step one engine step is cut into
SLICE_TOP = 1.0  # m: bodies whose lowest point is higher are not in the ray caster's 2D world
WALL_HEIGHT = 4.0  # m
WALL_THICKNESS = 1.0  # m, the boundary walls just outside the floor (as pymunk's)
FLOOR_FRICTION = 0.5  # Coulomb coefficient between movable objects and the floor
WALL_FRICTION = 0.6
DEFAULT_HEIGHT = 0.2  # m, the height of a body or object that gives none
# Collision bits: the floor touches free bodies (objects, flyers) but not ground robots,
# which ride on their joints; everything else touches everything.
_FLOOR, _SOLID = 1, 2
_ON_FLOOR = _FLOOR | _SOLID
_DIVERGED = ("mjWARN_BADQPOS", "mjWARN_BADQVEL", "mjWARN_BADQACC")
_STILL, _DIFFERENTIAL, _VELOCITY = 0, 1, 2  # drive command kinds


class Body:
    """One MuJoCo body the engine made (an object or an assembly body) and what it knows of
    it across compiles: its joints' kind, where they start in ``qpos``/``qvel`` in the current
    model, its saved state, and (a robot's chassis) its drive and commands.

    Attributes:
        kind: ``static`` (welded to the world), ``free`` (a free joint) or ``ground`` (slide x,
            slide y, hinge z).
        shapes: Its floor outline, ("circle", r, ox, oy) and ("box", length, width, ox, oy).
        bottom: Height of its shapes' lowest point above its origin, m (negative: below).
        qpos0_z: Height of its origin at the start, m.
    """

    def __init__(self, name: str, label: str, element, kind: str, shapes: tuple,
                 qpos: np.ndarray, bottom: float, group: int = 0,
                 member: MemberSpec | None = None, z: float = 0.0) -> None:
        self.name, self.label, self.element, self.kind = name, label, element, kind
        self.qpos0_z = z  # height of its origin at the start, m
        self.shapes, self.group, self.bottom = shapes, group, bottom
        self.qpos = np.asarray(qpos, dtype=float)  # the state a compile restores
        self.qvel = np.zeros(6 if kind == "free" else 3 if kind == "ground" else 0)
        self.id, self.qadr, self.dadr = -1, -1, -1
        self.drive = member.drive if member else ""
        self.max_force = member.max_force if member else 0.0
        self.max_torque = member.max_torque if member else 0.0
        self.mode, self.cmd, self.wrench = _STILL, np.zeros(3), np.zeros(6)

    @property
    def free(self) -> bool:
        return self.kind == "free"

    @property
    def static(self) -> bool:
        return self.kind == "static"

    def bind(self, model) -> None:
        """Find itself in a newly compiled model."""
        self.id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, self.name)
        if self.kind != "static":
            joint = model.body_jntadr[self.id]
            self.qadr, self.dadr = model.jnt_qposadr[joint], model.jnt_dofadr[joint]

    def save(self, data) -> None:
        if self.kind != "static" and self.id >= 0:
            self.qpos = data.qpos[self.qadr:self.qadr + len(self.qpos)].copy()
            self.qvel = data.qvel[self.dadr:self.dadr + len(self.qvel)].copy()

    def restore(self, data) -> None:
        if self.kind != "static":
            data.qpos[self.qadr:self.qadr + len(self.qpos)] = self.qpos
            data.qvel[self.dadr:self.dadr + len(self.qvel)] = self.qvel

    def place(self, data, state) -> None:
        """Put it at a planar state (x, y, yaw, vx, vy, yaw rate): level, at its start
        height, turning about z."""
        x, y, yaw, vx, vy, w = (float(v) for v in state)
        if self.kind == "ground":
            data.qpos[self.qadr:self.qadr + 3] = x, y, yaw
            data.qvel[self.dadr:self.dadr + 3] = vx, vy, w
        elif self.kind == "free":
            data.qpos[self.qadr:self.qadr + 7] = (x, y, self.qpos0_z, math.cos(yaw / 2), 0.0,
                                                  0.0, math.sin(yaw / 2))
            data.qvel[self.dadr:self.dadr + 6] = vx, vy, 0.0, 0.0, 0.0, w

    def pose(self, data) -> tuple[float, float, float]:
        """x, y, yaw now."""
        if self.kind == "static":
            return float(self.qpos[0]), float(self.qpos[1]), float(self.qpos[2])
        q = data.qpos[self.qadr:self.qadr + 7]
        if self.kind == "ground":
            return float(q[0]), float(q[1]), float(q[2])
        return float(q[0]), float(q[1]), float(ms.yaw_of(q[None, 3:7])[0])

    def lowest(self, data) -> float:
        """Lowest point's height now (free bodies: as if level), m."""
        if self.kind == "free":
            return float(data.qpos[self.qadr + 2]) + self.bottom
        return self.bottom + (self.qpos[3] if self.kind == "static" else self.qpos0_z)


class _Rows:
    """Per-layout index arrays of the robots, in robot order, and their commands."""

    def __init__(self, bodies: list[Body], model) -> None:
        n = len(bodies)
        self.bodies = bodies
        self.ids = np.array([b.id for b in bodies], dtype=np.int64)
        self.free = np.array([b.free for b in bodies], dtype=bool)
        self.qadr = np.array([b.qadr for b in bodies], dtype=np.int64)
        self.dadr = np.array([b.dadr for b in bodies], dtype=np.int64)
        self.z = np.array([b.qpos0_z for b in bodies], dtype=float)
        self.driven = np.flatnonzero([bool(b.drive) and b.kind == "ground" for b in bodies])
        d = self.dadr[self.driven]
        self.mass, self.moment = model.dof_M0[d], model.dof_M0[d + 2]
        self.max_force = np.array([bodies[k].max_force for k in self.driven], dtype=float)
        self.max_torque = np.array([bodies[k].max_torque for k in self.driven], dtype=float)
        self.row_of_body = np.full(model.nbody, -1, dtype=np.int64)
        self.row_of_body[self.ids] = np.arange(n)
        self.mode = np.array([b.mode for b in bodies], dtype=np.int64)
        self.cmd = np.array([b.cmd for b in bodies], dtype=float).reshape(n, 3)
        self.wrench = np.array([b.wrench for b in bodies], dtype=float).reshape(n, 6)
        self.flyers = np.flatnonzero(self.free)

    def scatter(self) -> None:
        """Hand the commands back to the bodies (the next layout gathers them again)."""
        for k, body in enumerate(self.bodies):
            body.mode, body.cmd, body.wrench = int(self.mode[k]), self.cmd[k].copy(), \
                self.wrench[k].copy()


class MujocoEngine(Engine):
    """Rigid bodies in 3D with MuJoCo: ground robots, movable objects and flying bodies."""

    label = "mujoco"
    description = ("3D rigid bodies (MuJoCo): ground robots, movable objects and free flyers "
                   "in one world")
    features = frozenset({"flight", "differential", "velocity", "movable_objects"})

    def __init__(self, floor: FloorSpec) -> None:
        if mujoco is None:
            raise SimulationError(self.missing())
        super().__init__(floor)
        self.spec = _new_spec(floor)
        self._bodies: dict[str, Body] = {}  # MuJoCo body name -> body, in insertion order
        self._count = 0  # bodies made so far: their names stay unique
        self._robots: list[Body] = []
        self.model = self.data = None
        self._stale = True  # the model must be compiled before it is used
        self._rows: _Rows | None = None
        self._warned = 0  # divergence warnings MuJoCo had given before this step

    @classmethod
    def missing(cls) -> str:
        """Why this engine cannot run on this machine ("" when MuJoCo is installed)."""
        return "" if mujoco is not None else (
            f"the mujoco engine needs MuJoCo, which is not installed: {INSTALL}")

    # -- layout -----------------------------------------------------------------------------------

    def add_object(self, spec: ObjectSpec) -> Body:
        self.check_object(spec)
        return self._added(_object(self.spec, self._name(spec.name), spec))

    def remove_object(self, handle: Body) -> None:
        self._removed(handle)

    def add_assembly(self, assembly: Assembly, group: int) -> Handles:
        self.check_assembly(assembly)
        handles = Handles()
        members = {m.body: m for m in assembly.members}
        for spec in assembly.bodies:
            member = members.get(spec.key)
            label = f"robot {member.name}" if member else \
                f"{assembly.members[0].name}'s {spec.key}"
            body = _assembly_body(self.spec, self._name(spec.key), label, spec, member, group)
            handles.bodies[spec.key] = self._added(body)
            handles.items.append(body)
        for member in assembly.members:
            handles.robots[member.name] = handles.bodies[member.body]
        return handles

    def remove_assembly(self, handles: Handles) -> None:
        for body in handles.items:
            self._removed(body)

    def set_robots(self, robots: list, drives: list[str]) -> None:
        if self._rows is not None:
            self._rows.scatter()
        self._robots, self._rows = list(robots), None

    def _name(self, what: str) -> str:
        self._count += 1
        return f"{self._count}:{what}"

    def _added(self, body: Body) -> Body:
        self._save()  # the others' state, before the model changes under them
        self._bodies[body.name] = body
        self._stale = True
        return body

    def _removed(self, body: Body) -> None:
        self._save()
        self.spec.delete(body.element)
        del self._bodies[body.name]
        body.id = -1
        self._stale = True

    def _save(self) -> None:
        """Copy every body's state out of the current data (what the next compile restores)."""
        if self.data is not None and not self._stale:
            for body in self._bodies.values():
                body.save(self.data)
            if self._rows is not None:
                self._rows.scatter()

    def _ready(self) -> _Rows:
        """Compile the model if it changed; the robots' rows of the current layout."""
        if self._stale:
            self._compile()
        if self._rows is None:
            self._rows = _Rows(self._robots, self.model)
        return self._rows

    def _compile(self) -> None:
        time = self.data.time if self.data is not None else 0.0
        try:
            self.model = self.spec.compile()
        except Exception as exc:  # noqa: BLE001 -- MuJoCo's compiler raises its own errors
            raise SimulationError(f"MuJoCo could not build the world: {exc}") from None
        self.data = mujoco.MjData(self.model)
        self.data.time = time
        for body in self._bodies.values():
            body.bind(self.model)
            body.restore(self.data)
        mujoco.mj_forward(self.model, self.data)  # frames and contacts of the new layout
        self._warned = _divergences(self.data)
        self._stale, self._rows = False, None

    # -- stepping ---------------------------------------------------------------------------------

    def step(self, dt: float) -> None:
        rows = self._ready()
        n = max(1, math.ceil(dt / MAX_SUBSTEP - 1e-9))
        model, data = self.model, self.data
        model.opt.timestep = dt / n
        for _ in range(n):
            self._drive_forces(rows, dt / n)
            if len(rows.flyers):
                self._wrench_forces(rows)
            mujoco.mj_step(model, data)
        self._check()

    def _drive_forces(self, rows: _Rows, h: float) -> None:
        """Forces and torques that bring each driven ground robot to its commanded velocity
        within the substep ``h`` (s), capped as pymunk's drive joints are."""
        k = rows.driven
        if not len(k):
            return
        qpos, qvel = self.data.qpos, self.data.qvel
        q, d = rows.qadr[k], rows.dadr[k]
        mode, cmd = rows.mode[k], rows.cmd[k]
        yaw = qpos[q + 2]
        diff = mode == _DIFFERENTIAL
        vx = np.where(diff, cmd[:, 0] * np.cos(yaw), cmd[:, 0])
        vy = np.where(diff, cmd[:, 0] * np.sin(yaw), cmd[:, 1])
        w = np.where(diff, cmd[:, 1], cmd[:, 2])
        fx = rows.mass * (vx - qvel[d]) / h
        fy = rows.mass * (vy - qvel[d + 1]) / h
        scale = np.minimum(1.0, rows.max_force / np.maximum(np.hypot(fx, fy), 1e-300))
        torque = np.clip(rows.moment * (w - qvel[d + 2]) / h, -rows.max_torque, rows.max_torque)
        frc = self.data.qfrc_applied
        frc[d], frc[d + 1], frc[d + 2] = fx * scale, fy * scale, torque

    def _wrench_forces(self, rows: _Rows) -> None:
        """The held body-frame wrenches in the world frame, by each flyer's orientation at the
        start of this substep (from its free joint's quaternion)."""
        f = rows.flyers
        quat = self.data.qpos[rows.qadr[f, None] + np.arange(3, 7)]
        rot = ms.rotations(quat / np.linalg.norm(quat, axis=1, keepdims=True))
        wrench = rows.wrench[f]
        out = self.data.xfrc_applied
        out[rows.ids[f], :3] = np.einsum("nij,nj->ni", rot, wrench[:, :3])
        out[rows.ids[f], 3:] = np.einsum("nij,nj->ni", rot, wrench[:, 3:])

    def _check(self) -> None:
        """Raise SimulationError when the step left a non-finite state or MuJoCo warned that
        the simulation diverged."""
        data = self.data
        warned = _divergences(data)
        finite = np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()
        if finite and warned == self._warned:
            return
        self._warned = warned
        bad = [b for b in self._bodies.values() if b.kind != "static"
               and not (np.isfinite(data.qpos[b.qadr:b.qadr + len(b.qpos)]).all()
                        and np.isfinite(data.qvel[b.dadr:b.dadr + len(b.qvel)]).all())]
        who = bad[0].label if bad else "a body (MuJoCo warned of a diverging simulation)"
        raise SimulationError(f"the physics went non-finite at {who} at t = {data.time:.6g} s "
                              "(a force or torque too large for the body, or bodies stuck "
                              "inside each other)")

    # -- state ------------------------------------------------------------------------------------

    def state3d(self) -> np.ndarray:
        rows = self._ready()
        return ms.state3d(self.data.qpos, self.data.qvel, rows.qadr, rows.dadr, rows.free,
                          rows.z)

    def robot_state(self) -> np.ndarray:
        return ms.planar(self.state3d())

    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        table = self._ready()
        table.mode[rows] = _DIFFERENTIAL
        table.cmd[rows, 0], table.cmd[rows, 1], table.cmd[rows, 2] = forward, turn, 0.0

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        table = self._ready()
        table.mode[rows] = _VELOCITY
        table.cmd[rows] = np.asarray(velocity, dtype=float).reshape(-1, 3)

    def apply_wrench(self, rows: np.ndarray, force: np.ndarray, torque: np.ndarray) -> None:
        table = self._ready()
        table.wrench[rows, :3] = np.asarray(force, dtype=float).reshape(-1, 3)
        table.wrench[rows, 3:] = np.asarray(torque, dtype=float).reshape(-1, 3)
        ground = np.asarray(rows)[~table.free[rows]]
        if len(ground):
            raise SimulationError(f"{table.bodies[int(ground[0])].label} rides on the floor: "
                                  "only free bodies take a wrench")

    def reset_rows(self, rows: np.ndarray, state: np.ndarray) -> None:
        """See :meth:`Engine.reset_rows`: each chassis put at the planar state (a free body
        level, at the height it started at), its drive command and wrench dropped."""
        table = self._ready()
        state = np.asarray(state, dtype=np.float64).reshape(len(rows), 6)
        for k, s in zip(np.asarray(rows).tolist(), state):
            table.bodies[k].place(self.data, s)
        table.mode[rows], table.cmd[rows], table.wrench[rows] = _STILL, 0.0, 0.0
        self.data.xfrc_applied[table.ids[rows]] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def contacts(self, pose: np.ndarray) -> np.ndarray:
        """See :meth:`Engine.contacts`; touching the floor does not count."""
        rows = self._ready()
        data, n = self.data, len(self._robots)
        if not data.ncon or not n:
            return np.zeros((n, 2))
        geoms = data.contact.geom[:data.ncon]
        keep = (geoms != 0).all(axis=1)  # geom 0 is the floor
        bodies = self.model.geom_bodyid[geoms[keep]]
        return ms.contact_sides(bodies, data.contact.pos[:data.ncon][keep, :2],
                                rows.row_of_body, np.asarray(pose), n)

    def poses(self, handles: list) -> np.ndarray:
        self._ready()
        return np.array([b.pose(self.data) for b in handles], dtype=float).reshape(-1, 3)

    # -- geometry for sensing -----------------------------------------------------------------------

    def static_geometry(self):
        circles: list = []
        segments = ms.wall_segments(self.floor.length, self.floor.width, WALL_THICKNESS)
        for body in self._bodies.values():
            if body.static and body.lowest(None) <= SLICE_TOP:
                ms.outline(body.shapes, *body.pose(None), body.group, circles, segments)
        return as_geometry(circles, segments)

    def moving_geometry(self):
        self._ready()
        robots = {id(b) for b in self._robots}
        circles: list = []
        segments: list = []
        for body in self._bodies.values():
            if not body.static and id(body) not in robots \
                    and body.lowest(self.data) <= SLICE_TOP:
                ms.outline(body.shapes, *body.pose(self.data), body.group, circles, segments)
        return as_geometry(circles, segments)


# -- building ---------------------------------------------------------------------------------------

def _new_spec(floor: FloorSpec):
    """A model with gravity, the floor plane and its four walls."""
    spec = mujoco.MjSpec()
    spec.option.gravity = [0.0, 0.0, -GRAVITY]
    spec.option.timestep = MAX_SUBSTEP
    # a diverging step must reach _check, not be reset silently to the start
    spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_AUTORESET)
    world = spec.worldbody
    world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE,
                   size=[floor.length / 2 + WALL_THICKNESS, floor.width / 2 + WALL_THICKNESS,
                         0.1], contype=_FLOOR, conaffinity=_FLOOR,
                   friction=[FLOOR_FRICTION, 0.005, 0.0001])
    for (cx, cy), (hx, hy) in ms.wall_boxes(floor.length, floor.width, WALL_THICKNESS):
        # each wall its own static body: in the world body their bounding box would cover the
        # whole floor and the broadphase would test every body against them (4x slower)
        wall = world.add_body(pos=[cx, cy, WALL_HEIGHT / 2])
        wall.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[hx, hy, WALL_HEIGHT / 2],
                      contype=_SOLID, conaffinity=_SOLID, friction=[WALL_FRICTION, 0.005, 0.0001])
    return spec


def _quat(yaw: float) -> list:
    return [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]


def _object(spec, name: str, o: ObjectSpec) -> Body:
    """An object: a static body, or a free one of ``o.mass`` kg, standing on the floor unless
    its bottom is above it (its centre at max(z, height / 2))."""
    if o.shape == "box":
        height = o.size[2] or DEFAULT_HEIGHT
        kind, size, shape = mujoco.mjtGeom.mjGEOM_BOX, [o.size[0] / 2, o.size[1] / 2,
                                                         height / 2], ("box", *o.size[:2])
    elif o.shape == "cylinder":
        height = o.size[2] or DEFAULT_HEIGHT
        kind, size, shape = mujoco.mjtGeom.mjGEOM_CYLINDER, [o.radius, height / 2, 0.0], \
            ("circle", o.radius)
    else:
        height = o.size[0]
        kind, size, shape = mujoco.mjtGeom.mjGEOM_SPHERE, [o.radius, 0.0, 0.0], \
            ("circle", o.radius)
    x, y, z = o.position[0], o.position[1], max(o.position[2], height / 2)
    body = spec.worldbody.add_body(name=name, pos=[x, y, z], quat=_quat(o.yaw))
    geom = body.add_geom(type=kind, size=size, friction=[FLOOR_FRICTION, 0.005, 0.0001])
    shapes = (shape + (0.0, 0.0),)
    if o.static:
        geom.contype = geom.conaffinity = _SOLID
        return Body(name, f"object {o.name}", body, "static", shapes, [x, y, o.yaw, z],
                    -height / 2, z=z)
    geom.mass = o.mass
    geom.contype = geom.conaffinity = _ON_FLOOR
    body.add_freejoint()
    return Body(name, f"object {o.name}", body, "free", shapes, [x, y, z, *_quat(o.yaw)],
                -height / 2, z=z)


def _assembly_body(spec, name: str, label: str, b: BodySpec, member: MemberSpec | None,
                   group: int) -> Body:
    """An assembly's body: free (a flyer, its origin at the shapes' middle height) or on the
    floor (three joints, the shapes standing on its origin); static ones are welded."""
    height = b.height or DEFAULT_HEIGHT
    ground = not b.free and b.kind == "dynamic"
    lift = height / 2 if not b.free else 0.0  # shape centres above the origin
    if ground:
        body = spec.worldbody.add_body(name=name, pos=[0.0, 0.0, b.z])
    else:
        body = spec.worldbody.add_body(name=name, pos=[*b.position, b.z], quat=_quat(b.yaw))
    shapes = tuple(_shape(body, s, height, lift, b.free) for s in b.shapes)
    if b.kind != "static" and b.shapes:
        _mass(body, b, height)
    if b.free:
        body.add_freejoint()
        qpos, kind = [*b.position, b.z, *_quat(b.yaw)], "free"
    elif ground:
        _ground_joints(body, b)
        qpos, kind = [*b.position, b.yaw], "ground"
    else:
        qpos, kind = [*b.position, b.yaw, b.z], "static"
    return Body(name, label, body, kind, shapes, qpos, lift - height / 2, group, member, b.z)


def _shape(body, s: ShapeSpec, height: float, lift: float, free: bool) -> tuple:
    """One collision geom of a shape (a circle is a cylinder ``height`` m tall); its outline."""
    bits = _ON_FLOOR if free else _SOLID
    pos = [*s.offset, lift]
    if s.kind == "circle":
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[s.radius, height / 2, 0.0],
                      pos=pos, contype=bits, conaffinity=bits, friction=[s.friction, 0.005,
                                                                        0.0001])
        return ("circle", s.radius, *s.offset)
    if s.kind == "box":
        length, width, centre = s.size[0], s.size[1], s.offset
    else:  # a polygon: its bounding box
        v = np.asarray(s.vertices, dtype=float)
        lo, hi = v.min(axis=0), v.max(axis=0)
        (length, width), centre = hi - lo, tuple((lo + hi) / 2 + s.offset)
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[length / 2, width / 2, height / 2],
                  pos=[*centre, lift], contype=bits, conaffinity=bits,
                  friction=[s.friction, 0.005, 0.0001])
    return ("box", float(length), float(width), *centre)


def _mass(body, b: BodySpec, height: float) -> None:
    """The body's mass, centred at its origin, with the given inertia or a cylinder's or
    box's about its shapes' reach."""
    body.mass = b.mass
    if b.inertia:
        body.inertia = list(b.inertia)
    else:
        r = max(math.hypot(*s.offset) + (s.radius if s.kind == "circle"
                                         else math.hypot(*s.size) / 2) for s in b.shapes)
        side = b.mass * (3 * r * r + height * height) / 12
        body.inertia = [side, side, b.mass * r * r / 2]
    body.ipos = [0.0, 0.0, height / 2 if not b.free else 0.0]
    body.explicitinertial = True


def _ground_joints(body, b: BodySpec) -> None:
    """Slide x, slide y (world axes) and hinge z: a body that stays on the floor; floor
    friction as the joints' dry friction (mu m g, and mu m g times its reach for turning)."""
    friction = b.floor_friction * b.mass * GRAVITY
    reach = max((math.hypot(*s.offset) + (s.radius or math.hypot(*s.size) / 2)
                 for s in b.shapes), default=0.1)
    for name, kind, axis, loss in (("x", mujoco.mjtJoint.mjJNT_SLIDE, [1, 0, 0], friction),
                                   ("y", mujoco.mjtJoint.mjJNT_SLIDE, [0, 1, 0], friction),
                                   ("yaw", mujoco.mjtJoint.mjJNT_HINGE, [0, 0, 1],
                                    friction * reach)):
        body.add_joint(type=kind, axis=axis, frictionloss=loss)


def _divergences(data) -> int:
    """How many divergence warnings MuJoCo has given on ``data``."""
    return sum(int(data.warning[int(getattr(mujoco.mjtWarning, w))].number) for w in _DIVERGED)
