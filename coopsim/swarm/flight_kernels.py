"""Compiled kernels of the quadrotor cascade (:mod:`coopsim.swarm.flight`): the estimate, the
whole cascade and the X frame's mixer for every quadrotor in one call, and the propellers'
wrench, for the in-process ``flight`` driver and the ``rotors`` module.

Each kernel does, per row, the floating-point operations of the numpy function it stands for in
the same order, so it agrees with it to rounding (libm's ``atan2``, ``asin``, ``sin``, ``cos``,
``hypot`` may differ from numpy's by an ulp; tests/swarm/test_flight_kernels.py compares them
to 1e-12). The 16-bit fixed-point loops (``Gains.fixed_point``) stay on the numpy path.

Importing this module imports numba (when installed): only the simulator side loads it, a
controller process on the swarm library alone never does. Without numba the kernels are plain
Python over the rows (correct, slow): callers test :data:`COMPILED` first.

Units and frames as :mod:`coopsim.swarm.flight`'s. ``fleet`` arrays are (N, 8): mass (kg), arm
(m), kf (N s^2), km (N m s^2), max_speed (rad/s), Ixx, Iyy, Izz (kg m^2); ``gains`` (10,): pos,
vel, vel_i, vel_i_max, att, yaw, rate, rate_yaw, max_tilt, max_rate (:class:`flight.Gains`).
"""

from __future__ import annotations

import math

import numpy as np

from ..model.compiled import jit, numba, warmer
from ..model.errors import SimulationError
from ..model.quaternion_kernels import rotate
from ..model.specs import GRAVITY

MASS, ARM, KF, KM, TOP, IXX = 0, 1, 2, 3, 4, 5  # fleet columns (Izz at IXX + 2)
POS, VEL, VEL_I, VEL_I_MAX, ATT, YAW, RATE, RATE_YAW, MAX_TILT, MAX_RATE = range(10)
ALPHA, BETA = 0.6, 0.15  # the estimate's filter gains (coopsim.swarm.flight.estimate)
SQRT2 = math.sqrt(2.0)
TWO_PI = 2.0 * math.pi

#: True when the kernels are compiled (numba imports: a controller may run without it).
COMPILED = numba is not None


def fleet_array(fleet) -> np.ndarray:
    """(N, 8) the :class:`flight.Fleet`'s columns, as the kernels take them."""
    return np.column_stack((fleet.mass, fleet.arm, fleet.kf, fleet.km, fleet.max_speed,
                            fleet.inertia))


def gains_array(g) -> np.ndarray:
    """(10,) a :class:`flight.Gains`' values, as the kernels take them."""
    return np.array([g.pos, g.vel, g.vel_i, g.vel_i_max, g.att, g.yaw, g.rate, g.rate_yaw,
                     g.max_tilt, g.max_rate], dtype=float)


@jit(inline=True)
def _euler(qw, qx, qy, qz):
    """Roll, pitch, yaw (rad, Z-Y-X) of a unit quaternion (flight.euler)."""
    roll = math.atan2(2 * (qw * qx + qy * qz), 1 - 2 * (qx * qx + qy * qy))
    pitch = math.asin(min(max(2 * (qw * qy - qz * qx), -1.0), 1.0))
    yaw = math.atan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz))
    return roll, pitch, yaw


@jit(inline=True)
def _filter(i, k, p, v, mocap, a, dt, gain):
    """Axis k of row i's alpha-beta filter step (world acceleration ``a``, m/s^2)."""
    pred = p[i, k] + v[i, k] * dt + 0.5 * a * dt * dt
    vpred = v[i, k] + a * dt
    r = mocap[i, k] - pred
    p[i, k] = pred + ALPHA * r
    v[i, k] = vpred + gain * r


@jit(inline=True)
def _estimate(i, p, v, ready, mocap, imu, dt):
    """Row i of flight.estimate, in place."""
    if ready[i] and dt > 0.0:
        ax, ay, az = rotate(mocap[i, 3], mocap[i, 4], mocap[i, 5], mocap[i, 6],
                             imu[i, 0], imu[i, 1], imu[i, 2])
        gain = BETA / max(dt, 1e-9)
        _filter(i, 0, p, v, mocap, ax, dt, gain)
        _filter(i, 1, p, v, mocap, ay, dt, gain)
        _filter(i, 2, p, v, mocap, az - GRAVITY, dt, gain)
    elif not ready[i]:
        for k in range(3):
            p[i, k], v[i, k] = mocap[i, k], 0.0
    ready[i] = True


