"""Building the ``mujoco`` engine's world (:mod:`coopsim.physics.mujoco.engine`) with
``mujoco.MjSpec`` from coopsim's engine-neutral specs: the floor and its walls, objects, the
bodies of assemblies, and :class:`Body`, what the engine knows of each body it made across
compiles. Arms are built by :mod:`coopsim.physics.mujoco.arms`.

Frames and units: world frame (z up), metres, kilograms, seconds, radians; quaternions (w, x,
y, z) turn the body frame into the world frame.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.placement import DEFAULT_HEIGHT  # the one the placement check sees too
from ...model.robot_type import BodySpec, MemberSpec, ShapeSpec
from ...model.specs import FloorSpec, GRAVITY, ObjectSpec
from . import state as ms

try:
    import mujoco
except ImportError:  # the engine is optional: mujoco.engine says how to install it
    mujoco = None

MAX_SUBSTEP = 0.005  # s, the longest MuJoCo step one engine step is cut into
WALL_HEIGHT = 4.0  # m
WALL_THICKNESS = 1.0  # m, the boundary walls just outside the floor (as pymunk's)
FLOOR_FRICTION = 0.5  # Coulomb coefficient between movable objects and the floor
WALL_FRICTION = 0.6
# Collision bits: the floor touches free bodies (objects, flyers) but not ground robots,
# which ride on their joints; everything else touches everything.
FLOOR, SOLID = 1, 2
ON_FLOOR = FLOOR | SOLID
# Arms' bodies (mujoco.arms) are of their own kind, ARM, touching all of the above and each
# other; an object an arm holds is HELD: it keeps touching everything but arms, so the
# fingers closed on it do not fight the weld (switched at run time: no recompile).
ARM, HELD = 4, 8
ARM_TOUCHES = ON_FLOOR | ARM
STILL, DIFFERENTIAL, VELOCITY = 0, 1, 2  # drive command kinds
# MuJoCo's arena (``<size memory>``), where a step's contacts, constraints and scratch stack
# live, sized from the world at each compile (arena_bytes): MuJoCo's own default grows with
# the square of the degrees of freedom (1.8 GB for 1,000 flyers; 10,000 could not be built).
ARENA_BASE = 4 << 20  # bytes, whatever the world
PAIR_BYTES = 4  # bytes per pair of bodies: the broadphase's two buffers of n (n - 1) / 2 ints
DOF_BYTES = 2048  # bytes per degree of freedom (the solver's and the mass matrix's scratch)
CONTACT_BYTES = 4096  # bytes per contact with its 4 constraint rows and their scratch (measured
# 0.8-2 kB: twice that)
CONTACTS = 1000  # contacts any world has room for, besides those of its movable geoms
CONTACTS_PER_GEOM = 12  # contacts each movable geom has room for (a box on the floor makes 4)


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
        self.mode, self.cmd, self.wrench = STILL, np.zeros(3), np.zeros(6)

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

    def pose3d(self, data) -> np.ndarray:
        """(7,) x, y, z, qw, qx, qy, qz now (a ground body level at its start height)."""
        if self.kind == "free":
            return data.qpos[self.qadr:self.qadr + 7].copy()
        x, y, yaw = self.pose(data)
        z = self.qpos[3] if self.kind == "static" else self.qpos0_z
        return np.array([x, y, z, *quat(yaw)])

    def lowest(self, data) -> float:
        """Lowest point's height now (free bodies: as if level), m."""
        if self.kind == "free":
            return float(data.qpos[self.qadr + 2]) + self.bottom
        return self.bottom + (self.qpos[3] if self.kind == "static" else self.qpos0_z)



def arena_bytes(bodies: int, dofs: int, moving_geoms: int) -> int:
    """The arena a world of ``bodies`` bodies (the world's and its walls included), ``dofs``
    degrees of freedom and ``moving_geoms`` geoms on bodies that move needs, bytes: room for
    :data:`CONTACTS` + :data:`CONTACTS_PER_GEOM` contacts per moving geom (more are dropped
    with MuJoCo's warning, which the engine reports) and MuJoCo's scratch for the step."""
    contacts = CONTACTS + CONTACTS_PER_GEOM * moving_geoms
    return (ARENA_BASE + PAIR_BYTES * bodies * bodies + DOF_BYTES * dofs
            + CONTACT_BYTES * contacts)


def world_arena(bodies, arms) -> int:
    """:func:`arena_bytes` of a world of ``bodies`` (:class:`Body`) and ``arms``
    (:class:`~coopsim.physics.mujoco.arms.Arm`: a pedestal, a body per link and a tool with
    two fingers each), besides the world body and its four walls."""
    dofs = {"free": 6, "ground": 3, "static": 0}
    moving = [b for b in bodies if not b.static]
    arms = list(arms)
    return arena_bytes(5 + len(bodies) + sum(arm.spec.dof + 2 for arm in arms),
                       sum(dofs[b.kind] for b in moving) + sum(arm.spec.dof for arm in arms),
                       sum(len(b.shapes) for b in moving) + sum(arm.spec.dof + 3 for arm in arms))


