"""numba kernels of the ``kinematic`` engine (:mod:`~coopsim.physics.kinematic.engine` states
the rules).

Why numba: a step is a few passes over every robot, each looking at a handful of neighbours and
static shapes. numpy must first build arrays of (robot, candidate) pairs and scatter the pushes
back with ``bincount``, which dominates the time at swarm sizes; compiled loops need neither,
and ``prange`` shares the robots among the cores.

Layout of a substep: :func:`move`; :func:`robot_grid` bins the robots (counting sort, CSR, with a
contiguous copy of their positions in cell order); :func:`first_pass` resolves every robot, in
cell order; then, while a pass moved any, :func:`activate` lists the robots within reach of one
that moved and :func:`resolve_pass` resolves only those (in a free swarm a few dozen, in a jam
its members) and :func:`scatter` writes them back. :func:`finish` reports.
:mod:`coopsim.physics.kinematic.small` runs all of a step in one call for small worlds, on a
range of rows (``step_rows``: the copies batch backend steps each copy with it): the per-robot
bodies, the marking of :func:`activate` (:func:`mark`), :func:`scatter_rows`,
:func:`speed_rows` and the grid's :func:`bounds_rows`, :func:`geometry`, :func:`cell_of` and
:func:`sort_rows` are shared inline helpers, on rows lo .. hi - 1 of the arrays where a range
matters.
The grids (the robots binned, the static shapes' geometry row) are
:mod:`coopsim.physics.kinematic.grid`'s, imported here under the same names.

Determinism: the parallel kernels compute robot i from the previous pass's positions alone and
write only robot i's rows, so which thread takes which robot cannot change a bit; the one
reduction (the count of robots moved by a pass) is over integers; the serial kernels run in a
fixed order. No ``fastmath`` and no SVML: a vectorised and a scalar iteration of a loop round
alike. Kernels compile on first use and are cached on disk (``cache=True``).

Frames and units: world frame, metres, radians, seconds.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.compiled import numba, prange
from ...model.threads import kernel_threads
from .grid import (INV, NX, NY, X0, Y0, _cell, _inline, _jit, bin_robots,  # noqa: F401
                   bounds, bounds_rows, cell_of, geometry, grid_geometry, robot_grid,
                   sort_rows)

NONE, DIFFERENTIAL, VELOCITY = 0, 1, 2  # how a robot's command row reads (``mode``)
CIRCLE, BOX = 0, 1  # static shape kinds: (x, y, r, -, -, -) and (x, y, cos, sin, hl, hw)
EPS = 1e-10  # m: overlaps up to this are rounding, not pushed (or they would ping-pong)
GAP = 1e-6  # m: a robot within this of something touches it (bumper)
TWO_PI = 2.0 * math.pi
SMALL = 0.05  # rad: half turns below this take sin and cos from their series
# Robots from which numba's threads share the passes (coopsim.model.threads chooses how many):
# below, waking them costs more than a pass (~0.1-0.2 ms at 10,000 robots). Tests set it lower.
PARALLEL_MIN = 8192
CHUNK = 256  # robots a thread takes at a time (a preempted thread's share is taken over)


def threads(n: int):
    """Within: the kernels share ``n`` robots among numba's threads when that pays
    (:data:`PARALLEL_MIN`, :func:`coopsim.model.threads.kernel_threads`), else run on the
    calling thread."""
    return kernel_threads(n, PARALLEL_MIN, CHUNK)


# --- motion ---------------------------------------------------------------------------------------

@_inline()
def _wrap(a):
    """Angle ``a`` (rad) brought into [-pi, pi] (unchanged when already there)."""
    if a > math.pi or a < -math.pi:
        return a - TWO_PI * math.floor((a + math.pi) / TWO_PI)
    return a


@_inline()
def _half_turn(x):
    """sin(x) / x and cos(x) of a substep's half turn x (rad): their series below SMALL
    (error < 1e-19: rounding), libm's above. Spares two libm calls a robot a step."""
    if abs(x) < SMALL:
        x2 = x * x
        sinc = 1.0 - x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0 * (1.0 - x2 / 72.0)))
        return sinc, 1.0 - x2 / 2.0 * (1.0 - x2 / 12.0 * (1.0 - x2 / 30.0 * (1.0 - x2 / 56.0)))
    return math.sin(x) / x, math.cos(x)