@jit(inline=True)
def _axis(i, k, g, p, v, ref, integral, dt, cap):
    """Axis k of row i's wanted acceleration (m/s^2, before the caps); the integral updated."""
    error = ref[i, 3 + k] + g[POS] * (ref[i, k] - p[i, k]) - v[i, k]
    integral[i, k] = min(max(integral[i, k] + error * dt, -cap), cap)
    return ref[i, 6 + k] + g[VEL] * error + g[VEL_I] * integral[i, k]


@jit(inline=True)
def _position(i, g, mass, p, v, ref, integral, dt, tan_tilt):
    """Row i of flight.position_loop: the wanted thrust vector (N, world); the integral
    updated in place."""
    cap = g[VEL_I_MAX] / max(g[VEL_I], 1e-9)
    ax = _axis(i, 0, g, p, v, ref, integral, dt, cap)
    ay = _axis(i, 1, g, p, v, ref, integral, dt, cap)
    az = max(_axis(i, 2, g, p, v, ref, integral, dt, cap), -0.8 * GRAVITY)
    horizontal = math.sqrt(ax * ax + ay * ay)  # hypot: the same to an ulp, at half the cost
    limit = (az + GRAVITY) * tan_tilt
    scale = min(1.0, limit / max(horizontal, 1e-12))
    return ax * scale * mass, ay * scale * mass, (az + GRAVITY) * mass


@jit(inline=True)
def _wrapped(a):
    """flight.wrap of one angle."""
    return (a + math.pi) % TWO_PI - math.pi


@jit(inline=True)
def _mix(thrust, tx, ty, tz, arm, kf, km, top, out, i, o=0):
    """Row i of flight.mix: propeller speeds (rad/s) into ``out[i, o:o + 4]``."""
    d4, c4 = 4.0 * arm / SQRT2, 4.0 * km / kf
    t4 = thrust / 4.0
    x, y, z = tx / d4, ty / d4, tz / c4
    most = kf * top ** 2
    f = (t4 - x - y + z, t4 - x + y - z, t4 + x + y + z, t4 + x - y - z)
    for k in range(4):
        out[i, o + k] = min(math.sqrt(min(max(f[k], 0.0), most) / kf), top)


@jit(inline=True)
def _torque(wx, wy, wz, rsp, ix, iy, iz, rate, rate_yaw):
    """flight.rate_loop of one row: body torque (N m) from rate set points ``rsp`` (3-tuple)
    and body rates (rad/s); ``ix``, ``iy``, ``iz`` the principal moments, kg m^2."""
    lx, ly, lz = ix * wx, iy * wy, iz * wz
    return (ix * (rate * (rsp[0] - wx)) + (wy * lz - wz * ly),
            iy * (rate * (rsp[1] - wy)) + (wz * lx - wx * lz),
            iz * (rate_yaw * (rsp[2] - wz)) + (wx * ly - wy * lx))


@jit(inline=True)
def _cascade_row(i, g, fleet, p, v, integral, mocap, gyro, ref, dt, out, tan_tilt):
    """Row i of flight.control (float loops): the propeller speeds into ``out[i]``."""
    mass, kf, top = fleet[i, MASS], fleet[i, KF], fleet[i, TOP]
    fx, fy, fz = _position(i, g, mass, p, v, ref, integral, dt, tan_tilt)
    qw, qx, qy, qz = mocap[i, 3], mocap[i, 4], mocap[i, 5], mocap[i, 6]
    roll, pitch, yaw = _euler(qw, qx, qy, qz)
    bx, by, bz = rotate(qw, qx, qy, qz, 0.0, 0.0, 1.0)
    thrust = min(max(fx * bx + fy * by + fz * bz, 0.0), 4 * kf * top ** 2)
    # cos and sin of the yaw from the two terms its atan2 took (no libm trigonometry; the
    # same to an ulp): yaw = atan2(sy, cy)
    sy, cy = 2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz)
    norm = math.sqrt(sy * sy + cy * cy)
    c, s = (cy / norm, sy / norm) if norm > 0 else (1.0, 0.0)
    hx, hy = c * fx + s * fy, -s * fx + c * fy
    pitch_sp = math.atan2(hx, fz)
    roll_sp = math.atan2(-hy, math.sqrt(hx * hx + fz * fz))
    yaw_rate = ref[i, 10] + g[YAW] * _wrapped(ref[i, 9] - yaw)
    top_rate = g[MAX_RATE]
    rsp = (min(max(g[ATT] * (roll_sp - roll), -top_rate), top_rate),
           min(max(g[ATT] * (pitch_sp - pitch), -top_rate), top_rate), yaw_rate)
    tx, ty, tz = _torque(gyro[i, 0], gyro[i, 1], gyro[i, 2], rsp, fleet[i, IXX],
                         fleet[i, IXX + 1], fleet[i, IXX + 2], g[RATE], g[RATE_YAW])
    _mix(thrust, tx, ty, tz, fleet[i, ARM], kf, fleet[i, KM], top, out, i)


