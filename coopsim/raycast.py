"""Batched 2D ray casting against circles and line segments, vectorised with numpy.

Why: a swarm of 1,000 robots with 11 distance sensors casts 11,000 rays a physics step, and
pymunk's ``Space.segment_query_first`` costs microseconds of Python overhead per call. Here all
rays of a step are cast in a fixed number of numpy calls, with no Python loop over rays or shapes.

Algorithm (uniform grid, or spatial hash):

1. Shapes are binned into the square cells (side ``cell_size``, m) that their axis-aligned
   bounding boxes (AABBs) overlap; a segment keeps only the cells whose centre lies within half a
   cell diagonal of its line, so a long diagonal wall fills a band of cells, not its whole AABB.
   Shapes spanning more than ``_MAX_CELLS`` cells go to a short *always* list tested against
   every ray. Zero-length segments cannot be hit and are not binned.
2. Each ray's AABB (origin to ``origin + max_range * direction``) gives the cells it overlaps. A
   dense table over the occupied cells holds each cell's start and count in a cell-sorted shape
   order, so ``np.repeat`` turns (ray, cell) entries into candidate (ray, shape) pairs. Duplicate
   pairs (a shape in two of a ray's cells) are harmless as the result is a minimum. A ray
   spanning more than ``_MAX_CELLS`` cells is tested against every shape.
3. A broad test in float32 (does the circle reach the ray's line, does the segment cross it?),
   with coordinates relative to the grid and a slack covering float32 rounding, drops ~3/4 of the
   pairs at half the memory traffic. The survivors get the exact closed-form distance in float64,
   the group rule is applied and ``np.minimum.at`` keeps each ray's nearest hit (measured faster
   than a sort-based reduction).

Rays go through steps 2-3 in blocks of ``_BLOCK``: small temporaries stay in cache and avoid the
page faults of large allocations, which cost more than the extra numpy calls. Static shapes
(walls, obstacles) are validated and binned once by :meth:`RayCaster.set_static`; shapes given to
:meth:`RayCaster.cast` (robots) are binned on every call. The cell size changes the speed, never
the result; about the sensor range is good (``benchmarks/raycast_bench.py`` measures it).

Conventions, in the world frame and metres: a circle is hit where the ray enters it, or at 0 if
the origin is strictly inside it; a segment is hit where the ray crosses it, endpoints included;
a segment parallel to the ray (even lying on it) or of zero length is never hit, nor is a circle
of negative radius. This is pymunk's ``segment_query_first`` with radius 0, except that pymunk
ignores a circle containing the start and a segment whose line passes through the start.
"""

from __future__ import annotations

import numpy as np

_MAX_CELLS = 1024  # shapes or rays whose AABB covers more cells are tested exhaustively
_MAX_TABLE = 1 << 22  # cap on the dense cell table; beyond it, k x k grid cells share an entry
_BLOCK = 4096  # rays cast together
_PAD = 1e-9  # relative padding of ray AABBs, against rounding at cell borders
_F32 = 1e-6  # broad-test slack per metre of coordinate magnitude (float32 eps is 6e-8)


class _Shapes:
    """Shapes of one kind with their grid binning.

    Attributes:
        data: (N, 3) circles ``[x, y, r]`` or (N, 4) segments ``[x1, y1, x2, y2]``, m.
        group: (N,) int64 groups, 0 = none.
        cell: (E, 2) int64 cells (``floor(coordinate / cell_size)``) of the binned entries.
        ids: (E,) int64 shape of each entry.
        always: (A,) int64 shapes tested against every ray.
    """

    def __init__(self, data, group, cell, ids, always):
        self.data, self.group, self.cell, self.ids, self.always = data, group, cell, ids, always

    def __add__(self, other: _Shapes) -> _Shapes:
        n = len(self.data)
        return _Shapes(*(np.concatenate([a, b]) for a, b in (
            (self.data, other.data), (self.group, other.group), (self.cell, other.cell),
            (self.ids, other.ids + n), (self.always, other.always + n))))


def _array(a, cols: int, name: str) -> np.ndarray:
    """Returns ``a`` as a finite float64 (N, cols) array; None gives (0, cols)."""
    out = np.zeros((0, cols)) if a is None else np.asarray(a, dtype=np.float64)
    out = out.reshape(0, cols) if out.size == 0 else out
    if out.ndim != 2 or out.shape[1] != cols:
        raise ValueError(f"{name} must have shape (N, {cols}), got {out.shape}")
    if not np.isfinite(out).all():
        raise ValueError(f"{name} must be finite")
    return out


