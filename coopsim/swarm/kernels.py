"""Compiled loops of the swarm library: A* on a grid's padded free map, line of sight, smoothing.

Why: a squad command costs one long search plus one short search per blocked leg, and each
search, line-of-sight test and smoothing pass is a loop over cells. In pure Python a search costs
about 1.5 us per expanded cell (scipy's compiled Dijkstra bounds the bad cases at ~3 ms on 40,000
cells); compiled, an expansion costs ~0.05 us, so a 20 m search across a river takes well under a
millisecond and the 50-robot decomposition's dozens of detours no longer dominate.

The kernels compute exactly what the Python code of :mod:`.astar` and :mod:`.grid` computes:

* :func:`astar` is :func:`coopsim.swarm.astar.search` (integer costs, octile heuristic raised by
  two landmark tables, ties on f broken towards the smaller heuristic, no corner cutting), with a
  binary heap of (f, h, cell) kept in arrays and per-search *marks* instead of cleared arrays: a
  cell's g-score is valid when ``seen[cell] == mark``, so a search never touches the cells it does
  not reach. The paths it returns are optimal; among equal-cost paths it may pick another one
  than the Python search (heap order differs).
* :func:`segment_clear` is :meth:`coopsim.swarm.grid.Grid.segments_free` for one segment, float
  operation for float operation (the same supercover, conservative at cell borders).
* :func:`smooth_indices` is the line-of-sight shortcutting of :func:`coopsim.swarm.astar.smooth`.

Without numba (it is a dependency of coopsim, but the swarm library also runs in controllers that
may lack it) the module still imports, :data:`COMPILED` is False and the callers use their
pure-Python and scipy paths. Kernels compile on first use and are cached on disk (``cache=True``).
"""

from __future__ import annotations

import math

import numpy as np

from ..model.compiled import COMPILED, jit  # numba missing: Python and scipy's Dijkstra serve

_EPS = 1e-9  # cells: as grid._EPS, a segment this close to a border touches both sides


_jit = jit()  # numba's njit, cached, numpy's division semantics; the identity without numba


# --- A* --------------------------------------------------------------------------------------------
@_jit
def _less(f1, h1, f2, h2):
    return f1 < f2 or (f1 == f2 and h1 < h2)


@_jit
def _heap_push(hf, hh, hn, size, f, h, node):
    """Insert (f, h, node) into the heap of ``size`` entries (the arrays have room)."""
    i = size
    while i > 0:
        up = (i - 1) >> 1
        if not _less(f, h, hf[up], hh[up]):
            break
        hf[i], hh[i], hn[i] = hf[up], hh[up], hn[up]
        i = up
    hf[i], hh[i], hn[i] = f, h, node