@jit(counted=False)
def cascade(g, fleet, p, v, integral, ready, mocap, imu, ref, dt, out):
    """flight.estimate then flight.control (float loops) for every row, in place.

    Args:
        g: (10,) gains (:func:`gains_array`). fleet: (N, 8) airframes (:func:`fleet_array`).
        p, v, integral: (N, 3) the estimate's position (m), velocity (m/s) and velocity
            integral (m), updated. ready: (N,) bool, updated.
        mocap: (N, 7) readings. imu: (N, 6) readings (accelerometer, gyroscope).
        ref: (N, 11) references (flight.control). dt: Time since the last call, s.
        out: (N, 4) the propeller speeds, rad/s, written.
    """
    gyro = imu[:, 3:6]
    tan_tilt = math.tan(g[MAX_TILT])  # the tilt cap's, once
    for i in range(len(p)):
        _estimate(i, p, v, ready, mocap, imu, dt)
        _cascade_row(i, g, fleet, p, v, integral, mocap, gyro, ref, dt, out, tan_tilt)


@jit(inline=True)
def wrench_row(i, w, arm, kf, km, out, o=0):
    """Row i of flight.wrench: propeller speeds ``w[i, o:o + 4]`` (rad/s) to the body force
    and torque, ``out[i]`` (6: fx, fy, fz N, tx, ty, tz N m, body frame)."""
    d, c = arm / SQRT2, km / kf
    w0, w1, w2, w3 = w[i, o], w[i, o + 1], w[i, o + 2], w[i, o + 3]
    f0, f1, f2, f3 = kf * w0 * w0, kf * w1 * w1, kf * w2 * w2, kf * w3 * w3
    out[i, 0], out[i, 1] = 0.0, 0.0
    out[i, 2] = f0 + f1 + f2 + f3
    out[i, 3] = -d * f0 + -d * f1 + d * f2 + d * f3
    out[i, 4] = -d * f0 + d * f1 + d * f2 + -d * f3
    out[i, 5] = c * f0 + -c * f1 + c * f2 + -c * f3


# -- the rotors module (its ModuleKernel: coopsim.plugins.modules.rotors) ----------------------

# the columns of the module's parameter matrix (Rotors.params' order)
R_MASS, R_ARM, R_KF, R_KM, R_TAU, R_TOP, R_IXX, R_GAIN, R_ATT_GAIN = 0, 1, 2, 3, 4, 5, 6, 9, 10
SANITY_RATE = 50.0  # rad/s (coopsim.plugins.modules.rotors.SANITY_RATE)
SPEEDS = 1  # the first propeller speed's column in a stored command (and in ``out``)


@jit(inline=True)
def _wanted(i, s, r, c, par, out):
    """Row i of Rotors.wanted into ``out[i, SPEEDS:SPEEDS + 4]`` (rad/s): its command ``c[i]``,
    the inner loops closed on the engine's state row ``s[r]``."""
    mode = c[i, 0]
    if mode == 1.0:
        for k in range(4):
            out[i, SPEEDS + k] = c[i, 1 + k]
        return
    if mode != 2.0 and mode != 3.0:
        for k in range(4):
            out[i, SPEEDS + k] = 0.0
        return
    rx, ry, rz = c[i, 2], c[i, 3], c[i, 4]
    if mode == 3.0:  # the attitude loop (unit gain, flight.Gains' max_rate 10) scaled
        roll, pitch, _ = _euler(s[r, 3], s[r, 4], s[r, 5], s[r, 6])
        gain = par[i, R_ATT_GAIN]
        rx = min(max(min(max(rx - roll, -10.0), 10.0) * gain, -SANITY_RATE), SANITY_RATE)
        ry = min(max(min(max(ry - pitch, -10.0), 10.0) * gain, -SANITY_RATE), SANITY_RATE)
    wx, wy, wz = s[r, 10], s[r, 11], s[r, 12]
    gain = par[i, R_GAIN]
    rsp = (wx + (rx - wx) * gain, wy + (ry - wy) * gain, wz + (rz - wz) * gain)
    tx, ty, tz = _torque(wx, wy, wz, rsp, par[i, R_IXX], par[i, R_IXX + 1], par[i, R_IXX + 2],
                         1.0, 0.25)
    _mix(c[i, 1], tx, ty, tz, par[i, R_ARM], par[i, R_KF], par[i, R_KM], par[i, R_TOP], out, i,
         SPEEDS)


