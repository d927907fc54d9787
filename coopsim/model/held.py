"""Held poses (external robots in 3D): the quaternion arithmetic that interpolates a
streamed pose, gives the velocity that carries a body from one pose to the next in a step, and
moves a held body along that velocity with no force on it.

Poses are ``(x, y, z, qw, qx, qy, qz)`` (m, a unit quaternion from the body frame to the world
frame); states are :data:`coopsim.physics.engine.STATE3D`'s 13 columns: the pose, the linear
velocity (m/s, world frame) and the angular velocity (rad/s, **body** frame, as MuJoCo's free
joint and the ``aerial`` engine keep it). numpy only.
"""

from __future__ import annotations

import math

import numpy as np

#: How far a quaternion's norm may be from 1 and still be taken (normalised), before it is
#: refused as not a rotation (error 14).
QUAT_TOLERANCE = 0.1


def yaw_quat(yaw: float) -> tuple:
    """(qw, qx, qy, qz) of a turn of ``yaw`` rad about world z."""
    return math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)


def quat_mul(a, b) -> np.ndarray:
    """The Hamilton product a b of (..., 4) quaternions (w first)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    w1, x1, y1, z1 = np.moveaxis(a, -1, 0)
    w2, x2, y2, z2 = np.moveaxis(b, -1, 0)
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                     w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)


def _exp(rotvec) -> np.ndarray:
    """The unit quaternion of a rotation vector (n, 3) (axis times angle, rad)."""
    rotvec = np.asarray(rotvec, dtype=float).reshape(-1, 3)
    angle = np.linalg.norm(rotvec, axis=1)
    half = angle / 2
    # sin(half)/angle, with its limit 1/2 at 0 (no division by zero for a body at rest)
    k = np.where(angle > 1e-12, np.sin(half) / np.where(angle > 1e-12, angle, 1.0), 0.5)
    return np.column_stack([np.cos(half), rotvec * k[:, None]])


def _qmul(a, b) -> tuple:
    """The Hamilton product of two quaternions as tuples (w first): one pose's arithmetic in
    plain floats (a few microseconds, where numpy's call costs more than the sum)."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def _turn(q0, q1) -> tuple:
    """The rotation vector (body frame of q0, rad) of the short turn from q0 to q1."""
    w, x, y, z = _qmul((q0[0], -q0[1], -q0[2], -q0[3]), q1)
    if w < 0:  # q and -q are one attitude: the short way round
        w, x, y, z = -w, -x, -y, -z
    s = math.sqrt(x * x + y * y + z * z)
    k = 2 * math.atan2(s, w) / s if s > 1e-12 else 2.0
    return x * k, y * k, z * k


def slerp(q0, q1, f: float) -> tuple:
    """The attitude a fraction ``f`` (0..1) of the short way from unit ``q0`` to ``q1``."""
    if q0 == q1:  # the usual case of a stream that does not turn: nothing to work out
        return tuple(q0)
    rx, ry, rz = (f * v for v in _turn(q0, q1))
    angle = math.sqrt(rx * rx + ry * ry + rz * rz)
    k = math.sin(angle / 2) / angle if angle > 1e-12 else 0.5
    return _qmul(q0, (math.cos(angle / 2), rx * k, ry * k, rz * k))


def lerp_pose(a, b, f: float) -> tuple:
    """The pose a fraction ``f`` of the way from pose ``a`` to ``b``: the position along the
    straight line, the attitude by :func:`slerp`."""
    return (a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), a[2] + f * (b[2] - a[2]),
            *slerp(a[3:], b[3:], f))


def carrying(a, b, dt: float) -> tuple:
    """The 13-value state that carries a body from pose ``a`` to pose ``b`` in ``dt`` s with
    no force on it: pose ``a``, the world velocity (b - a) / dt and the body-frame angular
    velocity of the turn from a's attitude to b's, over dt."""
    w = _turn(a[3:], b[3:])
    return (*a, (b[0] - a[0]) / dt, (b[1] - a[1]) / dt, (b[2] - a[2]) / dt,
            w[0] / dt, w[1] / dt, w[2] / dt)


def advance(states, dt: float) -> np.ndarray:
    """(n, 13) states ``dt`` s on with no force: each position moved at its velocity, each
    attitude turned at its (body-frame, constant) angular velocity; velocities kept."""
    s = np.array(states, dtype=float).reshape(-1, 13)
    s[:, :3] += s[:, 7:10] * dt
    q = quat_mul(s[:, 3:7], _exp(s[:, 10:13] * dt))
    s[:, 3:7] = q / np.linalg.norm(q, axis=1, keepdims=True)
    return s


def planar(states) -> np.ndarray:
    """(n, 6) x, y, yaw, vx, vy, yaw rate of (n, 13) states (the yaw of the body's x axis,
    the angular velocity's world z part): what a 2D engine holds of them."""
    s = np.asarray(states, dtype=float).reshape(-1, 13)
    w, x, y, z = s[:, 3], s[:, 4], s[:, 5], s[:, 6]
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    # the body-frame rate's world z part: the third row of the rotation matrix times it
    r20, r21, r22 = 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)
    rate = r20 * s[:, 10] + r21 * s[:, 11] + r22 * s[:, 12]
    return np.column_stack([s[:, 0], s[:, 1], yaw, s[:, 7], s[:, 8], rate])
