"""What the flying modules (``rotors``, ``imu``, ``mocap``, ``altimeter``, ``pose``) share:
the compiled kernels of the sensors (their ``kernel_sense``, the ``ModuleKernel`` contract of
:mod:`coopsim.model.kernel`; the rotors' are in :mod:`coopsim.swarm.flight_kernels`) and how
their noise draws.

State: a module keeps its per-robot state (the imu's last velocity, time and biases, the
rotors' propeller speeds) in its per-kind state table (``frame.state(label)``,
:mod:`coopsim.model.kernel`): arrays indexed by the frame's robot rows, so a kernel reads and
writes them in place with no gather by name. The composed step (:mod:`coopsim.sim.compose`)
calls these same kernels.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.compiled import jit, warmer
from ...model.quaternion_kernels import rotate
from ...model.specs import GRAVITY


def columns(p, names: tuple) -> tuple[np.ndarray, int]:
    """Where each noise parameter ``names`` draws in a row of normals: (len(names),) int64
    first columns (-1 for a parameter that is 0 for every robot: it draws nothing), and the
    row's width (3 normals per parameter drawn). The kernels work the same columns out of
    their parameter matrix (:func:`_column`)."""
    zero = p.zero if hasattr(p, "zero") else frozenset(k for k, v in p.items() if not v.any())
    cols, width = [], 0
    for name in names:
        cols.append(-1 if name in zero else width)
        width += 0 if name in zero else 3
    return np.array(cols, dtype=np.int64), width


# -- kernels ------------------------------------------------------------------------------------
# The kinds' kernel_sense (coopsim.model.capability_kinds.ModuleKernel): views (what the kind's
# kernel_views name), rows (n,) int64 the frame rows measured, params (n, P) in the kind's
# params order, state (its state table's arrays, then seen; () for none), normals (n, k),
# uniforms (n,) or empty, prev (n, width), out (n, width). ``s`` is every robot's (N, 13)
# STATE3D; state tables are (N, ...) indexed by frame row too, so nothing is gathered. No
# fused multiply-adds (numba contracts none without fastmath): the bits of numpy's arithmetic.



@jit(inline=True)
def _column(params, j, drawn, width):
    """(the first column in a row of normals of noise parameter ``params[:, j]``, -1 when it
    draws none: 0 for every row or nothing ``drawn``; the row's width after it): 3 normals a
    parameter drawn, as :func:`columns` lays them out."""
    if drawn:
        for k in range(params.shape[0]):
            if params[k, j] != 0.0:
                return width, width + 3
    return -1, width


@jit(inline=True)
def _noise_lost(out, params, j_noise, j_lost, normals, uniforms, prev):
    """The base ``Module.measure``'s noise and lost data, operation for operation: ``out`` +=
    ``normals`` times each row's ``params[:, j_noise]`` (when drawn), then the rows whose
    uniform * 100 is under their ``params[:, j_lost]`` (%) keep ``prev``."""
    if normals.shape[1]:
        for k in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[k, j] = out[k, j] + normals[k, j] * params[k, j_noise]
    _lost(out, params, j_lost, uniforms, prev)


@jit(inline=True)
def _lost(out, params, j_lost, uniforms, prev):
    """The rows whose uniform * 100 is under their ``params[:, j_lost]`` (%) keep ``prev``."""
    if len(uniforms):
        for k in range(out.shape[0]):
            if uniforms[k] * 100.0 < params[k, j_lost]:
                for j in range(out.shape[1]):
                    out[k, j] = prev[k, j]


@jit(inline=True)
def _clipped(v, top):
    """``v`` within [0, ``top``] as ``np.clip`` makes it (NaN goes through)."""
    if v != v:
        return v
    v = v if v > 0.0 else 0.0
    return v if v < top else top


@jit(inline=True)
def _imu_part(out, i, c0, bias, r, b0, normals, walk_col, noise_col, walk, noise, h):
    """The noise and bias walk of one sensor (3 values from column c0 of ``out[i]``)."""
    if walk_col >= 0:
        for k in range(3):
            bias[r, b0 + k] += normals[i, walk_col + k] * (walk * math.sqrt(h))
    if noise_col >= 0:
        for k in range(3):
            out[i, c0 + k] += normals[i, noise_col + k] * (noise / math.sqrt(h))


# the imu's parameter columns (Imu.params' order)
ACCEL_NOISE, GYRO_NOISE, ACCEL_WALK, GYRO_WALK, IMU_LOST = 0, 1, 2, 3, 4


@jit(counted=False)
def imu_sense(views, rows, params, state, normals, uniforms, prev, out):
    """The ``imu`` module's ``kernel_sense`` (coopsim.plugins.modules.imu): the readings of
    robots ``rows`` into ``out`` (n, 6), its state table updated in place.

    Args:
        views: (full_state (N, 13) every robot's STATE3D, clock (2,) the step's time and
            length, s).
        params: (n, 6) accel_noise, gyro_noise, accel_walk, gyro_walk, lost, rate.
        state: (last_v (N, 3) m/s, last_t (N,) s, bias (N, 6), seen (N,) bool).
        normals: (n, k) standard normals: 3 for each of the accelerometer's walk, its noise,
            the gyroscope's walk, its noise that is not 0 for every row (none: noiseless).
        uniforms: (n,) for lost data, or empty. prev: (n, 6) the last readings.
    """
    s, clock = views
    last_v, last_t, bias, seen = state
    time, dt = clock[0], clock[1]
    drawn = normals.shape[1] > 0
    accel_walk, width = _column(params, ACCEL_WALK, drawn, 0)
    accel_noise, width = _column(params, ACCEL_NOISE, drawn, width)
    gyro_walk, width = _column(params, GYRO_WALK, drawn, width)
    gyro_noise, width = _column(params, GYRO_NOISE, drawn, width)
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
        _imu_part(out, i, 0, bias, r, 0, normals, accel_walk, accel_noise,
                  params[i, ACCEL_WALK], params[i, ACCEL_NOISE], hh)
        _imu_part(out, i, 3, bias, r, 3, normals, gyro_walk, gyro_noise,
                  params[i, GYRO_WALK], params[i, GYRO_NOISE], hh)
        for k in range(6):
            out[i, k] += bias[r, k]
        last_v[r, 0], last_v[r, 1], last_v[r, 2] = s[r, 7], s[r, 8], s[r, 9]
        last_t[r] = time
        seen[r] = True
    _lost(out, params, IMU_LOST, uniforms, prev)


@jit(inline=True)
def _turned(out, i, t0, t1, t2):
    """Row i's quaternion ``out[i, 3:7]`` times the rotation of the body-frame rotation vector
    (t0, t1, t2), renormalised, w >= 0."""
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


MOCAP_NOISE, MOCAP_ANGLE_NOISE, MOCAP_LOST = 0, 1, 2  # Mocap.params' columns


@jit(counted=False)
def mocap_sense(views, rows, params, state, normals, uniforms, prev, out):
    """The ``mocap`` module's ``kernel_sense``: the readings of robots ``rows`` into ``out``
    (n, 7): the pose of ``views[0]`` (full_state, (N, 13)), the quaternion in the w >= 0
    hemisphere, then its noise (``params`` (n, 4) noise m, angle_noise rad, lost %, rate;
    ``normals`` 3 for each of the two noises that is not 0 for every row, none: noiseless)
    and lost data (``uniforms``, ``prev``)."""
    s = views[0]
    drawn = normals.shape[1] > 0
    c0, width = _column(params, MOCAP_NOISE, drawn, 0)
    c1, width = _column(params, MOCAP_ANGLE_NOISE, drawn, width)
    for i in range(len(rows)):
        r = rows[i]
        sign = -1.0 if s[r, 3] < 0 else 1.0
        for k in range(3):
            out[i, k] = s[r, k]
        for k in range(3, 7):
            out[i, k] = s[r, k] * sign
        if c0 >= 0:
            for k in range(3):
                out[i, k] += normals[i, c0 + k] * params[i, MOCAP_NOISE]
        if c1 >= 0:
            a = params[i, MOCAP_ANGLE_NOISE]
            _turned(out, i, normals[i, c1] * a, normals[i, c1 + 1] * a, normals[i, c1 + 2] * a)
    _lost(out, params, MOCAP_LOST, uniforms, prev)


@jit(inline=True)
def floor_range(s, r, top):
    """The altimeter's range (m) of the body of state row ``s[r]`` to the floor at z = 0
    along its -z axis: its height over the cosine of its tilt, ``top`` when farther or when
    the axis points at or above the horizon."""
    x, y = s[r, 4], s[r, 5]
    down = 1.0 - 2.0 * (x * x + y * y)
    height = max(s[r, 2], 0.0)
    hit = height / down if down > 1e-9 else math.inf
    return min(hit, top)


ALTI_TOP, ALTI_NOISE, ALTI_LOST = 0, 1, 2  # Altimeter.params' columns


@jit(counted=False)
def altimeter_sense(views, rows, params, state, normals, uniforms, prev, out):
    """The ``altimeter`` module's ``kernel_sense``: the ranges (m) of robots ``rows`` into
    ``out`` (n, 1): ``views`` (full_state (N, 13), below (n,)): the core's cast from the
    underside where the engine casts in 3D (``below`` not empty), else to the floor
    (:func:`floor_range`); then its noise (``params`` (n, 4) max_range m, noise m, lost %,
    rate; ``normals`` (n, 1) or none) and lost data, within [0, max_range]."""
    s, below = views
    cast = len(below) > 0
    for i in range(len(rows)):
        out[i, 0] = below[i] if cast else floor_range(s, rows[i], params[i, ALTI_TOP])
    _noise_lost(out, params, ALTI_NOISE, ALTI_LOST, normals, uniforms, prev)
    for i in range(len(rows)):
        out[i, 0] = _clipped(out[i, 0], params[i, ALTI_TOP])


@jit(counted=False)
def pose(s, rows, out):
    """The ``pose`` module's noiseless readings (x, y, z m, yaw rad) of robots ``rows``."""
    for i in range(len(rows)):
        r = rows[i]
        w, x, y, z = s[r, 3], s[r, 4], s[r, 5], s[r, 6]
        out[i, 0], out[i, 1], out[i, 2] = s[r, 0], s[r, 1], s[r, 2]
        out[i, 3] = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def _load() -> None:
    """Compile (or load from numba's cache) the kernels with one robot, their arguments as the
    modules' (coopsim.model.kernel: what a kernel only reads is read-only), noiseless and
    noisy."""
    s, rows, clock = np.zeros((1, 13)), np.zeros(1, np.int64), _frozen(np.zeros(2))
    s[0, 3] = 1.0
    s = _frozen(s)
    for k, lost in ((0, False), (3, True)):
        z = _frozen(np.zeros((1, k)))
        u = _frozen(np.zeros(1 if lost else 0))
        imu_sense((s, clock), rows, _frozen(np.zeros((1, 6))),
                  (np.zeros((1, 3)), np.zeros(1), np.zeros((1, 6)), np.zeros(1, bool)),
                  z, u, _frozen(np.zeros((1, 6))), np.zeros((1, 6)))
        mocap_sense((s,), rows, _frozen(np.zeros((1, 4))), (), z, u, _frozen(np.zeros((1, 7))),
                    np.zeros((1, 7)))
        for below in (_frozen(np.zeros(0)), _frozen(np.ones(1))):
            altimeter_sense((s, below), rows, _frozen(np.full((1, 4), 4.0)), (),
                            _frozen(np.zeros((1, min(k, 1)))), u, _frozen(np.zeros((1, 1))),
                            np.zeros((1, 1)))
    pose(s, rows, np.zeros((1, 4)))


def _frozen(arr: np.ndarray) -> np.ndarray:
    """``arr`` made read-only."""
    arr.setflags(write=False)
    return arr


WARM = warmer(_load, labels=("imu", "mocap", "altimeter"))  # loaded with a run using them
