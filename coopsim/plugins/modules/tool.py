"""``tool``: an arm's tool point (the gripper's fingertips) in the world, and moves to points.

Reading: ``x, y, z`` (m) and the tool frame's orientation ``qw, qx, qy, qz`` (tool to world;
the tool's z is its approach axis), world frame: the forward kinematics of the arm's angles
(:func:`coopsim.model.arm.frames`) on the pose of the body it stands on.

Actions (carried out between two steps, on the latest snapshot):

* ``move_to x y z [roll pitch yaw] [speed]``: the joint angles putting the tool point at
  (x, y, z) (m, world frame) and, when given, its frame at roll, pitch, yaw (rad, world
  frame: R = Rz(yaw) Ry(pitch) Rx(roll); a tool pointing down is roll pi), found by inverse
  kinematics from the arm's angles in the latest snapshot (:mod:`coopsim.model.ikkernel`,
  within the joint limits and :data:`BUDGET`); from the next step the arm makes that
  synchronised joint move as ``joints.set_positions`` would, at ``speed`` (0-1], default 0.5;
  a ``joints.wait`` goes on with it, any other joints command replaces it). Text: the move's
  time (s) and the angles (rad). A point the arm cannot reach within ``tolerance`` is refused
  with error 4 (``move_to: unreachable: ...``) saying how far off it stays. In lockstep, step
  on with ``joints.wait`` while the arm moves.
* ``ik`` (same values): the angles only, nothing moves. Text ``ok`` or ``miss``, the position
  error (m), the angle error (rad), then the angles (rad).

Where they are solved (the :class:`~coopsim.model.capabilities.Offloaded` capability): in
lockstep and for in-process drivers between two steps, with the iteration budget alone (the
same answer on every machine); over the network in real time on a solver thread while the run
steps on, with a wall-time cap besides (:mod:`coopsim.net.offload`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ...model.arm import ArmSpec, base_in_world, rpy_matrix
from ...model import ikkernel
from ...model.compiled import warmer
from ...model.ikkernel import SEEDS, Budget, Solved, chain_constants, solve
from ...model.commands import OUT_OF_RANGE, WRONG_ARITY, Command
from ...model.errors import ProtocolError
from ...model.module import Module
from ...model.params import ParamSpec
from . import armkernels
from .common import rate
from .joints import DEFAULT_SPEED, positions_row, speed_fraction, start_move
from ...model.specs import GRAVITY

SANITY = 1000.0  # m: larger coordinates are refused before any solving
#: What one request may spend: iterations over all restarts (the same answer on every
#: machine); the network's real-time path adds a wall-time cap (coopsim.net.offload).
BUDGET = Budget(iterations=800, per_seed=40, polish=20)
SEED_COUNT = 2 + len(SEEDS)  # the angles now, the start, the fixed spreads
#: The inverse kinematics' kernel, loaded with a world whose robots have a tool
WARM_IK = warmer(ikkernel.load, labels=("tool",))


class Tool(Module):
    """The tool point's world pose; inverse kinematics and moves to world points.

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``move_to`` (4101): request data = ``[x, y, z]``, ``[x, y, z, speed]``, ``[x, y, z, roll,
      pitch, yaw]`` or ``[x, y, z, roll, pitch, yaw, speed]``: world frame m and rad (R =
      Rz(yaw) Ry(pitch) Rx(roll); a tool pointing down has roll π), speed as ``set_positions``;
      reply an action: inverse kinematics (a bounded Levenberg-Marquardt search from the angles
      in the latest snapshot, then from fixed starts, within the budget below) within the joint
      limits, then the synchronised joint move to those angles is stored as the robot's
      ``set_positions``; text = the move's time s and the angles rad, space-separated. Error 4
      when no angles within the limits bring the tool within ``tool.tolerance`` m (default
      0.001) and ``tool.angle_tolerance`` rad (0.01) of the pose: ``move_to: unreachable: the
      point (1.5, 0, 0.25) is 0.749 m beyond what the arm of a1 (irb120) reaches from its pose
      ... (2 starts, 80 iterations)`` (or ``; the search stopped at its budget after 21 of 24
      starts``); nothing moves. Error 4 too when the angles found need more torque against
      gravity than a joint's effort gives (an arm from a description file): ``move_to: cannot
      hold: joint J of R needs X N m against gravity at the angles reaching that point, its
      effort is Y N m ...``; nothing moves. Error 3 for 5 values; error 12 (``busy``) in real
      time when the connection has 4 requests in flight (*Inverse kinematics* below)
    - ``ik`` (4102): request data as ``move_to`` without the speed (3 or 6 values); reply an
      action that moves nothing: text = ``ok`` or ``miss`` (unreachable within the budget), the
      position error m, the angle error rad, then the joint angles rad; error 12 as ``move_to``
    """

    label = "tool"
    description = ("an arm's tool point: x, y, z (m) and quaternion (world frame); move_to "
                   "and ik by inverse kinematics within the joint limits")
    params = (
        ParamSpec("tolerance", "float", "largest distance from the asked point that counts as "
                  "reached by move_to and ik, m", 0.001, 1e-6, 0.1, "m"),
        ParamSpec("angle_tolerance", "float", "largest angle from the asked orientation that "
                  "counts as reached, rad", 0.01, 1e-6, 1.0, "rad"),
        rate(),
    )
    commands = (
        Command(4100, "read", "tool", kind="read",
                doc="x, y, z (m), qw, qx, qy, qz: the tool point and frame, world frame"),
        Command(4101, "move_to", "tool", data=(3, 7), kind="action",
                doc="x y z [roll pitch yaw] [speed]: world frame m, rad; inverse kinematics "
                    "then a synchronised joint move; text: its time (s) and angles (rad)"),
        Command(4102, "ik", "tool", data=(3, 7), kind="action",
                doc="x y z [roll pitch yaw]: text 'ok' or 'miss', position error m, angle "
                    "error rad, then the joint angles rad; nothing moves"),
    )
    fields = ("x", "y", "z", "qw", "qx", "qy", "qz")
    kernel_views = ("arm", "arm_chain", "state3d")  # its forward kinematics: one call
    kernel_sense = armkernels.tool_sense

    @classmethod
    def act(cls, command, sim, robot, msg):
        return cls.prepare(command, sim, robot, msg, None).solve_here(sim)

    @classmethod
    def prepare(cls, command, sim, robot, msg, seconds):
        """The request's job (:class:`IKJob`), its angles taken from the latest snapshot;
        ``seconds``: its wall-time cap (None: the iteration budget alone, in lockstep)."""
        arm, q_now, base = _arm_now(sim, robot)
        position, rotation, speed = _target(command.name, arm, tuple(float(v) for v in msg.data))
        params = sim.world.robot(robot).modules[cls.label]
        inv = np.linalg.inv(base)
        local_rot = None if rotation is None else inv[:3, :3] @ rotation
        return IKJob(command.name, robot, f"{robot} ({sim.world.robot(robot).type})", arm,
                     position, rotation is not None, inv[:3, :3] @ position + inv[:3, 3],
                     local_rot, q_now, speed, float(params["tolerance"]),
                     float(params["angle_tolerance"]), replace(BUDGET, seconds=seconds),
                     inv[:3, :3] @ np.array([0.0, 0.0, -GRAVITY]))


@dataclass(frozen=True)
class IKJob:
    """One ``move_to`` or ``ik`` request, ready to solve anywhere and finish on the thread
    that owns the World.

    Attributes:
        name: ``move_to`` or ``ik``.
        robot, who: The robot's network name, and how a sentence names it.
        arm: Its arm.
        position: The asked tool point, m, world frame.
        oriented: Whether an orientation was asked.
        local, local_rot: The asked point (m) and turn (3 x 3 or None) in the arm's base frame.
        q_now: (dof,) the arm's angles in the snapshot the request was answered against, rad.
        speed: The move's fraction of the joints' top speeds.
        tol, angle_tol: What counts as reached, m and rad.
        budget: What the search may spend (coopsim.model.ikkernel.Budget).
        gravity: (3,) gravity in the arm's base frame, m/s^2: a ``move_to`` whose angles the
            joints' efforts cannot hold against it is refused (:func:`holding_torques`).
    """

    name: str
    robot: str
    who: str
    arm: ArmSpec
    position: np.ndarray
    oriented: bool
    local: np.ndarray
    local_rot: np.ndarray | None
    q_now: np.ndarray
    speed: float
    tol: float
    angle_tol: float
    budget: Budget
    gravity: np.ndarray | None = None

    def run(self) -> Solved:
        """Solve (any thread: reads nothing but the job)."""
        return solve(self.arm, self.local, self.local_rot, self.q_now, self.tol, self.angle_tol,
                     self.budget)

    def finish(self, sim, fit: Solved) -> str:
        """The reply's text; a ``move_to`` that reached starts its move from the next step.

        Raises:
            ProtocolError: 4 (with the residual) when the point or pose is out of reach.
        """
        angles = " ".join(f"{v:.6g}" for v in fit.q)
        if self.name == "ik":
            return (f"{'ok' if fit.ok else 'miss'} {fit.position_error:.6g} "
                    f"{fit.angle_error:.6g} {angles}")
        if not fit.ok:
            raise ProtocolError(OUT_OF_RANGE, _miss(self, fit))
        weak = _too_weak(self, fit.q)
        if weak:
            raise ProtocolError(OUT_OF_RANGE, weak)
        sim.world.robot(self.robot)  # UnknownNameError: removed while it was solved
        start_move(sim.extra, self.robot, positions_row(self.arm, fit.q, self.speed))
        need = float(np.max(np.abs(fit.q - self.q_now) / (self.arm.speeds * self.speed)))
        return f"{need:.6g} {angles}"

    def solve_here(self, sim) -> str:
        """:meth:`run` then :meth:`finish`, in the caller's thread (drivers, lockstep)."""
        return self.finish(sim, self.run())