def _groups(g, n: int, name: str) -> np.ndarray:
    """Returns the (n,) int64 group array, zeros (no group) when ``g`` is None."""
    out = np.zeros(n, dtype=np.int64) if g is None else np.asarray(g, dtype=np.int64).ravel()
    if out.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {out.shape}")
    return out


def _enumerate(sx: np.ndarray, sy: np.ndarray):
    """Enumerates blocks of ``sx`` by ``sy`` cells (float (N,) counts).

    Returns:
        (owner (E,) int64, row (E,) float, col (E,) float): block and offsets of each cell.
    """
    counts = (sx * sy).astype(np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)
    local = np.arange(len(owner), dtype=np.float64)
    local -= (np.cumsum(counts) - counts)[owner]
    ny = sy[owner]
    row = np.floor(local / ny)
    local -= row * ny
    return owner, row, local


def _box_cells(x0, y0, x1, y1, cs: float):
    """Cells of side ``cs`` (m) overlapped by boxes with (N,) corners ``x0 <= x1``, ``y0 <= y1``.

    Returns:
        (owner (E,), cell (E, 2) int64, big (B,)): one entry per (box, cell) for the boxes
        spanning at most ``_MAX_CELLS`` cells, and the indices of the other boxes.
    """
    cx, cy = np.floor(x0 / cs), np.floor(y0 / cs)
    sx, sy = np.floor(x1 / cs) - cx + 1, np.floor(y1 / cs) - cy + 1
    small = sx * sy <= _MAX_CELLS
    idx = np.flatnonzero(small)
    owner, row, col = _enumerate(sx[idx], sy[idx])
    owner = idx[owner]
    cell = np.stack([cx[owner] + row, cy[owner] + col], axis=1).astype(np.int64)
    return owner, cell, np.flatnonzero(~small)


def _bin_circles(circles: np.ndarray, group: np.ndarray, cs: float) -> _Shapes:
    """Bins (N, 3) circles ``[x, y, r]`` (m) by their AABBs into cells of side ``cs`` (m)."""
    x, y, r = circles.T
    r = np.abs(r)
    ids, cell, always = _box_cells(x - r, y - r, x + r, y + r, cs)
    return _Shapes(circles, group, cell, ids, always)


def _bin_segments(segments: np.ndarray, group: np.ndarray, cs: float) -> _Shapes:
    """Bins (N, 4) segments (m) into the cells of side ``cs`` (m) along them."""
    x1, y1, x2, y2 = segments.T
    length = np.hypot(x2 - x1, y2 - y1)
    keep = np.flatnonzero(length > 0)
    x1, y1, x2, y2, length = x1[keep], y1[keep], x2[keep], y2[keep], length[keep]
    ids, cell, always = _box_cells(np.minimum(x1, x2), np.minimum(y1, y2), np.maximum(x1, x2),
                                   np.maximum(y1, y2), cs)
    wx, wy = (cell[:, 0] + 0.5) * cs - x1[ids], (cell[:, 1] + 0.5) * cs - y1[ids]
    dist = np.abs((x2 - x1)[ids] * wy - (y2 - y1)[ids] * wx)
    near = dist <= length[ids] * cs * 0.7072  # cell centre within half a diagonal of the line
    return _Shapes(segments, group, cell[near], keep[ids[near]], keep[always])