@jit(inline=True)
def rotor_row(i, s, rows, c, par, dt, speeds, seen, out, wrench):
    """Row i of :func:`rotors_actuate`: robot ``rows[i]``'s wanted propeller speeds
    (:func:`_wanted`), through the motors' lag from its ``speeds`` (the state table's, updated),
    capped, into ``out[i]`` (its stored command ``c[i]`` as carried out), and its body wrench
    into ``wrench[i]``."""
    r = rows[i]
    _wanted(i, s, r, c, par, out)
    tau, top = par[i, R_TAU], par[i, R_TOP]
    alpha = -math.expm1(-dt / tau) if tau > 0 else 1.0
    for k in range(4):
        now = speeds[r, k]
        v = min(max(now + alpha * (out[i, SPEEDS + k] - now), 0.0), top)
        out[i, SPEEDS + k] = v
        speeds[r, k] = v
    seen[r] = True
    out[i, 0] = c[i, 0]
    for k in range(SPEEDS + 4, c.shape[1]):
        out[i, k] = c[i, k]
    wrench_row(i, out, par[i, R_ARM], par[i, R_KF], par[i, R_KM], wrench, SPEEDS)


@jit(counted=False)
def rotors_actuate(views, rows, params, state, commands, out, drive):
    """The ``rotors`` module's ``kernel_actuate`` for robots ``rows``: each one's wanted
    propeller speeds (its command, the inner loops closed on its state), through the motors'
    lag from its speeds, capped, and its body wrench.

    Args:
        views: (state3d (N, 13) the engine's STATE3D rows, dt (1,) the step, s).
        params: (n, 11) Rotors.params' values. state: (speeds (N, 4) rad/s, seen (N,)): the
            state table's, updated for ``rows``.
        commands: (n, 9) the stored commands. out: (n, 9) the commands as carried out, written:
            ``u1..u4`` the propellers' speeds after the lag (rad/s), the rest as commanded.
        drive: (n, 6) the body force (N) and torque (N m), body frame, written: the engine's
            ``apply_wrench`` takes them.

    Raises:
        SimulationError: no 3D state (an engine without the ``flight`` feature).
    """
    s, step = views
    speeds, seen = state
    if len(rows) and not len(s):
        raise SimulationError("the rotors module needs an engine with the flight feature "
                              "(engine mujoco or aerial): its robots cannot fly in 2D")
    dt = step[0]
    for i in range(len(rows)):
        rotor_row(i, s, rows, commands, params, dt, speeds, seen, out, drive)


@jit(counted=False)
def rotors_sense(views, rows, params, state, normals, uniforms, prev, out):
    """The ``rotors`` module's ``kernel_sense``: ``out`` (n, 5) each robot's propeller speeds
    now (rad/s, the state table's: what the last actuation left) and the collective thrust
    kf sum(w^2), N (numpy's sum of four, left to right). No noise."""
    speeds = state[0]
    for i in range(len(rows)):
        r = rows[i]
        total = speeds[r, 0] * speeds[r, 0]
        for k in range(1, 4):
            total += speeds[r, k] * speeds[r, k]
        for k in range(4):
            out[i, k] = speeds[r, k]
        out[i, 4] = params[i, R_KF] * total


def warm() -> None:
    """Compile (or load from numba's cache) the cascade with one row."""
    one = np.zeros((1, 3))
    fleet = np.array([[0.027, 0.046, 2.22e-8, 1.3e-10, 2500.0, 1.6e-5, 1.6e-5, 2.9e-5]])
    mocap = np.zeros((1, 7))
    mocap[0, 3] = 1.0
    cascade(np.ones(10), fleet, one.copy(), one.copy(), one.copy(), np.zeros(1, bool), mocap,
            np.zeros((1, 6)), np.zeros((1, 11)), 0.002, np.zeros((1, 4)))
    s = np.zeros((1, 13))
    s[0, 3] = 1.0
    step = np.array([0.002])
    par = np.array([[0.027, 0.046, 2.22e-8, 1.3e-10, 0.07, 2500.0, 1.6e-5, 1.6e-5, 2.9e-5,
                     60.0, 12.0]])
    # as the modules' kernels take them: the frame's views, the parameters and commands
    # read-only (coopsim.model.kernel)
    cmd = np.zeros((1, 9))
    for arr in (s, step, par, cmd):
        arr.setflags(write=False)
    state, rows = (np.zeros((1, 4)), np.zeros(1, bool)), np.zeros(1, np.int64)
    rotors_actuate((s, step), rows, par, state, cmd, np.zeros((1, 9)), np.zeros((1, 6)))
    prev = np.zeros((1, 5))
    prev.setflags(write=False)
    rotors_sense((s, step), rows, par, state, _NONE, _NO_U, prev, np.zeros((1, 5)))


_NONE = np.zeros((1, 0))
_NONE.setflags(write=False)
_NO_U = np.zeros(0)
_NO_U.setflags(write=False)
WARM = warmer(warm, labels=("rotors", "flight")) if COMPILED else None  # with a run using them