def _arm_now(sim, robot: str) -> tuple[ArmSpec, np.ndarray, np.ndarray]:
    """The robot's arm, its angles (rad) and its base frame in the world (4 x 4) now."""
    who = sim.world.robot(robot)
    arm = who.info.arm if who.info is not None else None
    snap = sim.snapshot
    if arm is None or "joints" not in who.modules or snap.pose3d is None:
        raise ProtocolError(OUT_OF_RANGE, f"{robot} has no arm with joints in a 3D world: "
                                          "tool commands need one (engine mujoco)")
    row = snap.robot_index(robot)
    q = np.asarray(snap.readings["joints"][row][1:1 + arm.dof], dtype=float)
    return arm, q, base_in_world(arm, snap.pose3d[row])


def _target(name: str, arm: ArmSpec, data) -> tuple[np.ndarray, np.ndarray | None, float]:
    """The asked position (m), rotation (3 x 3 or None) and speed fraction, checked."""
    n = len(data)
    if n == 5 or (name == "ik" and n in (4, 7)):
        want = "x y z [roll pitch yaw]" if name == "ik" else "x y z [roll pitch yaw] [speed]"
        raise ProtocolError(WRONG_ARITY, f"{name} takes {want}, got {n} values")
    if not all(abs(v) <= SANITY for v in data[:3]):
        raise ProtocolError(OUT_OF_RANGE, f"{name}: x, y, z must be within +-{SANITY:g} m")
    rotation = rpy_matrix(data[3:6]) if n >= 6 else None
    speed = speed_fraction(name, data[-1]) if n in (4, 7) else DEFAULT_SPEED
    return np.asarray(data[:3], dtype=float), rotation, speed


