"""Compiled kernels of the ground robots' kinds (``motors``, ``velocity``, ``odometry``,
``target``, ``bumper``, ``sonar``, ``gps``, ``compass``): a small world's step.

One robot's ``motors`` and ``odometry`` in numpy cost about twenty calls a step, each 0.3-0.7
us on a one-row array: more than the arithmetic. Each kernel here is one call doing a module's
formula robot by robot (no fused multiply-adds: numba contracts none without ``fastmath``).
The kinds' kernels (the ``ModuleKernel`` contract, below) are the one implementation of each
kind: the plain step runs them one by one and the composed step (:mod:`coopsim.sim.compose`)
calls them in one compiled call. The ``target``'s angle is
``math.atan2`` (libm's: numpy's ``arctan2`` may dispatch to SVML on AVX-512 machines and differ
in the last bit).

Frames and units: world frame; m, m/s, rad, rad/s, s.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.compiled import jit, warmer
from ...model.kernel import read_only

_PI = math.pi
_TWO_PI = 2 * math.pi


@jit(inline=True)
def _wrap(a):
    """``coopsim.model.snapshot.wrap_angle`` of one angle: unchanged inside (-pi, pi], else
    ``-((-a + pi) % (2 pi) - pi)`` (Python's modulo, numpy's remainder: the same bits)."""
    if -_PI < a <= _PI or a != a:  # NaN: numpy's keeps its sign, numba's % flips it
        return a
    return -((-a + _PI) % _TWO_PI - _PI)


@jit(inline=True)
def _wheels(vx, vy, wz, c, s, axle):
    """(left, right) actual wheel speeds, m/s, of a chassis moving at ``vx``, ``vy`` (m/s,
    world frame) and turning at ``wz`` (rad/s), heading (``c``, ``s``) = cos, sin of its yaw,
    wheels ``axle`` m apart: forward = vx c + vy s, then -/+ wz axle / 2."""
    forward = vx * c + vy * s
    half = wz * axle / 2
    return forward - half, forward + half


@jit(inline=True)
def _odometry_row(k, yaw, vx, vy, wz, c, s, axle, dt, slip, z0, z1, prev, out):
    """``out[k]`` = the ``odometry`` reading ``prev[k]`` (x, y m, yaw rad, left and right
    travel m) advanced by one step of ``dt`` s of a robot at ``yaw`` (rad; ``c``, ``s`` its
    cos, sin) moving at ``vx``, ``vy``, ``wz`` (world frame, m/s, rad/s): each wheel's travel
    (:func:`_wheels` times dt, times 1 + ``z`` ``slip`` / 100 with the row's normals ``z0``,
    ``z1`` where ``slip`` (%) is not 0), the midpoint rule on the travelled arc, the yaw
    wrapped to (-pi, pi]. A planar base (``axle`` <= 0, no left and right wheel): the step's
    displacement turned into the base's frame at the step's true mid heading (the pose is the
    step's end), then turned by the odometry's own mid heading, as a caster base's controller
    integrates its casters' motion; its travels stay."""
    if axle <= 0:
        dyaw = wz * dt
        true_mid = yaw - dyaw / 2
        tc, ts = math.cos(true_mid), math.sin(true_mid)
        forward = (vx * tc + vy * ts) * dt
        left = (vy * tc - vx * ts) * dt
        mid = prev[k, 2] + dyaw / 2
        mc, ms = math.cos(mid), math.sin(mid)
        out[k, 0] = prev[k, 0] + (forward * mc - left * ms)
        out[k, 1] = prev[k, 1] + (forward * ms + left * mc)
        out[k, 2] = _wrap(prev[k, 2] + dyaw)
        out[k, 3], out[k, 4] = prev[k, 3], prev[k, 4]
        return
    left, right = _wheels(vx, vy, wz, c, s, axle)
    left, right = left * dt, right * dt
    if slip != 0.0:  # (z * slip / 100: the order numpy took)
        left = left * (1.0 + z0 * slip / 100)
        right = right * (1.0 + z1 * slip / 100)
    ds, dyaw = (left + right) * 0.5, (right - left) / axle
    mid = prev[k, 2] + dyaw / 2
    out[k, 0] = prev[k, 0] + ds * math.cos(mid)
    out[k, 1] = prev[k, 1] + ds * math.sin(mid)
    out[k, 2] = _wrap(prev[k, 2] + dyaw)
    out[k, 3] = prev[k, 3] + left
    out[k, 4] = prev[k, 4] + right


@jit(inline=True)
def _drive_one(left, right, max_speed, efficiency, axle):
    """One robot's ``motors`` actuator: (left, right wheel speed, forward speed, yaw rate) from
    its commanded wheel speeds, m/s: clipped to +-``max_speed`` m/s (NaN stays NaN, as
    ``np.clip``) times ``efficiency`` % / 100; forward speed their mean, yaw rate their
    difference over ``axle`` m."""
    share = efficiency / 100.0
    low, high = -max_speed, max_speed
    if not math.isnan(left):  # np.clip's ternaries: the same signed zeros
        left = left if left > low else low
        left = left if left < high else high
    if not math.isnan(right):
        right = right if right > low else low
        right = right if right < high else high
    left, right = left * share, right * share
    return left, right, (left + right) * 0.5, (right - left) / axle


@jit(inline=True)
def _target_row(k, x, y, yaw, targets, out):
    """``out[k]`` = the ``target`` reading of a robot at ``x``, ``y`` (m), ``yaw`` (rad): per
    target (``targets`` (T, 2), m) its distance (``hypot``) and its angle from the heading,
    wrapped to (-pi, pi] (``math.atan2``: libm's, the same bits on every machine, where
    numpy's ``arctan2`` may use SVML's)."""
    for t in range(len(targets)):
        dx, dy = targets[t, 0] - x, targets[t, 1] - y
        out[k, 2 * t] = math.hypot(dx, dy)
        out[k, 2 * t + 1] = _wrap(math.atan2(dy, dx) - yaw)


@jit(inline=True)
def _clip(v, low, high):
    """``np.clip`` of one value: its ternaries (NaN goes through, the same signed zeros)."""
    if v != v:
        return v
    v = v if v > low else low
    return v if v < high else high


@jit(inline=True)
def _cap_row(vx, vy, limit):
    """One vector: scaled to at most ``limit`` long (hypot, then
    np.maximum's and np.minimum's ternaries: NaN goes through as numpy's)."""
    length = math.hypot(vx, vy)
    length = length if (length > 1e-300 or length != length) else 1e-300
    scale = limit / length
    scale = scale if (scale < 1.0 or scale != scale) else 1.0
    return vx * scale, vy * scale


# -- the kinds' kernels (the ModuleKernel contract: coopsim.model.capability_kinds) ----------
# Arguments: views (the frame arrays of kernel_views: every robot's rows, but for dt, targets
# and ranges), rows (int64), params ((len(rows), P) in the kind's params order), state (its
# state table's arrays, then seen; () when it keeps none), then the reading's noise blocks or
# the stored commands. Module.measure's order: the reading, + normals times ``noise``, lost
# rows keep the previous reading, clip.


@jit(inline=True)
def _noise_lost(out, params, normals, uniforms, prev, noise, lost):
    """``out`` += ``normals`` times each row's ``noise`` (``params[:, noise]``), then the rows
    whose uniform * 100 is under their ``lost`` (%, ``params[:, lost]``) keep ``prev``: the
    base ``Module.measure``'s arithmetic, operation for operation (no draw: nothing done)."""
    if normals.shape[1]:
        for k in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[k, j] = out[k, j] + normals[k, j] * params[k, noise]
    if len(uniforms):
        for k in range(out.shape[0]):
            if uniforms[k] * 100.0 < params[k, lost]:
                for j in range(out.shape[1]):
                    out[k, j] = prev[k, j]


@jit()
def gps_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``gps``: x, y of each robot's pose (``views[0]``), m, world frame, with its noise and
    lost data (params: noise m, lost %, rate)."""
    pose = views[0]
    for k in range(len(rows)):
        out[k, 0], out[k, 1] = pose[rows[k], 0], pose[rows[k], 1]
    _noise_lost(out, params, normals, uniforms, prev, 0, 1)


@jit()
def compass_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``compass``: each robot's yaw (``views[0]`` the pose), rad, with its noise and lost
    data (params: noise rad, lost %, rate), wrapped to (-pi, pi]."""
    pose = views[0]
    for k in range(len(rows)):
        out[k, 0] = pose[rows[k], 2]
    _noise_lost(out, params, normals, uniforms, prev, 0, 1)
    for k in range(len(rows)):
        out[k, 0] = _wrap(out[k, 0])


@jit()
def motors_actuate(views, rows, params, state, commands, out, drive):
    """``motors``: ``out`` (n, 2) the wheel speeds driven (the commanded left, right, m/s,
    clipped to +-max_speed, times efficiency %), also kept in its state (``driven`` (N, 2),
    for its reading), ``drive`` (n, 2) the chassis' forward speed, m/s, and yaw rate, rad/s,
    over the wheel separation (views: pose, velocity, axle m); params: max_speed m/s,
    efficiency %."""
    axle = views[2]
    driven, seen = state
    for k in range(len(rows)):
        i = rows[k]
        out[k, 0], out[k, 1], drive[k, 0], drive[k, 1] = _drive_one(
            commands[k, 0], commands[k, 1], params[k, 0], params[k, 1], axle[i])
        driven[i, 0], driven[i, 1], seen[i] = out[k, 0], out[k, 1], True


@jit()
def motors_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``motors``: the wheel speeds driven this step (its state's ``driven``, m/s), then the
    actual ones from the chassis' motion (:func:`_wheels`; views: pose, velocity, axle m)."""
    pose, velocity, axle = views
    driven = state[0]
    for k in range(len(rows)):
        i = rows[k]
        yaw = pose[i, 2]
        out[k, 0], out[k, 1] = driven[i, 0], driven[i, 1]
        out[k, 2], out[k, 3] = _wheels(velocity[i, 0], velocity[i, 1], velocity[i, 2],
                                       math.cos(yaw), math.sin(yaw), axle[i])


@jit()
def velocity_actuate(views, rows, params, state, commands, out, drive):
    """``velocity``: ``drive`` (n, 3) the velocity driven this step (world vx, vy m/s, yaw
    rate rad/s), also kept in its state (``driven`` (N, 3), for its reading) and as ``out``'s
    first three columns (its other three: the reference, ``ref_x``, ``ref_y``, ``tracking``,
    of the stored ``commands`` (n, 6)). From the body's velocity v (views: pose, velocity, dt
    s) towards the command v_c (tracking: v_ff + gain (p_ref - p)) capped at max_speed:
    v + the lag's share 1 - exp(-dt / tau) (1 without a lag) of the gap, that change capped
    at max_accel dt, the result capped at max_speed; the yaw rate through the same lag,
    clipped to +-max_yaw_rate. params: max_speed m/s, max_accel m/s^2, tau s, max_yaw_rate
    rad/s, gain 1/s."""
    pose, now, dt = views[0], views[1], views[2][0]
    driven, seen = state
    for k in range(len(rows)):
        i = rows[k]
        max_speed, max_accel, tau, max_yaw, gain = params[k, 0], params[k, 1], params[k, 2], \
            params[k, 3], params[k, 4]
        alpha = -math.expm1(-dt / tau) if tau > 0 else 1.0
        wx, wy, wz = commands[k, 0], commands[k, 1], commands[k, 2]
        if commands[k, 5] > 0.5:  # tracking: the position loop's command
            wx += gain * (commands[k, 3] - pose[i, 0])
            wy += gain * (commands[k, 4] - pose[i, 1])
        wx, wy = _cap_row(wx, wy, max_speed)
        cx, cy = _cap_row(alpha * (wx - now[i, 0]), alpha * (wy - now[i, 1]), max_accel * dt)
        ox, oy = _cap_row(now[i, 0] + cx, now[i, 1] + cy, max_speed)
        oz = now[i, 2] + alpha * (wz - now[i, 2])
        if not math.isnan(oz):  # np.clip's ternaries: the same signed zeros
            oz = oz if oz > -max_yaw else -max_yaw
            oz = oz if oz < max_yaw else max_yaw
        drive[k, 0], drive[k, 1], drive[k, 2] = ox, oy, oz
        out[k, 0], out[k, 1], out[k, 2] = ox, oy, oz
        out[k, 3], out[k, 4], out[k, 5] = commands[k, 3], commands[k, 4], commands[k, 5]
        driven[i, 0], driven[i, 1], driven[i, 2], seen[i] = ox, oy, oz, True


@jit()
def velocity_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``velocity``: the velocity driven this step (its state's ``driven``: vx, vy m/s world
    frame, yaw rate rad/s), then the body's actual one (views: pose, velocity, dt)."""
    now = views[1]
    driven = state[0]
    for k in range(len(rows)):
        i = rows[k]
        out[k, 0], out[k, 1], out[k, 2] = driven[i, 0], driven[i, 1], driven[i, 2]
        out[k, 3], out[k, 4], out[k, 5] = now[i, 0], now[i, 1], now[i, 2]


@jit()
def odometry_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``odometry``: ``prev`` advanced by this step's wheel travel (:func:`_odometry_row`;
    views: pose, velocity, axle m, dt s), each wheel's slipping by its normal (``normals``
    (n, 2) when some robot's ``slip``, % (params[:, 0]), is not 0)."""
    pose, velocity, axle, dt = views
    slips = normals.shape[1] > 0
    for k in range(len(rows)):
        i = rows[k]
        yaw = pose[i, 2]
        slip, z0, z1 = 0.0, 0.0, 0.0
        if slips:
            slip, z0, z1 = params[k, 0], normals[k, 0], normals[k, 1]
        _odometry_row(k, yaw, velocity[i, 0], velocity[i, 1], velocity[i, 2], math.cos(yaw),
                      math.sin(yaw), axle[i], dt[0], slip, z0, z1, prev, out)


@jit()
def target_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``target``: per target (``views[1]`` (T, 2), m) its distance, m, and angle from the
    heading, rad (:func:`_target_row`; ``views[0]`` the pose), with its noise and lost data
    (params: noise m and rad, lost %, rate)."""
    pose, targets = views
    for k in range(len(rows)):
        i = rows[k]
        _target_row(k, pose[i, 0], pose[i, 1], pose[i, 2], targets, out)
    _noise_lost(out, params, normals, uniforms, prev, 0, 1)


@jit()
def bumper_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``bumper``: the engine's front and rear contact flags (``views[0]`` (N, 2))."""
    contact = views[0]
    for k in range(len(rows)):
        out[k, 0], out[k, 1] = contact[rows[k], 0], contact[rows[k], 1]


@jit()
def sonar_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``sonar``: its fan's distances (``views[0]`` the ``ranges`` (n, K), m, by row k) with
    its noise and lost data, clipped to [0, max_range] (params: max_range m, noise m, lost %,
    rate)."""
    ranges = views[0]
    for k in range(len(rows)):
        for j in range(out.shape[1]):
            out[k, j] = ranges[k, j]
    _noise_lost(out, params, normals, uniforms, prev, 1, 2)
    for k in range(len(rows)):
        for j in range(out.shape[1]):
            out[k, j] = _clip(out[k, j], 0.0, params[k, 0])


def _load_kinds() -> None:
    """Call the kinds' kernels once with the arrays a step hands them: the frame's read-only
    views (coopsim.model.kernel.views_of), the read-only noise blocks (none: (n, 0); the
    odometry's slip: (n, 2)), previous readings and parameters (sense_by_kernel makes every
    array a kernel only reads read-only); the commands read-only (every robot's: a view of
    the table; some robots': their rows taken; :func:`coopsim.model.kernel.read_only`)."""
    ro = read_only
    for n in (1, 2):  # one robot's pose is a contiguous view of the state, several robots' not
        state = ro(np.zeros((n, 6)))
        pose, velocity, rows = state[:, :3], state[:, 3:6], np.arange(n, dtype=np.int64)
        axle, dt, u = ro(np.ones(n)), ro(np.full(1, 0.1)), ro(np.zeros(0))
        motors = (np.zeros((n, 2)), np.zeros(n, dtype=np.bool_))

        def sense(kernel, views, width, p, keep=(), k=(0,)):
            for draws in k:
                kernel(views, rows, ro(np.zeros((n, p))), keep,
                       ro(np.zeros((n, draws))), u, ro(np.zeros((n, width))),
                       np.zeros((n, width)))
        sense(gps_sense, (pose,), 2, 3)
        sense(compass_sense, (pose,), 1, 3)
        sense(motors_sense, (pose, velocity, axle), 4, 2, motors)
        sense(odometry_sense, (pose, velocity, axle, dt), 5, 1, k=(0, 2))
        sense(target_sense, (pose, ro(np.zeros((2, 2)))), 4, 3)
        sense(bumper_sense, (ro(np.zeros((n, 2))),), 2, 1)
        sense(sonar_sense, (ro(np.zeros((n, 11))),), 11, 4)
        motors_actuate((pose, velocity, axle), rows, ro(np.ones((n, 2))), motors,
                       ro(np.zeros((n, 2))), np.zeros((n, 2)), np.zeros((n, 2)))
        held = (np.zeros((n, 3)), np.zeros(n, dtype=np.bool_))
        sense(velocity_sense, (pose, velocity, dt), 6, 5, held)
        velocity_actuate((pose, velocity, dt), rows, ro(np.ones((n, 5))), held,
                         ro(np.zeros((n, 6))), np.zeros((n, 6)), np.zeros((n, 3)))


#: The loader of the kernels above, run with a world using the kinds named
WARM_KINDS = warmer(_load_kinds, labels=("gps", "compass", "motors", "odometry", "target",
                                               "bumper", "sonar", "velocity"))
