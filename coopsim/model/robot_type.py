"""The robot-type contract: what a ``[ROBOT_n]`` section builds, said without any physics engine.

A robot type turns a :class:`~coopsim.model.specs.RobotSpec` into an :class:`Assembly`: bodies
(with their shapes), joints between them, the networked robots (*members*) it contains with the
modules each carries, and the extra *parts* (a carried bar, an arm's links) the viewer draws.
The engine (:mod:`coopsim.physics`) builds real bodies from it; the same declaration runs on any
engine that has the features it needs (the ``kinematic`` engine has no joints, so it refuses a
team carrying a bar with a clear reason).

Frames and units: world frame, metres, kilograms, radians (yaw counter-clockwise from +x). Body
and joint anchors are in the body's own frame (x forward along its yaw).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Mapping

from .arm import ArmSpec
from .specs import RobotSpec

BODY_KINDS = ("dynamic", "static", "kinematic")
SHAPE_KINDS = ("circle", "box", "poly")
JOINT_KINDS = ("pivot", "revolute", "sprung")
DRIVES = ("", "differential", "velocity", "rotors")


@dataclass(frozen=True)
class ShapeSpec:
    """A collision shape attached to a body, in the body's frame.

    Attributes:
        kind: ``circle`` (``radius``), ``box`` (``size`` = length along x, width along y) or
            ``poly`` (``vertices``, convex, counter-clockwise).
        radius: Circle radius, m.
        size: Box (length, width), m.
        vertices: Polygon corners ((x, y), ...), m.
        offset: Circle centre or box centre in the body's frame, m.
        friction: Coulomb coefficient against other shapes.
        elasticity: 0 (no bounce) to 1.
    """

    kind: str
    radius: float = 0.0
    size: tuple[float, float] = (0.0, 0.0)
    vertices: tuple[tuple[float, float], ...] = ()
    offset: tuple[float, float] = (0.0, 0.0)
    friction: float = 0.6
    elasticity: float = 0.0

    def describe(self) -> dict:
        """JSON-ready drawing data (the viewer draws parts from it)."""
        return {"kind": self.kind, "radius": self.radius, "size": list(self.size),
                "vertices": [list(v) for v in self.vertices], "offset": list(self.offset)}


@dataclass(frozen=True)
class BodySpec:
    """One rigid body.

    Attributes:
        key: Name unique within the assembly (joints, members and parts refer to it).
        kind: ``dynamic`` (moves under forces), ``static`` (fixed) or ``kinematic``.
        mass: kg (dynamic bodies, > 0).
        shapes: Its collision shapes.
        position: (x, y) of its origin, world frame, m.
        yaw: rad.
        floor_friction: Coulomb coefficient of sliding on the floor (0 = glides; as movable
            objects, a force cap mu * m * g opposes sliding and spinning).
        free: The body is free in 3D (six degrees of freedom under gravity: a quadrotor); only
            an engine with the ``flight`` feature builds it (2D engines refuse it).
        z: Height of its origin above the floor, m (3D engines; 2D engines ignore it).
        height: Its extent along z, m (3D engines draw and collide a shape this tall; 0: the
            engine's default for the shape).
        inertia: Principal moments of inertia (Ixx, Iyy, Izz), kg m^2, body frame, or () to
            derive them from the shapes and mass.
    """

    key: str
    kind: str
    mass: float
    shapes: tuple[ShapeSpec, ...]
    position: tuple[float, float]
    yaw: float = 0.0
    floor_friction: float = 0.0
    free: bool = False
    z: float = 0.0
    height: float = 0.0
    inertia: tuple[float, ...] = ()


@dataclass(frozen=True)
class JointSpec:
    """A joint between two bodies of the assembly (``a`` may be "" for the static ground).

    Attributes:
        key: Name unique within the assembly.
        kind: ``pivot`` (a free hinge), ``revolute`` (a hinge with optional limits and motor)
            or ``sprung`` (a free hinge on a short slide along b's x axis, held at its middle by
            a spring: the joint's force is the spring's, signed, so it is determinate even when
            two driven robots hold one body).
        a, b: Body keys.
        anchor_a, anchor_b: The hinge point in each body's frame, m (for ``sprung``: the
            slide's middle on b).
        limits: (min, max) angle of b relative to a, rad, or None.
        motor: A motor drives the joint's rate (set by modules through the engine).
        max_torque: Largest torque the motor gives, N m.
        stiffness: ``sprung``: the spring's stiffness, N/m.
        travel: ``sprung``: how far the hinge may slide each way from the middle, m.
    """

    key: str
    kind: str
    a: str
    b: str
    anchor_a: tuple[float, float] = (0.0, 0.0)
    anchor_b: tuple[float, float] = (0.0, 0.0)
    limits: tuple[float, float] | None = None
    motor: bool = False
    max_torque: float = 0.0
    stiffness: float = 0.0
    travel: float = 0.0


@dataclass(frozen=True)
class MemberSpec:
    """One networked robot of an assembly: a chassis body and the modules it carries.

    Attributes:
        name: Network name (``/name/motors``...).
        body: Key of the chassis body; its pose is the robot's pose.
        modules: Module labels it carries, in order.
        radius: Chassis radius for sensing (rays start at it, others see a circle of it), m.
        axle: Distance between the driven wheels, m (0: no wheels).
        drive: ``differential`` (wheel speeds, ARGoS-style control body with capped joints),
            ``velocity`` (holonomic: a commanded planar velocity), ``rotors`` (a body-frame
            wrench from propellers: :meth:`coopsim.physics.engine.Engine.apply_wrench`, needs
            the ``flight`` feature) or "" (not driven).
        max_force, max_torque: Caps of the drive's joints, N and N m.
        refs: Role -> body, joint or arm key, for modules (``support``: the joint holding a
            bar, ``bar``: the carried body, ``joint0``...: a planar arm's motor joints,
            ``arm``: the 3D arm the ``joints``, ``tool``, ``gripper`` and ``force`` modules
            work, an :class:`~coopsim.model.arm.ArmSpec` key).
        points: Name -> (body key, (x, y) in that body's frame): points modules report
            (an arm's ``tip``).
    """

    name: str
    body: str
    modules: tuple[str, ...]
    radius: float
    axle: float = 0.0
    drive: str = ""
    max_force: float = 0.0
    max_torque: float = 0.0
    refs: Mapping[str, str] = field(default_factory=dict)
    points: Mapping[str, tuple[str, tuple[float, float]]] = field(default_factory=dict)


@dataclass(frozen=True)
class PartSpec:
    """A body that is drawn and tracked but is not a robot (a carried bar, an arm's link).

    Attributes:
        name: Shown name; the world prefixes it with the section name (``team1.bar``).
        body: Body key.
        color: (R, G, B) 0-255.
    """

    name: str
    body: str
    color: tuple[int, int, int] = (150, 110, 60)


@dataclass(frozen=True)
class Assembly:
    """Everything one ``[ROBOT_n]`` section adds to the world.

    Attributes:
        members: The networked robots (:class:`MemberSpec`) it creates, at least one.
        bodies: Every rigid body (:class:`BodySpec`), chassis included.
        joints: Joints between its bodies (:class:`JointSpec`).
        parts: Bodies drawn and tracked that are not robots (:class:`PartSpec`).
        arms: 3D serial manipulators mounted on its bodies (engines with the ``arms``
            feature build them).
        imports: Description files (URDF, MJCF) mounted on its bodies, each a
            :class:`~coopsim.description.robot.Mounted` (engines with the ``descriptions``
            feature build them).
    """

    members: tuple[MemberSpec, ...]
    bodies: tuple[BodySpec, ...]
    joints: tuple[JointSpec, ...] = ()
    parts: tuple[PartSpec, ...] = ()
    arms: tuple[ArmSpec, ...] = ()
    imports: tuple = ()

    def arm(self, key: str) -> ArmSpec:
        """The arm called ``key``."""
        return next(a for a in self.arms if a.key == key)

    def body(self, key: str) -> BodySpec:
        """The body called ``key``."""
        return next(b for b in self.bodies if b.key == key)

    def validate(self) -> None:
        """Check keys, kinds and references.

        Raises:
            ValueError: the declaration is inconsistent.
        """
        keys = [b.key for b in self.bodies]
        joints = [j.key for j in self.joints]
        if len(set(keys)) != len(keys) or len(set(joints)) != len(joints) or not self.members:
            raise ValueError("an assembly needs members and unique body and joint keys")
        for b in self.bodies:
            if b.kind not in BODY_KINDS or (b.kind == "dynamic" and not b.mass > 0) \
                    or any(s.kind not in SHAPE_KINDS for s in b.shapes):
                raise ValueError(f"body {b.key}: bad kind, mass or shape")
            if b.inertia and (len(b.inertia) != 3 or not all(i > 0 for i in b.inertia)):
                raise ValueError(f"body {b.key}: inertia must be three positive moments, kg m^2")
        for j in self.joints:
            if j.kind not in JOINT_KINDS or j.b not in keys or (j.a and j.a not in keys):
                raise ValueError(f"joint {j.key}: bad kind or unknown body")
            if j.kind == "sprung" and not (j.stiffness > 0 and j.travel > 0):
                raise ValueError(f"joint {j.key}: a sprung joint needs stiffness and travel")
        arms = [a.key for a in self.arms]
        for a in self.arms:
            a.validate()
            if a.base not in keys:
                raise ValueError(f"arm {a.key} has no base: its base {a.base!r} is not a body "
                                 "of the assembly")
        if len(set(arms)) != len(arms) or set(arms) & (set(keys) | set(joints)):
            raise ValueError("arm keys must be unique and differ from body and joint keys")
        for m in self.members:
            refs = set(m.refs.values()) | {k for k, _ in m.points.values()}
            if m.body not in keys or m.drive not in DRIVES \
                    or not refs <= set(keys) | set(joints) | set(arms):
                raise ValueError(f"member {m.name}: unknown body, drive or reference")
        if any(p.body not in keys for p in self.parts):
            raise ValueError("a part names an unknown body")


class RobotType:
    """Base of robot types. Subclasses register under a label and implement :meth:`build`.

    Class attributes:
        label: The type's name in scenario files (``type single``).
        description: One line for ``coopsim list``.
        modules: Every module label its members carry (for listings and ``param`` checks).
        footprint: Radius of the smallest circle about the section's position holding the whole
            assembly, m ("on the floor" checks).
        draw: Drawing hint for its members (``shape``: ``disc`` or ``box``; ``size``: box
            (length, width) m; ``heading``: draw the heading arrow; ``rotorcraft``: a flying body
            drawn as a frame with four rotor discs in 3D front ends).
        defaults: Module label -> parameter name -> the value this type starts with instead
            of the module's default (a datasheet's top speed, a lidar's beam count); a
            scenario's ``param`` lines still override them.
        reference: Whether this is the reference robot: the type coopsim's own benchmarks
            (``coopsim bench step``, benchmarks/) build their worlds of when none is named
            (:func:`coopsim.model.plugins.reference_type`; the built-in ``single`` is). Set on
            the class itself: a type derived from it is not the reference.
    """

    label: ClassVar[str] = ""
    description: ClassVar[str] = ""
    modules: ClassVar[tuple[str, ...]] = ()
    footprint: ClassVar[float] = 0.2
    draw: ClassVar[Mapping] = {"shape": "disc", "heading": True}
    defaults: ClassVar[Mapping[str, Mapping[str, object]]] = {}
    reference: ClassVar[bool] = False

    @classmethod
    def member_names(cls, name: str) -> tuple[str, ...]:
        """Network names of the robots one section of this type creates."""
        return (name,)

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        """The assembly for ``spec`` (pose, name and colour from the section)."""
        raise NotImplementedError

    @classmethod
    def validate(cls) -> None:
        """Check the declaration (called when the type registers).

        Raises:
            ValueError: an empty label or no modules.
        """
        if not cls.label.isidentifier() or not cls.footprint > 0:
            raise ValueError(f"robot type {cls.label!r}: label or footprint is not valid")
