"""Formation slots moved off blocked cells: the squad's slot fitting (:class:`Squad`'s gather,
turn and end slots; :mod:`coopsim.swarm.squad`).

A slot that falls in a blocked cell, or in another region of the floor than the squad's, moves
to the nearest free cell of the squad's region that stays 0.9 spacing away from every slot
already placed. The compiled ring scan (:func:`coopsim.swarm.kernels.nearest_open`) does it
where numba is installed; a numpy search with a doubling radius otherwise (the same cells).
"""

from __future__ import annotations

import math

import numpy as np

from . import kernels
from .errors import SwarmError
from .grid import Grid


def fit(grid: Grid, slots: np.ndarray, spacing: float, label: int) -> np.ndarray:
    """Move slots that fall in blocked cells (or another region) to the nearest free cells
    of region ``label`` that stay 0.9 ``spacing`` (m) away from every other slot.

    Args:
        grid: The squad's planning grid.
        slots: (n, 2) slot positions, m, world frame.
        spacing: The formation's spacing, m.
        label: The region of the grid the slots must lie in.

    Returns:
        (n, 2) slots, m, world frame: those on free cells of the region unchanged.

    Raises:
        SwarmError: ``unreachable: ...`` when no such cell lies anywhere on the floor.
    """
    slots = np.array(slots, dtype=float)
    ok = grid.free_at(slots, label)
    if ok.all():
        return slots
    gap = 0.9 * min(spacing, _min_gap(slots))
    if kernels.COMPILED:
        return _fit_compiled(grid, slots, ok, gap, label)
    taken = np.zeros(grid.shape, dtype=bool)  # cells too near a slot already placed
    for p in slots[ok]:
        _claim(grid, taken, p, gap)
    for k in np.nonzero(~ok)[0]:
        slots[k] = _free_spot(grid, slots[k], taken, gap, label)
        _claim(grid, taken, slots[k], gap)
    return slots


def _fit_compiled(g: Grid, slots: np.ndarray, ok: np.ndarray, gap: float,
                  label: int) -> np.ndarray:
    """:func:`fit`'s moves by the compiled ring scan (:func:`kernels.nearest_open`)."""
    lo = np.asarray(g.origin)
    hi = lo + np.array(g.shape[::-1]) * g.resolution
    open_cells = g.region(label).astype(np.uint8)  # cleared as slots claim their cells
    args = (g.origin[0], g.origin[1], g.resolution)
    for p in slots[ok]:
        kernels.claim(open_cells, *args, p[0], p[1], gap)
    for k in np.nonzero(~ok)[0]:
        p = np.clip(slots[k], lo, hi)
        x, y = kernels.nearest_open(open_cells, *args, p[0], p[1])
        if math.isnan(x):
            raise SwarmError(f"unreachable: no free place left for a formation slot near "
                             f"({p[0]:.2f}, {p[1]:.2f}) m")
        slots[k] = (x, y)
        kernels.claim(open_cells, *args, x, y, gap)
    return slots


def _claim(g: Grid, taken: np.ndarray, p: np.ndarray, gap: float) -> None:
    """Mark the cells whose centres lie within ``gap`` m of p."""
    r, c = g.cell_of(p[0], p[1])
    reach = int(math.ceil(gap / g.resolution)) + 1
    r0, r1 = max(0, r - reach), min(g.shape[0], r + reach + 1)
    c0, c1 = max(0, c - reach), min(g.shape[1], c + reach + 1)
    if r0 >= r1 or c0 >= c1:
        return
    rr, cc = np.mgrid[r0:r1, c0:c1]
    x = g.origin[0] + (cc + 0.5) * g.resolution
    y = g.origin[1] + (rr + 0.5) * g.resolution
    taken[r0:r1, c0:c1] |= np.hypot(x - p[0], y - p[1]) < gap


def _free_spot(g: Grid, p: np.ndarray, taken: np.ndarray, gap: float,
               label: int) -> np.ndarray:
    """The free, unclaimed cell of region ``label`` nearest to p (first brought onto the
    floor); the search radius doubles from one gap until it spans the floor."""
    lo = np.asarray(g.origin)
    hi = lo + np.array(g.shape[::-1]) * g.resolution
    p = np.clip(p, lo, hi)
    radius, reach = max(gap, g.resolution), float(np.hypot(*(hi - lo)))
    while True:
        cand = g.free_near(p[0], p[1], radius, label)
        if len(cand):
            cols = np.floor((cand[:, 0] - lo[0]) / g.resolution).astype(np.int64)
            rows = np.floor((cand[:, 1] - lo[1]) / g.resolution).astype(np.int64)
            cand = cand[~taken[rows, cols]]
        if len(cand):
            return cand[0]
        if radius >= reach:
            raise SwarmError(f"unreachable: no free place left for a formation slot near "
                             f"({p[0]:.2f}, {p[1]:.2f}) m")
        radius *= 2


def _min_gap(slots: np.ndarray) -> float:
    """Smallest distance between two slots, m (inf for one slot)."""
    if len(slots) < 2:
        return math.inf
    d = np.hypot(slots[:, None, 0] - slots[None, :, 0], slots[:, None, 1] - slots[None, :, 1])
    d[np.diag_indices(len(slots))] = np.inf
    return float(d.min())
