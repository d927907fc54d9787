"""An arm from a robot description file (URDF, MJCF): the chain from the robot's root link to a
named tool link or site, said as the :class:`~coopsim.model.arm.ArmSpec` every arm module
(``joints``, ``tool``, ``gripper``, ``force``), the viewer, Foxglove and ROS 2 already work
with, plus what the engine needs to drive the description's own bodies
(:class:`ImportedArmSpec`: joint names, the tool site, the fingers, the servo gains).

The chain: the description's joints from the root link to the tool link, in order. Fixed joints
fold into the next moving joint's origin (URDF's ``<origin>`` of every joint on the way
composed), so each :class:`~coopsim.model.arm.LinkSpec` is one revolute (or continuous) joint,
keyed by the description's joint name; the fixed turn from the last moving joint to the tool is
folded into that joint's frame too (its axis said in the turned frame), so the tool frame of
:func:`coopsim.model.arm.frames` is the tool link's (or site's) frame: forward and inverse
kinematics (``tool.ik``, ``move_to``) come from the file's geometry alone. A prismatic joint on
the chain is refused (arms here turn); a gripper's finger joints hang off it.

Servo gains are derived as the built-in arms' (:mod:`coopsim.physics.mujoco.arms`): each joint a
critically damped loop of natural frequency ``omega`` (default 60 rad/s) on its effective inertia
at the start angles, here from the file's inertials (every link beyond the joint: its mass at its
centre of mass and its own inertia about the axis) plus the rotor's armature; ``kp``/``kv`` in
the scenario override them joint by joint.

Frames and units: the arm's base frame is the root link's frame; metres, radians, kilograms,
seconds, newtons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..model.arm import MAX_JOINTS, ArmSpec, GripperSpec, LinkSpec, axis_rotation, rpy_matrix
from ..model.errors import CoopsimError

#: What a joint without a top speed or effort in the file gets (URDF's velocity/effort 0 or
#: missing), rad/s and N m: a slow, weak joint, so a missing number never makes a fast one.
DEFAULT_SPEED = 1.0
DEFAULT_EFFORT = 10.0
DEFAULT_PAYLOAD = 3.0  # kg: a URDF states none
DEFAULT_STROKE = 0.08  # m: a grasp site's opening, when the scenario gives none
DEFAULT_FORCE = 100.0  # N
LINK_RADIUS = 0.04  # m: a link's capsule for drawing and the floor slice of range sensors
#: A continuous joint's range (it has none): two turns either way, so IK and moves stay
#: bounded (MuJoCo leaves the joint unlimited).
CONTINUOUS = 2 * math.pi
MOVING = ("revolute", "continuous")
SLIDING = ("prismatic",)


class ArmError(CoopsimError):
    """The description's chain cannot make an arm: one sentence saying why; ``key``: the
    section key it comes from (its line goes in the message)."""

    def __init__(self, text: str, key: str = "tool") -> None:
        super().__init__(text)
        self.key = key


@dataclass(frozen=True)
class ImportedArmSpec(ArmSpec):
    """An :class:`ArmSpec` whose bodies come from a description file.

    Attributes:
        body: The description link carrying the tool site (the last moving joint's child).
        site: The tool frame in ``body``'s frame: x, y, z (m) and qw, qx, qy, qz.
        fingers: The finger joints (0 or 2 prismatic or revolute joints), description names.
        finger_open, finger_closed: Their positions (m or rad) open and closed.
        inertia: Each arm joint's inertia about its axis at the start angles (every link
            beyond it), kg m^2, without the rotor (the engine adds its armature).
        kp, kv: Servo gains per arm joint from the scenario, N m/rad and N m s/rad (empty: the
            engine derives them from ``inertia``).
        omega: The servos' natural frequency, rad/s (0: the built-in arms').
        links_moved: Every description link the arm moves (bodies: gravity compensation,
            the arm's collision kind, no self-collision).
        loads: Per arm joint (mass kg, x, y, z m): the links it carries up to the next arm
            joint (fingers with the last), their mass at their centre of mass in the joint's
            frame as the chain folds it: what its effort and those before it must hold
            against gravity (:func:`coopsim.plugins.modules.tool.holding_torques`).
    """

    body: str = ""
    site: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    fingers: tuple[str, ...] = ()
    finger_open: tuple[float, ...] = ()
    finger_closed: tuple[float, ...] = ()
    inertia: tuple[float, ...] = ()
    kp: tuple[float, ...] = ()
    kv: tuple[float, ...] = ()
    omega: float = 0.0
    links_moved: tuple[str, ...] = ()
    loads: tuple[tuple[float, float, float, float], ...] = ()


def origin(xyz, rpy) -> np.ndarray:
    """4 x 4 transform of URDF's ``<origin xyz rpy>``."""
    t = np.eye(4)
    t[:3, :3] = rpy_matrix(tuple(float(v) for v in rpy))
    t[:3, 3] = [float(v) for v in xyz]
    return t


def matrix_rpy(r: np.ndarray) -> tuple[float, float, float]:
    """Roll, pitch, yaw (rad) of a 3 x 3 rotation, R = Rz(yaw) Ry(pitch) Rx(roll)."""
    pitch = -math.asin(max(-1.0, min(1.0, float(r[2, 0]))))
    if abs(r[2, 0]) < 1.0 - 1e-9:
        return (math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0]))
    return (0.0, pitch, math.atan2(-r[0, 1], r[1, 1]))  # gimbal lock: roll folded into yaw