@_inline()
def speed_rows(cmd, mode, lo, hi):
    """Largest |c0| + |c1| of the commands of robots lo .. hi - 1 that move (m/s): bounds
    their speeds."""
    top = 0.0
    for i in range(lo, hi):
        if mode[i] != NONE:
            top = max(top, abs(cmd[i, 0]) + abs(cmd[i, 1]))
    return top


@_jit()
def top_speed(cmd, mode):
    """:func:`speed_rows` of every robot."""
    return speed_rows(cmd, mode, 0, len(cmd))


@_jit(parallel=True)
def move(pos, yaw, cmd, mode, h, heading):
    """Moves every robot by its commanded twist for ``h`` s, in place.

    Differential rows (forward m/s, -, yaw rate rad/s) follow the exact arc: a chord of
    v h sinc(w h / 2) along yaw + w h / 2. Velocity rows (vx, vy m/s world, yaw rate) move
    straight. ``heading`` (N, 2) holds cos and sin of each yaw and is turned with it by the
    sum formulas, without libm calls (to rounding: ~1e-16 rad a step).
    """
    for i in prange(len(pos)):
        move_robot(i, pos, yaw, cmd, mode, h, heading)


@_inline()
def move_robot(i, pos, yaw, cmd, mode, h, heading):
    """:func:`move` of robot i (shared with kinematic.small.step_small and the copies
    backend's kernel, coopsim/env/copykernels.py)."""
    m = mode[i]
    if m == NONE:
        return
    turn, c, s = cmd[i, 2] * h, heading[i, 0], heading[i, 1]
    half = 0.5 * turn
    sinc, ch = _half_turn(half)
    sh = sinc * half
    if m == DIFFERENTIAL:
        chord = cmd[i, 0] * h * sinc
        pos[i, 0] += chord * (c * ch - s * sh)
        pos[i, 1] += chord * (s * ch + c * sh)
    else:
        pos[i, 0] += cmd[i, 0] * h
        pos[i, 1] += cmd[i, 1] * h
    if turn != 0.0:
        ct, st = ch * ch - sh * sh, 2.0 * sh * ch  # cos and sin of the turn
        yaw[i] = _wrap(yaw[i] + turn)
        heading[i, 0], heading[i, 1] = c * ct - s * st, s * ct + c * st


@_inline()
def finish_robot(i, pos, start, yaw, cmd, mode, dt, state):
    """:func:`finish` of robot i: state[i] = x, y, yaw, the displacement since start[i] / dt
    (m/s) and the commanded yaw rate (rad/s; 0 undriven)."""
    state[i, 0], state[i, 1], state[i, 2] = pos[i, 0], pos[i, 1], yaw[i]
    state[i, 3] = (pos[i, 0] - start[i, 0]) / dt
    state[i, 4] = (pos[i, 1] - start[i, 1]) / dt
    state[i, 5] = cmd[i, 2] if mode[i] != NONE else 0.0


@_jit(parallel=True)
def finish(pos, start, yaw, cmd, mode, dt, state):
    """``state`` (N, 6) = x, y, yaw, then the velocity: displacement since ``start`` / ``dt``
    and the commanded yaw rate (0 for robots that were not driven)."""
    for i in prange(len(pos)):
        finish_robot(i, pos, start, yaw, cmd, mode, dt, state)


# --- one resolution pass --------------------------------------------------------------------------

@_inline()
def _touch(contact, i, nx, ny, hx, hy):
    """Flags robot i's front (column 0) or rear contact: the contact lies along unit (nx, ny)
    from its centre, ahead when that is within 90 degrees of its heading (hx, hy)."""
    if nx * hx + ny * hy >= 0.0:
        contact[i, 0] = 1.0
    else:
        contact[i, 1] = 1.0


