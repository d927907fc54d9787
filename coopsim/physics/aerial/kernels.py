"""numba kernels of the ``aerial`` engine (:mod:`coopsim.physics.aerial.engine` states the rules).

One step is one pass over the rows: :func:`step_rows` (serial) or :func:`step_rows_parallel`
(``prange``), both inlining :func:`_row`, so a row comes out alike from either and at any thread
count: row i reads and writes only row i. No libm function is called (platforms' ``sin`` may
round differently): sine and cosine come from :func:`_sinc_cos` (series and angle doubling),
and ``sqrt`` is correctly rounded everywhere. No ``fastmath``: nothing is reordered or fused.

Row layouts (float64): ``state`` (N, 13) :data:`coopsim.physics.engine.STATE3D`; ``wrench``
(N, 6) force (N) and torque (N m), body frame; ``cmd`` (N, 3) a ground row's command (forward
m/s, -, yaw rate rad/s; or vx, vy m/s world, yaw rate); ``param`` (N, 7) :data:`MASS`,
:data:`IXX`, :data:`IYY`, :data:`IZZ` (kg, kg m^2), :data:`CLEAR` (ground clearance, m),
:data:`RADIUS` (m), :data:`MU` (ground friction); ``kind`` (N,) int64 :data:`IDLE`,
:data:`DIFFERENTIAL`, :data:`VELOCITY` (ground rows) or :data:`FREE`; ``half`` (2,) the floor's
half length and half width, m.

Each row is checked after its step (:func:`_health`, :mod:`coopsim.model.health`'s bounds)
and, when it diverged, put back at its pose at the step's start, at rest: one row's divergence
never reaches another, and nothing is copied for it.
"""

from __future__ import annotations

import math

from ...model.compiled import jit, prange
from ...model.threads import kernel_threads
from ...model.health import ALTITUDE, BEYOND, CEILING, DEPTH, MAX_RATE, MAX_SPEED, NONFINITE, OK, \
    OUTSIDE, RATE, SPEED
from ...model.specs import GRAVITY

IDLE, DIFFERENTIAL, VELOCITY, FREE = 0, 1, 2, 3  # kinds of row
MASS, IXX, IYY, IZZ, CLEAR, RADIUS, MU = range(7)  # param columns
SERIES = 0.5  # rad: angles up to this take sin and cos from their series (error < 1e-18)
HALVINGS = 64  # an angle is halved at most this often (inf and nan leave the loop at once)
# Rows from which numba's threads share a step (coopsim.model.threads chooses how many): below,
# waking them costs more than the pass. Tests set it lower.
PARALLEL_MIN = 4096
CHUNK = 512  # rows a thread takes at a time


def threads(n: int):
    """Within: the kernels share ``n`` rows among numba's threads when that pays."""
    return kernel_threads(n, PARALLEL_MIN, CHUNK)


@jit(inline=True)
def _sinc_cos(h):
    """sin(h) / h and cos(h) of an angle h (rad) in plain arithmetic: the series (to h^14)
    of h halved until |h| <= SERIES, then doubled back (sin 2a = 2 sin a cos a)."""
    y, k = h, 0
    while abs(y) > SERIES and k < HALVINGS:
        y *= 0.5
        k += 1
    y2 = y * y
    sinc = 1.0 - y2 / 6.0 * (1.0 - y2 / 20.0 * (1.0 - y2 / 42.0 * (1.0 - y2 / 72.0 * (
        1.0 - y2 / 110.0 * (1.0 - y2 / 156.0 * (1.0 - y2 / 210.0))))))
    cos = 1.0 - y2 / 2.0 * (1.0 - y2 / 12.0 * (1.0 - y2 / 30.0 * (1.0 - y2 / 56.0 * (
        1.0 - y2 / 90.0 * (1.0 - y2 / 132.0 * (1.0 - y2 / 182.0))))))
    if k == 0:
        return sinc, cos
    sin = sinc * y
    for _ in range(k):
        sin, cos = 2.0 * sin * cos, cos * cos - sin * sin
    return sin / h, cos