def quat_of(r: np.ndarray) -> tuple[float, float, float, float]:
    """Unit quaternion (w, x, y, z), w >= 0, of a 3 x 3 rotation."""
    from ..model.armstate import matrix_quaternion

    x, y, z, w = matrix_quaternion(r)  # ROS's order
    return (w, x, y, z)


def chain_to(desc, tip: str) -> list:
    """The description's joints from its root link to link ``tip``, root first."""
    by_child = {j.child: j for j in desc.joints}
    out, link = [], tip
    while link in by_child and len(out) <= len(by_child):
        out.append(by_child[link])
        link = by_child[link].parent
    return out[::-1]


def _links(desc) -> dict:
    return {link.name: link for link in desc.links}


def _tip(desc, tool: str) -> tuple[str, np.ndarray]:
    """The link the tool is on and the tool frame in that link's frame (a site's offset)."""
    for site in getattr(desc, "sites", ()) or ():
        if site.name == tool:
            return site.link, origin(site.xyz, getattr(site, "rpy", (0.0, 0.0, 0.0)))
    if tool not in _links(desc):
        names = ", ".join(sorted(_links(desc)))
        raise ArmError(f"tool {tool!r} is neither a link nor a site of {desc.name} "
                       f"(links: {names})")
    return tool, np.eye(4)


def fold_chain(desc, tool: str, tilt: tuple[float, float] = (0.0, 0.0)
               ) -> tuple[list[LinkSpec], np.ndarray, list]:
    """The moving joints from the root to ``tool`` as LinkSpecs (masses 0 for now), the fixed
    transform from the last one's frame to the tool (4 x 4), and the moving joints. ``tilt``
    (roll, pitch, rad: the root link turned on its mount, ``DescriptionSpec.tilt``) folds
    into the first joint's origin as a fixed joint's would: the chain is in the mount's
    level frame (an arm on a tilted mount)."""
    tip, extra = _tip(desc, tool)
    links, moving, t = [], [], origin((0.0, 0.0, 0.0), (tilt[0], tilt[1], 0.0))
    for joint in chain_to(desc, tip):
        if not joint.parent:  # an MJCF root body's own joint (dm_control's reacher)
            raise ArmError(f"joint {joint.name} of {desc.name} moves its root body "
                           f"{joint.child} against the world: an arm's chain starts at a root "
                           "link that does not move (give the file a fixed base body)")
        t = t @ origin(joint.origin_xyz, joint.origin_rpy)
        if joint.kind == "fixed":
            continue
        if joint.kind not in MOVING:
            raise ArmError(f"joint {joint.name} of {desc.name} is {joint.kind} and lies on the "
                           f"chain to the tool {tool}: an arm's joints turn (revolute or "
                           "continuous)")
        links.append(_link_spec(joint, t))
        moving.append(joint)
        t = np.eye(4)
    if not 1 <= len(links) <= MAX_JOINTS:
        raise ArmError(f"the chain of {desc.name} from its root to the tool {tool} has "
                       f"{len(links)} moving joints: an arm has 1 to {MAX_JOINTS}")
    return links, t @ extra, moving


