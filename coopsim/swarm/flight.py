"""A quadrotor's cascaded flight controller, vectorised over N quadrotors (pure numpy).

The cascade, outer to inner (each a function here; :func:`control` runs them all):

1. **position** (:func:`position_loop`): P on position, PI on velocity and the reference's
   feed-forward acceleration give the wanted acceleration; with gravity and the mass it is the
   wanted thrust vector, its tilt capped at ``max_tilt``;
2. **attitude set points** (:func:`attitude_setpoints`): the collective thrust (the wanted
   vector projected on the body's z axis) and the roll and pitch that point the body's z axis
   along it at the current heading (Z-Y-X Euler angles), plus the yaw-rate set point (the
   reference's yaw rate and a P term on the heading error);
3. **attitude** (:func:`attitude_loop`): P on the roll and pitch errors gives roll and pitch
   rate set points, the yaw rate set point passes;
4. **rates** (:func:`rate_loop`): P on the body-rate errors gives the angular acceleration,
   times the inertia (plus the gyroscopic term w x I w) the body torque;
5. **mixing** (:func:`mix`): collective thrust and torques into four rotor thrusts for an X
   frame, clipped to [0, max thrust], and the propeller speeds sqrt(f / kf).

Frames and units: world frame x, y on the floor, z up (m, m/s, m/s^2); the body frame x forward,
y left, z up; body rates in rad/s about the body axes; quaternions (w, x, y, z) rotate body to
world. Rotor layout of the X frame, seen from above (arm length L from the centre to each
motor, d = L / sqrt 2): rotor 1 front right (+d, -d), 2 back right (-d, -d), 3 back left
(-d, +d), 4 front left (+d, +d); rotors 1 and 3 turn clockwise, 2 and 4 counter-clockwise, so
a rotor's drag torque on the body is +km w^2 about z for 1 and 3 and -km w^2 for 2 and 4.

Fixed point (``Gains.fixed_point``): SwarmSimX's real quadrotors ran their inner loop as
integer code. With the option on, the attitude and rate loops compute as a 16-bit controller
does: angles, angle errors, rate set points and measured rates are stored as Q4.11 (int16 with
11 fractional bits: +-16 rad or rad/s, one step 2^-11 = 4.9e-4), gains as Q8.7 (+-256, step
1/128), and the angular-acceleration command as Q10.5 (+-1024 rad/s^2, step 1/32); each value is
rounded to its grid and saturated at the int16 limits (products are formed wide, as a 32-bit
accumulator does, then rounded back). Everything else stays floating point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.specs import GRAVITY

Q_ANGLE = 11  # fractional bits of angles and rates (Q4.11)
Q_GAIN = 7  # fractional bits of gains (Q8.7)
Q_ACCEL = 5  # fractional bits of the angular-acceleration command (Q10.5)


@dataclass(frozen=True)
class Airframe:
    """What the controller knows of the quadrotor (the ``rotors`` module's parameters).

    Attributes:
        mass: kg. arm: centre to each motor, m. kf: thrust per rotor / w^2, N s^2.
        km: drag torque per rotor / w^2, N m s^2. max_speed: propeller speed cap, rad/s.
        inertia: (Ixx, Iyy, Izz), kg m^2, body frame.
    """

    mass: float
    arm: float
    kf: float
    km: float
    max_speed: float
    inertia: tuple[float, float, float]

    @property
    def max_thrust(self) -> float:
        """Largest thrust of one rotor, N."""
        return self.kf * self.max_speed ** 2


@dataclass(frozen=True)
class Fleet:
    """The airframes of N quadrotors as arrays, what :func:`control` uses every step: built
    once per set of robots (a thousand :class:`Airframe` objects gathered every step cost more
    than the cascade's arithmetic).

    Attributes:
        mass, arm, kf, km, max_speed: (N,) as :class:`Airframe`'s. inertia: (N, 3) kg m^2.
    """

    mass: np.ndarray
    arm: np.ndarray
    kf: np.ndarray
    km: np.ndarray
    max_speed: np.ndarray
    inertia: np.ndarray

    @classmethod
    def of(cls, frames) -> "Fleet":
        """The arrays of a list of :class:`Airframe` (one per quadrotor)."""
        pick = lambda k: np.array([getattr(f, k) for f in frames], dtype=float)  # noqa: E731
        return cls(pick("mass"), pick("arm"), pick("kf"), pick("km"), pick("max_speed"),
                   np.array([f.inertia for f in frames], dtype=float).reshape(-1, 3))


@dataclass(frozen=True)
class Gains:
    """Gains of the cascade (defaults fly a Crazyflie and a 1.5 kg quadrotor alike: they act
    on accelerations, the airframe's mass and inertia scale them).

    Attributes:
        pos: Position P gain, 1/s. vel: Velocity P gain, 1/s. vel_i: Velocity I gain, 1/s^2.
        vel_i_max: Cap of the velocity integral's contribution, m/s^2.
        att: Roll and pitch P gain, 1/s. yaw: Heading P gain, 1/s.
        rate: Body-rate P gain (roll, pitch), 1/s. rate_yaw: Yaw-rate P gain, 1/s.
        max_tilt: Largest commanded tilt from vertical, rad.
        max_rate: Largest roll and pitch rate set point, rad/s.
        fixed_point: Run the attitude and rate loops as 16-bit Q-format code (module doc).
    """

    pos: float = 2.0
    vel: float = 5.0
    vel_i: float = 2.0
    vel_i_max: float = 2.0
    att: float = 12.0
    yaw: float = 3.0
    rate: float = 60.0
    rate_yaw: float = 15.0
    max_tilt: float = 0.6
    max_rate: float = 10.0
    fixed_point: bool = False


# -- fixed point ------------------------------------------------------------------------------

def quantize(x, frac_bits: int) -> np.ndarray:
    """``x`` rounded to a 16-bit Q-format grid with ``frac_bits`` fractional bits and
    saturated at the int16 limits (what storing it in an int16 keeps)."""
    scale = float(1 << frac_bits)
    return np.clip(np.round(np.asarray(x, dtype=float) * scale), -32768, 32767) / scale


def _q(x, bits: int, on: bool):
    return quantize(x, bits) if on else np.asarray(x, dtype=float)


# -- geometry ---------------------------------------------------------------------------------

def euler(q: np.ndarray) -> np.ndarray:
    """(N, 3) roll, pitch, yaw (rad, Z-Y-X) of (N, 4) unit quaternions w, x, y, z."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.column_stack((roll, pitch, yaw))


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (N, 3) arrays (np.cross costs ten times more for small N)."""
    ax, ay, az = a[:, 0], a[:, 1], a[:, 2]
    bx, by, bz = b[:, 0], b[:, 1], b[:, 2]
    return np.column_stack((ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx))


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(N, 3) vectors ``v`` rotated by (N, 4) quaternions ``q`` (body -> world)."""
    u, w = q[:, 1:], q[:, :1]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def rotate_back(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(N, 3) world vectors ``v`` in the body frames of quaternions ``q`` (world -> body)."""
    conj = q * np.array([1.0, -1.0, -1.0, -1.0])
    return rotate(conj, v)


def wrap(a):
    """Angles wrapped to [-pi, pi), rad."""
    return (np.asarray(a) + math.pi) % (2 * math.pi) - math.pi


# -- the loops --------------------------------------------------------------------------------

def position_loop(g: Gains, mass: np.ndarray, p, v, p_ref, v_ref, a_ref, integral,
                  dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The wanted thrust vector (N, 3), N, world frame, and the velocity integral updated.

    Args:
        mass: (N,) kg. p, v: (N, 3) position m and velocity m/s. p_ref, v_ref, a_ref: (N, 3)
            the reference and its derivatives. integral: (N, 3) the velocity error's integral
            so far, m. dt: Time since the last call, s.
    """
    v_want = v_ref + g.pos * (p_ref - p)
    error = v_want - v
    integral = integral + error * dt
    cap = g.vel_i_max / max(g.vel_i, 1e-9)
    integral = np.clip(integral, -cap, cap)  # anti wind-up: the I term stays within its cap
    accel = a_ref + g.vel * error + g.vel_i * integral
    accel[:, 2] = np.maximum(accel[:, 2], -0.8 * GRAVITY)  # never ask to fall freely
    horizontal = np.hypot(accel[:, 0], accel[:, 1])
    limit = (accel[:, 2] + GRAVITY) * math.tan(g.max_tilt)
    scale = np.minimum(1.0, limit / np.maximum(horizontal, 1e-12))
    accel[:, :2] *= scale[:, None]
    accel[:, 2] += GRAVITY
    return accel * mass[:, None], integral


def attitude_setpoints(g: Gains, force: np.ndarray, q: np.ndarray, yaw_ref, yaw_rate_ref,
                       max_total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Collective thrust (N,) N and (N, 3) roll, pitch (rad) and yaw-rate (rad/s) set points.

    Args:
        force: (N, 3) wanted thrust vector, world frame, N. q: (N, 4) attitude.
        yaw_ref, yaw_rate_ref: (N,) the reference heading (rad) and its rate (rad/s).
        max_total: (N,) the four rotors' largest thrust together, N.
    """
    angles = euler(q)
    body_z = rotate(q, np.tile([0.0, 0.0, 1.0], (len(q), 1)))
    thrust = np.clip(np.einsum("ij,ij->i", force, body_z), 0.0, max_total)
    c, s = np.cos(angles[:, 2]), np.sin(angles[:, 2])
    fx, fy = c * force[:, 0] + s * force[:, 1], -s * force[:, 0] + c * force[:, 1]
    pitch = np.arctan2(fx, force[:, 2])
    roll = np.arctan2(-fy, np.hypot(fx, force[:, 2]))
    yaw_rate = yaw_rate_ref + g.yaw * wrap(yaw_ref - angles[:, 2])
    return thrust, np.column_stack((roll, pitch, yaw_rate))


def attitude_loop(g: Gains, setpoint: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(N, 3) body-rate set points, rad/s, from roll, pitch (rad) and yaw-rate set points."""
    fixed = g.fixed_point
    angles = _q(euler(q), Q_ANGLE, fixed)
    want = _q(setpoint, Q_ANGLE, fixed)
    error = _q(want[:, :2] - angles[:, :2], Q_ANGLE, fixed)
    rates = np.empty_like(want)
    rates[:, :2] = _q(float(_q(g.att, Q_GAIN, fixed)) * error, Q_ANGLE, fixed)
    rates[:, :2] = np.clip(rates[:, :2], -g.max_rate, g.max_rate)
    rates[:, 2] = want[:, 2]
    return rates


def rate_loop(g: Gains, inertia: np.ndarray, rates_sp: np.ndarray,
              gyro: np.ndarray) -> np.ndarray:
    """(N, 3) body torques, N m, from body-rate set points and measured rates (rad/s).

    Args:
        inertia: (N, 3) principal moments, kg m^2.
    """
    fixed = g.fixed_point
    want, have = _q(rates_sp, Q_ANGLE, fixed), _q(gyro, Q_ANGLE, fixed)
    error = _q(want - have, Q_ANGLE, fixed)
    gains = np.array([g.rate, g.rate, g.rate_yaw])
    alpha = _q(_q(gains, Q_GAIN, fixed) * error, Q_ACCEL, fixed)
    gyroscopic = cross(gyro, inertia * gyro)
    return inertia * alpha + gyroscopic


def mix_matrix(arm: np.ndarray, kf: np.ndarray, km: np.ndarray) -> np.ndarray:
    """(N, 4, 4) the X frame's map from rotor thrusts (N) to (thrust N, torque x, y, z N m)."""
    d = np.asarray(arm, dtype=float) / math.sqrt(2.0)
    c = np.asarray(km, dtype=float) / np.asarray(kf, dtype=float)
    one = np.ones_like(d)
    return np.stack((np.stack((one, one, one, one), -1),
                     np.stack((-d, -d, d, d), -1),
                     np.stack((-d, d, d, -d), -1),
                     np.stack((c, -c, c, -c), -1)), -2)


def mix(thrust, torque, arm, kf, km, max_speed) -> np.ndarray:
    """(N, 4) propeller speeds (rad/s) giving collective ``thrust`` (N,) N and body ``torque``
    (N, 3) N m on an X frame, each rotor's thrust clipped to [0, kf max_speed^2].

    Args:
        arm, kf, km, max_speed: (N,) or scalars: the airframe (:class:`Airframe`).
    """
    thrust = np.asarray(thrust, dtype=float)
    arm, kf, km = (np.broadcast_to(np.asarray(a, float), thrust.shape) for a in (arm, kf, km))
    d4, c4 = 4.0 * arm / math.sqrt(2.0), 4.0 * km / kf
    t4 = thrust / 4.0
    tx, ty, tz = torque[:, 0] / d4, torque[:, 1] / d4, torque[:, 2] / c4
    f = np.column_stack((t4 - tx - ty + tz, t4 - tx + ty - tz, t4 + tx + ty + tz,
                         t4 + tx - ty - tz))
    top = kf * np.asarray(max_speed, dtype=float) ** 2
    f = np.clip(f, 0.0, np.broadcast_to(top, thrust.shape)[:, None])
    top_speed = np.broadcast_to(np.asarray(max_speed, dtype=float), thrust.shape)
    return np.minimum(np.sqrt(f / kf[:, None]), top_speed[:, None])  # rounding stays within


_MIX: list = [((), None)]  # (the airframes arm, kf, km it was built for, the mix matrix)


def _mix_of(arm: np.ndarray, kf: np.ndarray, km: np.ndarray) -> np.ndarray:
    """:func:`mix_matrix` of these airframes, built again only when they change (a swarm's
    airframes stay the same step after step; stacking the (N, 4, 4) matrix cost more than
    using it). The pair is read and replaced whole: runs in other threads see one or the
    other, never a mix."""
    key, matrix = _MIX[0]
    if len(key) == 3 and key[0].shape == arm.shape and all(
            np.array_equal(a, b) for a, b in zip(key, (arm, kf, km))):
        return matrix
    matrix = mix_matrix(arm, kf, km)
    _MIX[0] = ((arm.copy(), kf.copy(), km.copy()), matrix)
    return matrix


def wrench(speeds: np.ndarray, arm, kf, km) -> tuple[np.ndarray, np.ndarray]:
    """Body force (N, 3) N and torque (N, 3) N m of (N, 4) propeller speeds (rad/s): the
    inverse of :func:`mix` (force along body z only)."""
    f = np.asarray(kf, float).reshape(-1, 1) * speeds * speeds
    out = np.einsum("nij,nj->ni", _mix_of(*(np.broadcast_to(np.asarray(a, float), len(f))
                                            for a in (arm, kf, km))), f)
    force = np.zeros((len(f), 3))
    force[:, 2] = out[:, 0]
    return force, out[:, 1:]


# -- estimation -------------------------------------------------------------------------------

@dataclass
class Estimate:
    """A quadrotor swarm's estimated state, kept by whoever runs the controller.

    Attributes:
        p, v: (N, 3) position (m) and velocity (m/s), world frame.
        integral: (N, 3) the position loop's velocity-error integral, m.
        ready: (N,) whether each has had its first mocap fix.
    """

    p: np.ndarray
    v: np.ndarray
    integral: np.ndarray
    ready: np.ndarray

    @classmethod
    def empty(cls, n: int) -> "Estimate":
        """No fix yet for ``n`` quadrotors."""
        return cls(np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(n, bool))


def estimate(est: Estimate, mocap: np.ndarray, accel: np.ndarray, dt: float,
             alpha: float = 0.6, beta: float = 0.15) -> Estimate:
    """``est`` advanced by ``dt`` s: an alpha-beta filter on the mocap position (N, 7: x, y, z,
    qw, qx, qy, qz) driven by the accelerometer (N, 3, specific force, body frame, m/s^2)."""
    if dt <= 0.0:  # no time passed: no velocity to learn from a residual (it would divide by 0)
        fresh = ~est.ready
        p, v = est.p.copy(), est.v.copy()
        p[fresh], v[fresh] = mocap[fresh, :3], 0.0
        return Estimate(p, v, est.integral, np.ones(len(p), bool))
    q = mocap[:, 3:7]
    a_world = rotate(q, accel) - np.array([0.0, 0.0, GRAVITY])
    p_pred = est.p + est.v * dt + 0.5 * a_world * dt * dt
    v_pred = est.v + a_world * dt
    r = mocap[:, :3] - p_pred
    p = p_pred + alpha * r
    v = v_pred + (beta / max(dt, 1e-9)) * r
    fresh = ~est.ready
    p[fresh], v[fresh] = mocap[fresh, :3], 0.0
    return Estimate(p, v, est.integral, np.ones(len(p), bool))


def control(g: Gains, frame: Airframe | list, est: Estimate, q: np.ndarray, gyro: np.ndarray,
            ref: np.ndarray, dt: float) -> np.ndarray:
    """The whole cascade: (N, 4) propeller speeds (rad/s) for references ``ref``.

    Args:
        frame: One :class:`Airframe` for all, one per quadrotor, or their :class:`Fleet`.
        est: The estimate (its ``integral`` is updated in place).
        q: (N, 4) attitude (mocap). gyro: (N, 3) body rates, rad/s.
        ref: (N, 11) x, y, z (m), vx, vy, vz (m/s), ax, ay, az (m/s^2), yaw (rad), yaw rate
            (rad/s), world frame.
        dt: Time since the last call, s.
    """
    if not isinstance(frame, Fleet):
        frame = Fleet.of(frame if isinstance(frame, (list, tuple)) else [frame] * len(q))
    mass, arm, kf, km, top = frame.mass, frame.arm, frame.kf, frame.km, frame.max_speed
    inertia = frame.inertia
    force, est.integral = position_loop(g, mass, est.p, est.v, ref[:, 0:3], ref[:, 3:6],
                                        ref[:, 6:9], est.integral, dt)
    thrust, setpoint = attitude_setpoints(g, force, q, ref[:, 9], ref[:, 10], 4 * kf * top ** 2)
    rates = attitude_loop(g, setpoint, q)
    torque = rate_loop(g, inertia, rates, gyro)
    return mix(thrust, torque, arm, kf, km, top)


# -- references -------------------------------------------------------------------------------

PLANES = ("horizontal", "vertical")


def eight(s, centre: np.ndarray, size: float, period: float, plane: str = "horizontal",
          yaw0=0.0, yaw_rate: float = 0.0) -> np.ndarray:
    """(N, 11) reference (see :func:`control`) of a figure-eight ``s`` (N,) seconds after it
    started at ``centre`` (N, 3): a lemniscate of Gerono (size sin wt, size/2 sin 2wt), w = 2 pi
    / period, in the x-y plane (``horizontal``) or the x-z plane (``vertical``), while the
    heading turns at ``yaw_rate`` rad/s from ``yaw0`` (as SwarmSimX flew it). ``s`` < 0 holds
    the centre (a hover before the start)."""
    s = np.asarray(s, dtype=float)
    if len(s) <= FEW:
        return _eight_few(s, centre, size, period, plane, yaw0, yaw_rate)
    t = np.maximum(s, 0.0)
    w = 2.0 * math.pi / period
    on = (s >= 0).astype(float)
    a, b = size * np.sin(w * t), 0.5 * size * np.sin(2 * w * t)
    va, vb = on * size * w * np.cos(w * t), on * size * w * np.cos(2 * w * t)
    aa, ab = -size * w * w * np.sin(w * t), -2.0 * size * w * w * np.sin(2 * w * t)
    second = 1 if plane == "horizontal" else 2
    ref = np.zeros((len(t), 11))
    ref[:, 0:3] = centre
    ref[:, 0] += a
    ref[:, second] += b
    ref[:, 3], ref[:, 3 + second] = va, vb
    ref[:, 6], ref[:, 6 + second] = aa, ab
    ref[:, 9] = wrap(np.asarray(yaw0) + yaw_rate * t)
    ref[:, 10] = on * yaw_rate
    return ref


FEW = 8  # quadrotors up to which a reference is worked out on floats, one by one


def _eight_few(s, centre, size, period, plane, yaw0, yaw_rate) -> np.ndarray:
    """:func:`eight` of a few quadrotors on floats: its operations in its order on each
    one's numbers (numpy's sin and cos, called on a float: the same loop as on an array; an
    expression used twice there is computed once here), the same bits without the ~30
    numpy calls (~20 us) of the array path."""
    w = 2.0 * math.pi / period
    second = 1 if plane == "horizontal" else 2
    yaws = np.broadcast_to(np.asarray(yaw0, dtype=float), s.shape).tolist()
    ref = np.zeros((len(s), 11))
    for i, (si, row, y0) in enumerate(zip(s.tolist(), np.asarray(centre).tolist(), yaws)):
        t = si if si > 0.0 or si != si else 0.0  # np.maximum's: +0.0 for -0.0, NaN kept
        on = 1.0 if si >= 0 else 0.0
        wt, wt2 = w * t, 2 * w * t
        s1, s2 = float(np.sin(wt)), float(np.sin(wt2))
        speed = on * size * w
        row[0] += size * s1
        row[second] += 0.5 * size * s2
        out = [*row, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, (y0 + yaw_rate * t + math.pi)
               % (2 * math.pi) - math.pi, on * yaw_rate]  # wrap's (Python's % is numpy's)
        out[3], out[3 + second] = speed * float(np.cos(wt)), speed * float(np.cos(wt2))
        out[6], out[6 + second] = -size * w * w * s1, -2.0 * size * w * w * s2
        ref[i] = out
    return ref


def hover(centre: np.ndarray, yaw=0.0) -> np.ndarray:
    """(N, 11) reference holding ``centre`` (N, 3) m at heading ``yaw`` rad."""
    ref = np.zeros((len(centre), 11))
    ref[:, 0:3] = centre
    ref[:, 9] = yaw
    return ref
