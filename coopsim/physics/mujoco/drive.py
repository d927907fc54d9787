"""The mujoco engine's robots in rows (:mod:`coopsim.physics.mujoco.engine`): per-layout index
arrays and commands, and what the commands become every substep.

A ground robot's drive is a force and a torque that bring its velocity (world frame, m/s and
rad/s) to the commanded one within the substep, capped by its member's ``max_force`` (N) and
``max_torque`` (N m) as pymunk's drive joints are; the force and torque come from the
planar inertia of its x, y and yaw together (:func:`planar_inertia`), so a base whose mass
sits off its turning axis (pybullet's racecar, ahead of its rear axle) does not turn or
slide aside; a flyer's wrench, held in its body frame (N, N m), is turned into the world
frame by its orientation at the substep's start.
"""

from __future__ import annotations

import math

import numpy as np

from . import bodies as mbt
from . import health as mh
from . import state as ms
from .build import DIFFERENTIAL, Body


class Rows:
    """Per-layout index arrays of the robots, in robot order, and their commands."""

    def __init__(self, bodies: list[Body], model) -> None:
        n = len(bodies)
        self.bodies = bodies
        self.ids = np.array([b.id for b in bodies], dtype=np.int64)
        self.free = np.array([b.free for b in bodies], dtype=bool)
        self.grounded = not self.free.all()  # some robot rides the floor (takes no wrench)
        self.qadr = np.array([b.qadr for b in bodies], dtype=np.int64)
        self.dadr = np.array([b.dadr for b in bodies], dtype=np.int64)
        self.z = np.array([b.qpos0_z for b in bodies], dtype=float)
        # a static chassis (an arm's pedestal) stands where it was built: x, y, yaw, z
        self.static = np.array([b.static for b in bodies], dtype=bool)
        self.fixed = np.array([b.qpos[:4] if b.static else np.zeros(4) for b in bodies],
                              dtype=float).reshape(n, 4)
        self.driven = np.flatnonzero([bool(b.drive) and b.kind == "ground" for b in bodies])
        self.ground = self.qadr[self.driven, None] + np.arange(3)  # their x, y, yaw in qpos
        d = self.dadr[self.driven]
        self.inertia = planar_inertia(model, d)
        self.max_force = np.array([bodies[k].max_force for k in self.driven], dtype=float)
        self.max_torque = np.array([bodies[k].max_torque for k in self.driven], dtype=float)
        self.row_of_body = np.full(model.nbody, -1, dtype=np.int64)
        self.row_of_body[self.ids] = np.arange(n)
        self.mode = np.array([b.mode for b in bodies], dtype=np.int64)
        self.cmd = np.array([b.cmd for b in bodies], dtype=float).reshape(n, 3)
        self.wrench = np.array([b.wrench for b in bodies], dtype=float).reshape(n, 6)
        self.flyers = np.flatnonzero(self.free)
        self.movers: mbt.Outlines | None = None  # moving_geometry's bodies, on first use
        self.guard: mh.Guard | None = None  # the divergence guard, made at the first step
        self.states: ms.RobotStates | None = None  # state3d's index arrays, at first use

    def scatter(self) -> None:
        """Hand the commands back to the bodies (the next layout gathers them again)."""
        for k, body in enumerate(self.bodies):
            body.mode, body.cmd, body.wrench = int(self.mode[k]), self.cmd[k].copy(), \
                self.wrench[k].copy()


