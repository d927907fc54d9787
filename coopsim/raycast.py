"""Batched 2D ray casting against circles and line segments, vectorised with numpy.

Why: a swarm of 1,000 robots with 11 distance sensors casts 11,000 rays every physics step, and
pymunk's ``Space.segment_query_first`` costs microseconds of Python overhead per call. Here all
rays of a step are cast in a fixed number of numpy calls, with no Python loop over rays or shapes.

Algorithm (uniform grid, or spatial hash):

1. Every shape is binned into the square cells (side ``cell_size``, m) that its axis-aligned
   bounding box (AABB) overlaps. A segment keeps only the cells whose centre lies within half a
   cell diagonal of its line, so a long diagonal wall fills a band of cells, not its whole AABB.
   A shape whose AABB spans more than ``_MAX_CELLS`` cells joins a short *always* list tested
   against every ray instead. Zero-length segments cannot be hit and are not binned.
2. Each ray's AABB (origin to ``origin + max_range * direction``) gives the cells it overlaps. A
   dense table over the occupied cell range holds each cell's start and count in a cell-sorted
   shape index, so ``np.repeat`` turns (ray, cell) entries into candidate (ray, shape) pairs.
   Duplicate pairs (a shape in two of the ray's cells) are harmless: the result is a minimum. A
   ray spanning more than ``_MAX_CELLS`` cells is tested against every shape.
3. A cheap broad test on all pairs (does the circle reach the ray's line? does the segment
   cross it?) drops most of them; it reads shape data stored in table order, so its gathers run
   along memory. The survivors get the exact closed-form distance in float64, the group rule is
   applied, and ``np.minimum.at`` keeps each ray's nearest hit (measured faster here than a
   sort-based reduction). Rays go through steps 2-3 in blocks of ``_BLOCK``: smaller temporary
   arrays stay in cache and avoid page faults from the allocator, which costs more than the
   extra numpy calls.

Static shapes (walls, obstacles) are binned once by :meth:`RayCaster.set_static`; shapes given to
:meth:`RayCaster.cast` (robots) are binned on every call. The cell size changes the speed, never
the result; about the sensor range is good (see ``benchmarks/raycast_bench.py``).

Conventions, in the world frame and metres: a circle is hit where the ray enters it, or at 0 when
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
_TOL = 1e-9  # m, slack of the broad tests (rounding), the exact test decides


class _Shapes:
    """Shapes of one kind with their grid binning.

    Attributes:
        data: (N, 3) circles ``[x, y, r]`` or (N, 4) segments ``[x1, y1, x2, y2]``, m.
        group: (N,) int64 groups, 0 = none.
        cell: (E, 2) int64 cell indices (``floor(coordinate / cell_size)``) of the entries.
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


