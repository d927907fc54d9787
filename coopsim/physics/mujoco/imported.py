"""Robots from a description file on the ``mujoco`` engine: MuJoCo compiles the URDF or MJCF
itself (``mujoco.MjSpec.from_string``/``from_file``) and the robot is attached into the world's
spec on its assembly's mount body, every name prefixed ``<robot>/`` (docs/robots.md "Your own
robot").

The text compiled is the checked one (:mod:`coopsim.description.robotxml`: an URDF's mesh paths
resolved, every link kept). The mount is the assembly's chassis: a fixed base's static mount at
the section's pose, or a floating base's free body there (the description's root welded in it;
a free joint of an MJCF's root is dropped: the mount's is the robot's). Its geoms collide as an
arm's do (``mujoco.build``'s ARM bits; visual geoms, contype 0, stay without contacts).

:class:`Imported` is the engine's handle of one attached description: after each compile it
knows the qpos/qvel address of every joint by the description's name, and keeps their state
across recompiles (another body added or removed).
"""

from __future__ import annotations

import hashlib
import os

import numpy as np

from ...model.errors import FileFormatError, SimulationError
from ...description.robot import Mounted, obj_memory_name
from ...model.scenery import rpy_quat
from .build import ARM, ARM_TOUCHES, GRAVITY, SOLID, Body

try:
    import mujoco
except ImportError:  # the engine is optional: mujoco.engine says how to install it
    mujoco = None


class Imported:
    """One description attached into the world (``Handles.imports[key]``).

    Attributes:
        mounted: What was attached (its description and keys).
        prefix: Its MuJoCo names' prefix (``<robot>/``).
        root: The attached root body's spec element.
        joints: Description joint name -> (qpos address, dof address) in the current model
            (moving joints only; set by :meth:`bind`).
        bodies: Link name -> MuJoCo body id in the current model.
    """

    def __init__(self, mounted: Mounted, root) -> None:
        self.mounted, self.prefix, self.root = mounted, mounted.prefix, root
        self.names = tuple(j.name for j in mounted.description.moving)
        self.joints: dict[str, tuple[int, int]] = {}
        self.bodies: dict[str, int] = {}
        self.qpos = np.zeros(len(self.names))  # the state a compile restores, rad or m
        self.qvel = np.zeros(len(self.names))
        self.mount = None  # the mount body it is attached on (set by attach)
        self.servos = tuple(getattr(mounted, "servos", ()))  # held joints (mujoco.servos)
        self.target = np.array([s.home for s in self.servos], dtype=float)  # their set points
        self.held = np.zeros(0, dtype=np.int64)  # their actuators in the current model

    @property
    def dof(self) -> int:
        """Moving joints."""
        return len(self.names)

    def bind(self, model) -> None:
        """Find its joints and bodies in a newly compiled model."""
        self.joints = {}
        for name in self.names:
            j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, self.prefix + name)
            self.joints[name] = (int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j]))
        self.bodies = {link.name: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY,
                                                    self.prefix + link.name)
                       for link in self.mounted.description.links}

    def own_gravity(self, model, data) -> None:
        """A file whose ``<option gravity>`` is not the world's (dm_control's fruit fly, in
        cm: -981) falls in its own units: each of its bodies is pulled by the difference at
        its centre of mass (``xfrc_applied``, set each step: a diverged body's containment
        clears it). A file without one, or with zero gravity (a part meant for a world that
        sets it, robosuite's robots), falls in the world's. MuJoCo's ``gravcomp`` cannot do
        it: it counts only bodies with a compensation > 0."""
        gravity = self.mounted.description.gravity
        if not gravity or abs(gravity + GRAVITY) < 1e-9:
            return
        ids = np.array([i for i in self.bodies.values() if i >= 0], dtype=np.int64)
        data.xfrc_applied[ids, 2] = model.body_mass[ids] * (gravity + GRAVITY)

    def save(self, data) -> None:
        """Copy its joints' state out of ``data`` (what the next compile restores)."""
        for k, name in enumerate(self.names):
            if name in self.joints:
                q, d = self.joints[name]
                self.qpos[k], self.qvel[k] = data.qpos[q], data.qvel[d]

    def restore(self, data) -> None:
        for k, name in enumerate(self.names):
            q, d = self.joints[name]
            data.qpos[q], data.qvel[d] = self.qpos[k], self.qvel[k]

    def addresses(self) -> tuple[np.ndarray, np.ndarray]:
        """(qpos addresses, dof addresses) of its moving joints in description order."""
        q = np.array([self.joints[n][0] for n in self.names], dtype=np.int64)
        d = np.array([self.joints[n][1] for n in self.names], dtype=np.int64)
        return q, d


