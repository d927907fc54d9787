"""Robots from a description file (URDF or MJCF): what the file says, engine-neutral, and the
robot type a scenario section makes of it (docs/robots.md "Your own robot", docs/files.md).

:mod:`coopsim.formats.description` reads the file safely into a :class:`Description` (links,
joints, sites, masses, inertias, meshes) and checks it; :class:`ImportedType` is the robot type
of one description and its section's keys, derived at load time and registered in this process
(:func:`imported_type`), so ``coopsim list`` and ``/sim state`` show it like a built-in. The
engine (:mod:`coopsim.physics.mujoco.imported`) has MuJoCo compile the file itself and attaches it
at the section's pose, every MuJoCo name prefixed ``<robot>/``.

Frames and units: as the file's (URDF: metres, kilograms, radians, each joint's origin in its
parent link's frame, rpy = fixed-axis roll, pitch, yaw). The robot's base frame is put at the
section's position and yaw.
"""

from __future__ import annotations

import math
import re
import os
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

import numpy as np

from ..model.errors import RegistryError
from .arm import section_arm
from .mobile import MOUNT_HEIGHT, Mobile, chassis, kit, mobile
from .servos import HELD, held
from ..model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec
from ..model.specs import RobotSpec

Vec3 = tuple[float, float, float]
BASES = ("fixed", "floating", "planar")  # planar: a caster or omni base (description.mobile)
#: Joint kinds of a description (URDF's; an MJCF's hinge is ``revolute``, slide ``prismatic``,
#: ball ``ball``, free ``floating``).
JOINT_KINDS = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar", "ball")
MOVING = ("revolute", "continuous", "prismatic")  # the joints a joints module may drive
MOUNT_RADIUS = 0.05  # m: the floor outline of a fixed base's mount (placement, rays)
LINK_EXTENT = 0.05  # m: what a link without meshes is taken to reach beyond its origin
MOUNT_MASS = 0.001  # kg: a floating base's own body has no shape; the file's links weigh


@dataclass(frozen=True)
class DescriptionSpec:
    """What a ``[ROBOT_n]`` section says of its description file (docs/files.md).

    Attributes:
        path: The file, resolved (absolute).
        given: The path as written in the scenario (messages).
        base: ``fixed`` (welded at the section's pose), ``floating`` (a free body) or
            ``planar`` (a caster or omni base on the floor driven by a planar velocity).
        search: Folders meshes and ``package://`` names are looked for in, resolved, in order.
        keys: (key, value) pairs of the per-module keys (``tool``, ``gripper``, ``wheels``,
            ``rotors``, ``sensor``...), in file order; a value is what the key's row parsed.
        lines: (key, line) of every description key, for messages.
        line: Line of the ``description`` key.
        modules: The module labels its keys give the robot, in key order (each row of
            ``coopsim.formats.description.DESCRIPTION_KEYS`` says which).
        tilt: (roll, pitch), rad: the root link turned about x, then y (fixed axes) on its
            mount, before the section's yaw (the section's ``orientation`` phi and psi: a
            file whose robot is not z up, pybullet's y-up ``laikago.urdf``).
    """

    path: str
    given: str = ""
    base: str = "fixed"
    search: tuple[str, ...] = ()
    keys: tuple[tuple[str, object], ...] = ()
    lines: tuple[tuple[str, int], ...] = ()
    line: int = 0
    modules: tuple[str, ...] = ()
    tilt: tuple[float, float] = (0.0, 0.0)

    def get(self, key: str, default: object = None) -> object:
        """The value of per-module key ``key`` (the last one given), or ``default``."""
        found = [v for k, v in self.keys if k == key]
        return found[-1] if found else default

    def all(self, key: str) -> tuple:
        """Every value of a repeatable key (``sensor``), in file order."""
        return tuple(v for k, v in self.keys if k == key)

    def line_of(self, key: str) -> int:
        """Line of key ``key`` (the section's ``description`` line when absent)."""
        return next((n for k, n in reversed(self.lines) if k == key), self.line)


@dataclass(frozen=True)
class Mesh:
    """A mesh a link's visual or collision geometry names.

    Attributes:
        path: The file, resolved (absolute).
        use: ``visual`` or ``collision``.
        scale: (sx, sy, sz).
        triangles: Its triangle count.
        bounds: ((xmin, ymin, zmin), (xmax, ymax, zmax)) in the mesh's own frame, m (scaled).
        line: Line of the description that names it.
    """

    path: str
    use: str = "collision"
    scale: Vec3 = (1.0, 1.0, 1.0)
    triangles: int = 0
    bounds: tuple[Vec3, Vec3] = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    line: int = 0


