"""The ``kinematic`` engine's small worlds: a whole step, and the drive, in one compiled call.

A step of the engine (:mod:`coopsim.physics.kinematic.engine`) is about eight kernel calls of
:mod:`coopsim.physics.kinematic.kernels` and the Python between them: ~20 us for one robot,
mostly each call's dispatch. Here the same kernels' per-robot bodies (their inline helpers) run
in the same order on one thread, so the results are the same bits; the engine uses this up to
``kinematic.SMALL_N`` robots, and the copies batch backend (:mod:`coopsim.env.copykernels`) steps
each copy with it on the copy's rows (views), so a copy is the same bits as its template world.
Frames and units: world frame, metres, radians, seconds.
"""

from __future__ import annotations

import math

from ...model.health import healthy_rows
from .kernels import (DIFFERENTIAL, _first_robot, _jit, _resolve_robot, activate,
                                bin_robots_one, bounds, finish_one, grid_geometry, move_robot,
                                scatter, top_speed)


@_jit()
def step_small(pos, buf, yaw, cmd, mode, heading, radius, state, contact, moved, flag, rows,
               static, half, dt, limits):
    """One whole engine step (motion, substeps, resolution passes, report) in one call: what
    ``KinematicEngine.step`` does with the kernels above, in the same order on one thread, so
    the same bits; for small worlds, where each kernel call's dispatch (~1-2 us) costs more
    than its work. ``limits`` = (smallest positive radius, largest radius, SUBSTEP_REACH,
    MAX_SUBSTEPS, CELL_RADII, ITERATIONS). ``pos`` ends holding the positions, ``buf`` those
    before the last pass (the engine swaps the two arrays instead)."""
    rmin, rmax, reach_radii, max_substeps, cell_radii, iterations = limits
    start = pos.copy()
    contact[:] = 0.0
    substeps = 1
    if rmin > 0.0:
        reach = top_speed(cmd, mode) * dt / (reach_radii * rmin)
        substeps = max(1, math.ceil(min(reach, max_substeps)))
    h = dt / substeps
    side = cell_radii * rmax if rmax > 0 else 1.0
    for _ in range(substeps):
        for i in range(len(pos)):
            move_robot(i, pos, yaw, cmd, mode, h, heading)
        x0, y0, x1, y1 = bounds(pos)
        geom = grid_geometry(x0, y0, x1, y1, side, len(pos) + 64)
        cell, gstart, order, binned = bin_robots_one(pos, radius, geom)
        grid = (cell, gstart, order, geom, binned)
        count, widest = 0, 0.0
        for i in range(len(radius)):  # first_pass, on this thread
            widest = max(widest, radius[i])
        for k in range(len(order)):
            count += _first_robot(k, buf, moved, widest, heading, grid, static, half, contact)
        for i in range(len(pos)):  # the new positions in, the old ones kept in buf
            pos[i, 0], pos[i, 1], buf[i, 0], buf[i, 1] = buf[i, 0], buf[i, 1], pos[i, 0], \
                pos[i, 1]
        active = rows
        for _ in range(int(iterations) - 1):
            if not count:
                break
            active = activate(active, moved, buf, pos, radius, grid, flag)
            count = 0
            for k in range(len(active)):
                count += _resolve_robot(k, pos, active, buf, moved, radius, heading, grid,
                                        static, half, contact)
            scatter(pos, active, buf)
    finish_one(pos, start, yaw, cmd, mode, dt, state)


@_jit()
def drive_small(cmd, mode, driven, rows, forward, turn):
    """``KinematicEngine.drive`` in one call: robots ``rows`` that are driven get (forward
    m/s, 0, turn rad/s), a value that is not finite taken as 0, and the differential mode."""
    n = len(cmd)
    for k in range(len(rows)):
        if rows[k] < -n or rows[k] >= n:  # as numpy's indexing would refuse it
            raise IndexError("robot row out of range")
    for k in range(len(rows)):
        i = rows[k] if rows[k] >= 0 else rows[k] + n
        if driven[i]:
            f, t = forward[k], turn[k]
            cmd[i, 0] = f if math.isfinite(f) else 0.0
            cmd[i, 1] = 0.0
            cmd[i, 2] = t if math.isfinite(t) else 0.0
            mode[i] = DIFFERENTIAL


@_jit()
def step_arrays(cmd, mode, arrays):
    """:func:`step_small` with its arrays other than ``cmd`` and ``mode`` in one tuple, as
    :meth:`coopsim.physics.kinematic.fused.KinematicFused.arrays` hands them (pos, buf, yaw,
    heading, radius, state, contact, moved, flag, rows, static grid, half sizes, dt, limits):
    what a composed call runs."""
    pos, buf, yaw, heading, radius, state, contact, moved, flag, rows, static, half, dt, \
        limits = arrays
    step_small(pos, buf, yaw, cmd, mode, heading, radius, state, contact, moved, flag, rows,
               static, half, dt, limits)



@_jit()
def drive_rows(engine, rows, drive):
    """A composed call's drive (:mod:`coopsim.sim.compose`): :func:`drive_small` of robots
    ``rows`` with ``drive`` (n, 2) forward speed (m/s) and turn rate (rad/s) on ``engine``
    (:meth:`~coopsim.physics.kinematic.fused.KinematicFused.arrays`); True (it refuses none)."""
    cmd, mode, driven, arrays = engine
    drive_small(cmd, mode, driven, rows, drive[:, 0], drive[:, 1])
    return True


@_jit()
def step_checked(engine, edge):
    """A composed call's step (:mod:`coopsim.sim.compose`): :func:`step_arrays` on ``engine``
    (:meth:`~coopsim.physics.kinematic.fused.KinematicFused.arrays`), then every robot's
    planar state checked against ``edge`` (:func:`coopsim.model.health.planar_edge`): 1 when
    every one is within the bounds, else 0."""
    cmd, mode, driven, arrays = engine
    step_arrays(cmd, mode, arrays)
    return 1 if healthy_rows(arrays[5], edge) else 0
