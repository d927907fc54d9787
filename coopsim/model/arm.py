"""Robot arms said without any engine: a serial chain of revolute joints, its kinematics and its
inverse kinematics.

An :class:`ArmSpec` is what a robot type declares for a manipulator (``irb120``, ``mh5``, a
7-DoF lightweight arm, the arm of a mobile manipulator): its links in the URDF way (each joint
frame placed in the previous one by a translation and a fixed roll-pitch-yaw, then turned about
its own axis by the joint angle), its limits and speeds from the maker's data sheet, the tool
point, and where it stands (on the floor at the section's pose, or on a body of the assembly).
An engine with the ``arms`` feature (:mod:`coopsim.physics.engine`) builds it; everything else
(modules, the viewer, Foxglove, ROS 2, replays) turns joint angles into link frames with
:func:`frames`, so a recording of the angles is enough to redraw the arm.

Inverse kinematics (:func:`solve_ik`) is a bounded nonlinear least-squares problem handed to
SciPy's ``least_squares`` (trust-region reflective: it keeps every joint within its limits)
with this module's analytic Jacobian; SciPy is a base dependency already, and a well-kept solver
beats a hand-rolled damped least squares on the limits.

Frames and units: metres, radians, kilograms, seconds. The arm's *base frame* is the frame of
its mount: x forward, z up. Transforms are 4 x 4 homogeneous matrices (base frame unless said).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .limits import shown

Vec3 = tuple[float, float, float]
#: The most joints an arm may have: modules' readings are this wide (unused joints read 0).
MAX_JOINTS = 7


@dataclass(frozen=True)
class LinkSpec:
    """One revolute joint and the link it moves.

    Attributes:
        key: Name unique within the arm (``joint_1``... in ROS 2's ``joint_states``).
        origin: Position of this joint's frame in the previous joint's frame (the base frame
            for the first), m.
        rpy: Fixed roll, pitch, yaw (rad) of this joint's frame relative to the previous one,
            applied after ``origin`` (URDF's ``<origin rpy>``: R = Rz(yaw) Ry(pitch) Rx(roll)).
        axis: Unit axis of the joint in its own frame.
        limits: (min, max) joint angle, rad.
        max_speed: Largest joint speed, rad/s (the data sheet's axis speed).
        max_effort: Largest torque the joint's drive gives, N m.
        mass: kg of the link this joint moves (between it and the next joint).
        radius: The link's radius, m (its capsule: collisions and drawing).
    """

    key: str
    origin: Vec3
    rpy: Vec3 = (0.0, 0.0, 0.0)
    axis: Vec3 = (0.0, 0.0, 1.0)
    limits: tuple[float, float] = (-math.pi, math.pi)
    max_speed: float = 1.0
    max_effort: float = 10.0
    mass: float = 1.0
    radius: float = 0.04


@dataclass(frozen=True)
class GripperSpec:
    """A parallel two-finger gripper on the tool flange.

    Attributes:
        stroke: Largest opening between the fingers, m (an object wider than it cannot be held).
        force: Grip force, N (with friction 1 it holds up to force / g kg against gravity).
        length: Finger length along the tool's z, m (the tool point is at the fingertips).
    """

    stroke: float = 0.08
    force: float = 100.0
    length: float = 0.06


@dataclass(frozen=True)
class ArmSpec:
    """A serial manipulator.

    Attributes:
        key: Name unique within the assembly (members refer to it by ``refs['arm']``).
        links: The joints from base to flange, at most :data:`MAX_JOINTS`.
        tool: The tool point (the flange, or the fingertips with a gripper) in the last
            joint's frame, m.
        base: Key of the assembly body the arm is mounted on: a static pedestal for an arm on
            the floor or a table, the chassis of a mobile manipulator. Every arm has one (an
            arm without a base is refused).
        mount: Where the base frame is in the body ``base``'s frame (x forward, z up from the
            body's origin), m.
        mount_yaw: The base frame's turn about z relative to the body, rad.
        home: Joint angles at the start, rad (len(links) values; within the limits).
        payload: Rated payload, kg (data sheet; a heavier grasp is refused).
        reach: Rated reach, m (data sheet; drawing and sanity checks).
        gripper: The gripper on the flange, or None.
        base_mass: kg of the pedestal the first joint stands on (drawn and collided as a
            cylinder of ``base_radius`` up to the first joint).
        base_radius: m.
    """

    key: str
    links: tuple[LinkSpec, ...]
    tool: Vec3 = (0.0, 0.0, 0.0)
    base: str = "base"
    mount: Vec3 = (0.0, 0.0, 0.0)
    mount_yaw: float = 0.0
    home: tuple[float, ...] = ()
    payload: float = 1.0
    reach: float = 0.5
    gripper: GripperSpec | None = None
    base_mass: float = 10.0
    base_radius: float = 0.08

    @property
    def dof(self) -> int:
        """Number of joints."""
        return len(self.links)

    @property
    def lower(self) -> np.ndarray:
        """(dof,) lower joint limits, rad."""
        return np.array([l.limits[0] for l in self.links])

    @property
    def upper(self) -> np.ndarray:
        """(dof,) upper joint limits, rad."""
        return np.array([l.limits[1] for l in self.links])

    @property
    def speeds(self) -> np.ndarray:
        """(dof,) largest joint speeds, rad/s."""
        return np.array([l.max_speed for l in self.links])

    @property
    def start(self) -> np.ndarray:
        """(dof,) the joint angles at the start (``home``, or zeros clipped to the limits)."""
        q = np.array(self.home, dtype=float) if self.home else np.zeros(self.dof)
        return np.clip(q, self.lower, self.upper)

    def validate(self) -> None:
        """Check counts, limits, speeds and masses.

        Raises:
            ValueError: with the arm's key and what is wrong.
        """
        if not 1 <= self.dof <= MAX_JOINTS:
            raise ValueError(f"arm {self.key}: 1 to {MAX_JOINTS} joints, not {self.dof}")
        if len({l.key for l in self.links}) != self.dof:
            raise ValueError(f"arm {self.key}: joint keys repeat")
        for l in self.links:
            lo, hi = l.limits
            if not (lo < hi and l.max_speed > 0 and l.max_effort > 0 and l.mass > 0
                    and l.radius > 0 and abs(np.linalg.norm(l.axis) - 1.0) < 1e-6):
                raise ValueError(f"arm {self.key} joint {l.key}: limits, speed, effort, mass, "
                                 "radius or axis out of range")
        if self.home and len(self.home) != self.dof:
            raise ValueError(f"arm {self.key}: home needs {self.dof} angles")
        if not self.base:
            raise ValueError(f"arm {self.key} has no base: name the body it is mounted on")
        if not (self.payload > 0 and self.reach > 0 and self.base_mass > 0):
            raise ValueError(f"arm {self.key}: payload, reach and base mass must be positive")


# -- kinematics ---------------------------------------------------------------------------------

def rpy_matrix(rpy: Vec3) -> np.ndarray:
    """3 x 3 rotation of URDF's roll, pitch, yaw: Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), \
        math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def axis_rotation(axis, angle: float) -> np.ndarray:
    """3 x 3 rotation by ``angle`` rad about the unit ``axis`` (Rodrigues)."""
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def frames(arm: ArmSpec, q) -> np.ndarray:
    """(dof + 2, 4, 4) frames of the base, of each joint (after its turn) and of the tool
    point, in the arm's base frame, at joint angles ``q`` (rad)."""
    out = np.empty((arm.dof + 2, 4, 4))
    t = np.eye(4)
    out[0] = t
    for i, (link, angle) in enumerate(zip(arm.links, q)):
        step = np.eye(4)
        step[:3, :3] = rpy_matrix(link.rpy) @ axis_rotation(link.axis, float(angle))
        step[:3, 3] = link.origin
        t = t @ step
        out[i + 1] = t
    tool = np.eye(4)
    tool[:3, 3] = arm.tool
    out[-1] = t @ tool
    return out


def tool_pose(arm: ArmSpec, q) -> np.ndarray:
    """4 x 4 tool frame in the base frame at joint angles ``q``."""
    return frames(arm, q)[-1]


def jacobian(arm: ArmSpec, q) -> np.ndarray:
    """(6, dof) geometric Jacobian of the tool point in the base frame: rows vx, vy, vz (m/s)
    and wx, wy, wz (rad/s) per unit joint rate."""
    f = frames(arm, q)
    tip = f[-1, :3, 3]
    out = np.empty((6, arm.dof))
    for i, link in enumerate(arm.links):
        axis = f[i + 1, :3, :3] @ np.asarray(link.axis, dtype=float)
        out[:3, i] = np.cross(axis, tip - f[i + 1, :3, 3])
        out[3:, i] = axis
    return out


def rotation_error(have: np.ndarray, want: np.ndarray) -> np.ndarray:
    """(3,) rotation vector (rad, base frame) turning ``have`` into ``want`` (3 x 3 each)."""
    r = want @ have.T
    angle = math.acos(max(-1.0, min(1.0, (np.trace(r) - 1.0) / 2.0)))
    v = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    if angle < 1e-9:
        return v / 2.0
    if math.pi - angle < 1e-6:  # half a turn: the axis from the symmetric part
        axis = np.sqrt(np.maximum((np.diag(r) + 1.0) / 2.0, 0.0))
        return axis * angle
    return v * angle / (2.0 * math.sin(angle))


@dataclass(frozen=True)
class IKResult:
    """What :func:`solve_ik` found.

    Attributes:
        q: (dof,) joint angles within the limits, rad.
        position_error: Distance from the tool point to the wanted position, m.
        angle_error: Angle between the tool frame and the wanted one, rad (0 when no
            orientation was asked).
        ok: Both errors within the tolerances.
    """

    q: np.ndarray
    position_error: float
    angle_error: float
    ok: bool


def solve_ik(arm: ArmSpec, position, rotation=None, q0=None, *, tol: float = 1e-4,
             angle_tol: float = 1e-3, weight: float = 0.2) -> IKResult:
    """Joint angles putting the tool point at ``position`` (m, base frame) and, when given,
    its frame at ``rotation`` (3 x 3, base frame), starting from ``q0`` (default: the arm's
    start) and staying within the joint limits.

    Args:
        weight: Metres an orientation error of one radian weighs as.
        tol, angle_tol: What counts as reached, m and rad.
    """
    from scipy.optimize import least_squares

    lo, hi = arm.lower, arm.upper
    start = np.clip(arm.start if q0 is None else np.asarray(q0, dtype=float), lo, hi)
    want = np.asarray(position, dtype=float)

    def residual(q):
        t = tool_pose(arm, q)
        r = t[:3, 3] - want
        return r if rotation is None else np.concatenate(
            [r, -weight * rotation_error(t[:3, :3], rotation)])

    def jac(q):
        j = jacobian(arm, q)
        return j[:3] if rotation is None else np.vstack([j[:3], weight * j[3:]])

    # least_squares wants strictly interior starts for its bounds
    inner = np.clip(start, lo + 1e-9, hi - 1e-9)
    fit = least_squares(residual, inner, jac=jac, bounds=(lo, hi), xtol=1e-12, ftol=1e-12,
                        gtol=1e-12, max_nfev=200, method="trf")
    t = tool_pose(arm, fit.x)
    perr = float(np.linalg.norm(t[:3, 3] - want))
    aerr = 0.0 if rotation is None else float(np.linalg.norm(
        rotation_error(t[:3, :3], rotation)))
    return IKResult(fit.x, perr, aerr, perr <= tol and aerr <= angle_tol)


def move_time(arm: ArmSpec, q_from, q_to, speed: float = 1.0) -> float:
    """Shortest time (s) for a synchronised joint move from ``q_from`` to ``q_to`` with every
    joint at most ``speed`` (0-1] of its largest speed: all joints start and stop together."""
    dq = np.abs(np.asarray(q_to, dtype=float) - np.asarray(q_from, dtype=float))
    return float(np.max(dq / (arm.speeds * speed))) if len(dq) else 0.0


def limit_reason(arm: ArmSpec, q) -> str:
    """Why joint angles ``q`` (rad) are not reachable ("" when they are): the first joint
    outside its limits, said with the range in degrees and radians."""
    for link, angle in zip(arm.links, q):
        lo, hi = link.limits
        if not lo <= angle <= hi:
            return (f"joint {link.key} of {arm.key} takes angles in [{lo:.4g}, {hi:.4g}] rad "
                    f"([{math.degrees(lo):.1f}, {math.degrees(hi):.1f}] deg), not "
                    f"{shown(angle, lo, hi)}")
    return ""


def base_transform(x: float, y: float, z: float, yaw: float) -> np.ndarray:
    """4 x 4 transform of a frame at (x, y, z) m turned by ``yaw`` rad about z."""
    t = np.eye(4)
    c, s = math.cos(yaw), math.sin(yaw)
    t[:3, :3] = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    t[:3, 3] = x, y, z
    return t


def quat_matrix(q) -> np.ndarray:
    """3 x 3 rotation of a unit quaternion (w, x, y, z)."""
    w, x, y, z = (float(v) for v in q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def base_in_world(arm: ArmSpec, body_state) -> np.ndarray:
    """4 x 4 world transform of the arm's base frame, from the state of the body it is mounted
    on (a :data:`coopsim.physics.engine.STATE3D` row: x, y, z, qw, qx, qy, qz, ...)."""
    body = np.eye(4)
    body[:3, :3] = quat_matrix(body_state[3:7])
    body[:3, 3] = body_state[0:3]
    return body @ base_transform(*arm.mount, arm.mount_yaw)


def world_frames(arm: ArmSpec, body_state, q) -> np.ndarray:
    """(dof + 2, 4, 4) :func:`frames` in the world frame, the arm mounted on a body in
    ``body_state`` (a STATE3D row)."""
    return base_in_world(arm, body_state) @ frames(arm, q)