def description_spec(d):
    """The description ``d`` read into its own MjSpec by MuJoCo's parser; an URDF's meshes
    that only links with their own ``<inertial>`` use are given ``inertia="shell"``: their
    volume weighs nothing there, and a mesh too thin to have one (Alex's ``nub``, a flat
    plate) would otherwise stop MuJoCo's compiler ("mesh volume is too small").

    Raises:
        Exception: MuJoCo's parser's own.
    """
    if d.kind != "urdf":
        spec = mujoco.MjSpec.from_file(d.source)
        if d.assets:  # its OBJ meshes as binary STL (coopsim.description.robotxml)
            memory = dict(d.assets)
            for mesh in spec.meshes:
                mesh.file = obj_memory_name(mesh.file) if obj_memory_name(mesh.file) in \
                    memory else mesh.file
            spec.assets = memory
        return spec
    spec = mujoco.MjSpec.from_string(d.text, assets=dict(d.assets))
    weighed = set()  # meshes whose volume gives a body its inertia
    for body in spec.bodies:
        if not body.explicitinertial:
            weighed.update(g.meshname for g in body.geoms
                           if g.type == mujoco.mjtGeom.mjGEOM_MESH)
    for mesh in spec.meshes:
        if mesh.name not in weighed:
            mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
    return spec


def _child_spec(mounted: Mounted):
    """The description compiled into its own MjSpec by MuJoCo's parser."""
    d = mounted.description
    try:
        return description_spec(d)
    except Exception as exc:  # noqa: BLE001 -- MuJoCo's parser raises its own errors
        raise SimulationError(f"MuJoCo could not read {d.source}: {_one_line(exc)}") from None


def _one_line(exc: Exception) -> str:
    """MuJoCo's message on one line (it spans several: the error, then the element)."""
    return "; ".join(line.strip() for line in str(exc).strip().splitlines() if line.strip())


_REFUSALS: dict[tuple, tuple] = {}  # the robot's build -> (its descriptions, the refusal)
_BUILDING: set = set()  # the builds under way (a build's own check passes)


def refusal(assembly, build) -> str:
    """What MuJoCo refuses of ``assembly``'s descriptions, built by ``build()`` as a run
    builds them (the mount, the attached file, the arm's servos, held joints): "" when it
    builds, else raised at the file's line. Compiled once per robot type and base (``coopsim
    check`` and every load ask; ``run`` then builds what ``check`` built).

    Raises:
        FileFormatError: ``description-file: MuJoCo cannot build ...: its reason`` (line 0;
            ``prefix`` and ``root_line`` for :func:`coopsim.formats.enginecheck.check_engine`
            to find the line of the element MuJoCo names).
    """
    mounted = assembly.imports[0]
    d = mounted.description
    key = (tuple(id(m.description) for m in assembly.imports), mounted.spec.base,
           tuple(b.free for b in assembly.bodies))
    if key in _BUILDING:  # the build below adds the assembly, which asks again
        return ""
    held = _REFUSALS.get(key)
    if held is None or held[0] != [m.description for m in assembly.imports]:
        why = ""
        _BUILDING.add(key)
        try:
            build()
        except Exception as exc:  # noqa: BLE001 -- MuJoCo's compiler raises its own errors
            why = _one_line(exc).removeprefix("MuJoCo could not build the world: ")
        finally:
            _BUILDING.discard(key)
        _REFUSALS[key] = held = ([m.description for m in assembly.imports], why)
    if not held[1]:
        return ""
    why = held[1].removeprefix(f"MuJoCo could not read {d.source}: ")
    error = FileFormatError(d.source, 0, f"MuJoCo cannot build {os.path.basename(d.source)}: "
                                         f"{why}")
    error.prefix, error.root_line = mounted.prefix, d.links[0].line  # the line: enginecheck
    raise error