def _link_spec(joint, t: np.ndarray) -> LinkSpec:
    """One moving joint at transform ``t`` from the previous one's frame."""
    axis = np.asarray(joint.axis, float)
    axis = axis / np.linalg.norm(axis)
    lo, hi = joint.lower, joint.upper
    if joint.kind == "continuous" or not (_given(lo, True) and _given(hi, True) and lo < hi):
        lo, hi = -CONTINUOUS, CONTINUOUS
    speed = joint.speed if _given(joint.speed) else DEFAULT_SPEED
    effort = joint.effort if _given(joint.effort) else DEFAULT_EFFORT
    return LinkSpec(joint.name, tuple(float(v) for v in t[:3, 3]), matrix_rpy(t[:3, :3]),
                    tuple(float(v) for v in axis), (float(lo), float(hi)), float(speed),
                    float(effort), 1.0, LINK_RADIUS)


def _given(value, signed: bool = False) -> bool:
    """Whether the file gave a number (finite; positive unless ``signed``): a description
    says "none" with an infinity (coopsim.description.robot) or 0 (URDF's velocity/effort)."""
    return value is not None and math.isfinite(value) and (signed or value > 0)


def fold_tool(last: LinkSpec, rest: np.ndarray) -> tuple[LinkSpec, tuple]:
    """The last joint with the fixed turn to the tool folded into its frame, and the tool
    point in that turned frame (so :func:`~coopsim.model.arm.frames`' tool frame is the tool
    link's): R' = R Rt, axis' = Rt^T axis, tool' = Rt^T t."""
    rt = rest[:3, :3]
    turned = rpy_matrix(last.rpy) @ rt
    axis = rt.T @ np.asarray(last.axis, float)
    link = LinkSpec(last.key, last.origin, matrix_rpy(turned), tuple(float(v) for v in axis),
                    last.limits, last.max_speed, last.max_effort, last.mass, last.radius)
    return link, tuple(float(v) for v in rt.T @ rest[:3, 3])


# -- the whole tree at the start: masses, inertias, the links an arm moves -----------------------

def _children(desc) -> dict:
    out: dict = {}
    for joint in desc.joints:
        out.setdefault(joint.parent, []).append(joint)
    return out


def _motion(joint, q: float) -> np.ndarray:
    """4 x 4 of a joint's own motion by ``q`` (rad or m) about or along its axis."""
    t = np.eye(4)
    if not q:
        return t
    axis = np.asarray(joint.axis, float)
    axis = axis / np.linalg.norm(axis)
    if joint.kind in SLIDING:
        t[:3, 3] = axis * q
    elif joint.kind in MOVING:
        t[:3, :3] = axis_rotation(axis, q)
    return t


def tree_frames(desc, angles: dict) -> tuple[dict, dict]:
    """Every link's frame in the root link's frame (4 x 4) and every joint's frame (after
    its origin, before its motion), at joint positions ``angles`` (name -> rad or m; others
    0)."""
    kids = _children(desc)
    links, joints, todo = {desc.root: np.eye(4)}, {}, [desc.root]
    while todo:
        parent = todo.pop()
        for joint in kids.get(parent, ()):
            at = links[parent] @ origin(joint.origin_xyz, joint.origin_rpy)
            joints[joint.name] = at
            links[joint.child] = at @ _motion(joint, angles.get(joint.name, 0.0))
            todo.append(joint.child)
    return links, joints


