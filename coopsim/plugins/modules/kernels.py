"""Compiled kernels of the ``motors``, ``odometry`` and ``target`` modules: a small world's step.

One robot's ``motors`` and ``odometry`` cost about twenty numpy calls a step, each 0.3-0.7 us on
a one-row array: more than the arithmetic. Each kernel here is one call doing a module's numpy
formula robot by robot: the same operations in the same order (no fused multiply-adds: numba
contracts none without ``fastmath``), so the same bits (tests/plugins/test_module_kernels.py
compares them over random and edge values; a NaN may come out with the other sign bit). The
modules call them once :data:`WARM` is ready (loaded by the background warm-up,
:func:`coopsim.model.compiled.warmer`) and their numpy code before: which one served a step
does not change the run. From :data:`coopsim.model.threads.ROWS_MIN` robots a kernel shares its
rows among numba's threads (each robot's row is its own: the same bits). The ``target`` module's kernels leave its angle to numpy's
``arctan2`` (numba's ``atan2`` differs from it in the last bit for some arguments).

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
def _wheel_row(i, velocity, heading, axle, out):
    forward = velocity[i, 0] * heading[i, 0] + velocity[i, 1] * heading[i, 1]
    half = velocity[i, 2] * axle[i] / 2
    out[i, 0] = forward - half
    out[i, 1] = forward + half


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
def _drive_row(i, commands, max_speed, efficiency, axle, wheels, twist):
    share = efficiency[i] / 100.0
    for k in range(2):
        v, low, high = commands[i, k], -max_speed[i], max_speed[i]
        if not math.isnan(v):  # np.clip's ternaries: the same signed zeros
            v = v if v > low else low
            v = v if v < high else high
        wheels[i, k] = v * share
    twist[i, 0] = (wheels[i, 0] + wheels[i, 1]) * 0.5
    twist[i, 1] = (wheels[i, 1] - wheels[i, 0]) / axle[i]


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


# Each kernel serial for a small world, on the threads for a swarm (coopsim.model.threads):
# the same rows either way, so the same bits.
wheel_speeds = by_rows(_wheel_speeds, _wheel_speeds_threads)
odometry = by_rows(_odometry, _odometry_threads)
drive = by_rows(_drive, _drive_threads)
target_offsets = by_rows(_target_offsets, _target_offsets_threads)
target_bearings = by_rows(_target_bearings, _target_bearings_threads)


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
        prev = np.zeros((1, 5))
        ro = speeds[:1].copy()
        ro.flags.writeable = prev.flags.writeable = not frozen
        odometry(ro, one, 0.1, prev, np.zeros((1, 5)))
        # every robot's commands: the table's read-only view; a gather's: a copy
        drive(_frozen(np.zeros((1, 2)), frozen), one, one, one, np.zeros((1, 2)),
              np.zeros((1, 2)))
        # as for the velocity: every robot's pose a view of the state, or not
        pose, out = state[:, :3], np.zeros((n, 1, 2))
        target_offsets(pose, np.zeros((1, 2)), np.zeros((2, n, 1)), out)
        target_bearings(np.zeros((n, 1)), pose, out)


def _frozen(arr: np.ndarray, frozen: bool) -> np.ndarray:
    """``arr``, or a read-only view of it."""
    if frozen:
        arr = arr.view()
        arr.flags.writeable = False
    return arr


#: Ready once the background warm-up has loaded the kernels above.
WARM = warmer(_load)
