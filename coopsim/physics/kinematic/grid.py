"""numba kernels of the ``kinematic`` engine's grids: the robots binned into square cells
(counting sort, CSR) before a resolution pass, and a grid's geometry row
(:mod:`coopsim.physics.kinematic.kernels` resolves the passes over them; the same names are
importable from there).

A geometry row (float64, :data:`X0` .. :data:`NY`): the grid's corner x, y (m), 1 / cell side
(1/m), cells along x, along y. Binning is in robot order, so the same for any thread count.

Frames and units: world frame, metres.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.compiled import jit, prange

# Grid geometry rows (float64): corner x, y (m), 1 / cell side (1/m), cells along x, along y.
X0, Y0, INV, NX, NY = range(5)


_jit = jit  # kernels: coopsim.model.compiled.jit (numba optional, cached, no division checks)


def _inline():
    """``njit`` inlined at the IR level: a call passing arrays would incref and decref each,
    atomics the threads contend for (see coopsim.raycast.jitwalk)."""
    return jit(inline=True)


# --- robot grid -----------------------------------------------------------------------------------

@_inline()
def bounds_rows(pos, lo, hi):
    """(xmin, ymin, xmax, ymax) of the centres of robots lo .. hi - 1, m."""
    x0, y0, x1, y1 = math.inf, math.inf, -math.inf, -math.inf
    for i in range(lo, hi):
        x0, x1 = min(x0, pos[i, 0]), max(x1, pos[i, 0])
        y0, y1 = min(y0, pos[i, 1]), max(y1, pos[i, 1])
    return x0, y0, x1, y1


@_jit()
def bounds(pos):
    """(xmin, ymin, xmax, ymax) of the robots' centres, m."""
    return bounds_rows(pos, 0, len(pos))


@_inline()
def _cell(x, y, geom):
    """Column and row of the cell holding (x, y), clamped to the grid (NaN: cell 0, so that
    no input can index outside it)."""
    fx, fy = (x - geom[X0]) * geom[INV], (y - geom[Y0]) * geom[INV]
    fx, fy = fx if fx > 0.0 else 0.0, fy if fy > 0.0 else 0.0
    fx = fx if fx < geom[NX] - 1.0 else geom[NX] - 1.0
    fy = fy if fy < geom[NY] - 1.0 else geom[NY] - 1.0
    return int(fx), int(fy)


@_inline()
def cell_of(i, pos, geom, cell):
    """cell[i] = the index of the cell holding robot i (see :func:`_cell`)."""
    cx, cy = _cell(pos[i, 0], pos[i, 1], geom)
    cell[i] = cx * int(geom[NY]) + cy


@_inline()
def sort_rows(lo, hi, pos, radius, cell, cells, start, order, binned):
    """The counting sort of robots lo .. hi - 1 (each robot's ``cell`` known) into ``cells``
    cells, in robot order (so the same for any thread count), into the caller's arrays:
    start[0 .. cells] (CSR, offsets lo .. hi), order[lo .. hi - 1] and binned[lo .. hi - 1]
    (see :func:`bin_robots`). No array made: a small world's step and each copy of a batch
    hand their scratch."""
    if cells == 1:  # one cell (a world of one robot, say): robot order is the cell's
        start[0], start[1] = lo, hi
        for i in range(lo, hi):
            order[i] = i
            binned[i, 0], binned[i, 1], binned[i, 2] = pos[i, 0], pos[i, 1], radius[i]
        return
    for c in range(cells + 1):
        start[c] = 0
    for i in range(lo, hi):  # counts
        start[cell[i]] += 1
    run = lo
    for c in range(cells):  # start[c] = the end of cell c (a running sum: no store reloaded)
        run += start[c]
        start[c] = run
    start[cells] = hi
    for e in range(hi - lo):  # from the last robot, each cell filled from its end: ascending
        i = hi - 1 - e  # in it (no range of step -1: numba divides for its length)
        c = cell[i]
        k = start[c] - 1
        start[c] = k
        order[k] = i
        binned[k, 0], binned[k, 1], binned[k, 2] = pos[i, 0], pos[i, 1], radius[i]


@_inline()
def _place(pos, radius, cell, cells):
    """:func:`bin_robots` once each robot's ``cell`` is known (:func:`sort_rows`)."""
    n = len(pos)
    start = np.empty(cells + 1, np.int64)
    order = np.empty(n, np.int64)
    binned = np.empty((n, 3))
    sort_rows(0, n, pos, radius, cell, cells, start, order, binned)
    return cell, start, order, binned


@_jit(parallel=True)
def bin_robots(pos, radius, geom):
    """Counting sort of the robots into ``geom``'s cells (CSR): returns (cell (N,), start
    (cells + 1,), order (N,), binned (N, 3)); cell c holds robots order[start[c]:start[c + 1]],
    ascending, and binned[k] is robot order[k]'s x, y, radius (contiguous for the first pass).
    Each robot's cell on the threads; the counts and the placing, on one."""
    cell = np.empty(len(pos), np.int64)
    for i in prange(len(pos)):
        cell_of(i, pos, geom, cell)
    return _place(pos, radius, cell, int(geom[NX]) * int(geom[NY]))



def robot_grid(pos, radius, geom) -> tuple:
    """The robots binned in ``geom``'s cells: (cell, start, order, geom, binned) for the
    passes (see :func:`bin_robots`)."""
    cell, start, order, binned = bin_robots(pos, radius, geom)
    return cell, start, order, geom, binned


# --- grids ---------------------------------------------------------------------------------------

@_inline()
def geometry(x0, y0, x1, y1, side, cap):
    """:func:`grid_geometry`'s row as a tuple of floats (no array made)."""
    w, h = max(x1 - x0, 0.0), max(y1 - y0, 0.0)
    side = max(side, math.sqrt(w * h / cap))
    # Cell counts as floats: a robot flung ~1e299 m (a huge command, before the floor clamps
    # it) would overflow an int64; the counts that fit ``cap`` are small, so exact either way.
    nx, ny = np.floor(w / side) + 1.0, np.floor(h / side) + 1.0
    while nx * ny > cap:
        side *= 1.125
        nx, ny = np.floor(w / side) + 1.0, np.floor(h / side) + 1.0
    return x0, y0, 1.0 / side, nx, ny


@_jit()
def grid_geometry(x0, y0, x1, y1, side, cap):
    """Geometry row (see the module) of a grid of square cells covering the rectangle
    (x0, y0)-(x1, y1) (m), of side ``side`` m or more: at most ``cap`` cells."""
    g = geometry(x0, y0, x1, y1, side, cap)
    return np.array([g[0], g[1], g[2], g[3], g[4]])