def attach(spec, mounted: Mounted, mount: Body) -> Imported:
    """Attach ``mounted``'s description on the mount body ``mount`` of the world ``spec``.
    Its meshes given from memory are named by their content (two files' ``coopsim_dae_0.stl``
    are told apart), and a mesh another attached robot already has is shared
    (:func:`_share_meshes`: 100 Z1 arms compile one copy of their meshes, not 100).

    Raises:
        SimulationError: MuJoCo's parser refused the file (checked files rarely are).
    """
    child = _child_spec(mounted)
    named = mounted.spec.get("body")  # the MJCF body the section names as the robot
    root = child.body(named[0]) if named else child.worldbody.first_body()
    if root is None:
        raise SimulationError(f"{mounted.description.source} has no body")
    _name_nameless(root)
    for joint in list(root.joints):  # the mount's joint is the base's (fixed or floating)
        if joint.type == mujoco.mjtJoint.mjJNT_FREE:
            child.delete(joint)
    root.mocap = False  # a mocap root (MuJoCo's sand castle) is moved by its base as well
    # a root's own sleep policy (MuJoCo's sleeping humanoid) is a movable root's only: the
    # attached root hangs on its mount
    root.sleep = mujoco.mjtSleepPolicy.mjSLEEP_AUTO
    for key in list(child.keys):  # keyframes count the file's joints, not the world's
        child.delete(key)
    # the section's pose is an MJCF root body's: its own pos and orientation in the file
    # (where MuJoCo alone would put it in its world) would be added to the section's a second
    # time. An URDF's root link is at its origin, except where MuJoCo takes a root link named
    # "world" for its world: the first body is then that link's child, at its joint's origin,
    # which stays (example-robot-data's TwoDofs.urdf: turned -90 degrees on "world")
    if mounted.description.kind != "urdf":
        root.pos, root.quat = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)
        root.alt.type = mujoco.mjtOrientation.mjORIENTATION_QUAT
    files = _content_names(mounted.description)
    for mesh in child.meshes:
        mesh.file = files.get(mesh.file, (mesh.file, b""))[0]
    frame = mount.element.add_frame()
    if any(mounted.spec.tilt):  # a file whose robot is not z up: its root turned on the mount
        frame.quat = rpy_quat(*mounted.spec.tilt, 0.0)
    attached = frame.attach_body(root, mounted.prefix, "")
    if files:  # meshes from memory: the world compiles them
        spec.assets = {**spec.assets, **dict(files.values())}
    _share_meshes(spec, attached, mounted.prefix, {name for name, _ in files.values()})
    # a wheeled base rides on its ground joints: its links touch what it does, not the floor
    bits = (SOLID, SOLID) if mount.kind == "ground" else (ARM, ARM_TOUCHES)
    for geom in attached.find_all(mujoco.mjtObj.mjOBJ_GEOM):
        if geom.contype or geom.conaffinity:  # visual geoms (0, 0) keep no contacts
            geom.contype, geom.conaffinity = bits
    _show_visuals(attached)
    imported = Imported(mounted, attached)
    imported.mount = mount  # the body its links' poses are relative to (mujoco.links)
    for geom in mount.element.geoms:  # coopsim's stand-in (a base's disc), not the file's:
        geom.group = COLLISION_GROUP  # it collides, images and the 3D view do not draw it
    return imported