@jit(inline=True)
def _turn(qw, qx, qy, qz, wx, wy, wz, h):
    """Quaternion (qw, qx, qy, qz) turned for ``h`` s at body rates (wx, wy, wz) rad/s: times
    the exact rotation by |w| h about w (as MuJoCo's ``mju_quatIntegrate``), normalised."""
    n = math.sqrt(wx * wx + wy * wy + wz * wz)
    sinc, cw = _sinc_cos(0.5 * n * h)
    k = sinc * (0.5 * h)  # sin(|w| h / 2) / |w|: no division, so w = 0 is no special case
    dx, dy, dz = k * wx, k * wy, k * wz
    rw = qw * cw - qx * dx - qy * dy - qz * dz
    rx = qw * dx + qx * cw + qy * dz - qz * dy
    ry = qw * dy - qx * dz + qy * cw + qz * dx
    rz = qw * dz + qx * dy - qy * dx + qz * cw
    norm = math.sqrt(rw * rw + rx * rx + ry * ry + rz * rz)
    return rw / norm, rx / norm, ry / norm, rz / norm


@jit(inline=True)
def _walls(s, i, r, half):
    """Clamp row i's x and y onto the floor (its radius r from each wall), stopping the
    velocity into a wall it touches."""
    for a in range(2):
        lo, hi = r - half[a], half[a] - r
        if s[i, a] < lo:
            s[i, a] = lo
            if s[i, 7 + a] < 0.0:
                s[i, 7 + a] = 0.0
        elif s[i, a] > hi:
            s[i, a] = hi
            if s[i, 7 + a] > 0.0:
                s[i, 7 + a] = 0.0


@jit(inline=True)
def _velocities(s, i, w, p, dt):
    """Row i's velocities after ``dt`` s under body-frame wrench ``w`` and gravity
    (semi-implicit Euler: forces at the step's start); returns them (world v, body w)."""
    qw, qx, qy, qz = s[i, 3], s[i, 4], s[i, 5], s[i, 6]
    fx, fy, fz = w[i, 0], w[i, 1], w[i, 2]
    gx = (1.0 - 2.0 * (qy * qy + qz * qz)) * fx + 2.0 * (qx * qy - qw * qz) * fy \
        + 2.0 * (qx * qz + qw * qy) * fz
    gy = 2.0 * (qx * qy + qw * qz) * fx + (1.0 - 2.0 * (qx * qx + qz * qz)) * fy \
        + 2.0 * (qy * qz - qw * qx) * fz
    gz = 2.0 * (qx * qz - qw * qy) * fx + 2.0 * (qy * qz + qw * qx) * fy \
        + (1.0 - 2.0 * (qx * qx + qy * qy)) * fz
    m = p[i, MASS]
    vx, vy, vz = s[i, 7] + gx / m * dt, s[i, 8] + gy / m * dt, s[i, 9] + (gz / m - GRAVITY) * dt
    ax, ay, az = p[i, IXX], p[i, IYY], p[i, IZZ]
    wx, wy, wz = s[i, 10], s[i, 11], s[i, 12]
    lx, ly, lz = ax * wx, ay * wy, az * wz  # angular momentum, body frame
    ex = (w[i, 3] - (wy * lz - wz * ly)) / ax  # Euler: I w' = tau - w x I w
    ey = (w[i, 4] - (wz * lx - wx * lz)) / ay
    ez = (w[i, 5] - (wx * ly - wy * lx)) / az
    return vx, vy, vz, wx + ex * dt, wy + ey * dt, wz + ez * dt


@jit(inline=True)
def _free_row(i, s, w, p, half, dt):
    """Row i, a free body: dynamics, the floor, the walls (see the engine's rules)."""
    vx, vy, vz, wx, wy, wz = _velocities(s, i, w, p, dt)
    clear = p[i, CLEAR]
    z = s[i, 2] + vz * dt
    if z < clear:  # it lands (or rests): no speed into the floor, Coulomb friction
        z = clear
        dv = 0.0
        if vz < 0.0:
            dv, vz = -vz, 0.0
        budget = p[i, MU] * dv  # m/s the floor's friction impulse takes off
        wx, wy = 0.0, 0.0
        speed = math.sqrt(vx * vx + vy * vy)
        if speed > budget:
            keep = (speed - budget) / speed
            vx, vy = vx * keep, vy * keep
        else:
            vx, vy = 0.0, 0.0
        spin = abs(wz) * p[i, RADIUS]
        if spin > budget:
            wz = wz * ((spin - budget) / spin)
        else:
            wz = 0.0
    s[i, 0] += vx * dt
    s[i, 1] += vy * dt
    s[i, 2] = z
    s[i, 3], s[i, 4], s[i, 5], s[i, 6] = _turn(s[i, 3], s[i, 4], s[i, 5], s[i, 6],
                                               wx, wy, wz, dt)
    s[i, 7], s[i, 8], s[i, 9], s[i, 10], s[i, 11], s[i, 12] = vx, vy, vz, wx, wy, wz
    _walls(s, i, p[i, RADIUS], half)