def _expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For int counts (n,), returns the owner and the float rank within its owner of each item."""
    owner = np.repeat(np.arange(len(counts)), counts)
    return owner, np.arange(len(owner), dtype=np.float64) - (np.cumsum(counts) - counts)[owner]


def _cells(c0: np.ndarray, span: np.ndarray, row_len):
    """Enumerates cell blocks: (N, 2) float first cells ``c0`` and spans ``span``.

    Returns:
        (owner (E,), cell (E,) float): the block of each cell and its key ``x * row_len + y``
        (``row_len`` None: its (E, 2) indices instead).
    """
    owner, local = _expand((span[:, 0] * span[:, 1]).astype(np.int64))
    ny = span[:, 1][owner]
    row = np.floor(local / ny)
    if row_len is None:
        return owner, np.stack([c0[:, 0][owner] + row, c0[:, 1][owner] + local - row * ny], 1)
    return owner, (c0[:, 0] * row_len + c0[:, 1])[owner] + local + row * (row_len - ny)


def _box_cells(lo: np.ndarray, hi: np.ndarray, cs: float):
    """Cells of side ``cs`` (m) overlapped by boxes with (N, 2) corners ``lo``, ``hi`` (m).

    Returns:
        (owner (E,), cell (E, 2) int64, big (B,)): one entry per (box, cell) for the boxes
        spanning at most ``_MAX_CELLS`` cells, and the indices of the other boxes.
    """
    c0 = np.floor(lo / cs)
    span = np.floor(hi / cs) - c0 + 1
    small = span[:, 0] * span[:, 1] <= _MAX_CELLS
    idx = np.flatnonzero(small)
    owner, cell = _cells(c0[idx], span[idx], None)
    return idx[owner], cell.astype(np.int64), np.flatnonzero(~small)


def _bin_circles(circles: np.ndarray, group: np.ndarray, cs: float) -> _Shapes:
    """Bins (N, 3) circles ``[x, y, r]`` (m) by their AABBs into cells of side ``cs`` (m)."""
    r = np.abs(circles[:, 2:3])
    ids, cell, always = _box_cells(circles[:, :2] - r, circles[:, :2] + r, cs)
    return _Shapes(circles, group, cell, ids, always)


def _bin_segments(segments: np.ndarray, group: np.ndarray, cs: float) -> _Shapes:
    """Bins (N, 4) segments (m) into the cells of side ``cs`` (m) along them."""
    p, q = segments[:, :2], segments[:, 2:]
    e = q - p
    length = np.hypot(e[:, 0], e[:, 1])
    keep = np.flatnonzero(length > 0)
    ids, cell, always = _box_cells(np.minimum(p, q)[keep], np.maximum(p, q)[keep], cs)
    ids, always = keep[ids], keep[always]
    w = (cell + 0.5) * cs - p[ids]
    near = np.abs(e[ids, 0] * w[:, 1] - e[ids, 1] * w[:, 0]) <= length[ids] * cs * 0.7072
    return _Shapes(segments, group, cell[near], ids[near], always)


class _Grid:
    """Dense cell table of one cast: each table entry's shapes, per family, in table order.

    Attributes:
        tables: Per family, (counts, starts, ids): shapes per entry, first position of each
            entry in ``ids``, shape indices sorted by entry. None when no shape is binned.
    """

    def __init__(self, shapes: tuple[_Shapes, ...], cs: float):
        cells = np.concatenate([f.cell for f in shapes])
        self.cs, self.tables = cs, None
        if len(cells):
            self.g0, self.g1 = cells.min(axis=0), cells.max(axis=0)
            self.k = 1  # each table entry covers k x k grid cells
            while np.prod((self.g1 - self.g0) // self.k + 1) > _MAX_TABLE:
                self.k *= 2
            nx, self.ny = (self.g1 - self.g0) // self.k + 1
            self.tables = [self._table(f, nx) for f in shapes]

    def _table(self, shapes: _Shapes, nx: int):
        """Returns (counts, starts, ids) of one shape family."""
        rel = (shapes.cell - self.g0) // self.k
        keys = rel[:, 0] * self.ny + rel[:, 1]
        counts = np.bincount(keys, minlength=nx * self.ny)
        return counts, np.cumsum(counts) - counts, shapes.ids[np.argsort(keys, kind="stable")]

    def ray_cells(self, lo: np.ndarray, hi: np.ndarray):
        """Table entries overlapped by ray AABBs with (B, 2) corners ``lo``, ``hi`` (m).

        Returns:
            (ray (M,), key (M,), brute (b,)): ray-entry pairs, and the rays spanning more than
            ``_MAX_CELLS`` entries (to test against every shape).
        """
        g0, g1 = self.g0.astype(np.float64), self.g1.astype(np.float64)  # float math is faster
        c0 = np.maximum(np.floor(lo / self.cs), g0) - g0
        c1 = np.minimum(np.floor(hi / self.cs), g1) - g0
        if self.k > 1:
            c0, c1 = np.floor(c0 / self.k), np.floor(c1 / self.k)
        span = np.maximum(c1 - c0 + 1, 0)
        brute = np.flatnonzero(span[:, 0] * span[:, 1] > _MAX_CELLS)
        span[brute] = 0
        ray, key = _cells(c0, span, float(self.ny))
        return ray, key.astype(np.int64), brute

    def pairs(self, family: int, rc_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidates of one family: (ray-cell entry, position in the table order) pairs."""
        counts, starts, _ = self.tables[family]
        cnt = counts[rc_key]
        j = np.repeat(np.arange(len(cnt)), cnt)
        pos = (starts[rc_key] - np.cumsum(cnt) + cnt)[j]
        pos += np.arange(len(pos))
        return j, pos


