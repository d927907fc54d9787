"""What the flying modules (``rotors``, ``imu``, ``mocap``, ``altimeter``, ``pose``) share:
their compiled kernels, the parameter matrices the kernels take, and their noise blocks.

State: a module keeps its per-robot state (the imu's last velocity, time and biases, the
rotors' propeller speeds) in its per-kind state table (``frame.state(label)``,
:mod:`coopsim.model.kernel`): arrays indexed by the frame's robot rows, so a kernel reads and
writes them in place with no gather by name.
"""

from __future__ import annotations

import math

import numpy as np

from ...model import kernel
from ...model.compiled import jit, warmer
from ...model.quaternion_kernels import rotate


_MATRIX: dict = {}  # parameter names -> (the parameter arrays, the matrix built of them)


def matrix(p, names: tuple) -> np.ndarray:
    """(n, len(names)) C-contiguous: parameter arrays ``p[name]`` side by side, built again
    only when ``p`` is another object (a module's parameter arrays are replaced, never
    changed in place, when a parameter changes). The pair is read and replaced whole."""
    built = _MATRIX.get(names)
    if built is None or built[0] is not p:
        built = _MATRIX[names] = (p, np.ascontiguousarray(
            np.column_stack([np.asarray(p[k], dtype=float) for k in names])))
    return built[1]


_NONE = np.zeros((0, 0))


def columns(p, names: tuple) -> tuple[np.ndarray, int]:
    """Where each noise parameter ``names`` draws in a row of normals: (len(names),) int64
    first columns (-1 for a parameter that is 0 for every robot: it draws nothing), and the
    row's width (3 normals per parameter drawn)."""
    zero = p.zero if hasattr(p, "zero") else frozenset(k for k, v in p.items() if not v.any())
    cols, width = [], 0
    for name in names:
        cols.append(-1 if name in zero else width)
        width += 0 if name in zero else 3
    return np.array(cols, dtype=np.int64), width


def normals(frame, label: str, rows, width: int, rng) -> np.ndarray:
    """(len(rows), width) standard normals for a module's noise this step: the sensing
    plan's block for the kind (coopsim.model.kernel.normals), none when ``width`` is 0."""
    if not width or not len(rows):
        return _NONE
    return kernel.normals(frame, label, rows, width, rng)


def dropped(frame, label: str, rows, p, rng) -> np.ndarray | None:
    """(len(rows),) True where a reading is lost this step (the ``lost`` parameter, %), or
    None when no robot loses any."""
    zero = p.zero if hasattr(p, "zero") else frozenset(k for k, v in p.items() if not v.any())
    if "lost" in zero or not len(rows):
        return None
    return kernel.uniforms(frame, label, rows, rng) * 100.0 < p["lost"]


# -- kernels ------------------------------------------------------------------------------------
# Each does per row the floating-point operations of the numpy code it stands for, in the same
# order (libm's atan2, sin, cos may round an ulp apart from numpy's: the tests compare to
# 1e-12). ``s`` is the engine's (N, 13) STATE3D, ``rows`` (n,) int64 the frame rows measured;
# state tables are (N, ...) indexed by frame row too, so nothing is gathered.

GRAVITY = 9.81  # m/s^2 (coopsim.swarm.flight.GRAVITY)


@jit(inline=True)
def _imu_part(out, i, c0, bias, r, b0, normals, walk_col, noise_col, walk, noise, h):
    """The noise and bias walk of one sensor (3 values from column c0 of ``out[i]``)."""
    if walk_col >= 0:
        for k in range(3):
            bias[r, b0 + k] += normals[i, walk_col + k] * (walk * math.sqrt(h))
    if noise_col >= 0:
        for k in range(3):
            out[i, c0 + k] += normals[i, noise_col + k] * (noise / math.sqrt(h))


@jit(counted=False)
def imu(s, rows, time, dt, last_v, last_t, bias, seen, par, cols, normals, out):
    """The ``imu`` module's readings (coopsim.plugins.modules.imu) of robots ``rows`` into
    ``out`` (n, 6), its state tables updated in place.

    Args:
        time: Sim time of the step, s. dt: Its length, s.
        last_v (N, 3) m/s, last_t (N,) s, bias (N, 6), seen (N,) bool: the state tables.
        par: (n, 4) accel_noise, gyro_noise, accel_walk, gyro_walk.
        cols: (4,) int64 the first column in ``normals`` of the accelerometer's walk, its
            noise, the gyroscope's walk, its noise (-1: none drawn, the parameter is 0).
        normals: (n, k) standard normals.
    """
    for i in range(len(rows)):
        r = rows[i]
        h = time - last_t[r] if seen[r] else 0.0
        a = (0.0, 0.0, 0.0)
        if h > 0:
            a = ((s[r, 7] - last_v[r, 0]) / h, (s[r, 8] - last_v[r, 1]) / h,
                 (s[r, 9] - last_v[r, 2]) / h)
        ax, ay, az = rotate(s[r, 3], -s[r, 4], -s[r, 5], -s[r, 6], a[0], a[1], a[2] + GRAVITY)
        out[i, 0], out[i, 1], out[i, 2] = ax, ay, az
        out[i, 3], out[i, 4], out[i, 5] = s[r, 10], s[r, 11], s[r, 12]
        hh = h if h > 0 else dt
        _imu_part(out, i, 0, bias, r, 0, normals, cols[0], cols[1], par[i, 2], par[i, 0], hh)
        _imu_part(out, i, 3, bias, r, 3, normals, cols[2], cols[3], par[i, 3], par[i, 1], hh)
        for k in range(6):
            out[i, k] += bias[r, k]
        last_v[r, 0], last_v[r, 1], last_v[r, 2] = s[r, 7], s[r, 8], s[r, 9]
        last_t[r] = time
        seen[r] = True