def _name_nameless(root) -> None:
    """Give the bodies and joints of ``root``'s tree that the file leaves nameless (MuJoCo's
    slider crank) the names coopsim read them by (:class:`coopsim.description.robotxml._MjcfRead`:
    ``body<k>``, the k-th link depth first; ``<body>_joint<n>``, the n-th joint, a jointless
    body's fixed one counted), so that servos and link poses find them."""
    links = joints = 0

    def walk(body, parent: bool) -> None:
        nonlocal links, joints
        if not body.name:
            body.name = f"body{links}"
        for joint in body.joints:
            if not joint.name:
                joint.name = f"{body.name}_joint{joints}"
            joints += 1
        joints += 0 if body.joints or not parent else 1
        links += 1
        for sub in body.bodies:
            walk(sub, True)
    walk(root, False)


COLLISION_GROUP = 3  # MuJoCo's geom group for collision geometry: images do not draw it


def _show_visuals(attached) -> None:
    """In every body of the tree ``attached`` that has visual geometry (geoms without
    contacts), put the colliding geoms in :data:`COLLISION_GROUP`: a camera image draws what
    the file shows (pybullet's Husky: its meshes, not a black box on four discs); a body with
    collision geometry only keeps it drawn."""
    bodies = [attached] + list(attached.find_all(mujoco.mjtObj.mjOBJ_BODY))
    for body in bodies:
        geoms = list(body.geoms)
        if any(not (g.contype or g.conaffinity) for g in geoms):
            for g in geoms:
                if g.contype or g.conaffinity:
                    g.group = COLLISION_GROUP


_NAMED: dict[int, tuple] = {}  # id(description) -> (description, its files' content names)


def _content_names(d) -> dict[str, tuple[str, bytes]]:
    """A description's memory files (``coopsim_dae_K.stl``...) -> (a name made of their
    content's digest, their bytes)."""
    if id(d) not in _NAMED or _NAMED[id(d)][0] is not d:
        _NAMED[id(d)] = (d, {name: (f"{hashlib.blake2b(data, digest_size=12).hexdigest()}_"
                                    f"{name}", data) for name, data in d.assets})
    return _NAMED[id(d)][1]


def _mesh_key(mesh) -> tuple:
    """What makes two mesh elements compile alike: file, scale, inertia, hull, frame."""
    return (mesh.file, tuple(mesh.scale), int(mesh.inertia), int(mesh.maxhullvert),
            tuple(mesh.refpos), tuple(mesh.refquat), bool(mesh.smoothnormal))


def _share_meshes(spec, attached, prefix: str, memory: set) -> None:
    """Point the geoms of the body tree ``attached`` (names ``prefix``...) at the meshes of
    robots attached before whose file (a memory file named by content, or an absolute path)
    and settings are the same, and delete their own copies."""
    first = {}
    for mesh in spec.meshes:
        if not mesh.name.startswith(prefix) and (mesh.file in memory
                                                 or os.path.isabs(mesh.file)):
            first.setdefault(_mesh_key(mesh), mesh.name)
    if not first:
        return
    mine = {m.name: m for m in spec.meshes if m.name.startswith(prefix)}
    shared = {name: first.get(_mesh_key(m)) for name, m in mine.items()}
    shared = {name: other for name, other in shared.items() if other is not None}
    for geom in attached.find_all(mujoco.mjtObj.mjOBJ_GEOM):
        if geom.meshname in shared:
            geom.meshname = shared[geom.meshname]
    for name in shared:
        spec.delete(mine[name])


def remove(spec, imported: Imported) -> None:
    """Take an attached description out of the world spec, and its meshes no other robot's
    geoms use (:func:`_share_meshes`)."""
    spec.delete(imported.root)
    used = {geom.meshname for geom in spec.geoms}
    for mesh in [m for m in spec.meshes if m.name.startswith(imported.prefix)]:
        if mesh.name not in used:
            spec.delete(mesh)


def arena(imports) -> int:
    """Extra bytes of MuJoCo's arena the attached descriptions need: as an arm's, per joint
    and per link (mujoco.build.arena_bytes's figures)."""
    from .build import CONTACT_BYTES, CONTACTS_PER_GEOM, DOF_BYTES
    links = sum(len(i.mounted.description.links) for i in imports)
    dofs = sum(i.dof for i in imports)
    return DOF_BYTES * dofs + CONTACT_BYTES * CONTACTS_PER_GEOM * links