def _miss(job: IKJob, fit: Solved) -> str:
    """Why a ``move_to`` is refused: how far off the nearest fit stays, and what the search
    spent (it stops at its budget: coopsim.model.ikkernel)."""
    x, y, z = job.position
    what = "that pose" if job.oriented else "that point"
    turn = f" and {math.degrees(fit.angle_error):.1f} deg off" if job.oriented else ""
    spent = (f"; the search stopped at its budget after {fit.seeds} of {SEED_COUNT} starts"
             if fit.cut else f" ({fit.seeds} starts, {fit.iterations} iterations)")
    return (f"move_to: unreachable: the point ({x:g}, {y:g}, {z:g}) is "
            f"{fit.position_error:.3f} m{turn} beyond what the arm of {job.who} reaches from its "
            f"pose (the nearest to {what} within the joint limits; reach {job.arm.reach:g} m)"
            f"{spent}")


def holding_torques(arm: ArmSpec, q: np.ndarray, gravity: np.ndarray) -> np.ndarray:
    """(dof,) the torque each joint needs, N m, to hold the arm still at angles ``q`` (rad)
    against ``gravity`` (m/s^2, the arm's base frame), from the arm's ``loads`` (an arm of a
    description: :attr:`~coopsim.description.arm.ImportedArmSpec.loads`; zeros for an arm
    without them)."""
    loads = np.asarray(getattr(arm, "loads", ()) or (), float).reshape(-1, 4)
    if len(loads) != arm.dof:
        return np.zeros(arm.dof)
    a, b, c, origins, tool, _, _ = _constants(arm)
    axes = chain_constants(arm)[4]
    rot, pos = np.eye(3), np.zeros(3)
    at, axis = [], []
    for j in range(arm.dof):
        pos = pos + rot @ origins[j]
        rot = rot @ (a[j] + math.sin(q[j]) * b[j] + math.cos(q[j]) * c[j])
        at.append(pos.copy())
        axis.append(rot @ axes[j])
        loads[j, 1:] = pos + rot @ loads[j, 1:]  # the load's centre in the base frame
    out = np.zeros(arm.dof)
    for i in range(arm.dof):
        moment = sum(np.cross(loads[j, 1:] - at[i], loads[j, 0] * gravity)
                     for j in range(i, arm.dof))
        out[i] = -float(np.dot(axis[i], moment))
    return out