@dataclass(frozen=True)
class Link:
    """One link (a rigid body) of a description.

    Attributes:
        name: The file's name for it.
        parent_joint: The joint whose child it is ("" for the root).
        mass: kg (0: no inertial given; a massless link is fused into its parent by MuJoCo).
        inertia: (ixx, ixy, ixz, iyy, iyz, izz), kg m^2, about the centre of mass, in the
            inertial frame, or () when none is given.
        com: Centre of mass in the link frame, m.
        meshes: The meshes its visual and collision geometry names.
        line: Its line in the file.
    """

    name: str
    parent_joint: str = ""
    mass: float = 0.0
    inertia: tuple[float, ...] = ()
    meshes: tuple[Mesh, ...] = ()
    com: Vec3 = (0.0, 0.0, 0.0)
    line: int = 0


@dataclass(frozen=True)
class Joint:
    """One joint of a description.

    Attributes:
        name: The file's name for it.
        kind: One of :data:`JOINT_KINDS`.
        parent, child: Link names.
        axis: Unit axis in the joint frame (the child's frame).
        origin_xyz: The joint frame in the parent link's frame, m.
        origin_rpy: Its fixed-axis roll, pitch, yaw, rad.
        lower, upper: Position limits, rad or m (-inf, inf: none).
        speed: Top speed, rad/s or m/s (inf: none given).
        effort: Top torque or force, N m or N (inf: none given).
        line: Its line in the file.
    """

    name: str
    kind: str
    parent: str
    child: str
    axis: Vec3 = (1.0, 0.0, 0.0)
    origin_xyz: Vec3 = (0.0, 0.0, 0.0)
    origin_rpy: Vec3 = (0.0, 0.0, 0.0)
    lower: float = -math.inf
    upper: float = math.inf
    speed: float = math.inf
    effort: float = math.inf
    line: int = 0

    @property
    def moving(self) -> bool:
        """True for a joint a ``joints`` module may drive (revolute, continuous, prismatic)."""
        return self.kind in MOVING


@dataclass(frozen=True)
class Site:
    """A named point of a link (an MJCF ``<site>``): a tool or grasp point.

    Attributes:
        name: Its name. link: The link it is on. xyz: Its place in the link frame, m.
        line: Its line in the file.
    """

    name: str
    link: str
    xyz: Vec3 = (0.0, 0.0, 0.0)
    line: int = 0