@jit(inline=True)
def _ground_row(i, s, cmd, kind, p, half, dt):
    """Row i, a ground robot: its planar command for ``dt`` s (differential: along the exact
    arc; velocity: straight), the walls; velocity reported as displacement / dt."""
    x0, y0 = s[i, 0], s[i, 1]
    k = kind[i]
    turn = cmd[i, 2] if k != IDLE else 0.0
    sinc, c = _sinc_cos(0.25 * turn * dt)  # a quarter of the step's turn
    sz = sinc * (0.25 * turn * dt)
    qw, qz = s[i, 3], s[i, 6]
    mw, mz = qw * c - qz * sz, qw * sz + qz * c  # half-way through the turn
    if k == DIFFERENTIAL:
        chord = cmd[i, 0] * dt * (sinc * c)  # sinc of the half turn: sinc(a) cos(a) of a
        s[i, 0] += chord * (mw * mw - mz * mz)
        s[i, 1] += chord * (2.0 * mw * mz)
    elif k == VELOCITY:
        s[i, 0] += cmd[i, 0] * dt
        s[i, 1] += cmd[i, 1] * dt
    rw, rz = mw * c - mz * sz, mw * sz + mz * c
    norm = math.sqrt(rw * rw + rz * rz)
    s[i, 3], s[i, 4], s[i, 5], s[i, 6] = rw / norm, 0.0, 0.0, rz / norm
    s[i, 7], s[i, 8] = 0.0, 0.0
    _walls(s, i, p[i, RADIUS], half)
    s[i, 7], s[i, 8], s[i, 9] = (s[i, 0] - x0) / dt, (s[i, 1] - y0) / dt, 0.0
    s[i, 10], s[i, 11], s[i, 12] = 0.0, 0.0, turn


@jit(inline=True)
def _health(s, i, half):
    """Row i's first broken bound (coopsim.model.health: OK = 0) and its value; every
    comparison is written so that NaN breaks it."""
    total = 0.0
    for c in range(13):
        total += s[i, c]
    if not total - total == 0.0:  # NaN or infinite somewhere (inf - inf is NaN)
        return NONFINITE, 0.0
    top = max(abs(s[i, 7]), abs(s[i, 8]), abs(s[i, 9]))
    if not top <= MAX_SPEED:
        return SPEED, top
    top = max(abs(s[i, 10]), abs(s[i, 11]), abs(s[i, 12]))
    if not top <= MAX_RATE:
        return RATE, top
    if not (s[i, 2] >= -DEPTH and s[i, 2] <= CEILING):
        return ALTITUDE, s[i, 2]
    reach = max(abs(s[i, 0]) - half[0], abs(s[i, 1]) - half[1])
    if not reach <= BEYOND:
        return OUTSIDE, reach
    return OK, 0.0


@jit(inline=True)
def _row(i, s, w, cmd, p, kind, half, dt):
    if kind[i] == FREE:
        _free_row(i, s, w, p, half, dt)
    else:
        _ground_row(i, s, cmd, kind, p, half, dt)


@jit(inline=True)
def _checked(i, s, half, bad, what, start):
    """Row i after its step: when it diverged, put back at its pose at the step's start
    (``start[i]``), at rest, and ``bad[i]`` says why (0: it did not); returns 1 if it did."""
    code, value = _health(s, i, half)
    bad[i] = code
    if code == OK:
        return 0
    what[i] = value
    for c in range(7):
        s[i, c] = start[i, c]
    for c in range(7, 13):
        s[i, c] = 0.0
    return 1


# Two kernels, the step's and the check's: the check fused into the step's loop made the step
# twice as long at 10,000 rows, and its loop after the step's in the same kernel still half as
# long again (the compiler optimises the step's loop less beside it), apart 1.2-1.25x
# (measured once by a one-off script, divergence_check.py, removed after f92fabb3). A row's start is not copied for the check: the engine
# keeps two state buffers and the step reads each row from the last step's (``start``) into
# the other, 13 values already in the cache, instead of a separate pass copying the whole state.

@jit(counted=False)
def planar(s, out):
    """``out`` (N, 6) = the planar projection of the (N, 13) rows ``s`` (aerial._planar's
    arithmetic, libm's atan2: numpy's SIMD arctan2 may round an ulp apart)."""
    for i in range(len(s)):
        qw, qx, qy, qz = s[i, 3], s[i, 4], s[i, 5], s[i, 6]
        out[i, 0], out[i, 1] = s[i, 0], s[i, 1]
        out[i, 2] = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
        out[i, 3], out[i, 4] = s[i, 7], s[i, 8]
        out[i, 5] = 2.0 * (qx * qz - qw * qy) * s[i, 10] + 2.0 * (qy * qz + qw * qx) * s[i, 11] \
            + (1.0 - 2.0 * (qx * qx + qy * qy)) * s[i, 12]