def _too_weak(job: IKJob, q: np.ndarray) -> str:
    """Why the arm cannot hold the angles ``q`` a ``move_to`` found ("" when it can): a
    joint whose effort is below the torque gravity needs there."""
    if job.gravity is None:
        return ""
    need = np.abs(holding_torques(job.arm, np.asarray(q, float), job.gravity))
    effort = np.array([l.max_effort for l in job.arm.links])
    over = np.flatnonzero(need > effort)
    if not len(over):
        return ""
    k = int(over[np.argmax(need[over] / effort[over])])
    return (f"move_to: cannot hold: joint {job.arm.links[k].key} of {job.who} needs "
            f"{need[k]:.3g} N m against gravity at the angles reaching that point, its effort is "
            f"{effort[k]:.3g} N m (the file's limit, or the section's effort key); nothing moves")


# -- batched kinematics --------------------------------------------------------------------------

_CONSTANTS: dict[int, tuple] = {}  # id(arm) -> (arm, its constant matrices)


def _constants(arm: ArmSpec) -> tuple:
    """The chain's constants (:func:`coopsim.model.ikkernel.chain_constants`: per joint
    R_j(q) = A_j + sin(q) B_j + cos(q) C_j, its origin), the tool point, the mount's turn and
    offset."""
    held = _CONSTANTS.get(id(arm))
    if held is not None and held[0] is arm:
        return held[1]
    a, b, c, origins, _, tool = chain_constants(arm)
    cy, sy = math.cos(arm.mount_yaw), math.sin(arm.mount_yaw)
    mount = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    out = (a, b, c, origins, tool, mount, np.asarray(arm.mount, float))
    _CONSTANTS[id(arm)] = (arm, out)
    return out