@dataclass(frozen=True)
class Description:
    """A description file, parsed and checked.

    Attributes:
        name: The robot's name in the file (URDF ``<robot name>``, MJCF ``<mujoco model>``).
        source: The file, resolved.
        kind: ``urdf`` or ``mjcf``.
        links: Every link, root first, then in the file's order.
        joints: Every joint, in the file's order.
        sites: Named points (MJCF sites).
        root: The root link's name.
        text: The text MuJoCo compiles (an URDF's mesh paths resolved, its compiler options set).
        assets: (name, bytes) of mesh files MuJoCo is given from memory (an ASCII STL as
            binary: MuJoCo reads only binary STL; a COLLADA mesh as binary STL).
        repairs: ``file:line: link 'name' repaired: why`` for each mass or inertia repaired
            on load (coopsim.description.inertia), warned when the file is read.
        meshes: An MJCF's mesh files (its ``<mesh file>`` assets, checked; the links' visuals
            name them); an URDF's are its links' ``meshes``.
        timestep: An MJCF's ``<option timestep>``, s (0: the file gives none): the world's
            MuJoCo step is no longer (dm_control's fruit fly, 0.1 ms, diverges at 5 ms).
        gravity: An MJCF's ``<option gravity>`` z, in its own units (0: none given, or zero:
            the world's): a file in other units (the fruit fly in cm, -981) falls in them.
    """

    name: str
    source: str
    links: tuple[Link, ...]
    joints: tuple[Joint, ...]
    sites: tuple[Site, ...] = ()
    root: str = ""
    kind: str = "urdf"
    text: str = field(default="", repr=False)
    assets: tuple[tuple[str, bytes], ...] = field(default=(), repr=False)
    repairs: tuple[str, ...] = ()
    meshes: tuple[Mesh, ...] = ()
    timestep: float = 0.0
    gravity: float = 0.0

    def link(self, name: str) -> Link:
        """The link called ``name`` (KeyError when none is)."""
        for link in self.links:
            if link.name == name:
                return link
        raise KeyError(name)

    def mesh_names(self) -> dict[str, str]:
        """Each mesh file's name in the ``links`` document (path -> name): its basename, or,
        where two files share one (TALOS's ``torso/base_link.STL`` and
        ``gripper/base_link.STL``), as many of its trailing folders as tell it apart."""
        paths = sorted({m.path for link in self.links for m in link.meshes}
                       | {m.path for m in self.meshes if m.use != "file"})
        tails = {p: p.replace(os.sep, "/").split("/") for p in paths}
        out = {}
        for p, parts in tails.items():
            for k in range(1, len(parts) + 1):
                name = "/".join(parts[-k:])
                if not any("/".join(q[-k:]) == name for o, q in tails.items() if o != p):
                    break
            out[p] = name
        return out

    def joint(self, name: str) -> Joint:
        """The joint called ``name`` (KeyError when none is)."""
        for joint in self.joints:
            if joint.name == name:
                return joint
        raise KeyError(name)

    @property
    def moving(self) -> tuple[Joint, ...]:
        """The joints a ``joints`` module may drive, in file order."""
        return tuple(j for j in self.joints if j.moving)

    def reach(self) -> float:
        """Horizontal distance from the root's origin to the farthest point of the robot at
        zero joint positions (each link's origin by the joints' origins, plus its meshes'
        extent, or 0.05 m without meshes), m: its placement footprint when standing upright."""
        frames = {self.root: np.eye(4)}
        for j in _tree_order(self.joints, self.root):
            frames[j.child] = frames[j.parent] @ _transform(j.origin_xyz, j.origin_rpy)
        far = 0.0
        for link in self.links:
            f = frames.get(link.name, np.eye(4))
            extent = max((float(np.linalg.norm(np.maximum(np.abs(m.bounds[0]),
                                                          np.abs(m.bounds[1]))))
                          for m in link.meshes), default=LINK_EXTENT)
            far = max(far, float(np.hypot(f[0, 3], f[1, 3])) + extent)
        return far


def _tree_order(joints, root: str) -> list:
    """The joints parents first, from ``root``."""
    below: dict[str, list] = {}
    for j in joints:
        below.setdefault(j.parent, []).append(j)
    out, todo = [], [root]
    while todo:
        for j in below.get(todo.pop(), ()):
            out.append(j)
            todo.append(j.child)
    return out


