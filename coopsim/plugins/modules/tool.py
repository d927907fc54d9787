"""``tool``: an arm's tool point (the gripper's fingertips) in the world, and moves to points.

Reading: ``x, y, z`` (m) and the tool frame's orientation ``qw, qx, qy, qz`` (tool to world;
the tool's z is its approach axis), world frame: the forward kinematics of the arm's angles
(:func:`coopsim.model.arm.frames`) on the pose of the body it stands on.

Actions (carried out between two steps, on the latest snapshot):

* ``move_to x y z [roll pitch yaw] [speed]``: the joint angles putting the tool point at
  (x, y, z) (m, world frame) and, when given, its frame at roll, pitch, yaw (rad, world
  frame: R = Rz(yaw) Ry(pitch) Rx(roll); a tool pointing down is roll pi), found by inverse
  kinematics from the arm's angles now (:func:`coopsim.model.arm.solve_ik`, within the joint
  limits); from the next step the arm makes that synchronised joint move as
  ``joints.set_positions`` would, at ``speed`` (0-1], default 0.5; a ``joints.wait`` goes on
  with it, any other joints command replaces it). Text: the move's time (s) and the angles
  (rad). A point the arm cannot reach within ``tolerance`` is refused with error 4 saying
  how far off it stays. In lockstep, step on with ``joints.wait`` while the arm moves.
* ``ik`` (same values): the angles only, nothing moves. Text ``ok`` or ``miss``, the position
  error (m), the angle error (rad), then the angles (rad).
"""

from __future__ import annotations

import math

import numpy as np

from ...model.arm import ArmSpec, base_in_world, rpy_matrix, solve_ik
from ...model.commands import OUT_OF_RANGE, WRONG_ARITY, Command
from ...model.errors import ProtocolError
from ...model.module import Module
from ...model.params import ParamSpec
from .common import rate
from .joints import DEFAULT_SPEED, positions_row, speed_fraction, start_move

SANITY = 1000.0  # m: larger coordinates are refused before any solving
_SEEDS = np.random.default_rng(34).random((6, 7))  # fixed restarts: the same answer every run


class Tool(Module):
    """The tool point's world pose; inverse kinematics and moves to world points."""

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

    @classmethod
    def sense(cls, frame, rows, p, prev):
        from .joints import arm_specs, arm_state

        out = np.zeros((len(rows), 7))
        out[:, 3] = 1.0
        if frame.state3d is None or not len(rows):
            return out
        q = arm_state(frame, rows)[:, :, 0]
        arms = arm_specs(frame, rows)
        first = arms[0]
        if all(a is first for a in arms):  # one kind of arm (the usual): no grouping
            groups = {id(first): list(range(len(rows)))} if first is not None else {}
        else:
            groups = {}
            for i, arm in enumerate(arms):
                if arm is not None:
                    groups.setdefault(id(arm), []).append(i)
        for members in groups.values():
            arm, at = arms[members[0]], np.array(members)
            rot, pos = world_tool(arm, frame.state3d[rows[at]], q[at, :arm.dof])
            out[at, :3] = pos
            out[at, 3:] = matrix_quat(rot)
        return out

    @classmethod
    def act(cls, command, sim, robot, msg):
        arm, q_now, base = _arm_now(sim, robot)
        data = tuple(float(v) for v in msg.data)
        position, rotation, speed = _target(command.name, arm, data)
        params = sim.world.robot(robot).modules[cls.label]
        tol, angle_tol = float(params["tolerance"]), float(params["angle_tolerance"])
        inv = np.linalg.inv(base)
        local = inv[:3, :3] @ position + inv[:3, 3]
        local_rot = None if rotation is None else inv[:3, :3] @ rotation
        fit = best_ik(arm, local, local_rot, q_now, tol, angle_tol)
        ok = fit.position_error <= tol and fit.angle_error <= angle_tol
        angles = " ".join(f"{v:.6g}" for v in fit.q)
        if command.name == "ik":
            return (f"{'ok' if ok else 'miss'} {fit.position_error:.6g} "
                    f"{fit.angle_error:.6g} {angles}")
        if not ok:
            who = sim.world.robot(robot)
            raise ProtocolError(OUT_OF_RANGE, _miss(f"{robot} ({who.type})", arm, position, fit,
                                                    rotation is not None))
        start_move(sim.extra, robot, positions_row(arm, fit.q, speed))
        need = float(np.max(np.abs(fit.q - q_now) / (arm.speeds * speed)))
        return f"{need:.6g} {angles}"


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


def best_ik(arm: ArmSpec, position, rotation, q_now, tol: float, angle_tol: float):
    """:func:`solve_ik` from the angles now, then (when that misses) from the start angles
    and a few fixed spreads over the limits: the best fit found (deterministic)."""
    lo, hi = arm.lower, arm.upper
    seeds = [q_now, arm.start] + [lo + s[:arm.dof] * (hi - lo) for s in _SEEDS]
    best = None
    for q0 in seeds:
        fit = solve_ik(arm, position, rotation, q0, tol=tol / 10, angle_tol=angle_tol / 10)
        score = fit.position_error + 0.1 * fit.angle_error
        if best is None or score < best[0]:
            best = (score, fit)
        if fit.position_error <= tol and fit.angle_error <= angle_tol:
            break
    return best[1]


def _miss(who: str, arm: ArmSpec, position, fit, oriented: bool) -> str:
    x, y, z = position
    what = "that pose" if oriented else "that point"
    turn = f" and {math.degrees(fit.angle_error):.1f} deg off" if oriented else ""
    return (f"move_to: the point ({x:g}, {y:g}, {z:g}) is {fit.position_error:.3f} m"
            f"{turn} beyond what the arm of {who} reaches from its pose (the nearest to {what} "
            f"within the joint limits; reach {arm.reach:g} m)")


# -- batched kinematics --------------------------------------------------------------------------

_CONSTANTS: dict[int, tuple] = {}  # id(arm) -> (arm, its constant matrices)


def _constants(arm: ArmSpec) -> tuple:
    """Per joint j: R_j(q) = A_j + sin(q) B_j + cos(q) C_j (its fixed rpy turn, then Rodrigues
    about its axis), its origin; the tool point; the mount's turn and offset."""
    held = _CONSTANTS.get(id(arm))
    if held is not None and held[0] is arm:
        return held[1]
    a, b, c = [], [], []
    for link in arm.links:
        x, y, z = link.axis
        k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        f = rpy_matrix(link.rpy)
        a.append(f + f @ k @ k)
        b.append(f @ k)
        c.append(-(f @ k @ k))
    cy, sy = math.cos(arm.mount_yaw), math.sin(arm.mount_yaw)
    mount = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    out = (np.array(a), np.array(b), np.array(c), np.array([l.origin for l in arm.links]),
           np.asarray(arm.tool, float), mount, np.asarray(arm.mount, float))
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


def tool_frames(arm: ArmSpec, q: np.ndarray) -> np.ndarray:
    """(n, 4, 4) the tool frames of :func:`tool_in_base` as homogeneous transforms."""
    rot, pos = tool_in_base(arm, q)
    out = np.zeros((len(q), 4, 4))
    out[:, :3, :3], out[:, :3, 3], out[:, 3, 3] = rot, pos, 1.0
    return out


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