def overflow(model, data) -> str:
    """What to say when the contacts overflowed the arena since ``data`` was made (MuJoCo's
    CONTACTFULL or CNSTRFULL warning: it dropped contacts), or ""."""
    n = data.warning.number
    if not (n[int(mujoco.mjtWarning.mjWARN_CONTACTFULL)]
            or n[int(mujoco.mjtWarning.mjWARN_CNSTRFULL)]):
        return ""
    return (f"the world's contacts overflowed MuJoCo's arena at t = {data.time:.6g} s "
            f"({data.ncon} contacts in its {model.narena / 2**20:.3g} MiB): the contacts beyond "
            "it are dropped, so bodies may pass through each other (too many bodies touching "
            "at once: a pile)")


def new_spec(floor: FloorSpec):
    """A model with gravity, the floor plane and its four walls."""
    spec = mujoco.MjSpec()
    spec.option.gravity = [0.0, 0.0, -GRAVITY]
    spec.option.timestep = MAX_SUBSTEP
    spec.compiler.degree = False  # angles (an arm's joint ranges) in radians, as coopsim's
    # a diverging step must reach _check, not be reset silently to the start
    spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_AUTORESET)
    world = spec.worldbody
    world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE,
                   size=[floor.length / 2 + WALL_THICKNESS, floor.width / 2 + WALL_THICKNESS,
                         0.1], contype=FLOOR, conaffinity=FLOOR,
                   friction=[FLOOR_FRICTION, 0.005, 0.0001])
    for (cx, cy), (hx, hy) in ms.wall_boxes(floor.length, floor.width, WALL_THICKNESS):
        # each wall its own static body: in the world body their bounding box would cover the
        # whole floor and the broadphase would test every body against them (4x slower)
        wall = world.add_body(pos=[cx, cy, WALL_HEIGHT / 2])
        wall.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[hx, hy, WALL_HEIGHT / 2],
                      contype=SOLID, conaffinity=SOLID, friction=[WALL_FRICTION, 0.005, 0.0001])
    return spec


def quat(yaw: float) -> list:
    return [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]


def object_body(spec, name: str, o: ObjectSpec) -> Body:
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
    body = spec.worldbody.add_body(name=name, pos=[x, y, z], quat=quat(o.yaw))
    geom = body.add_geom(type=kind, size=size, friction=[FLOOR_FRICTION, 0.005, 0.0001])
    shapes = (shape + (0.0, 0.0),)
    if o.static:
        geom.contype = geom.conaffinity = SOLID
        return Body(name, f"object {o.name}", body, "static", shapes, [x, y, o.yaw, z],
                    -height / 2, z=z)
    geom.mass = o.mass
    geom.contype = geom.conaffinity = ON_FLOOR
    body.add_freejoint()
    return Body(name, f"object {o.name}", body, "free", shapes, [x, y, z, *quat(o.yaw)],
                -height / 2, z=z)


def assembly_body(spec, name: str, label: str, b: BodySpec, member: MemberSpec | None,
                   group: int) -> Body:
    """An assembly's body: free (a flyer, its origin at the shapes' middle height) or on the
    floor (three joints, the shapes standing on its origin); static ones are welded."""
    height = b.height or DEFAULT_HEIGHT
    ground = not b.free and b.kind == "dynamic"
    lift = height / 2 if not b.free else 0.0  # shape centres above the origin
    if ground:
        body = spec.worldbody.add_body(name=name, pos=[0.0, 0.0, b.z])
    else:
        body = spec.worldbody.add_body(name=name, pos=[*b.position, b.z], quat=quat(b.yaw))
    shapes = tuple(_shape(body, s, height, lift, b.free) for s in b.shapes)
    if b.kind != "static" and b.shapes:
        _mass(body, b, height)
    if b.free:
        body.add_freejoint()
        qpos, kind = [*b.position, b.z, *quat(b.yaw)], "free"
    elif ground:
        _ground_joints(body, b)
        qpos, kind = [*b.position, b.yaw], "ground"
    else:
        qpos, kind = [*b.position, b.yaw, b.z], "static"
    return Body(name, label, body, kind, shapes, qpos, lift - height / 2, group, member, b.z)


def _shape(body, s: ShapeSpec, height: float, lift: float, free: bool) -> tuple:
    """One collision geom of a shape (a circle is a cylinder ``height`` m tall); its outline."""
    bits = ON_FLOOR if free else SOLID
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