@_inline()
def _pairs(i, pos, radius, heading, cell, start, order, geom, contact):
    """Robot i's push (m) from the robots of the 3 x 3 cells around its binned cell: half of
    each overlap, along the line of centres, away; and whether any pushed."""
    ny, nxc = int(geom[NY]), int(geom[NX])
    ci = cell[i]
    cx, cy = ci // ny, ci % ny
    x, y, ax, ay, hit = pos[i, 0], pos[i, 1], 0.0, 0.0, False
    for gx in range(max(cx - 1, 0), min(cx + 2, nxc)):
        for gy in range(max(cy - 1, 0), min(cy + 2, ny)):
            c = gx * ny + gy
            for k in range(start[c], start[c + 1]):
                px, py, pushed = pair_push(i, order[k], x, y, pos, radius, heading, contact)
                if pushed:
                    ax -= px
                    ay -= py
                    hit = True
    return ax, ay, hit


@_inline()
def pair_push(i, j, x, y, pos, radius, heading, contact):
    """Robot j's push on robot i at (x, y), m: half of their overlap along the line of centres
    (subtracted by the caller), and whether there is one; a touch within GAP is recorded in
    ``contact``. Shared with the copies backend's kernel (coopsim/env/copykernels.py)."""
    dx, dy = pos[j, 0] - x, pos[j, 1] - y
    rr = radius[i] + radius[j]
    d2, reach = dx * dx + dy * dy, rr + GAP
    if j == i or d2 >= reach * reach:
        return 0.0, 0.0, False
    d = math.sqrt(d2)
    if d > 0.0:
        ux, uy = dx / d, dy / d
    else:  # coincident: apart along x, the lower index to -x
        ux, uy = (1.0 if i < j else -1.0), 0.0
    _touch(contact, i, ux, uy, heading[i, 0], heading[i, 1])
    overlap = rr - d
    if overlap > EPS:
        return 0.5 * overlap * ux, 0.5 * overlap * uy, True
    return 0.0, 0.0, False


@_inline()
def _shape(x, y, r, shapes, s, kind):
    """Outward unit normal (from the shape towards the robot) and depth (m, > 0: overlap) of
    the robot circle (x, y, r) against static shape ``s``; depth < -GAP: apart."""
    dx, dy = x - shapes[s, 0], y - shapes[s, 1]
    if kind == CIRCLE:
        d = math.sqrt(dx * dx + dy * dy)
        if d > 0.0:
            return dx / d, dy / d, r + shapes[s, 2] - d
        return 1.0, 0.0, r + shapes[s, 2]
    c, sn, hl, hw = shapes[s, 2], shapes[s, 3], shapes[s, 4], shapes[s, 5]
    lx, ly = c * dx + sn * dy, c * dy - sn * dx  # the centre in the box's frame
    ex, ey = lx - min(max(lx, -hl), hl), ly - min(max(ly, -hw), hw)
    if ex == 0.0 and ey == 0.0:  # centre inside: out through the nearest face
        fx, fy = hl - abs(lx), hw - abs(ly)
        if fx <= fy:
            nx, ny, depth = (1.0 if lx >= 0.0 else -1.0), 0.0, fx + r
        else:
            nx, ny, depth = 0.0, (1.0 if ly >= 0.0 else -1.0), fy + r
    else:
        d = math.sqrt(ex * ex + ey * ey)
        nx, ny, depth = ex / d, ey / d, r - d
    return c * nx - sn * ny, sn * nx + c * ny, depth


@_inline()
def static_push(i, x, y, r, heading, shapes, kinds, sgeom, sstart, sentries, contact):
    """Robot i at (x, y) pushed out of the static shapes of its cell, one after the other in
    the cell's order; returns the new (x, y) and whether any pushed."""
    cx, cy = _cell(x, y, sgeom)
    c = cx * int(sgeom[NY]) + cy
    hit = False
    for k in range(sstart[c], sstart[c + 1]):
        s = sentries[k]
        nx, ny, depth = _shape(x, y, r, shapes, s, kinds[s])
        if depth >= -GAP:
            _touch(contact, i, -nx, -ny, heading[i, 0], heading[i, 1])
        if depth > EPS:
            x += depth * nx
            y += depth * ny
            hit = True
    return x, y, hit


