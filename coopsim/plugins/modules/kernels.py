"""Compiled kernels of the ``motors``, ``odometry``, ``target`` and ``velocity`` modules: a small
world's step.

One robot's ``motors`` and ``odometry`` in numpy cost about twenty calls a step, each 0.3-0.7
us on a one-row array: more than the arithmetic. Each kernel here is one call doing a module's
formula robot by robot (no fused multiply-adds: numba contracts none without ``fastmath``).
The modules call them (loaded with a run: :func:`coopsim.model.compiled.warmer`). From
:data:`coopsim.model.threads.ROWS_MIN` robots a kernel shares its rows among numba's threads
(each robot's row is its own: the same bits). The ``target`` module's kernels leave its angle
to numpy's ``arctan2`` (numba's ``atan2`` differs from it in the last bit for some arguments).

Frames and units: world frame; m, m/s, rad, rad/s, s.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.compiled import jit, prange, warmer
from ...model.threads import by_rows

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
def _wheel_row(i, velocity, heading, axle, out, c=0):
    forward = velocity[i, 0] * heading[i, 0] + velocity[i, 1] * heading[i, 1]
    half = velocity[i, 2] * axle[i] / 2
    out[i, c] = forward - half
    out[i, c + 1] = forward + half


@jit()
def _wheel_speeds(velocity, heading, axle, out):
    """``out`` (N, 2) = each robot's left, right wheel speed, m/s, from its ``velocity`` (N, 3)
    vx, vy (world) and yaw rate, ``heading`` (N, 2) cos, sin of its yaw and ``axle`` (N,) m:
    forward = vx cos + vy sin, and -/+ yaw rate * axle / 2."""
    for i in range(len(out)):
        _wheel_row(i, velocity, heading, axle, out)


@jit(parallel=True)
def _wheel_speeds_threads(velocity, heading, axle, out):
    """:func:`_wheel_speeds` on the threads."""
    for i in prange(len(out)):
        _wheel_row(np.int64(i), velocity, heading, axle, out)


@jit()
def _motors_reading(driven, velocity, heading, axle, out):
    """The ``motors`` reading of every robot: ``out`` (N, 4) = the wheel speeds ``driven``
    (N, 2) this step, then the actual ones (:func:`_wheel_speeds`), m/s."""
    for i in range(len(out)):
        out[i, 0], out[i, 1] = driven[i, 0], driven[i, 1]
        _wheel_row(i, velocity, heading, axle, out, 2)


@jit(parallel=True)
def _motors_reading_threads(driven, velocity, heading, axle, out):
    """:func:`_motors_reading` on the threads."""
    for i in prange(len(out)):
        out[i, 0], out[i, 1] = driven[i, 0], driven[i, 1]
        _wheel_row(np.int64(i), velocity, heading, axle, out, 2)


@jit(inline=True)
def _odometry_row(i, speeds, axle, dt, prev, out):
    left, right = speeds[i, 0] * dt, speeds[i, 1] * dt
    ds, dyaw = (left + right) * 0.5, (right - left) / axle[i]
    mid = prev[i, 2] + dyaw / 2
    out[i, 0] = prev[i, 0] + ds * math.cos(mid)
    out[i, 1] = prev[i, 1] + ds * math.sin(mid)
    out[i, 2] = _wrap(prev[i, 2] + dyaw)
    out[i, 3] = prev[i, 3] + left
    out[i, 4] = prev[i, 4] + right


@jit()
def _odometry(speeds, axle, dt, prev, out):
    """``out`` (N, 5) = ``prev`` (x, y, yaw, left and right travel) advanced by one step of
    ``dt`` s at wheel ``speeds`` (N, 2) m/s: the midpoint rule on the travelled arc, the yaw
    wrapped to (-pi, pi]."""
    for i in range(len(out)):
        _odometry_row(i, speeds, axle, dt, prev, out)


@jit(parallel=True)
def _odometry_threads(speeds, axle, dt, prev, out):
    """:func:`_odometry` on the threads."""
    for i in prange(len(out)):
        _odometry_row(np.int64(i), speeds, axle, dt, prev, out)


@jit(inline=True)
def _drive_one(left, right, max_speed, efficiency, axle):
    """One robot's ``motors`` actuator: (left, right wheel speed, forward speed, yaw rate) from
    its commanded wheel speeds, m/s (see :func:`_drive`)."""
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
def _drive_row(i, commands, max_speed, efficiency, axle, wheels, twist):
    wheels[i, 0], wheels[i, 1], twist[i, 0], twist[i, 1] = _drive_one(
        commands[i, 0], commands[i, 1], max_speed[i], efficiency[i], axle[i])


@jit()
def _drive(commands, max_speed, efficiency, axle, wheels, twist):
    """The ``motors`` actuator: ``wheels`` (N, 2) = the commanded speeds (N, 2) m/s clipped to
    +-``max_speed`` (N,) (NaN stays NaN, as ``np.clip``) times ``efficiency`` (N,) % / 100;
    ``twist`` (N, 2) = the chassis' forward speed (the wheels' mean) and yaw rate (their
    difference over ``axle`` (N,) m)."""
    for i in range(len(wheels)):
        _drive_row(i, commands, max_speed, efficiency, axle, wheels, twist)


@jit(parallel=True)
def _drive_threads(commands, max_speed, efficiency, axle, wheels, twist):
    """:func:`_drive` on the threads."""
    for i in prange(len(wheels)):
        _drive_row(np.int64(i), commands, max_speed, efficiency, axle, wheels, twist)


@jit(inline=True)
def _offsets_row(i, pose, targets, offsets, out):
    for t in range(len(targets)):
        dx, dy = targets[t, 0] - pose[i, 0], targets[t, 1] - pose[i, 1]
        offsets[0, i, t], offsets[1, i, t] = dx, dy
        out[i, t, 0] = math.hypot(dx, dy)


@jit()
def _target_offsets(pose, targets, offsets, out):
    """For each robot's ``pose`` (N, 3) and target (T, 2), m: ``offsets`` (2, N, T) = the
    target's x and y less the robot's, ``out[:, :, 0]`` (``out`` (N, T, 2)) = its distance
    (``hypot``; numba's is numpy's, bit for bit)."""
    for i in range(len(pose)):
        _offsets_row(i, pose, targets, offsets, out)


@jit(parallel=True)
def _target_offsets_threads(pose, targets, offsets, out):
    """:func:`_target_offsets` on the threads."""
    for i in prange(len(pose)):
        _offsets_row(np.int64(i), pose, targets, offsets, out)


@jit()
def _target_bearings(angles, pose, out):
    """``out[:, :, 1]`` = each target's world-frame angle ``angles`` (N, T) less the robot's
    yaw, wrapped to (-pi, pi], rad (the world angle is numpy's ``arctan2``: numba's atan2
    differs from it in the last bit for some arguments)."""
    for i in range(len(pose)):
        for t in range(angles.shape[1]):
            out[i, t, 1] = _wrap(angles[i, t] - pose[i, 2])


@jit(parallel=True)
def _target_bearings_threads(angles, pose, out):
    """:func:`_target_bearings` on the threads."""
    for i in prange(len(pose)):
        for t in range(angles.shape[1]):
            out[i, t, 1] = _wrap(angles[i, t] - pose[i, 2])


@jit(inline=True)
def _cap_row(vx, vy, limit):
    """One vector: scaled to at most ``limit`` long (hypot, then
    np.maximum's and np.minimum's ternaries: NaN goes through as numpy's)."""
    length = math.hypot(vx, vy)
    length = length if (length > 1e-300 or length != length) else 1e-300
    scale = limit / length
    scale = scale if (scale < 1.0 or scale != scale) else 1.0
    return vx * scale, vy * scale


@jit(inline=True)
def _velocity_row(k, i, commands, pose, now, p, alpha, dt, out):
    max_speed, max_accel, max_yaw, gain = p[0][k], p[1][k], p[2][k], p[3][k]
    wx, wy, wz = commands[k, 0], commands[k, 1], commands[k, 2]
    if commands[k, 5] > 0.5:  # tracking: the position loop's command
        wx += gain * (commands[k, 3] - pose[i, 0])
        wy += gain * (commands[k, 4] - pose[i, 1])
    wx, wy = _cap_row(wx, wy, max_speed)
    cx, cy = _cap_row(alpha[k] * (wx - now[i, 0]), alpha[k] * (wy - now[i, 1]), max_accel * dt)
    ox, oy = _cap_row(now[i, 0] + cx, now[i, 1] + cy, max_speed)
    oz = now[i, 2] + alpha[k] * (wz - now[i, 2])
    if not math.isnan(oz):  # np.clip's ternaries: the same signed zeros
        oz = oz if oz > -max_yaw else -max_yaw
        oz = oz if oz < max_yaw else max_yaw
    out[k, 0], out[k, 1], out[k, 2] = ox, oy, oz


@jit()
def _velocity(commands, rows, pose, now, p, alpha, dt, out):
    """The ``velocity`` actuator: ``out`` (n, 3) = the velocity driven this step (world frame,
    m/s, rad/s) for robots ``rows`` (n,) of ``pose`` and ``now`` (N, 3, the engine's velocity)
    with stored ``commands`` (n, 6), parameters ``p`` (four (n,) arrays: max_speed m/s,
    max_accel m/s^2, max_yaw_rate rad/s, gain 1/s) and lag factors ``alpha`` (n,) over ``dt`` s: the command
    (or the position loop's) capped at max_speed, the lag's change capped at max_accel dt,
    the result capped again, the yaw rate clipped (``velocity.Velocity.actuate``'s numpy,
    operation for operation)."""
    for k in range(len(out)):
        _velocity_row(k, rows[k], commands, pose, now, p, alpha, dt, out)


@jit(parallel=True)
def _velocity_threads(commands, rows, pose, now, p, alpha, dt, out):
    """:func:`_velocity` on the threads."""
    for k in prange(len(out)):
        _velocity_row(np.int64(k), rows[k], commands, pose, now, p, alpha, dt, out)


# -- the kinds' kernels (the ModuleKernel contract: coopsim.model.capability_kinds) ----------
# Arguments: views (the frame arrays of kernel_views, every robot's rows), rows (int64), params
# ((len(rows), P) in the kind's params order), state (its state table: () here), then the
# reading's noise blocks or the stored commands. Module.measure's order: the reading, + normals
# times ``noise``, lost rows keep the previous reading, clip.


@jit(inline=True)
def _noise_lost(out, params, normals, uniforms, prev):
    """``out`` += ``normals`` times each row's ``noise`` (``params[:, 0]``), then the rows whose
    uniform * 100 is under their ``lost`` (%, ``params[:, 1]``) keep ``prev``: the base
    ``Module.measure``'s arithmetic, operation for operation (no draw: nothing done)."""
    if normals.shape[1]:
        for k in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[k, j] = out[k, j] + normals[k, j] * params[k, 0]
    if len(uniforms):
        for k in range(out.shape[0]):
            if uniforms[k] * 100.0 < params[k, 1]:
                for j in range(out.shape[1]):
                    out[k, j] = prev[k, j]


@jit()
def gps_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``gps``: x, y of each robot's pose (``views[0]``), m, world frame, with its noise and
    lost data (params: noise m, lost %, rate)."""
    pose = views[0]
    for k in range(len(rows)):
        out[k, 0], out[k, 1] = pose[rows[k], 0], pose[rows[k], 1]
    _noise_lost(out, params, normals, uniforms, prev)


@jit()
def compass_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``compass``: each robot's yaw (``views[0]`` the pose), rad, with its noise and lost
    data (params: noise rad, lost %, rate), wrapped to (-pi, pi]."""
    pose = views[0]
    for k in range(len(rows)):
        out[k, 0] = pose[rows[k], 2]
    _noise_lost(out, params, normals, uniforms, prev)
    for k in range(len(rows)):
        out[k, 0] = _wrap(out[k, 0])


@jit()
def motors_actuate(views, rows, params, state, commands, out, drive):
    """``motors``: ``out`` (n, 2) the wheel speeds driven (the commanded left, right, m/s,
    clipped to +-max_speed, times efficiency %), ``drive`` (n, 2) the chassis' forward speed,
    m/s, and yaw rate, rad/s, over the wheel separation (``views[0]`` the axles, m); params:
    max_speed m/s, efficiency %."""
    axle = views[0]
    for k in range(len(rows)):
        out[k, 0], out[k, 1], drive[k, 0], drive[k, 1] = _drive_one(
            commands[k, 0], commands[k, 1], params[k, 0], params[k, 1], axle[rows[k]])


# Each kernel serial for a small world, on the threads for a swarm (coopsim.model.threads):
# the same rows either way, so the same bits.
wheel_speeds = by_rows(_wheel_speeds, _wheel_speeds_threads)
odometry = by_rows(_odometry, _odometry_threads)
drive = by_rows(_drive, _drive_threads)
target_offsets = by_rows(_target_offsets, _target_offsets_threads)
target_bearings = by_rows(_target_bearings, _target_bearings_threads)
velocity = by_rows(_velocity, _velocity_threads)
motors_reading = by_rows(_motors_reading, _motors_reading_threads)


def _load() -> None:
    """Call each kernel once with every kind of array the modules pass (numba compiles one
    version per kind: a step must not wait for one): read-only or not (the frame's shared
    results and the sealed readings are read-only), contiguous or not (one robot's velocity
    row is contiguous, several robots' are a strided view of the state)."""
    one = np.ones(1)
    for n, frozen in ((1, False), (2, False), (1, True), (2, True)):
        state = _frozen(np.zeros((n, 6)), frozen)  # the frame's state: a read-only view
        speeds = np.zeros((n, 2))
        wheel_speeds(state[:, 3:6], np.zeros((n, 2)), np.ones(n), speeds)
        reading = np.zeros((n, 4))
        motors_reading(speeds, state[:, 3:6], np.zeros((n, 2)), np.ones(n), reading)
        reading.flags.writeable = False
        prev = np.zeros((1, 5))
        ro = speeds[:1].copy()
        ro.flags.writeable = prev.flags.writeable = not frozen
        odometry(ro, one, 0.1, prev, np.zeros((1, 5)))
        # the actual speeds of the motors' reading (read-only, every robot's: a strided view)
        odometry(reading[:, 2:], np.ones(n), 0.1, _frozen(np.zeros((n, 5)), True),
                 np.zeros((n, 5)))
        # every robot's commands: the table's read-only view; a gather's: a copy
        drive(_frozen(np.zeros((1, 2)), frozen), one, one, one, np.zeros((1, 2)),
              np.zeros((1, 2)))
        # as for the velocity: every robot's pose a view of the state, or not
        pose, out = state[:, :3], np.zeros((n, 1, 2))
        target_offsets(pose, np.zeros((1, 2)), np.zeros((2, n, 1)), out)
        target_bearings(np.zeros((n, 1)), pose, out)
        velocity(_frozen(np.zeros((n, 6)), frozen), np.arange(n), state[:, :3], state[:, 3:6],
                 (np.ones(n),) * 4, np.ones(n), 0.1, np.zeros((n, 3)))


def _load_kinds() -> None:
    """Call the kinds' kernels once with the arrays a step hands them: the frame's read-only
    views, the read-only noise blocks (none: (n, 0)), previous readings and parameters
    (coopsim.model.kernel.sense_by_kernel makes every array a kernel only reads read-only);
    every robot's commands (a read-only view) or a gather's."""
    for n in (1, 2):  # one robot's pose is a contiguous view of the state, several robots' not
        state = _frozen(np.zeros((n, 6)), True)
        pose, rows = state[:, :3], np.arange(n, dtype=np.int64)
        params, u = _frozen(np.zeros((n, 3)), True), _frozen(np.zeros(0), True)
        for width, kernel in ((2, gps_sense), (1, compass_sense)):
            kernel((pose,), rows, params, (), _frozen(np.zeros((n, width)), True), u,
                   _frozen(np.zeros((n, width)), True), np.zeros((n, width)))
    for frozen in (False, True):
        motors_actuate((np.ones(2),), rows, _frozen(np.ones((2, 2)), True), (),
                       _frozen(np.zeros((2, 2)), frozen), np.zeros((2, 2)), np.zeros((2, 2)))


def _frozen(arr: np.ndarray, frozen: bool) -> np.ndarray:
    """``arr``, or a read-only view of it."""
    if frozen:
        arr = arr.view()
        arr.flags.writeable = False
    return arr


#: Ready once the background warm-up has loaded the kernels above.
WARM = warmer(_load)
WARM_KINDS = warmer(_load_kinds)