def subtree(desc, link: str, through: tuple = ("fixed",) + MOVING + SLIDING) -> list[str]:
    """``link`` and the links below it, through joints of the kinds ``through``."""
    kids, out, todo = _children(desc), [], [link]
    while todo:
        name = todo.pop()
        out.append(name)
        todo.extend(j.child for j in kids.get(name, ()) if j.kind in through)
    return out


def _inertia_matrix(value) -> np.ndarray:
    """3 x 3 inertia tensor from a description's numbers (ixx ixy ixz iyy iyz izz, a 3 x 3,
    three principal moments or nothing)."""
    v = np.asarray(value if value is not None else (), float).ravel()
    if v.size == 6:
        xx, xy, xz, yy, yz, zz = v
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    if v.size == 9:
        return v.reshape(3, 3)
    if v.size == 3:
        return np.diag(v)
    return np.zeros((3, 3))


def joint_inertias(desc, moving: list, angles: dict) -> tuple[float, ...]:
    """Each moving joint's inertia about its axis, kg m^2: every link below it, its mass at
    its centre of mass (the link's ``com``, else its origin) and its own tensor."""
    links, joints = tree_frames(desc, angles)
    spec = _links(desc)
    out = []
    for joint in moving:
        at = joints[joint.name]
        axis = at[:3, :3] @ (np.asarray(joint.axis, float) / np.linalg.norm(joint.axis))
        total = 0.0
        for name in subtree(desc, joint.child):
            link, frame = spec[name], links[name]
            mass = float(link.mass or 0.0)
            com = frame[:3, :3] @ np.asarray(getattr(link, "com", None) or (0, 0, 0), float)
            r = frame[:3, 3] + com - at[:3, 3]
            tensor = frame[:3, :3] @ _inertia_matrix(getattr(link, "inertia", None)) \
                @ frame[:3, :3].T
            total += mass * float(r @ r - (r @ axis) ** 2) + float(axis @ tensor @ axis)
        out.append(total)
    return tuple(out)


def _rigid_mass(desc, link: str) -> float:
    """kg of ``link`` and what is fixed to it (the mass a LinkSpec stands for)."""
    spec = _links(desc)
    return sum(float(spec[n].mass or 0.0) for n in subtree(desc, link, ("fixed",)))


# -- fingers and the whole arm ------------------------------------------------------------------

def fingers(desc, names: tuple[str, ...], force: float | None) -> tuple[GripperSpec, tuple,
                                                                         tuple]:
    """A gripper of two finger joints: its spec (stroke: the fingers' travel together, m;
    force: the weaker finger's effort, N, unless ``force``), and each finger's open and
    closed position (the end of its range farther from 0 is open)."""
    by_name = {j.name: j for j in desc.joints}
    missing = [n for n in names if n not in by_name]
    if len(names) != 2 or missing:
        raise ArmError(f"a gripper names two finger joints of {desc.name}"
                       + (f"; {', '.join(missing)} is not one" if missing else
                          f", got {len(names)}"), "gripper")
    opened, closed, efforts = [], [], []
    for joint in (by_name[n] for n in names):
        lo, hi = joint.lower, joint.upper
        if not (_given(lo, True) and _given(hi, True) and lo < hi):
            raise ArmError(f"finger joint {joint.name} of {desc.name} needs a range (its "
                           "lower and upper limits)", "gripper")
        far, near = (hi, lo) if abs(hi) >= abs(lo) else (lo, hi)
        opened.append(far)
        closed.append(near)
        efforts.append(joint.effort if _given(joint.effort) else DEFAULT_FORCE)
    stroke = sum(abs(a - b) for a, b in zip(opened, closed))
    grip = GripperSpec(stroke=stroke, force=float(force or min(efforts)), length=0.0)
    return grip, tuple(opened), tuple(closed)