class _Grid:
    """Dense cell table of one cast: each table entry's shapes, per family, in table order.

    Attributes:
        tables: Per family, (counts, starts, ids): shapes per entry, first position of each
            entry in ``ids``, shape indices sorted by entry. None when no shape is binned.
        origin: (2,) world position of the table's first cell corner, m.
    """

    def __init__(self, shapes: tuple[_Shapes, ...], cs: float):
        cells = np.concatenate([f.cell for f in shapes])
        self.cs, self.tables, self.origin = cs, None, np.zeros(2)
        if len(cells):
            self.g0, self.g1 = cells.min(axis=0), cells.max(axis=0)
            self.k = 1  # each table entry covers k x k grid cells
            while np.prod((self.g1 - self.g0) // self.k + 1) > _MAX_TABLE:
                self.k *= 2
            self.nx, self.ny = (self.g1 - self.g0) // self.k + 1
            self.tables = [self._table(f) for f in shapes]
            self.origin = self.g0 * cs

    def _table(self, shapes: _Shapes):
        """Returns (counts, starts, ids) of one shape family."""
        rel = (shapes.cell - self.g0) // self.k
        keys = rel[:, 0] * self.ny + rel[:, 1]
        counts = np.bincount(keys, minlength=self.nx * self.ny)
        return counts, np.cumsum(counts) - counts, shapes.ids[np.argsort(keys, kind="stable")]

    def ray_cells(self, x0, y0, x1, y1):
        """Table entries overlapped by ray AABBs with (B,) corners ``x0 <= x1``, ``y0 <= y1`` (m).

        Returns:
            (ray (M,), key (M,), brute (b,)): ray-entry pairs, and the rays spanning more than
            ``_MAX_CELLS`` entries (to test against every shape).
        """
        (gx, gy), (hx, hy), cs = self.g0.tolist(), self.g1.tolist(), self.cs
        cx, cy = np.maximum(np.floor(x0 / cs), gx) - gx, np.maximum(np.floor(y0 / cs), gy) - gy
        ex, ey = np.minimum(np.floor(x1 / cs), hx) - gx, np.minimum(np.floor(y1 / cs), hy) - gy
        if self.k > 1:
            cx, cy, ex, ey = (np.floor(a / self.k) for a in (cx, cy, ex, ey))
        sx, sy = np.maximum(ex - cx + 1, 0), np.maximum(ey - cy + 1, 0)
        brute = np.flatnonzero(sx * sy > _MAX_CELLS)
        sx[brute] = 0
        ray, row, col = _enumerate(sx, sy)
        key = (cx * self.ny + cy)[ray]
        key += row * self.ny + col
        return ray, key.astype(np.int64), brute

    def pairs(self, family: int, rc_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidates of one family: (ray-cell entry, position in table order) pairs."""
        counts, starts, _ = self.tables[family]
        cnt = counts[rc_key]
        j = np.repeat(np.arange(len(cnt)), cnt)
        pos = (starts[rc_key] - np.cumsum(cnt) + cnt)[j]
        pos += np.arange(len(pos))
        return j, pos


def _near_circles(rc, j, pos, tab):
    """Broad float32 test: indices of the pairs whose circle reaches the ray's line.

    Args:
        rc: Per ray-cell entry ``(dx, dy, cross(o, d))``, o relative to the grid origin, m.
        j, pos: (P,) ray-cell entry and table position of each pair.
        tab: Circles in table order: ``(x, y, r + slack)``, relative to the grid origin, m.
    """
    h = tab[0][pos]
    h *= rc[1][j]
    tmp = tab[1][pos]
    tmp *= rc[0][j]
    h -= tmp
    h -= rc[2][j]
    return np.flatnonzero(np.abs(h, out=h) <= tab[2][pos])


def _near_segments(rc, j, pos, tab):
    """Broad float32 test: indices of the pairs whose segment crosses the ray's line; as
    ``_near_circles`` with ``tab`` = ``(x1, y1, x2 - x1, y2 - y1, slack)`` in table order."""
    dx, dy = rc[0][j], rc[1][j]
    un = tab[0][pos] * dy - tab[1][pos] * dx
    un -= rc[2][j]  # cross(p - o, d)
    q = tab[2][pos] * dy - tab[3][pos] * dx  # the crossing is at -un / q along the segment
    un *= 2
    un += q
    return np.flatnonzero(np.abs(un, out=un) <= np.abs(q) + tab[4])


def _hit_circles(ray, circles, pr, pc):
    """Exact entry distances of rays into circles.

    Args:
        ray: Per-ray (R,) arrays ``(ox, oy, dx, dy, max_range)``, world frame, m.
        circles: (3, C) rows ``x, y, r``, world frame, m.
        pr, pc: (P,) ray and circle of each pair.

    Returns:
        (ok, t): (P,) bool hit within range, and (P,) distances along the rays, m.
    """
    ox, oy, dx, dy, mr = ray
    ddx, ddy, r = dx[pr], dy[pr], circles[2][pc]
    mx, my = ox[pr] - circles[0][pc], oy[pr] - circles[1][pc]
    b = mx * ddx + my * ddy  # -t of the closest approach
    h = mx * ddy - my * ddx  # distance from the centre to the ray's line
    disc = (r - h) * (r + h)
    root = np.sqrt(np.maximum(disc, 0.0))
    enter, leave = -b - root, root - b
    t = np.maximum(enter, 0.0)
    return (disc >= 0) & ((leave > 0) | (enter >= 0)) & (t <= mr[pr]), t


def _hit_segments(ray, seg, pr, ps):
    """Exact crossing distances; as ``_hit_circles`` with ``seg`` the (4, S) rows
    ``x1, y1, x2 - x1, y2 - y1``, m. A zero determinant (parallel, zero length) is a miss."""
    ox, oy, dx, dy, mr = ray
    ex, ey, ddx, ddy = seg[2][ps], seg[3][ps], dx[pr], dy[pr]
    wx, wy = seg[0][ps] - ox[pr], seg[1][ps] - oy[pr]
    den = ddx * ey - ddy * ex
    sign = np.where(den < 0, -1.0, 1.0)
    tn = (wx * ey - wy * ex) * sign  # t = tn / |den| along the ray
    un = (wx * ddy - wy * ddx) * sign  # u = un / |den| along the segment
    den *= sign
    ok = (den > 0) & (tn >= 0) & (un >= 0) & (un <= den) & (tn <= mr[pr] * den)
    return ok, tn / np.where(ok, den, 1.0)


def _broad_data(grid: _Grid, cols, ray):
    """float32 inputs of the broad tests, relative to the grid origin.

    Returns:
        (rays, tables): per ray ``(dx, dy, cross(o, d))``; per family, the shapes in table
        order (see ``_near_circles`` and ``_near_segments``), with the rounding slack, m.
    """
    (x0, y0), (circ, seg), (ox, oy, dx, dy, _) = grid.origin, cols, ray
    (_, _, ic), (_, _, iseg) = grid.tables
    cn = (ox - x0) * dy - (oy - y0) * dx
    tabs = [[circ[0][ic] - x0, circ[1][ic] - y0, circ[2][ic]],
            [seg[0][iseg] - x0, seg[1][iseg] - y0, seg[2][iseg], seg[3][iseg]]]
    mag = max(np.abs(a).max(initial=0.0) for a in [cn, *tabs[0], *tabs[1]])
    slack = _F32 * (1.0 + 2.0 * mag)
    tabs[0][2] = tabs[0][2] + slack
    f32 = np.float32
    return ((dx.astype(f32), dy.astype(f32), cn.astype(f32)),
            ([a.astype(f32) for a in tabs[0]], [a.astype(f32) for a in tabs[1]] + [f32(slack)]))


def _candidates(grid: _Grid, shapes, broad, box, b0: int):
    """Candidate (ray (P,), shape (P,)) pairs per family for rays ``b0 .. b0 + len(box[0])``.

    Args:
        grid: The cast's cell table.
        shapes: The circle and segment families.
        broad: The output of ``_broad_data``.
        box: The block's ray AABBs ``(x0, y0, x1, y1)``, each (B,), m.
        b0: Index of the block's first ray.
    """
    none = np.zeros(0, dtype=np.int64)
    n = len(box[0])
    rays, brute = np.arange(b0, b0 + n), none
    if grid.tables:
        rc_ray, rc_key, brute = grid.ray_cells(*box)
        rc_ray += b0
        brute += b0
        rc = [a[rc_ray] for a in broad[0]]
    result = []
    for i, fam in enumerate(shapes):
        parts = [(rays.repeat(len(fam.always)), np.tile(fam.always, n)),
                 (brute.repeat(len(fam.data)), np.tile(np.arange(len(fam.data)), len(brute)))]
        if grid.tables:
            j, pos = grid.pairs(i, rc_key)
            near = (_near_circles, _near_segments)[i](rc, j, pos, broad[1][i])
            parts.append((rc_ray[j[near]], grid.tables[i][2][pos[near]]))
        result.append(tuple(np.concatenate(a) for a in zip(*parts)))
    return result


class RayCaster:
    """Casts many 2D rays against circles and line segments at once.

    Static shapes are given once to :meth:`set_static` and kept binned; moving shapes go to
    every :meth:`cast`. Both sets are hit alike.

    Attributes:
        cell_size: Side of the grid cells, m.
    """

    def __init__(self, cell_size: float = 2.0) -> None:
        """Creates a caster with no static shapes.

        Args:
            cell_size: Side of the grid cells, m; changes the speed only. Best near max_range.
        """
        if not (np.isfinite(cell_size) and cell_size > 0):
            raise ValueError(f"cell_size must be a positive number of metres, got {cell_size}")
        self.cell_size = float(cell_size)
        self.set_static()

    def set_static(self, circles=None, segments=None, circle_group=None,
                   segment_group=None) -> None:
        """Replaces the static shapes, tested by every later :meth:`cast`.

        Args:
            circles: (C, 3) ``[x, y, radius]``, world frame, m; None for none.
            segments: (S, 4) ``[x1, y1, x2, y2]``, world frame, m; None for none.
            circle_group: (C,) int groups, 0 = none; None for all 0.
            segment_group: (S,) int groups, 0 = none; None for all 0.
        """
        self._static = self._bin(circles, segments, circle_group, segment_group)

    def _bin(self, circles, segments, circle_group, segment_group) -> tuple[_Shapes, _Shapes]:
        """Validates and bins one set of circles and segments."""
        c, s = _array(circles, 3, "circles"), _array(segments, 4, "segments")
        return (_bin_circles(c, _groups(circle_group, len(c), "circle_group"), self.cell_size),
                _bin_segments(s, _groups(segment_group, len(s), "segment_group"),
                              self.cell_size))

    def cast(self, origins, directions, max_range, circles, segments, ray_group=None,
             circle_group=None, segment_group=None) -> np.ndarray:
        """Distance from each ray's origin to the first shape it hits.

        Args:
            origins: (R, 2) ray starts, world frame, m.
            directions: (R, 2) ray directions, world frame; unit expected (normalised here).
            max_range: Scalar or (R,) finite, non-negative ray lengths, m.
            circles: (C, 3) ``[x, y, radius]`` moving circles, world frame, m, or None; tested
                together with the static shapes.
            segments: (S, 4) ``[x1, y1, x2, y2]`` moving segments, world frame, m, or None.
            ray_group: (R,) int; a ray never hits a shape of its own non-zero group.
            circle_group: (C,) int groups of ``circles``, 0 = none.
            segment_group: (S,) int groups of ``segments``, 0 = none.

        Returns:
            (R,) float64 distances in [0, max_range], m; exactly max_range when nothing is hit.
        """
        o, d = _array(origins, 2, "origins"), _array(directions, 2, "directions")
        if d.shape != o.shape:
            raise ValueError(f"directions shape {d.shape} differs from origins {o.shape}")
        (ox, oy), (dx, dy) = o.T.copy(), d.T.copy()
        norm = np.sqrt(dx * dx + dy * dy)
        norm[norm == 0] = 1.0
        dx /= norm
        dy /= norm
        mr = np.array(np.broadcast_to(np.asarray(max_range, dtype=np.float64), len(o)))
        if not (np.isfinite(mr).all() and (mr >= 0).all()):
            raise ValueError("max_range must be finite and non-negative")
        rg = _groups(ray_group, len(o), "ray_group")
        dyn = self._bin(circles, segments, circle_group, segment_group)
        shapes = (self._static[0] + dyn[0], self._static[1] + dyn[1])
        cols = [f.data.T.copy() for f in shapes]
        cols[1][2:] -= cols[1][:2]
        ray, grid = (ox, oy, dx, dy, mr), _Grid(shapes, self.cell_size)
        broad = _broad_data(grid, cols, ray) if grid.tables else None
        ex, ey = ox + dx * mr, oy + dy * mr
        box = [np.minimum(ox, ex), np.minimum(oy, ey), np.maximum(ox, ex), np.maximum(oy, ey)]
        for a, sign in zip(box, (-_PAD, -_PAD, _PAD, _PAD)):
            a += sign * (1.0 + np.abs(a))
        out = mr.copy()
        groups = [f.group for f in shapes]
        none = min([g.min(initial=0) for g in groups]) - 1  # a ray group no shape has
        rg = np.where(rg == 0, none, rg)
        for b0 in range(0, len(o), _BLOCK):  # see the module docstring
            pairs = _candidates(grid, shapes, broad, [a[b0:b0 + _BLOCK] for a in box], b0)
            for g, col, hit, (pr, ps) in zip(groups, cols, (_hit_circles, _hit_segments), pairs):
                keep = np.flatnonzero(rg[pr] != g[ps])
                pr, ps = pr[keep], ps[keep]
                ok, t = hit(ray, col, pr, ps)
                np.minimum.at(out, pr, np.where(ok, t, np.inf))
        return out