@jit(counted=False)
def step_rows(s, w, cmd, p, kind, half, dt, start):
    """One step of ``dt`` s of every row from ``start`` into ``s``, on the calling thread."""
    for i in range(len(s)):
        for c in range(13):
            s[i, c] = start[i, c]
        _row(i, s, w, cmd, p, kind, half, dt)


@jit(parallel=True)
def step_rows_parallel(s, w, cmd, p, kind, half, dt, start):
    """:func:`step_rows` with the rows shared among numba's threads."""
    for i in prange(len(s)):
        for c in range(13):
            s[i, c] = start[i, c]
        _row(i, s, w, cmd, p, kind, half, dt)


@jit(counted=False)
def check_rows(s, half, bad, what, start):
    """Every row checked after its step (:func:`_checked`); returns how many diverged. A
    first pass that writes nothing counts them (the usual answer, 0, costs a tenth of what a
    pass writing ``bad`` does); only then are ``bad`` and ``what`` written, rows put back."""
    n = 0
    for i in range(len(s)):
        n += 0 if _health(s, i, half)[0] == OK else 1
    if n == 0:
        return 0
    n = 0
    for i in range(len(s)):
        n += _checked(i, s, half, bad, what, start)
    return n


@jit(parallel=True)
def check_rows_parallel(s, half, bad, what, start):
    """:func:`check_rows` with the rows shared among numba's threads."""
    n = 0
    for i in prange(len(s)):
        n += 0 if _health(s, i, half)[0] == OK else 1
    if n == 0:
        return 0
    n = 0
    for i in prange(len(s)):
        n += _checked(i, s, half, bad, what, start)
    return n


@jit(counted=False)
def wrench_rows(engine, rows, drive):
    """A composed call's drive (:mod:`coopsim.sim.compose`): robots ``rows``' ``drive`` (n, 6)
    body-frame force (N) and torque (N m) into the engine's wrench (``engine``:
    :meth:`~coopsim.physics.aerial.fused.AerialFused.arrays`), as
    :meth:`~coopsim.physics.aerial.engine.AerialEngine.apply_wrench` sets them. False, and
    nothing written, when a value is not finite (that method refuses it: the caller hands
    the drive to it for its sentence)."""
    for i in range(len(rows)):
        for k in range(6):
            if not drive[i, k] - drive[i, k] == 0.0:  # NaN or infinite
                return False
    wrench = engine[2]
    for i in range(len(rows)):
        for k in range(6):
            wrench[rows[i], k] = drive[i, k]
    return True


@jit(counted=False)
def step_checked(engine, edge):
    """A composed call's step (:mod:`coopsim.sim.compose`): every row stepped and checked on
    the calling thread (:func:`step_rows`, :func:`check_rows` on ``engine``:
    :meth:`~coopsim.physics.aerial.fused.AerialFused.arrays`); returns how many rows diverged
    and were put back. ``edge`` is not read (the rows' own check covers the floor)."""
    s, start, wrench, cmd, p, kind, half, dt, bad, what = engine
    step_rows(s, wrench, cmd, p, kind, half, dt, start)
    return check_rows(s, half, bad, what, start)


def step(s, w, cmd, p, kind, half, dt: float, bad, what, start) -> int:
    """One step of every row from ``start`` (N, 13, the state at the step's start, left as it
    is) into ``s`` (N, 13, its contents before ignored): the parallel kernel from
    :data:`PARALLEL_MIN` rows on (when more than one thread may run), else the serial one; the
    same bits either way. Returns how many rows diverged and were put back at their pose at
    the step's start (``start``'s), at rest: then ``bad`` (N,) int64 says why each
    (coopsim.model.health's codes, 0: it did not; unwritten when none diverged), ``what`` (N,)
    the offending value (only where ``bad`` is not 0). The caller drops a diverged row's
    wrench."""
    from ...model.threads import parallel

    if parallel(len(s), PARALLEL_MIN):
        with threads(len(s)):
            step_rows_parallel(s, w, cmd, p, kind, half, dt, start)
            return int(check_rows_parallel(s, half, bad, what, start))
    step_rows(s, w, cmd, p, kind, half, dt, start)
    return int(check_rows(s, half, bad, what, start))