@dataclass(frozen=True)
class ArmOptions:
    """What a scenario says about an imported arm (docs/files.md, the description keys).

    Attributes:
        tool: The tool link or site; empty with a grasp site (then the tool is it).
        gripper: Two finger joints, one grasp site, or nothing.
        home: Start angles, rad (empty: 0 clipped to the limits).
        payload: kg (a heavier grasp is refused).
        omega: The servos' natural frequency, rad/s (0: the built-in arms').
        kp, kv: Per-joint servo gains overriding the derived ones (empty: derived).
        effort: Per-joint top torques, N m, overriding the file's (empty: the file's).
        stroke, force: A grasp site's opening (m) and grip (N); force overrides the fingers'.
    """

    tool: str = ""
    gripper: tuple[str, ...] = ()
    home: tuple[float, ...] = ()
    payload: float = DEFAULT_PAYLOAD
    omega: float = 0.0
    kp: tuple[float, ...] = ()
    kv: tuple[float, ...] = ()
    effort: tuple[float, ...] = ()
    stroke: float = DEFAULT_STROKE
    force: float | None = None


def arm_from_description(desc, options: ArmOptions, base: str, key: str = "arm",
                         tilt: tuple[float, float] = (0.0, 0.0)) -> ImportedArmSpec:
    """The arm of a parsed description (:mod:`coopsim.description.robot`) from its root link
    (the assembly's body ``base``) to ``options.tool``; ``tilt``: the root link's roll and
    pitch on its mount (rad), folded into the first joint (:func:`fold_chain`).

    Raises:
        ArmError: the chain, the tool, the gripper or a scenario number does not fit.
    """
    tool, grip, opened, closed, finger_names = _gripper(desc, options)
    if not tool:
        raise ArmError(f"an arm of {desc.name} needs its tool: a link or site name")
    links, rest, moving = fold_chain(desc, tool, tilt)
    links = [_with_mass(l, _rigid_mass(desc, j.child)) for l, j in zip(links, moving)]
    efforts = _numbers("effort", options.effort, len(links))
    if efforts:
        links = [replace(l, max_effort=e) for l, e in zip(links, efforts)]
    links[-1], point = fold_tool(links[-1], rest)
    home = _numbers("home", options.home, len(links))
    if home and not all(l.limits[0] <= v <= l.limits[1] for l, v in zip(links, home)):
        bad = next(l for l, v in zip(links, home) if not l.limits[0] <= v <= l.limits[1])
        raise ArmError(f"home: joint {bad.key} of {desc.name} takes angles in "
                       f"[{bad.limits[0]:.4g}, {bad.limits[1]:.4g}] rad", "home")
    q0 = np.clip(np.array(home) if home else np.zeros(len(links)),
                 [l.limits[0] for l in links], [l.limits[1] for l in links])
    angles = {j.name: float(v) for j, v in zip(moving, q0)}
    angles.update(zip(finger_names, opened))
    last = moving[-1].child
    arm = ImportedArmSpec(
        key, tuple(links), tool=point, base=base, home=tuple(float(v) for v in q0),
        payload=options.payload, reach=_reach(links, point), gripper=grip,
        base_mass=max(_rigid_mass(desc, desc.root), 1e-3), body=last,
        site=(*(float(v) for v in rest[:3, 3]), *quat_of(rest[:3, :3])),
        fingers=finger_names, finger_open=opened, finger_closed=closed,
        inertia=joint_inertias(desc, moving, angles),
        kp=_numbers("kp", options.kp, len(links)), kv=_numbers("kv", options.kv, len(links)),
        omega=options.omega, links_moved=tuple(subtree(desc, moving[0].child)),
        loads=_loads(desc, moving, angles, rest[:3, :3]))
    try:
        arm.validate()
    except ValueError as exc:
        raise ArmError(str(exc)) from None
    return arm