@_jit
def _heap_pop(hf, hh, hn, size):
    """Remove and return the smallest entry's node; the heap then holds ``size - 1``."""
    top = hn[0]
    size -= 1
    f, h, node = hf[size], hh[size], hn[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _less(hf[c + 1], hh[c + 1], hf[c], hh[c]):
            c += 1
        if not _less(hf[c], hh[c], f, h):
            break
        hf[i], hh[i], hn[i] = hf[c], hh[c], hn[c]
        i = c
    hf[i], hh[i], hn[i] = f, h, node
    return top


@_jit
def _heuristic(j, stride, g_row, g_col, k, step, d1, h1, d2, h2):
    r = j // stride
    c = j - r * stride
    dx = abs(c - g_col)
    dy = abs(r - g_row)
    h = step * dx + k * dy if dx > dy else step * dy + k * dx
    a = abs(d1[j] - h1)
    b = abs(d2[j] - h2)
    if a > h:
        h = a
    if b > h:
        h = b
    return h


@_jit
def astar(free, stride, start, goal, d1, h1, d2, h2, max_expansions, step, diagonal_step,
          g, parent, seen, closed, mark):
    """A* from padded flat index ``start`` to ``goal`` (see the module docstring).

    Args:
        free: (n,) uint8, 1 where a cell is free (the grid's padded free map).
        stride: Padded row length.
        d1, h1, d2, h2: Two landmark tables (n,) int64 and their values at the goal (all-zero
            tables bound nothing).
        max_expansions: Give up after this many expansions (< 0: no bound).
        step, diagonal_step: Integer move costs.
        g, parent, seen, closed: (n,) int64 work arrays, reused across searches; a cell's
            entries count only where ``seen`` / ``closed`` equal ``mark``.
        mark: A value never used by an earlier search on these arrays.

    Returns:
        (cells start..goal as int64, cost in integer units), or (empty, -1) when no path
        exists or the bound was hit.
    """
    k = diagonal_step - step
    g_row = goal // stride
    g_col = goal - g_row * stride
    offsets = np.array([1, -1, stride, -stride, stride + 1, stride - 1, -stride + 1,
                        -stride - 1], dtype=np.int64)
    side1 = np.array([0, 0, 0, 0, 1, -1, 1, -1], dtype=np.int64)
    side2 = np.array([0, 0, 0, 0, stride, stride, -stride, -stride], dtype=np.int64)
    costs = np.array([step, step, step, step, diagonal_step, diagonal_step, diagonal_step,
                      diagonal_step], dtype=np.int64)
    capacity = 1024
    hf = np.empty(capacity, dtype=np.int64)
    hh = np.empty(capacity, dtype=np.int64)
    hn = np.empty(capacity, dtype=np.int64)
    size = 0
    g[start] = 0
    seen[start] = mark
    parent[start] = -1
    _heap_push(hf, hh, hn, size, 0, 0, start)
    size += 1
    budget = max_expansions
    found = False
    while size > 0:
        i = _heap_pop(hf, hh, hn, size)
        size -= 1
        if closed[i] == mark:
            continue  # a stale entry
        if i == goal:
            found = True
            break
        if budget == 0:
            break
        budget -= 1
        closed[i] = mark
        gi = g[i]
        for m in range(8):
            j = i + offsets[m]
            if free[j] == 0 or free[i + side1[m]] == 0 or free[i + side2[m]] == 0:
                continue
            ng = gi + costs[m]
            if seen[j] == mark and ng >= g[j]:
                continue
            g[j] = ng
            seen[j] = mark
            parent[j] = i
            h = _heuristic(j, stride, g_row, g_col, k, step, d1, h1, d2, h2)
            if size == capacity:
                capacity *= 2
                hf2 = np.empty(capacity, dtype=np.int64)
                hh2 = np.empty(capacity, dtype=np.int64)
                hn2 = np.empty(capacity, dtype=np.int64)
                hf2[:size] = hf[:size]
                hh2[:size] = hh[:size]
                hn2[:size] = hn[:size]
                hf, hh, hn = hf2, hh2, hn2
            _heap_push(hf, hh, hn, size, ng + h, h, j)
            size += 1
    if not found:
        return np.empty(0, dtype=np.int64), -1
    count = 1
    c = goal
    while parent[c] != -1:
        c = parent[c]
        count += 1
    cells = np.empty(count, dtype=np.int64)
    c = goal
    for n in range(count - 1, -1, -1):
        cells[n] = c
        c = parent[c]
    return cells, g[goal]


# --- line of sight -------------------------------------------------------------------------------
@_jit
def _blocked(pb, row, col):
    h, w = pb.shape
    r = min(max(row + 1, 0), h - 1)
    c = min(max(col + 1, 0), w - 1)
    return pb[r, c] != 0


@_jit
def _crossing_blocked(pb, a0, a1, o0, o1, vertical):
    """True when a cell beside a border crossing of the segment is blocked: borders normal to
    the first coordinate (a0 -> a1, cell units), the other coordinate going o0 -> o1."""
    delta = a1 - a0
    if delta == 0:
        return False
    lo = int(math.ceil(min(a0, a1) - 0.5))
    hi = int(math.floor(max(a0, a1) - 0.5))
    for lower in range(lo, hi + 1):
        t = (lower + 0.5 - a0) / delta
        across = o0 + t * (o1 - o0)
        n0 = int(math.floor(across + 0.5 - _EPS))
        n1 = int(math.floor(across + 0.5 + _EPS))
        for n in (n0, n1):
            for side in (lower, lower + 1):
                if vertical:
                    if _blocked(pb, n, side):
                        return True
                elif _blocked(pb, side, n):
                    return True
    return False


@_jit
def segment_clear(pb, ox, oy, res, ax, ay, bx, by):
    """True when every cell the segment (ax, ay) -> (bx, by) (world, m) touches is free.

    Args:
        pb: The grid's padded blocked map (rows + 2, cols + 2), nonzero where blocked.
        ox, oy: The grid's origin, m. res: Its cell side, m.
    """
    u0 = (ax - ox) / res - 0.5
    v0 = (ay - oy) / res - 0.5
    u1 = (bx - ox) / res - 0.5
    v1 = (by - oy) / res - 0.5
    for u, v in ((u0, v0), (u1, v1)):
        c0 = int(math.floor(u + 0.5 - _EPS))
        c1 = int(math.floor(u + 0.5 + _EPS))
        r0 = int(math.floor(v + 0.5 - _EPS))
        r1 = int(math.floor(v + 0.5 + _EPS))
        if _blocked(pb, r0, c0) or _blocked(pb, r0, c1) or _blocked(pb, r1, c0) \
                or _blocked(pb, r1, c1):
            return False
    if _crossing_blocked(pb, u0, u1, v0, v1, True):
        return False
    return not _crossing_blocked(pb, v0, v1, u0, u1, False)


@_jit
def smooth_indices(pb, ox, oy, res, pts):
    """Indices of the points :func:`coopsim.swarm.astar.smooth` keeps of ``pts`` (k, 2): from
    each kept point, the farthest later point in line of sight (else the next one)."""
    k = pts.shape[0]
    keep = np.empty(k, dtype=np.int64)
    keep[0] = 0
    count = 1
    i = 0
    while i < k - 1:
        nxt = i + 1
        for j in range(k - 1, i, -1):
            if segment_clear(pb, ox, oy, res, pts[i, 0], pts[i, 1], pts[j, 0], pts[j, 1]):
                nxt = j
                break
        keep[count] = nxt
        count += 1
        i = nxt
    return keep[:count]


# --- formation slots -----------------------------------------------------------------------------
@_jit
def nearest_open(ok, ox, oy, res, px, py):
    """Centre (x, y), m, of the cell nearest to (px, py) (m, world) where ``ok`` (rows, cols) is
    nonzero, ties to the lower row then column; (nan, nan) when there is none.

    Scans square rings of cells around the point's cell outwards and stops once a ring lies
    beyond the best distance found (a ring k cells out is at least k - 1 cells away).
    """
    rows, cols = ok.shape
    r0 = int(math.floor((py - oy) / res))
    c0 = int(math.floor((px - ox) / res))
    best, bx, by = np.inf, np.nan, np.nan
    best_r, best_c = -1, -1
    reach = max(rows, cols) + abs(r0) + abs(c0)
    for k in range(reach + 1):
        if (k - 1) * res > best:
            break
        for r in range(r0 - k, r0 + k + 1):
            if r < 0 or r >= rows:
                continue
            step = 1 if r in (r0 - k, r0 + k) else 2 * k
            c = c0 - k
            while c <= c0 + k:
                if 0 <= c < cols and ok[r, c] != 0:
                    x = ox + (c + 0.5) * res
                    y = oy + (r + 0.5) * res
                    d = math.hypot(x - px, y - py)
                    if d < best or (d == best and (r < best_r or (r == best_r and c < best_c))):
                        best, bx, by, best_r, best_c = d, x, y, r, c
                c += max(step, 1)
    return bx, by


@_jit
def claim(ok, ox, oy, res, px, py, gap):
    """Clear ``ok`` at the cells whose centres lie within ``gap`` m of (px, py), m."""
    rows, cols = ok.shape
    reach = int(math.ceil(gap / res)) + 1
    r0 = int(math.floor((py - oy) / res))
    c0 = int(math.floor((px - ox) / res))
    for r in range(max(0, r0 - reach), min(rows, r0 + reach + 1)):
        for c in range(max(0, c0 - reach), min(cols, c0 + reach + 1)):
            x = ox + (c + 0.5) * res
            y = oy + (r + 0.5) * res
            if math.hypot(x - px, y - py) < gap:
                ok[r, c] = 0