def _transform(xyz: Vec3, rpy: Vec3) -> np.ndarray:
    """The 4x4 transform of a URDF origin (fixed-axis roll, pitch, yaw, then the offset)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    t = np.eye(4)
    t[:3, :3] = [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                 [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                 [-sp, cp * sr, cp * cr]]
    t[:3, 3] = xyz
    return t


@dataclass(frozen=True)
class Mounted:
    """A description mounted on a body of an assembly (``Assembly.imports``).

    Attributes:
        key: Its key in the assembly (the engine's handle is ``handles.imports[key]``).
        body: The assembly body it is attached to (the member's chassis).
        description: What the file says.
        spec: The section's description keys.
        prefix: The prefix of its names in the engine (``<robot>/``).
        wheels: A wheeled base's wheels (``description.mobile.WheelBase``), turned by the engine
            as the base rolls (what its links are drawn at), or None.
        servos: Its held joints (``description.servos.ServoJoint``): a position servo each.
        airframe: A multirotor's airframe (``description.mobile.Airframe``: its mixer), or None.
    """

    key: str
    body: str
    description: Description
    spec: DescriptionSpec
    prefix: str
    wheels: object = None
    servos: tuple = ()
    airframe: object = None


class ImportedType(RobotType):
    """The robot type of one description file and its section's keys (made by
    :func:`imported_type`; subclasses set ``DESCRIPTION`` and ``SPEC``).

    A fixed base stands on a small static mount at the section's pose; a floating one is a
    free body there carrying the description's root. Its member carries the modules the
    section's description keys give (``DescriptionSpec.modules``; docs/robots.md).
    """

    DESCRIPTION: ClassVar[Description | None] = None
    SPEC: ClassVar[DescriptionSpec | None] = None
    ARM: ClassVar = None  # its arm (coopsim.description.arm), made once per type
    MOBILE: ClassVar[Mobile | None] = None  # wheels, rotors, sensors (description.mobile)
    SERVOS: ClassVar[tuple] = ()  # its held joints (description.servos)
    draw = MappingProxyType({"shape": "disc", "heading": True})

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        d, ds = cls.DESCRIPTION, cls.SPEC
        floating = ds.base == "floating"
        mount = BodySpec("base", "dynamic" if floating else "static", MOUNT_MASS,
                         () if floating else (ShapeSpec("circle", radius=MOUNT_RADIUS),),
                         (spec.position[0], spec.position[1]), spec.yaw, free=floating,
                         z=spec.position[2], height=MOUNT_HEIGHT)
        arm = {"arm": cls.ARM.key} if cls.ARM is not None else {}
        member = MemberSpec(spec.name, "base", cls.modules, MOUNT_RADIUS,
                            refs={"imported": "base", **arm})
        if cls.MOBILE is not None:  # a wheeled base, a multirotor, sensors on links
            mount, member = chassis(cls.MOBILE, d, mount, member, cls.modules)
        mounted = Mounted("robot", "base", d, ds, f"{spec.name}/",
                          cls.MOBILE.wheels if cls.MOBILE is not None else None, cls.SERVOS,
                          cls.MOBILE.frame if cls.MOBILE is not None else None)
        return Assembly((member,), (mount,), imports=(mounted,),
                        arms=(cls.ARM,) if arm else ())


def type_label(name: str) -> str:
    """A robot type label from a description's name: an identifier (``ur5-arm`` -> ``ur5_arm``)."""
    label = re.sub(r"\W", "_", name) or "imported"
    return label if label[0].isalpha() else f"r_{label}"


#: Imported types registered in this process: label -> (what made it, the class).
_MADE: dict[str, tuple[tuple, type]] = {}


def imported_type(label: str, description: Description, spec: DescriptionSpec,
                  registry) -> type:
    """The :class:`ImportedType` for ``description`` and ``spec`` under ``label``,
    registered in ``registry`` (the robot types) on first use; the same label with another
    file or other keys makes a new class in its place (a file loaded again after an edit).

    Raises:
        RegistryError: ``label`` is a robot type that is not an imported one.
    """
    made = (description, spec)
    if label in _MADE and _MADE[label][0] == made:
        return _MADE[label][1]
    if label in registry and label not in _MADE:
        raise RegistryError(f"robot type {label!r} is a built-in or plugin type: give the "
                            "imported robot another type name")
    arm = section_arm(description, spec)
    found = mobile(description, spec)  # MobileKeyError: the key's line (formats.description)
    servos = held(description, spec, arm)  # every joint no other module drives is held
    cls = type(f"Imported_{label}", (ImportedType,), {
        "label": label, "DESCRIPTION": description, "SPEC": spec,
        "description": f"imported from {description.kind.upper()} {spec.given or spec.path}: "
                       f"{len(description.links)} links, {len(description.moving)} moving "
                       f"joints ({found.base or spec.base} base)",
        "footprint": max(MOUNT_RADIUS, description.reach()),
        # every described robot also carries what its links are drawn from (posture)
        "modules": tuple(dict.fromkeys(spec.modules + found.modules + kit("description")
                                       + (kit(HELD) if servos else ()))),
        "ARM": arm, "SERVOS": servos,
        "MOBILE": found, "defaults": MappingProxyType(found.defaults),
        # an arm is drawn from its joint angles, as a built-in arm (the arm hint)
        **({"draw": MappingProxyType({**ImportedType.draw, "arm": True})} if arm else {})})
    cls.validate()
    registry.put(label, cls)
    _MADE[label] = (made, cls)
    return cls


def obj_memory_name(file: str) -> str:
    """The name an MJCF's OBJ mesh ``file`` (its ``<mesh file>`` as written) is given to
    MuJoCo from memory as binary STL under (:func:`coopsim.description.meshes.obj_as_binary_stl`,
    the description's ``assets``), the path normalized as MuJoCo's model keeps it
    (robosuite's GR1 writes ``./meshes/base.STL``, MuJoCo's spec has ``meshes/base.STL``)."""
    import hashlib
    import os

    name = os.path.normpath(file) if file else file
    return f"coopsim_obj_{hashlib.blake2b(name.encode(), digest_size=8).hexdigest()}.stl"