@jit(inline=True)
def _turned(out, i, t0, t1, t2):
    """coopsim.plugins.modules.mocap._turned of row i: its quaternion ``out[i, 3:7]`` times the
    rotation of the body-frame rotation vector (t0, t1, t2), renormalised, w >= 0."""
    angle = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    half = angle / 2
    div = angle if angle > 0 else 1.0
    sh = math.sin(half)
    w2, x2, y2, z2 = math.cos(half), t0 / div * sh, t1 / div * sh, t2 / div * sh
    w1, x1, y1, z1 = out[i, 3], out[i, 4], out[i, 5], out[i, 6]
    q = (w1 * w2 - (x1 * x2 + y1 * y2 + z1 * z2),
         w1 * x2 + w2 * x1 + (y1 * z2 - z1 * y2),
         w1 * y2 + w2 * y1 + (z1 * x2 - x1 * z2),
         w1 * z2 + w2 * z1 + (x1 * y2 - y1 * x2))
    norm = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    sign = -1.0 if q[0] / norm < 0 else 1.0
    for k in range(4):
        out[i, 3 + k] = q[k] / norm * sign


@jit(counted=False)
def mocap(s, rows, par, cols, normals, out):
    """The ``mocap`` module's readings of robots ``rows`` into ``out`` (n, 7): the pose, the
    quaternion in the w >= 0 hemisphere, then noise: ``par`` (n, 2) noise, angle_noise;
    ``cols`` (2,) their first columns in ``normals`` (-1: none)."""
    for i in range(len(rows)):
        r = rows[i]
        sign = -1.0 if s[r, 3] < 0 else 1.0
        for k in range(3):
            out[i, k] = s[r, k]
        for k in range(3, 7):
            out[i, k] = s[r, k] * sign
        if cols[0] >= 0:
            for k in range(3):
                out[i, k] += normals[i, cols[0] + k] * par[i, 0]
        if cols[1] >= 0:
            c = cols[1]
            _turned(out, i, normals[i, c] * par[i, 1], normals[i, c + 1] * par[i, 1],
                    normals[i, c + 2] * par[i, 1])


@jit(counted=False)
def altimeter(s, rows, top, out):
    """The ``altimeter`` module's noiseless ranges (m) of robots ``rows`` into ``out`` (n, 1);
    ``top`` (n,) their max_range."""
    for i in range(len(rows)):
        r = rows[i]
        x, y = s[r, 4], s[r, 5]
        down = 1.0 - 2.0 * (x * x + y * y)
        height = max(s[r, 2], 0.0)
        hit = height / down if down > 1e-9 else math.inf
        out[i, 0] = min(hit, top[i])


@jit(counted=False)
def pose(s, rows, out):
    """The ``pose`` module's noiseless readings (x, y, z m, yaw rad) of robots ``rows``."""
    for i in range(len(rows)):
        r = rows[i]
        w, x, y, z = s[r, 3], s[r, 4], s[r, 5], s[r, 6]
        out[i, 0], out[i, 1], out[i, 2] = s[r, 0], s[r, 1], s[r, 2]
        out[i, 3] = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def _load() -> None:
    """Compile (or load from numba's cache) the kernels with one robot."""
    s, rows, one = np.zeros((1, 13)), np.zeros(1, np.int64), np.zeros(1)
    s[0, 3] = 1.0
    s.setflags(write=False)  # as the frames' views of the engine's state are
    imu(s, rows, 0.0, 0.002, np.zeros((1, 3)), one.copy(), np.zeros((1, 6)), np.zeros(1, bool),
        np.zeros((1, 4)), np.full(4, -1, np.int64), _NONE, np.zeros((1, 6)))
    mocap(s, rows, np.zeros((1, 2)), np.full(2, -1, np.int64), _NONE, np.zeros((1, 7)))
    altimeter(s, rows, one + 4.0, np.zeros((1, 1)))
    pose(s, rows, np.zeros((1, 4)))


WARM = warmer(_load)  # loaded with a run, before its first step