@_inline()
def floor_clamp(i, x, y, r, half, heading, contact):
    """(x, y) clamped so the robot's circle stays on the floor (half extents ``half``);
    touching an edge is a contact. Returns x, y and whether it was clamped."""
    hx, hy = heading[i, 0], heading[i, 1]
    lo_x, hi_x, lo_y, hi_y = r - half[0], half[0] - r, r - half[1], half[1] - r
    if x - lo_x <= GAP:
        _touch(contact, i, -1.0, 0.0, hx, hy)
    if hi_x - x <= GAP:
        _touch(contact, i, 1.0, 0.0, hx, hy)
    if y - lo_y <= GAP:
        _touch(contact, i, 0.0, -1.0, hx, hy)
    if hi_y - y <= GAP:
        _touch(contact, i, 0.0, 1.0, hx, hy)
    cx, cy = min(max(x, lo_x), hi_x), min(max(y, lo_y), hi_y)
    return cx, cy, cx != x or cy != y


@_jit(parallel=True)
def resolve_pass(pos, rows, new, moved, radius, heading, grid, static, half, contact):
    """One Jacobi pass over robots ``rows``: ``new[k]`` = robot rows[k] pushed by its
    overlapping neighbours (positions ``pos``), then out of the static shapes, then onto the
    floor; ``moved[k]`` = 1 if that changed its position, else 0. ``grid`` is
    :func:`robot_grid`'s; ``static`` = (shapes, kinds, geom, start, entries).
    Contacts are OR-ed into ``contact`` (N, 2). Returns how many robots moved."""
    count = 0
    for k in prange(len(rows)):
        count += _resolve_robot(k, pos, rows, new, moved, radius, heading, grid, static, half,
                                contact)
    return count


@_inline()
def _resolve_robot(k, pos, rows, new, moved, radius, heading, grid, static, half, contact):
    """:func:`resolve_pass` of robot rows[k]; returns moved[k]."""
    cell, start, order, geom, _ = grid
    shapes, kinds, sgeom, sstart, sentries = static
    i = rows[k]
    ax, ay, pushed = _pairs(i, pos, radius, heading, cell, start, order, geom, contact)
    x, y = pos[i, 0] + ax, pos[i, 1] + ay
    x, y, kept_out = static_push(i, x, y, radius[i], heading, shapes, kinds, sgeom, sstart,
                                 sentries, contact)
    x, y, clamped = floor_clamp(i, x, y, radius[i], half, heading, contact)
    new[k, 0], new[k, 1] = x, y
    moved[k] = 1 if pushed or kept_out or clamped else 0
    return moved[k]


@_inline()
def _near(k, i, binned, start, order, geom, rmax, heading, contact):
    """As :func:`_pairs` for the first pass, whose positions are the binned ones: only the
    cells within reach of robot i = order[k] (2 x 2 at most), read from ``binned``. The
    robots met, and their order, are _pairs', so the sums are too, bit for bit."""
    x, y, r = binned[k, 0], binned[k, 1], binned[k, 2]
    span = r + rmax + GAP
    x0, y0 = _cell(x - span, y - span, geom)
    x1, y1 = _cell(x + span, y + span, geom)
    ny = int(geom[NY])
    ax, ay, hit = 0.0, 0.0, False
    for gx in range(x0, x1 + 1):
        for gy in range(y0, y1 + 1):
            c = gx * ny + gy
            for e in range(start[c], start[c + 1]):
                dx, dy = binned[e, 0] - x, binned[e, 1] - y
                rr = r + binned[e, 2]
                d2, reach = dx * dx + dy * dy, rr + GAP
                if e == k or d2 >= reach * reach:
                    continue
                d = math.sqrt(d2)
                if d > 0.0:
                    ux, uy = dx / d, dy / d
                else:  # coincident: apart along x, the lower index to -x
                    ux, uy = (1.0 if i < order[e] else -1.0), 0.0
                _touch(contact, i, ux, uy, heading[i, 0], heading[i, 1])
                overlap = rr - d
                if overlap > EPS:
                    ax -= 0.5 * overlap * ux
                    ay -= 0.5 * overlap * uy
                    hit = True
    return ax, ay, hit


