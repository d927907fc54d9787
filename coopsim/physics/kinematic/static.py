"""The ``kinematic`` engine's static grid: the standing objects as shape rows, binned once per
layout into square cells (CSR) that the overlap resolution reads a robot's cell of, and the
cache that lets a reset over the same walls bin nothing again.

Split out of :mod:`coopsim.physics.kinematic.engine` (which re-exports these names) at the
seam between the engine's bookkeeping and its static geometry.

Frames and units: world frame, metres.
"""

from __future__ import annotations

import math

import numpy as np

from .kernels import BOX, CIRCLE, INV, NX, NY, X0, Y0, grid_geometry

STATIC_CELLS = 64  # static grid cells per static shape (at least 1,024, at most 2^20)
KEPT = 2  # layouts whose grids are kept: a reset needs the last one, a second spares a flip


def static_shapes(objects: list) -> tuple[np.ndarray, np.ndarray]:
    """(M, 6) static shape rows and (M,) kinds of ``objects``, in order: circles (x, y, r) and
    boxes (x, y, cos yaw, sin yaw, half length, half width), world frame, m."""
    rows, kinds = [], []
    for obj in objects:
        s = obj.spec
        if s.shape == "box":
            rows.append((s.position[0], s.position[1], math.cos(s.yaw), math.sin(s.yaw),
                         s.size[0] / 2, s.size[1] / 2))
            kinds.append(BOX)
        else:
            rows.append((s.position[0], s.position[1], s.radius, 0.0, 0.0, 0.0))
            kinds.append(CIRCLE)
    return np.array(rows, dtype=float).reshape(-1, 6), np.array(kinds, dtype=np.int64)


_BINNED: dict = {}  # (shapes, kinds, half as bytes, pad) -> static_grid's arrays, latest last


def binned(shapes: np.ndarray, kinds: np.ndarray, half: np.ndarray, pad: float) -> tuple:
    """:func:`static_grid`, kept for the last :data:`KEPT` layouts: a new engine over the same
    walls (a reset) bins nothing again, and a process that goes through many layouts
    holds no more than two grids. Shared safely: no kernel writes into a grid."""
    key = (shapes.tobytes(), kinds.tobytes(), np.asarray(half, float).tobytes(), pad)
    grid = _BINNED.pop(key, None) or static_grid(shapes, kinds, half, pad)
    while len(_BINNED) >= KEPT:
        del _BINNED[next(iter(_BINNED))]  # the oldest
    _BINNED[key] = grid
    return grid


def static_grid(shapes: np.ndarray, kinds: np.ndarray, half: np.ndarray, pad: float) -> tuple:
    """The shapes binned over the floor (half extents ``half``, m): each in every cell its
    bounding box, grown by ``pad`` m, overlaps. Returns (shapes, kinds, geom, start, entries):
    cell c holds shapes entries[start[c]:start[c + 1]], ascending."""
    m = len(shapes)
    cap = min(1 << 20, max(1024, STATIC_CELLS * m))
    area = 4.0 * half[0] * half[1]
    side = max(2.0 * pad, math.sqrt(area / cap))
    geom = grid_geometry(-half[0], -half[1], half[0], half[1], side, cap)
    box = kinds == BOX
    ex = np.where(box, np.abs(shapes[:, 2]) * shapes[:, 4] + np.abs(shapes[:, 3]) * shapes[:, 5],
                  shapes[:, 2]) + pad
    ey = np.where(box, np.abs(shapes[:, 3]) * shapes[:, 4] + np.abs(shapes[:, 2]) * shapes[:, 5],
                  shapes[:, 2]) + pad
    lo_x, lo_y = _cells(shapes[:, 0] - ex, shapes[:, 1] - ey, geom)
    hi_x, hi_y = _cells(shapes[:, 0] + ex, shapes[:, 1] + ey, geom)
    wide, tall = hi_x - lo_x + 1, hi_y - lo_y + 1
    count = wide * tall
    sid = np.repeat(np.arange(m), count)
    local = np.arange(len(sid)) - np.repeat(np.cumsum(count) - count, count)
    cell = (lo_x[sid] + local // tall[sid]) * int(geom[4]) + lo_y[sid] + local % tall[sid]
    order = np.argsort(cell, kind="stable")
    ncell = int(geom[3]) * int(geom[4])
    start = np.concatenate(([0], np.cumsum(np.bincount(cell, minlength=ncell))))
    return (np.ascontiguousarray(shapes), kinds, geom, start.astype(np.int64),
            sid[order].astype(np.int64))


def _cells(x, y, geom):
    """Columns and rows of the cells holding the points, clamped to the grid (the kernels'
    ``_cell``, over arrays)."""
    fx, fy = (x - geom[X0]) * geom[INV], (y - geom[Y0]) * geom[INV]
    fx, fy = np.where(fx > 0.0, fx, 0.0), np.where(fy > 0.0, fy, 0.0)
    fx = np.where(fx < geom[NX] - 1.0, fx, geom[NX] - 1.0)
    fy = np.where(fy < geom[NY] - 1.0, fy, geom[NY] - 1.0)
    return fx.astype(np.int64), fy.astype(np.int64)
