"""The ``kinematic`` engine's small worlds: a whole step, and the drive, in one compiled call.

A step of the engine (:mod:`coopsim.physics.kinematic.engine`) is about eight kernel calls of
:mod:`coopsim.physics.kinematic.kernels` and the Python between them: ~20 us for one robot,
mostly each call's dispatch. Here the same kernels' per-robot bodies (their inline helpers) run
in the same order on one thread, so the results are the same bits; the engine uses this up to
``kinematic.SMALL_N`` robots. :func:`step_rows` is that step on a range of rows of the arrays
with the caller's scratch: :func:`step_small` runs it on every row, and the copies batch backend
(:mod:`coopsim.env.copykernels`) on each copy's rows, so a copy is the same bits as its
template world, and a copy's step makes no array and no view. :func:`step_rows` is a kernel
that both call (uncounted: it makes no array, so a call costs no reference counts), not
inlined: it compiles once, where each caller inlining it compiled it again.
Frames and units: world frame, metres, radians, seconds.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.health import healthy_rows
from .kernels import (DIFFERENTIAL, NX, NY, VELOCITY, _first_robot, _inline, _jit,
                      _resolve_robot, bounds_rows, cell_of, finish_robot, geometry, mark,
                      move_robot, scatter_rows, sort_rows, speed_rows)


@_jit(counted=False)
def step_rows(c0, c1, width, pos, buf, yaw, cmd, mode, heading, radius, state, contact, moved,
              flag, rows, static, half, dt, limits, scratch, gstart):
    """One whole engine step (motion, substeps, resolution passes, report) of worlds
    c0 .. c1 - 1, one after the other, world c the robots of rows lo = c x ``width`` ..
    hi - 1 = lo + ``width`` - 1 of the arrays: for each, what ``KinematicEngine.step`` does
    with the kernels above, in the same order on one thread, so the same bits. Robots of other
    rows are neither read nor written. ``rows`` (N,) int64 holds i at row i (a pass over every
    robot); ``scratch`` = (start (N, 2), cell (N,), order (N,), binned (N, 3), and two lists
    (N,) int64), a world's rows used; ``gstart`` (width + 65,) int64 the robot grid's CSR
    starts (cells at most width + 64), each world's in turn: the caller's arrays, so a step
    makes none. ``limits``: see :func:`step_small`. ``pos`` ends holding the positions,
    ``buf`` those before the last pass (the engine swaps the two arrays instead). A kernel
    called (uncounted: a call costs no reference counts), not inlined, so compiled once; its
    worlds a call, as a call's entry (its arguments' ~200 fields) costs about a small world's
    step (the copies backend steps a block of copies a call)."""
    rmin, rmax, reach_radii, max_substeps, cell_radii, iterations = limits
    start, cell, order, binned, la, lb = scratch
    for c in range(c0, c1):
        lo, hi = c * width, c * width + width
        for i in range(lo, hi):
            start[i, 0], start[i, 1] = pos[i, 0], pos[i, 1]
            contact[i, 0], contact[i, 1] = 0.0, 0.0
        substeps = 1
        if rmin > 0.0:
            reach = speed_rows(cmd, mode, lo, hi) * dt / (reach_radii * rmin)
            substeps = max(1, math.ceil(min(reach, max_substeps)))
        h = dt / substeps
        side = cell_radii * rmax if rmax > 0 else 1.0
        widest = 0.0  # first_pass's
        for i in range(lo, hi):
            widest = max(widest, radius[i])
        for _ in range(substeps):
            for i in range(lo, hi):
                move_robot(i, pos, yaw, cmd, mode, h, heading)
            x0, y0, x1, y1 = bounds_rows(pos, lo, hi)
            geom = geometry(x0, y0, x1, y1, side, hi - lo + 64)
            for i in range(lo, hi):
                cell_of(i, pos, geom, cell)
            sort_rows(lo, hi, pos, radius, cell, int(geom[NX]) * int(geom[NY]), gstart, order,
                      binned)
            grid = (cell, gstart, order, geom, binned)
            count = 0
            for k in range(lo, hi):  # first_pass, on this thread
                count += _first_robot(k, buf, moved, widest, heading, grid, static, half, contact)
            for i in range(lo, hi):  # the new positions in, the old ones kept in buf
                pos[i, 0], pos[i, 1], buf[i, 0], buf[i, 1] = buf[i, 0], buf[i, 1], pos[i, 0], \
                    pos[i, 1]
            active, k1 = rows, hi  # the last pass's robots: active[lo .. k1 - 1]
            for p in range(int(iterations) - 1):
                if not count:
                    break
                listed = la if p % 2 == 0 else lb  # not the list activate reads
                k1 = lo + mark(active, lo, k1, moved, buf, pos, radius, grid, flag, listed, lo)
                _ascending(listed, lo, hi, flag)
                active = listed
                count = 0
                for k in range(lo, k1):
                    count += _resolve_robot(k, pos, active, buf, moved, radius, heading, grid,
                                            static, half, contact)
                scatter_rows(pos, active, lo, k1, buf)
        for i in range(lo, hi):
            finish_robot(i, pos, start, yaw, cmd, mode, dt, state)


@_inline()
def _ascending(listed, lo, hi, flag):
    """listed[lo ..] = the robots of rows lo .. hi - 1 flagged, ascending, their ``flag``
    cleared: :func:`~coopsim.physics.kinematic.kernels.activate`'s list (sorted by a scan of
    the rows: linear in them, whatever the count)."""
    e = lo
    for j in range(lo, hi):
        if flag[j]:
            listed[e] = j
            e += 1
            flag[j] = 0


@_inline()
def scratch_arrays(n):
    """:func:`step_rows`' ``scratch`` for ``n`` rows (uninitialised: a step writes the rows it
    reads before reading them)."""
    return (np.empty((n, 2)), np.empty(n, np.int64), np.empty(n, np.int64), np.empty((n, 3)),
            np.empty(n, np.int64), np.empty(n, np.int64))


@_jit()
def step_small(pos, buf, yaw, cmd, mode, heading, radius, state, contact, moved, flag, rows,
               static, half, dt, limits):
    """One whole engine step of every robot in one call (:func:`step_rows` of one world, rows
    0 .. n - 1, its scratch made here); for small worlds, where each kernel call's dispatch (~1-2 us) costs
    more than its work. ``limits`` = (smallest positive radius, largest radius, SUBSTEP_REACH,
    MAX_SUBSTEPS, CELL_RADII, ITERATIONS). ``pos`` ends holding the positions, ``buf`` those
    before the last pass (the engine swaps the two arrays instead)."""
    n = len(pos)
    # int64s, as the copies pass them: literals would compile a second step_rows
    step_rows(np.int64(0), np.int64(1), n, pos, buf, yaw, cmd, mode, heading, radius, state,
              contact, moved, flag, rows, static, half, dt, limits, scratch_arrays(n),
              np.empty(n + 65, np.int64))


@_inline()
def _check_rows(rows, n):
    """An IndexError, before anything is written, when some row is outside 0 .. n - 1 and
    -n .. -1 (as numpy's indexing would refuse it)."""
    for k in range(len(rows)):
        if rows[k] < -n or rows[k] >= n:
            raise IndexError("robot row out of range")


@_jit()
def drive_small(cmd, mode, driven, rows, forward, turn):
    """``KinematicEngine.drive`` in one call: robots ``rows`` that are driven get (forward
    m/s, 0, turn rad/s), a value that is not finite taken as 0, and the differential mode."""
    n = len(cmd)
    _check_rows(rows, n)
    for k in range(len(rows)):
        i = rows[k] if rows[k] >= 0 else rows[k] + n
        if driven[i]:
            f, t = forward[k], turn[k]
            cmd[i, 0] = f if math.isfinite(f) else 0.0
            cmd[i, 1] = 0.0
            cmd[i, 2] = t if math.isfinite(t) else 0.0
            mode[i] = DIFFERENTIAL


@_jit()
def velocity_small(cmd, mode, driven, rows, velocity):
    """``KinematicEngine.set_velocity`` in one call: robots ``rows`` that are driven get
    ``velocity`` (len(rows), 3) world vx, vy m/s, yaw rate rad/s, a value that is not finite
    taken as 0, and the velocity mode."""
    n = len(cmd)
    _check_rows(rows, n)
    for k in range(len(rows)):
        i = rows[k] if rows[k] >= 0 else rows[k] + n
        if driven[i]:
            for j in range(3):
                v = velocity[k, j]
                cmd[i, j] = v if math.isfinite(v) else 0.0
            mode[i] = VELOCITY


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
def velocity_rows(engine, rows, drive):
    """A composed call's ``set_velocity`` (:mod:`coopsim.sim.compose`): :func:`velocity_small`
    of robots ``rows`` with ``drive`` (n, 3) world vx, vy (m/s) and yaw rate (rad/s) on
    ``engine`` (:meth:`~coopsim.physics.kinematic.fused.KinematicFused.arrays`); True (it
    refuses none)."""
    cmd, mode, driven, arrays = engine
    velocity_small(cmd, mode, driven, rows, drive)
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
