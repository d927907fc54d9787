"""The ``tool`` reading's forward kinematics in one compiled call for many arms of one kind.

:func:`tool_poses` turns joint angles into each arm's tool point and frame in the world (the
arm on its body's pose): per joint R_j(q) = A_j + sin(q) B_j + cos(q) C_j
(:func:`coopsim.model.ikkernel.chain_constants`), chained from the mount, then the quaternion
of the tool's turn (from its largest component, w >= 0). A numpy version of the same chain
costs some 30 small array operations a step whatever the arm count (0.1-0.2 ms at one arm);
the kernel, a few microseconds.

Bits: the kernel's arithmetic is plain IEEE double (no fused multiply-add: numba contracts
nothing without ``fastmath``) and the sines and cosines come from numpy, so the kernel and
its Python source (``tool_poses.py_func``, what runs without numba) give the same bits
(tests/plugins/test_arms_kernel.py). The numpy chain of the earlier ``tool`` module (its
``matmul`` may fuse) differed from them in the last bits.

Frames and units: world frame, metres, radians; quaternions (w, x, y, z).
"""

from __future__ import annotations

import math

import numpy as np

from .compiled import jit


@jit(nogil=True)
def tool_poses(a, b, c, origins, tool, mount_turn, mount, state, sin, cos, out):  # pragma: no cover -- compiled
    """Fill ``out`` (n, 7) with x, y, z (m) and qw, qx, qy, qz of each arm's tool.

    Args:
        a, b, c: (dof, 3, 3) the chain's constant turns (``chain_constants``).
        origins: (dof, 3) each joint's origin in the previous joint's frame, m.
        tool: (3,) the tool point in the last joint's frame, m.
        mount_turn, mount: (3, 3) and (3,) the arm's base in its body's frame.
        state: (n, >= 7) the bodies' x, y, z, qw, qx, qy, qz.
        sin, cos: (n, dof) of the joint angles.
        out: (n, 7) written.
    """
    dof = a.shape[0]
    rot = np.empty((3, 3))
    nxt = np.empty((3, 3))
    turn = np.empty((3, 3))
    body = np.empty((3, 3))
    pos = np.empty(3)
    for r in range(state.shape[0]):
        for i in range(3):
            for k in range(3):
                rot[i, k] = a[0, i, k] + sin[r, 0] * b[0, i, k] + cos[r, 0] * c[0, i, k]
            pos[i] = origins[0, i]
        for j in range(1, dof):
            for i in range(3):
                pos[i] = pos[i] + (rot[i, 0] * origins[j, 0] + rot[i, 1] * origins[j, 1]
                                   + rot[i, 2] * origins[j, 2])
            for i in range(3):
                for k in range(3):
                    turn[i, k] = a[j, i, k] + sin[r, j] * b[j, i, k] + cos[r, j] * c[j, i, k]
            _product(rot, turn, nxt)
            rot[:, :] = nxt
        for i in range(3):
            pos[i] = pos[i] + (rot[i, 0] * tool[0] + rot[i, 1] * tool[1] + rot[i, 2] * tool[2])
        _quat_matrix(state[r, 3], state[r, 4], state[r, 5], state[r, 6], body)
        _product(body, mount_turn, turn)  # the arm's base in the world
        for i in range(3):
            out[r, i] = state[r, i] + (body[i, 0] * mount[0] + body[i, 1] * mount[1]
                                       + body[i, 2] * mount[2]) \
                + (turn[i, 0] * pos[0] + turn[i, 1] * pos[1] + turn[i, 2] * pos[2])
        _product(turn, rot, nxt)
        _matrix_quat(nxt, out[r, 3:7])


@jit(inline=True)
def _product(x, y, out):  # pragma: no cover -- compiled
    """``out`` = ``x`` @ ``y`` (3 x 3), each entry summed left to right (no BLAS call, whose
    cost is more than the product's and whose sums may fuse)."""
    for i in range(3):
        for k in range(3):
            out[i, k] = x[i, 0] * y[0, k] + x[i, 1] * y[1, k] + x[i, 2] * y[2, k]


