"""The ``aerial`` engine's step in numpy: :mod:`coopsim.physics.aerial_kernels` without numba
(``COOPSIM_JIT=numpy`` or numba missing). Every row gets the same floating-point operations in
the same order as there, so the two give the same bits (tests/physics/test_aerial_engine.py);
the branches of the kernels are :func:`numpy.where` selections here. Layouts, units and frames:
see :mod:`coopsim.physics.aerial_kernels`.
"""

from __future__ import annotations

import numpy as np

from .aerial_kernels import (CLEAR, DIFFERENTIAL, FREE, GRAVITY, HALVINGS, IDLE, IXX, IYY, IZZ,
                             MASS, MU, RADIUS, SERIES, VELOCITY)
from ..model.health import ALTITUDE, BEYOND, CEILING, DEPTH, MAX_RATE, MAX_SPEED, NONFINITE, OK, \
    OUTSIDE, RATE, SPEED


def _sinc_cos(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """See ``aerial_kernels._sinc_cos`` (halving by 0.5 is exact, so y = h * 0.5**k)."""
    y, k = h.copy(), np.zeros(len(h), np.int64)
    for _ in range(HALVINGS):
        big = np.abs(y) > SERIES
        if not big.any():
            break
        y[big] *= 0.5
        k[big] += 1
    y2 = y * y
    sinc = 1.0 - y2 / 6.0 * (1.0 - y2 / 20.0 * (1.0 - y2 / 42.0 * (1.0 - y2 / 72.0 * (
        1.0 - y2 / 110.0 * (1.0 - y2 / 156.0 * (1.0 - y2 / 210.0))))))
    cos = 1.0 - y2 / 2.0 * (1.0 - y2 / 12.0 * (1.0 - y2 / 30.0 * (1.0 - y2 / 56.0 * (
        1.0 - y2 / 90.0 * (1.0 - y2 / 132.0 * (1.0 - y2 / 182.0))))))
    top = int(k.max(initial=0))
    if not top:
        return sinc, cos
    sin = sinc * y
    for j in range(top):
        more = k > j
        sin, cos = np.where(more, 2.0 * sin * cos, sin), np.where(more, cos * cos - sin * sin, cos)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(k > 0, sin / h, sinc), cos


def _turn(qw, qx, qy, qz, wx, wy, wz, h: float) -> tuple:
    """See ``aerial_kernels._turn``."""
    n = np.sqrt(wx * wx + wy * wy + wz * wz)
    sinc, cw = _sinc_cos(0.5 * n * h)
    k = sinc * (0.5 * h)
    dx, dy, dz = k * wx, k * wy, k * wz
    rw = qw * cw - qx * dx - qy * dy - qz * dz
    rx = qw * dx + qx * cw + qy * dz - qz * dy
    ry = qw * dy - qx * dz + qy * cw + qz * dx
    rz = qw * dz + qx * dy - qy * dx + qz * cw
    norm = np.sqrt(rw * rw + rx * rx + ry * ry + rz * rz)
    return rw / norm, rx / norm, ry / norm, rz / norm


def _walls(s: np.ndarray, r: np.ndarray, half: np.ndarray) -> None:
    """See ``aerial_kernels._walls`` (``s``: the rows' own copy)."""
    for a in range(2):
        lo, hi = r - half[a], half[a] - r
        below, above = s[:, a] < lo, s[:, a] > hi
        above &= ~below
        s[:, a] = np.where(below, lo, np.where(above, hi, s[:, a]))
        v = s[:, 7 + a]
        s[:, 7 + a] = np.where((below & (v < 0.0)) | (above & (v > 0.0)), 0.0, v)


def _velocities(s: np.ndarray, w: np.ndarray, p: np.ndarray, dt: float) -> tuple:
    """See ``aerial_kernels._velocities``."""
    qw, qx, qy, qz = s[:, 3], s[:, 4], s[:, 5], s[:, 6]
    fx, fy, fz = w[:, 0], w[:, 1], w[:, 2]
    gx = (1.0 - 2.0 * (qy * qy + qz * qz)) * fx + 2.0 * (qx * qy - qw * qz) * fy \
        + 2.0 * (qx * qz + qw * qy) * fz
    gy = 2.0 * (qx * qy + qw * qz) * fx + (1.0 - 2.0 * (qx * qx + qz * qz)) * fy \
        + 2.0 * (qy * qz - qw * qx) * fz
    gz = 2.0 * (qx * qz - qw * qy) * fx + 2.0 * (qy * qz + qw * qx) * fy \
        + (1.0 - 2.0 * (qx * qx + qy * qy)) * fz
    m = p[:, MASS]
    vx, vy, vz = s[:, 7] + gx / m * dt, s[:, 8] + gy / m * dt, \
        s[:, 9] + (gz / m - GRAVITY) * dt
    ax, ay, az = p[:, IXX], p[:, IYY], p[:, IZZ]
    wx, wy, wz = s[:, 10], s[:, 11], s[:, 12]
    lx, ly, lz = ax * wx, ay * wy, az * wz
    ex = (w[:, 3] - (wy * lz - wz * ly)) / ax
    ey = (w[:, 4] - (wz * lx - wx * lz)) / ay
    ez = (w[:, 5] - (wx * ly - wy * lx)) / az
    return vx, vy, vz, wx + ex * dt, wy + ey * dt, wz + ez * dt


def _free(s: np.ndarray, w: np.ndarray, p: np.ndarray, half: np.ndarray, dt: float) -> None:
    """See ``aerial_kernels._free_row`` (``s``: the free rows' own copy, written in place)."""
    vx, vy, vz, wx, wy, wz = _velocities(s, w, p, dt)
    clear = p[:, CLEAR]
    z = s[:, 2] + vz * dt
    floor = z < clear
    down = floor & (vz < 0.0)
    dv = np.where(down, -vz, 0.0)
    vz = np.where(down, 0.0, vz)
    budget = p[:, MU] * dv
    wx, wy = np.where(floor, 0.0, wx), np.where(floor, 0.0, wy)
    speed = np.sqrt(vx * vx + vy * vy)
    slide = speed > budget
    with np.errstate(invalid="ignore", divide="ignore"):
        keep = (speed - budget) / speed
        vx = np.where(floor, np.where(slide, vx * keep, 0.0), vx)
        vy = np.where(floor, np.where(slide, vy * keep, 0.0), vy)
        spin = np.abs(wz) * p[:, RADIUS]
        wz = np.where(floor, np.where(spin > budget, wz * ((spin - budget) / spin), 0.0), wz)
    s[:, 0] += vx * dt
    s[:, 1] += vy * dt
    s[:, 2] = np.where(floor, clear, z)
    s[:, 3], s[:, 4], s[:, 5], s[:, 6] = _turn(s[:, 3], s[:, 4], s[:, 5], s[:, 6],
                                               wx, wy, wz, dt)
    s[:, 7], s[:, 8], s[:, 9], s[:, 10], s[:, 11], s[:, 12] = vx, vy, vz, wx, wy, wz
    _walls(s, p[:, RADIUS], half)


def _ground(s: np.ndarray, cmd: np.ndarray, kind: np.ndarray, p: np.ndarray, half: np.ndarray,
            dt: float) -> None:
    """See ``aerial_kernels._ground_row`` (``s``: the ground rows' own copy)."""
    x0, y0 = s[:, 0].copy(), s[:, 1].copy()
    turn = np.where(kind != IDLE, cmd[:, 2], 0.0)
    sinc, c = _sinc_cos(0.25 * turn * dt)
    sz = sinc * (0.25 * turn * dt)
    qw, qz = s[:, 3], s[:, 6]
    mw, mz = qw * c - qz * sz, qw * sz + qz * c
    diff, vel = kind == DIFFERENTIAL, kind == VELOCITY
    chord = cmd[:, 0] * dt * (sinc * c)
    s[:, 0] = np.where(diff, s[:, 0] + chord * (mw * mw - mz * mz),
                       np.where(vel, s[:, 0] + cmd[:, 0] * dt, s[:, 0]))
    s[:, 1] = np.where(diff, s[:, 1] + chord * (2.0 * mw * mz),
                       np.where(vel, s[:, 1] + cmd[:, 1] * dt, s[:, 1]))
    rw, rz = mw * c - mz * sz, mw * sz + mz * c
    norm = np.sqrt(rw * rw + rz * rz)
    s[:, 3], s[:, 4], s[:, 5], s[:, 6] = rw / norm, 0.0, 0.0, rz / norm
    s[:, 7], s[:, 8] = 0.0, 0.0
    _walls(s, p[:, RADIUS], half)
    s[:, 7], s[:, 8], s[:, 9] = (s[:, 0] - x0) / dt, (s[:, 1] - y0) / dt, 0.0
    s[:, 10], s[:, 11], s[:, 12] = 0.0, 0.0, turn


def step(s, w, cmd, p, kind, half, dt: float, bad, what, start) -> int:
    """One step of every row from ``start`` into ``s``, checked; returns how many rows
    diverged (see ``aerial_kernels.step``)."""
    np.copyto(s, start)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging row's: put back below
        _step(s, w, cmd, p, kind, half, dt)
    code, value = _health(s, half)
    bad[:] = code
    hit = code != OK
    if not hit.any():
        return 0
    what[hit] = value[hit]
    s[hit, :7], s[hit, 7:] = start[hit, :7], 0.0
    return int(hit.sum())


def _health(s: np.ndarray, half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """See ``aerial_kernels._health`` (the same sums, in the same order)."""
    total = s[:, 0].copy()
    for c in range(1, 13):
        total += s[:, c]
    with np.errstate(invalid="ignore"):
        finite = ((total - total) != 0.0, np.zeros(len(s)))  # NaN != 0 too
        speed = np.maximum(np.maximum(np.abs(s[:, 7]), np.abs(s[:, 8])), np.abs(s[:, 9]))
        rate = np.maximum(np.maximum(np.abs(s[:, 10]), np.abs(s[:, 11])), np.abs(s[:, 12]))
        reach = np.maximum(np.abs(s[:, 0]) - half[0], np.abs(s[:, 1]) - half[1])
        tests = (finite, (~(speed <= MAX_SPEED), speed), (~(rate <= MAX_RATE), rate),
                 (~((s[:, 2] >= -DEPTH) & (s[:, 2] <= CEILING)), s[:, 2]),
                 (~(reach <= BEYOND), reach))
    code, value = np.zeros(len(s), np.int64), np.zeros(len(s))
    for k in (OUTSIDE, ALTITUDE, RATE, SPEED, NONFINITE):  # the first broken bound wins
        hit, what = tests[k - 1]
        code[hit], value[hit] = k, what[hit]
    return code, value


def _step(s, w, cmd, p, kind, half, dt: float) -> None:
    """One step of every row, in place, unchecked."""
    free = np.flatnonzero(kind == FREE)
    ground = np.flatnonzero(kind != FREE)
    if len(free):
        rows = s[free]
        _free(rows, w[free], p[free], half, dt)
        s[free] = rows
    if len(ground):
        rows = s[ground]
        _ground(rows, cmd[ground], kind[ground], p[ground], half, dt)
        s[ground] = rows