def _near_circles(rc, j, pos, tab):
    """Broad test: pairs whose circle reaches the ray's line.

    Args:
        rc: Per ray-cell entry ``(d, cross(o, d))``: complex direction ``dx + i dy`` and m.
        j, pos: (P,) ray-cell entry and table position of each pair.
        tab: Circles in table order: ``(conj(x + i y), r)``, m.

    Returns:
        (K,) indices of the pairs that pass.
    """
    h = (tab[0][pos] * rc[0][j]).imag  # x dy - y dx
    h -= rc[1][j]
    return np.flatnonzero(np.abs(h) <= tab[1][pos] + _TOL)


def _near_segments(rc, j, pos, tab):
    """Broad test: pairs whose segment crosses the ray's line; as ``_near_circles`` with
    ``tab`` the segments in table order, ``(conj(x1 + i y1), conj(e))``, e = end - start, m."""
    d = rc[0][j]
    un = (tab[0][pos] * d).imag
    un -= rc[1][j]
    q = (tab[1][pos] * d).imag  # the crossing is at -un / q along the segment
    return np.flatnonzero(np.abs(2 * un + q) <= np.abs(q) + _TOL)


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
        norm = np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2)
        d = d / np.where(norm > 0, norm, 1.0)[:, None]
        mr = np.array(np.broadcast_to(np.asarray(max_range, dtype=np.float64), len(o)))
        if not (np.isfinite(mr).all() and (mr >= 0).all()):
            raise ValueError("max_range must be finite and non-negative")
        rg = _groups(ray_group, len(o), "ray_group")
        dyn = self._bin(circles, segments, circle_group, segment_group)
        shapes = (self._static[0] + dyn[0], self._static[1] + dyn[1])
        grid = _Grid(shapes, self.cell_size)
        cols = [f.data.T.copy() for f in shapes]
        cols[1][2:] -= cols[1][:2]
        ray = (*o.T.copy(), *d.T.copy(), mr)
        end = o + d * mr[:, None]
        lo, hi = np.minimum(o, end), np.maximum(o, end)
        lo -= _PAD * (1 + np.abs(lo))
        hi += _PAD * (1 + np.abs(hi))
        out = mr.copy()
        for b0 in range(0, len(o), _BLOCK):  # see the module docstring
            pairs = _candidates(grid, shapes, cols, ray, lo[b0:b0 + _BLOCK], hi[b0:b0 + _BLOCK], b0)
            for fam, col, hit, (pr, ps) in zip(shapes, cols, (_hit_circles, _hit_segments), pairs):
                ok, t = hit(ray, col, pr, ps)
                pr, ps, t = pr[ok], ps[ok], t[ok]
                keep = (rg[pr] == 0) | (rg[pr] != fam.group[ps])
                np.minimum.at(out, pr[keep], t[keep])
        return out


def _candidates(grid: _Grid, shapes, cols, ray, lo, hi, b0: int):
    """Candidate (ray (P,), shape (P,)) pairs per family for the rays ``b0 .. b0 + len(lo)``.

    Args:
        grid: The cast's cell table.
        shapes: The circle and segment families.
        cols: Their data as rows: ``x, y, r`` and ``x1, y1, x2 - x1, y2 - y1``, m.
        ray: Per-ray (R,) arrays ``(ox, oy, dx, dy, max_range)``, world frame, m.
        lo, hi: (B, 2) AABB corners of the block's rays, m.
        b0: Index of the block's first ray.
    """
    none = np.zeros(0, dtype=np.int64)
    rays = np.arange(b0, b0 + len(lo))
    rc_ray, rc_key, brute = grid.ray_cells(lo, hi) if grid.tables else (none,) * 3
    rc_ray, brute = rc_ray + b0, brute + b0
    ox, oy, dx, dy = (a[rc_ray] for a in ray[:4])
    rc = (dx + 1j * dy, ox * dy - oy * dx)
    result = []
    for i, (fam, col) in enumerate(zip(shapes, cols)):
        parts = [(none, none)]
        if grid.tables:
            ids = grid.tables[i][2]
            tab = ((col[0] - 1j * col[1])[ids], (col[2] if i == 0 else col[2] - 1j * col[3])[ids])
            j, pos = grid.pairs(i, rc_key)
            near = (_near_circles, _near_segments)[i](rc, j, pos, tab)
            parts = [(rc_ray[j[near]], ids[pos[near]])]
        n = len(fam.data)
        parts += [(np.repeat(rays, len(fam.always)), np.tile(fam.always, len(rays))),
                  (np.repeat(brute, n), np.tile(np.arange(n), len(brute)))]
        result.append(tuple(np.concatenate(a) for a in zip(*parts)))
    return result
