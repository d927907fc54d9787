"""Compiled kernels of the arm kinds (``joints``, ``tool``, ``force``, ``gripper``) and of
``pose``: their readings on the ``ModuleKernel`` contract, so that the plan composes them
with the other kinds (:mod:`coopsim.sim.compose`) around the engine's own step.

Each reads the views the core makes for the arms (:mod:`coopsim.model.armviews`: ``arm``,
``arm_chain``, ``wrench``, ``held``, a row per robot) or the state (``pose``, ``state3d``),
robot by robot (no fused multiply-adds: numba contracts none without ``fastmath``), and
applies the kind's noise and lost data as the base ``Module.measure`` does. The tool's forward
kinematics is :func:`coopsim.model.armkernel.tool_poses` on each robot's chain, its sines and
cosines libm's (numpy's on this machine give the same bits; the earlier numpy path took them).

Frames and units: world frame (z up), m, s, rad; the wrench N and N m in the tool frame.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.armkernel import tool_poses
from ...model.arm import MAX_JOINTS
from ...model.compiled import jit
from .kernels import _noise_lost, _wrap

_BIG = np.finfo(np.float64).max


@jit(inline=True)
def _nan_to_num(out):
    """numpy's ``nan_to_num`` of ``out`` in place (NaN 0, +-inf the largest finite)."""
    for k in range(out.shape[0]):
        for j in range(out.shape[1]):
            v = out[k, j]
            if v != v:
                out[k, j] = 0.0
            elif v == np.inf:
                out[k, j] = _BIG
            elif v == -np.inf:
                out[k, j] = -_BIG


@jit()
def joints_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``joints``: per robot its arm's joint count, then the angles (rad), rates (rad/s) and
    drive torques (N m) of its ``MAX_JOINTS`` joints (``views``: ``arm``, ``arm_chain``);
    a robot without an arm reads 0 (and then NaN anywhere reads 0, inf the largest float, as
    numpy's ``nan_to_num`` of the whole reading)."""
    arm, dof = views[0], views[1][0]
    clean = True
    for k in range(len(rows)):
        r = rows[k]
        ok = not (arm[r, 0, 0] != arm[r, 0, 0])
        out[k, 0] = dof[r] if ok else 0.0
        clean = clean and ok
        for i in range(3):
            for j in range(MAX_JOINTS):
                out[k, 1 + i * MAX_JOINTS + j] = arm[r, j, i]
    if not clean:
        _nan_to_num(out)


@jit()
def tool_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``tool``: per robot its tool point (m) and frame (qw, qx, qy, qz: tool to world), world
    frame: the forward kinematics of its arm's angles (``views``: ``arm``, ``arm_chain``,
    ``state3d``) on its body's pose; a robot without an arm (or any robot off a 3D engine)
    reads the origin and the identity."""
    arm, chain, s3 = views[0], views[1], views[2]
    dof, a, b, c, origins, tool, turn, mount = chain
    for k in range(len(rows)):
        out[k, 0], out[k, 1], out[k, 2] = 0.0, 0.0, 0.0
        out[k, 3], out[k, 4], out[k, 5], out[k, 6] = 1.0, 0.0, 0.0, 0.0
    if s3.shape[0] == 0:
        return
    for k in range(len(rows)):
        r = rows[k]
        d = int(dof[r])
        if d == 0:
            continue
        sin, cos = np.empty((1, d)), np.empty((1, d))
        for j in range(d):
            sin[0, j] = math.sin(arm[r, j, 0])
            cos[0, j] = math.cos(arm[r, j, 0])
        tool_poses(a[r, :d], b[r, :d], c[r, :d], origins[r, :d], tool[r], turn[r], mount[r],
                   s3[r:r + 1], sin, cos, out[k:k + 1])


@jit()
def force_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``force``: per robot its wrist's force (N) and torque (N m), tool frame (``views``:
    ``wrench``), with its noise and lost data (params: noise, lost %, rate); robots without an
    arm read 0."""
    wrench = views[0]
    clean = True
    for k in range(len(rows)):
        for j in range(6):
            v = wrench[rows[k], j]
            out[k, j] = v
            clean = clean and (v - v == 0.0)  # finite
    if not clean:
        _nan_to_num(out)
    _noise_lost(out, params, normals, uniforms, prev, 0, 1)


@jit()
def gripper_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``gripper``: per robot 1 and the held object's mass (kg; NaN: not found), or 0 and 0
    (``views``: ``held``)."""
    held = views[0]
    for k in range(len(rows)):
        out[k, 0], out[k, 1] = held[rows[k], 0], held[rows[k], 1]


@jit()
def pose_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``pose``: per robot x, y, z (m) and yaw (rad, of the body's x axis), world frame, from
    its 3D state (``views``: ``pose``, ``state3d``; off a 3D engine the planar pose, z 0),
    with its noise and lost data (params: noise, lost %, rate), the yaw wrapped to (-pi, pi]."""
    pose, s = views[0], views[1]
    for k in range(len(rows)):
        r = rows[k]
        if s.shape[0]:
            w, x, y, z = s[r, 3], s[r, 4], s[r, 5], s[r, 6]
            out[k, 0], out[k, 1], out[k, 2] = s[r, 0], s[r, 1], s[r, 2]
            out[k, 3] = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        else:
            out[k, 0], out[k, 1], out[k, 2], out[k, 3] = pose[r, 0], pose[r, 1], 0.0, pose[r, 2]
    _noise_lost(out, params, normals, uniforms, prev, 0, 1)
    for k in range(len(rows)):
        out[k, 3] = _wrap(out[k, 3])
