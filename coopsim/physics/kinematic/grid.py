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

@_jit()
def bounds(pos):
    """(xmin, ymin, xmax, ymax) of the robots' centres, m."""
    x0, y0, x1, y1 = math.inf, math.inf, -math.inf, -math.inf
    for i in range(len(pos)):
        x0, x1 = min(x0, pos[i, 0]), max(x1, pos[i, 0])
        y0, y1 = min(y0, pos[i, 1]), max(y1, pos[i, 1])
    return x0, y0, x1, y1


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
def _cell_of(i, pos, geom, cell):
    """cell[i] = the index of the cell holding robot i (see :func:`_cell`)."""
    cx, cy = _cell(pos[i, 0], pos[i, 1], geom)
    cell[i] = cx * int(geom[NY]) + cy


@_inline()
def _place(pos, radius, cell, cells):
    """:func:`bin_robots` once each robot's ``cell`` is known: the counting sort, in robot
    order (so the same for any thread count)."""
    n = len(pos)
    start = np.zeros(cells + 1, np.int64)
    for i in range(n):
        start[cell[i] + 1] += 1
    for c in range(cells):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    order = np.empty(n, np.int64)
    binned = np.empty((n, 3))
    for i in range(n):
        k = fill[cell[i]]
        order[k] = i
        binned[k, 0], binned[k, 1], binned[k, 2] = pos[i, 0], pos[i, 1], radius[i]
        fill[cell[i]] += 1
    return cell, start, order, binned


@_jit(parallel=True)
def bin_robots(pos, radius, geom):
    """Counting sort of the robots into ``geom``'s cells (CSR): returns (cell (N,), start
    (cells + 1,), order (N,), binned (N, 3)); cell c holds robots order[start[c]:start[c + 1]],
    ascending, and binned[k] is robot order[k]'s x, y, radius (contiguous for the first pass).
    Each robot's cell on the threads; the counts and the placing, on one."""
    cell = np.empty(len(pos), np.int64)
    for i in prange(len(pos)):
        _cell_of(i, pos, geom, cell)
    return _place(pos, radius, cell, int(geom[NX]) * int(geom[NY]))


@_jit()
def bin_robots_one(pos, radius, geom):
    """:func:`bin_robots` on the calling thread (a small world's step)."""
    cell = np.empty(len(pos), np.int64)
    for i in range(len(pos)):
        _cell_of(i, pos, geom, cell)
    return _place(pos, radius, cell, int(geom[NX]) * int(geom[NY]))



def robot_grid(pos, radius, geom) -> tuple:
    """The robots binned in ``geom``'s cells: (cell, start, order, geom, binned) for the
    passes (see :func:`bin_robots`)."""
    cell, start, order, binned = bin_robots(pos, radius, geom)
    return cell, start, order, geom, binned


# --- grids ---------------------------------------------------------------------------------------

@_jit()
def grid_geometry(x0, y0, x1, y1, side, cap):
    """Geometry row (see the module) of a grid of square cells covering the rectangle
    (x0, y0)-(x1, y1) (m), of side ``side`` m or more: at most ``cap`` cells."""
    w, h = max(x1 - x0, 0.0), max(y1 - y0, 0.0)
    side = max(side, math.sqrt(w * h / cap))
    # Cell counts as floats: a robot flung ~1e299 m (a huge command, before the floor clamps
    # it) would overflow an int64; the counts that fit ``cap`` are small, so exact either way.
    while (np.floor(w / side) + 1.0) * (np.floor(h / side) + 1.0) > cap:
        side *= 1.125
    return np.array([x0, y0, 1.0 / side, np.floor(w / side) + 1.0,
                     np.floor(h / side) + 1.0])