def tool_in_base(arm: ArmSpec, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, 3, 3) turns and (n, 3) positions (m) of the tool frames in the arm's base frame at
    joint angles ``q`` (n, dof), rad: :func:`coopsim.model.arm.frames`' last frame, for many
    arms at once."""
    a, b, c, origins, tool, _, _ = _constants(arm)
    sin, cos = np.sin(q)[:, :, None, None], np.cos(q)[:, :, None, None]
    turns = a + sin * b + cos * c  # (n, dof, 3, 3)
    rot, pos = turns[:, 0], np.broadcast_to(origins[0], (len(q), 3))
    for j in range(1, arm.dof):
        pos = pos + rot @ origins[j]
        rot = rot @ turns[:, j]
    return rot, pos + rot @ tool


def world_tool(arm: ArmSpec, state: np.ndarray, q: np.ndarray) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """(n, 3, 3) turns and (n, 3) positions (m) of the tool frames in the world, the arms on
    bodies in ``state`` (n, >= 7: x, y, z, qw, qx, qy, qz) at angles ``q`` (n, dof)."""
    *_, mount_turn, mount = _constants(arm)
    body = quat_matrices(state[:, 3:7])
    base = body @ mount_turn
    rot, pos = tool_in_base(arm, q)
    return base @ rot, state[:, :3] + body @ mount + (base @ pos[:, :, None])[:, :, 0]


def quat_matrices(quat: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotations of unit quaternions (n, 4) w, x, y, z."""
    w, x, y, z = quat.T
    out = np.empty((len(quat), 3, 3))
    out[:, 0, 0], out[:, 0, 1], out[:, 0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), \
        2 * (x * z + w * y)
    out[:, 1, 0], out[:, 1, 1], out[:, 1, 2] = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), \
        2 * (y * z - w * x)
    out[:, 2, 0], out[:, 2, 1], out[:, 2, 2] = 2 * (x * z - w * y), 2 * (y * z + w * x), \
        1 - 2 * (x * x + y * y)
    return out


def matrix_quat(r: np.ndarray) -> np.ndarray:
    """(n, 4) unit quaternions w, x, y, z (w >= 0) of rotations ``r`` (n, 3, 3): from the
    largest of the four components, well conditioned for every turn (half turns too)."""
    if len(r) <= 4:  # a few floats per arm: plain Python is the fastest
        return np.array([_quat(m) for m in r.tolist()]).reshape(len(r), 4)
    (a, b, c), (d, e, f), (g, h, k) = r[:, 0].T, r[:, 1].T, r[:, 2].T
    cand = np.stack((1 + a + e + k, 1 + a - e - k, 1 - a + e - k, 1 - a - e + k), 1)
    big = cand.argmax(axis=1)
    every = np.arange(len(r))
    s = 2.0 * np.sqrt(np.maximum(cand[every, big], 1e-300))
    d4 = s * s / 4
    table = np.array(((d4, h - f, c - g, d - b), (h - f, d4, b + d, c + g),
                      (c - g, b + d, d4, f + h), (d - b, c + g, f + h, d4)))
    q = table[big, :, every] / s[:, None]
    return q * np.where(q[:, :1] < 0, -1.0, 1.0)


def _quat(m) -> list[float]:
    """One rotation's quaternion (w >= 0), as :func:`matrix_quat`."""
    (a, b, c), (d, e, f), (g, h, k) = m
    cand = (1 + a + e + k, 1 + a - e - k, 1 - a + e - k, 1 - a - e + k)  # 4 w^2, 4 x^2, ...
    big = max(range(4), key=cand.__getitem__)
    s = 2.0 * math.sqrt(max(cand[big], 1e-300))  # 4 |the largest component|
    q = ((s * s / 4, h - f, c - g, d - b), (h - f, s * s / 4, b + d, c + g),
         (c - g, b + d, s * s / 4, f + h), (d - b, c + g, f + h, s * s / 4))[big]
    sign = -1.0 if q[0] < 0 else 1.0
    return [sign * v / s for v in q]