@_jit(parallel=True)
def first_pass(pos, new, moved, radius, heading, grid, static, half, contact):
    """:func:`resolve_pass` over every robot right after :func:`robot_grid` (``pos`` as
    binned), in cell order: neighbours and static cells are then near in memory. Writes
    ``new[i]`` and ``moved[i]`` by robot index."""
    rmax, count = 0.0, 0
    for i in range(len(radius)):
        rmax = max(rmax, radius[i])
    for k in prange(len(grid[2])):
        count += _first_robot(k, new, moved, rmax, heading, grid, static, half, contact)
    return count


@_inline()
def _first_robot(k, new, moved, rmax, heading, grid, static, half, contact):
    """:func:`first_pass` of robot order[k]; returns moved[order[k]]."""
    cell, start, order, geom, binned = grid
    shapes, kinds, sgeom, sstart, sentries = static
    i = order[k]
    ax, ay, pushed = _near(k, i, binned, start, order, geom, rmax, heading, contact)
    x, y, r = binned[k, 0] + ax, binned[k, 1] + ay, binned[k, 2]
    x, y, kept_out = static_push(i, x, y, r, heading, shapes, kinds, sgeom, sstart, sentries,
                                 contact)
    x, y, clamped = floor_clamp(i, x, y, r, half, heading, contact)
    new[i, 0], new[i, 1] = x, y
    moved[i] = 1 if pushed or kept_out or clamped else 0
    return moved[i]


@_inline()
def _within(pos, j, x, y, reach):
    """Whether robot j's centre is within ``reach`` (m) of (x, y), as _pairs decides it."""
    dx, dy = pos[j, 0] - x, pos[j, 1] - y
    return dx * dx + dy * dy < reach * reach


@_inline()
def mark(rows, k0, k1, moved, old, pos, radius, grid, flag, out, o0):
    """:func:`activate`'s marking over rows[k0 .. k1 - 1]: flags (``flag`` = 1) and appends
    to out[o0 ..], in the order met, each robot the next pass must look at; returns how many.
    """
    cell, start, order, geom, _ = grid
    ny, nxc = int(geom[NY]), int(geom[NX])
    count = 0
    for k in range(k0, k1):
        if not moved[k]:
            continue
        m = rows[k]
        cx, cy = cell[m] // ny, cell[m] % ny
        for gx in range(max(cx - 1, 0), min(cx + 2, nxc)):
            for gy in range(max(cy - 1, 0), min(cy + 2, ny)):
                c = gx * ny + gy
                for e in range(start[c], start[c + 1]):
                    j = order[e]
                    reach = radius[m] + radius[j] + GAP
                    if flag[j] or not (j == m or _within(pos, j, pos[m, 0], pos[m, 1], reach)
                                       or _within(pos, j, old[k, 0], old[k, 1], reach)):
                        continue
                    flag[j] = 1
                    out[o0 + count] = j
                    count += 1
    return count


@_jit()
def activate(rows, moved, old, pos, radius, grid, flag):
    """The robots the next pass must look at, ascending: every robot m = rows[k] the last
    pass moved (``moved[k]``: from ``old[k]`` to ``pos[m]``) and every robot within contact
    reach of m before or after (:func:`mark`). Any other robot would come out of the next pass
    as it went in, with the same contacts: its neighbours within reach, and their positions,
    are the last pass's. ``flag`` (N,) uint8 scratch, all 0 (left so)."""
    out = np.empty(len(pos), np.int64)
    count = mark(rows, 0, len(rows), moved, old, pos, radius, grid, flag, out, 0)
    active = np.sort(out[:count])
    for j in active:
        flag[j] = 0
    return active


@_inline()
def scatter_rows(pos, rows, k0, k1, new):
    """Swaps pos[rows[k]] and new[k], k0 <= k < k1: a pass's results in, the positions before
    it kept for :func:`activate`."""
    for k in range(k0, k1):
        i = rows[k]
        pos[i, 0], pos[i, 1], new[k, 0], new[k, 1] = new[k, 0], new[k, 1], pos[i, 0], pos[i, 1]


@_jit()
def scatter(pos, rows, new):
    """:func:`scatter_rows` of every row of ``rows``."""
    scatter_rows(pos, rows, 0, len(rows), new)