def planar_inertia(model, dofs: np.ndarray) -> np.ndarray:
    """Each driven base's inertia as its drive feels it within a substep, at qpos0 (yaw 0):
    the 3 x 3 matrix (kg, kg m, kg m^2) that turns a change of its (vx, vy, w) over the
    substep into the force and torque on its x, y and yaw dofs starting at ``dofs``: the
    inverse of M^-1's block of those three dofs, the base's own with its other joints free (a
    described base's arms and head, held by servos, do not follow it within the substep, and
    a gain of the whole robot's inertia overshot and kept PR2's base turning at rest); for a
    one-body chassis the mass matrix's block itself. Its off-diagonal terms are a mass off
    the turning axis: a drive that left them out pushed a racecar's sideways and turning
    motion against each other, an oscillation every substep and a drift aside."""
    import mujoco

    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    # one rigid tree: its mass m, moment about the yaw axis and the mass's offset (cx, cy)
    # from that axis: [[m, 0, -m cy], [0, m, m cx], [-m cy, m cx, moment]]
    mass, moment = model.dof_M0[dofs], model.dof_M0[dofs + 2]
    root = model.jnt_bodyid[model.dof_jntid[dofs]]
    cx, cy = (data.subtree_com[root, :2] - data.xanchor[model.dof_jntid[dofs + 2], :2]).T
    out = np.zeros((len(dofs), 3, 3))
    out[:, 0, 0] = out[:, 1, 1] = mass
    out[:, 0, 2] = out[:, 2, 0] = -mass * cy
    out[:, 1, 2] = out[:, 2, 1] = mass * cx
    out[:, 2, 2] = moment
    jointed = np.flatnonzero(model.tree_dofnum[model.dof_treeid[dofs]] > 3)
    if len(jointed):
        mujoco.mj_crb(model, data)
        mujoco.mj_factorM(model, data)
        for k in jointed:
            first = dofs[k]
            units = np.zeros((3, model.nv))
            units[np.arange(3), first + np.arange(3)] = 1.0
            solved = np.empty((3, model.nv))
            mujoco.mj_solveM(model, data, solved, units)
            out[k] = np.linalg.inv(solved[:, first:first + 3])
    return out


def drive_forces(data, rows: Rows, h: float) -> None:
    """Forces and torques that bring each driven ground robot to its commanded velocity
    within the substep ``h`` (s), capped as pymunk's drive joints are."""
    k = rows.driven
    if not len(k):
        return
    qpos, qvel = data.qpos, data.qvel
    q, d = rows.qadr[k], rows.dadr[k]
    mode, cmd = rows.mode[k], rows.cmd[k]
    yaw = qpos[q + 2]
    diff = mode == DIFFERENTIAL
    vx = np.where(diff, cmd[:, 0] * np.cos(yaw), cmd[:, 0])
    vy = np.where(diff, cmd[:, 0] * np.sin(yaw), cmd[:, 1])
    w = np.where(diff, cmd[:, 1], cmd[:, 2])
    # the planar inertia at this yaw: turned from qpos0's (yaw 0) about z
    c, s = np.cos(yaw), np.sin(yaw)
    turn = np.zeros((len(k), 3, 3))
    turn[:, 0, 0], turn[:, 0, 1], turn[:, 1, 0], turn[:, 1, 1] = c, -s, s, c
    turn[:, 2, 2] = 1.0
    inertia = turn @ rows.inertia @ turn.transpose(0, 2, 1)
    change = np.stack([vx - qvel[d], vy - qvel[d + 1], w - qvel[d + 2]], axis=1) / h
    fx, fy, torque = np.einsum("nij,nj->in", inertia, change)
    scale = np.minimum(1.0, rows.max_force / np.maximum(np.hypot(fx, fy), 1e-300))
    torque = np.clip(torque, -rows.max_torque, rows.max_torque)
    frc = data.qfrc_applied
    frc[d], frc[d + 1], frc[d + 2] = fx * scale, fy * scale, torque

def wrench_forces(data, rows: Rows) -> None:
    """The held body-frame wrenches in the world frame, by each flyer's orientation at the
    start of this substep (from its free joint's quaternion, normalised): a few flyers one by
    one on floats (numpy's calls cost more than their arithmetic), more as arrays, the same
    bits (:func:`.mujoco_state.turn`)."""
    f, out = rows.flyers, data.xfrc_applied
    if len(f) <= ms.FEW:
        qpos = data.qpos
        for row, q, body in zip(f.tolist(), rows.qadr[f].tolist(), rows.ids[f].tolist()):
            w, x, y, z = qpos[q + 3:q + 7].tolist()
            s = math.sqrt(w * w + x * x + y * y + z * z)
            w, x, y, z = w / s, x / s, y / s, z / s
            fx, fy, fz, tx, ty, tz = rows.wrench[row].tolist()
            out[body] = ms.turn(w, x, y, z, fx, fy, fz) + ms.turn(w, x, y, z, tx, ty, tz)
        return
    w, x, y, z = data.qpos[rows.qadr[f, None] + np.arange(3, 7)].T
    s = np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / s, x / s, y / s, z / s
    wrench = rows.wrench[f].T
    out[rows.ids[f]] = np.column_stack(ms.turn(w, x, y, z, *wrench[:3])
                                       + ms.turn(w, x, y, z, *wrench[3:]))