@jit(inline=True)
def _quat_matrix(w, x, y, z, out):  # pragma: no cover -- compiled
    """The rotation (3 x 3) of a unit quaternion, written to ``out``."""
    out[0, 0], out[0, 1], out[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), \
        2 * (x * z + w * y)
    out[1, 0], out[1, 1], out[1, 2] = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), \
        2 * (y * z - w * x)
    out[2, 0], out[2, 1], out[2, 2] = 2 * (x * z - w * y), 2 * (y * z + w * x), \
        1 - 2 * (x * x + y * y)


@jit(inline=True)
def _matrix_quat(m, q):  # pragma: no cover -- compiled
    """The unit quaternion (w >= 0) of rotation ``m``, from its largest component, to ``q``."""
    a, b, c = m[0, 0], m[0, 1], m[0, 2]
    d, e, f = m[1, 0], m[1, 1], m[1, 2]
    g, h, k = m[2, 0], m[2, 1], m[2, 2]
    cand = (1 + a + e + k, 1 + a - e - k, 1 - a + e - k, 1 - a - e + k)  # 4 w^2, 4 x^2, ...
    big = 0
    for i in range(1, 4):
        if cand[i] > cand[big]:
            big = i
    s = 2.0 * math.sqrt(max(cand[big], 1e-300))  # 4 |the largest component|
    d4 = s * s / 4
    if big == 0:
        w, x, y, z = d4, h - f, c - g, d - b
    elif big == 1:
        w, x, y, z = h - f, d4, b + d, c + g
    elif big == 2:
        w, x, y, z = c - g, b + d, d4, f + h
    else:
        w, x, y, z = d - b, c + g, f + h, d4
    sign = -1.0 if w < 0 else 1.0
    q[0], q[1], q[2], q[3] = sign * w / s, sign * x / s, sign * y / s, sign * z / s


def run(a, b, c, origins, tool, mount_turn, mount, state, q) -> np.ndarray:
    """(n, 7) tool poses of arms at angles ``q`` (n, dof) on bodies ``state`` (n, >= 7):
    :func:`tool_poses`, compiled."""
    out = np.empty((len(q), 7))
    args = (a, b, c, origins, tool, mount_turn, mount, np.ascontiguousarray(state, float),
            np.sin(q), np.cos(q), out)
    tool_poses(*args)
    return out


@jit(nogil=True)
def evaluate_plans(times, points, count, velocity, rates, lo, hi, e, q, qd, done):  # pragma: no cover -- compiled
    """The ``joints`` plans' set points ``e`` (n,) s after their starts: ``q``, ``qd`` (n, J)
    rad and rad/s and ``done`` (n,) whether each is its plan's last, written.

    Clips keep NaN as ``np.clip`` does.

    Args:
        times: (n, P + 1) waypoint times, s (padded with inf); points: (n, P + 1, J) angles.
        count: (n,) waypoints and start; velocity: (n,) bool, a rate command's plan.
        rates, lo, hi: (n, J) a rate command's rates and the joints' limits.
    """
    top = times.shape[1] - 1
    for r in range(e.shape[0]):
        last = min(max(int(count[r]) - 1, 0), top)
        passed = 0
        for k in range(1, top + 1):
            if times[r, k] <= e[r]:
                passed += 1
        end = passed >= last
        i = min(passed, top - 1)
        ta, tb = times[r, i], times[r, i + 1]
        span = 1.0 if end or not math.isfinite(tb) else max(tb - ta, 1e-12)
        frac = (e[r] - ta) / span
        frac = 0.0 if frac < 0.0 else 1.0 if frac > 1.0 else frac
        for j in range(q.shape[1]):
            pa, pb = points[r, i, j], points[r, i + 1, j]
            if velocity[r]:
                v = points[r, 0, j] + rates[r, j] * e[r]
                v = lo[r, j] if v < lo[r, j] else hi[r, j] if v > hi[r, j] else v
                q[r, j] = v
                qd[r, j] = rates[r, j] if lo[r, j] < v < hi[r, j] else 0.0
            elif end:
                q[r, j], qd[r, j] = points[r, last, j], 0.0
            else:
                q[r, j], qd[r, j] = pa + frac * (pb - pa), (pb - pa) / span
        done[r] = end and not velocity[r]