def _loads(desc, moving: list, angles: dict, turn: np.ndarray) -> tuple:
    """:attr:`ImportedArmSpec.loads`: per arm joint the mass and centre of mass of the links
    between it and the next arm joint, in its child link's frame (the last one's turned by
    ``turn``, the fixed turn the tool folds into it), at ``angles``."""
    frames, _ = tree_frames(desc, angles)
    links = _links(desc)
    out = []
    for k, joint in enumerate(moving):
        mine = set(subtree(desc, joint.child))
        if k + 1 < len(moving):
            mine -= set(subtree(desc, moving[k + 1].child))
        inv = np.linalg.inv(frames[joint.child])
        mass, moment = 0.0, np.zeros(3)
        for name in mine:
            link = links[name]
            at = (inv @ frames[name] @ np.append(np.asarray(link.com, float), 1.0))[:3]
            mass, moment = mass + link.mass, moment + link.mass * at
        com = moment / mass if mass > 0 else np.zeros(3)
        if k + 1 == len(moving):
            com = turn.T @ com
        out.append((float(mass), *(float(v) for v in com)))
    return tuple(out)


def _gripper(desc, options: ArmOptions) -> tuple:
    """The tool (a grasp site is it), the gripper's spec (or None), the fingers' open and
    closed positions and their joint names."""
    tool = options.tool
    if len(options.gripper) == 1:  # a grasp site: the tool point is where it grasps
        site = options.gripper[0]
        if tool and tool != site:
            raise ArmError(f"the grasp site {site} is the tool point: name the tool {site} "
                           f"or leave it out, not {tool}", "gripper")
        grip = GripperSpec(stroke=options.stroke, force=options.force or DEFAULT_FORCE,
                           length=0.0)
        return site, grip, (), (), ()
    if options.gripper:
        grip, opened, closed = fingers(desc, tuple(options.gripper), options.force)
        return tool, grip, opened, closed, tuple(options.gripper)
    return tool, None, (), (), ()


def _with_mass(link: LinkSpec, mass: float) -> LinkSpec:
    return LinkSpec(link.key, link.origin, link.rpy, link.axis, link.limits, link.max_speed,
                    link.max_effort, max(mass, 1e-3), link.radius)


def _numbers(what: str, values, dof: int) -> tuple[float, ...]:
    """Per-joint numbers from the scenario: none, or one per joint, finite."""
    values = tuple(float(v) for v in values)
    if values and (len(values) != dof or not all(math.isfinite(v) for v in values)):
        raise ArmError(f"{what} takes {dof} numbers (one per joint of the arm), got "
                       f"{len(values)}", what)
    return values


def _reach(links: list[LinkSpec], tool: tuple) -> float:
    """The chain's stretch from the first joint to the tool point, m."""
    return float(sum(np.linalg.norm(l.origin) for l in links[1:]) + np.linalg.norm(tool)) \
        or 0.1


# -- from a section's description keys -----------------------------------------------------------

def section_arm(desc, spec, base: str = "base") -> ImportedArmSpec | None:
    """The arm a section's description keys ask for (``tool`` or ``gripper`` given), else
    None. ``spec``: the section's :class:`~coopsim.description.robot.DescriptionSpec`.

    Raises:
        ArmError: with ``key`` the section key whose value does not fit.
    """
    tool, grip = spec.get("tool", ()), spec.get("gripper", ())
    if not tool and not grip:
        return None
    options = ArmOptions(tool=tool[0] if tool else "", gripper=tuple(grip),
                         home=spec.get("home", ()), payload=spec.get("payload",
                                                                     (DEFAULT_PAYLOAD,))[0],
                         omega=spec.get("omega", (0.0,))[0], kp=spec.get("kp", ()),
                         kv=spec.get("kv", ()), effort=spec.get("effort", ()))
    return arm_from_description(desc, options, base, tilt=tuple(getattr(spec, "tilt",
                                                                        (0.0, 0.0))))
