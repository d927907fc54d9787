"""Batched 2D ray casting against circles and line segments, vectorised with numpy.

Why: 1,000 robots with 11 distance sensors cast 11,000 rays a step, and pymunk's per-call
``Space.segment_query_first`` costs microseconds of Python overhead each. Here all rays of a step
are cast by a fixed number of numpy calls, with no Python loop over rays or shapes.

Algorithm (a uniform grid, or spatial hash, of square cells of side ``cell_size``):

1. Shapes are binned into the cells their bounding boxes overlap (a segment: only those along
   it, so a long diagonal wall fills a band). Shapes spanning over ``_MAX_CELLS`` cells join an
   *always* list tested by every ray. Zero-length segments are never hit, so never binned.
2. Each ray lists the cells it crosses (per column of cells, the rows its y range covers, padded
   against rounding): about ``1 + (|dx| + |dy|) / cell_size`` cells. A dense table of the
   occupied cells keeps their shapes in cell order, so counts and offsets (``_expand``) give the
   candidate (ray, shape) pairs. Duplicates are harmless as the result is a minimum. Rays over
   ``_MAX_CELLS`` columns long test every shape.
3. A float32 broad test (does the circle reach the ray's line, does the segment cross it?), on
   coordinates relative to the grid with a slack covering float32 rounding, drops most pairs at
   half the memory traffic. The survivors not excluded by the group rule get the exact distance
   in float64, and ``np.minimum.at`` keeps each ray's nearest hit (faster than sorting).

Static shapes (walls) are validated and binned once by :meth:`RayCaster.set_static`; the shapes
given to :meth:`RayCaster.cast` (robots) are binned on every call. The cell size changes the
speed, never the result; about the sensor range is best (``benchmarks/raycast_bench.py``).

Conventions, in the world frame and metres: a circle is hit where the ray enters it, or at 0 if
the origin is strictly inside it; a segment where the ray crosses it, endpoints included; a
segment parallel to the ray (even lying on it) or of zero length never; a zero direction makes a
ray of length 0. This is pymunk's ``segment_query_first`` with radius 0, except that pymunk
ignores a circle containing the start and a segment whose line passes through the start.
"""

from __future__ import annotations

import numpy as np

_MAX_CELLS = 1024  # shapes (cells) or rays (columns) spanning more are tested exhaustively
_ALL_PAIRS = 8192  # up to this many (ray, shape) pairs, testing them all beats building a grid
_MAX_TABLE = 1 << 22  # cap on the dense cell table; beyond it, k x k grid cells share an entry
_PAD = 1e-9  # relative padding of the rays' cells, against rounding at cell borders
_F32 = 1e-5  # float32 broad-test slack per metre of coordinate magnitude (float32 eps: 6e-8)


def warm_allocator() -> None:
    """Frees an 8 MB block: glibc malloc then raises its mmap and trim thresholds, so a cast's
    temporaries reuse heap pages instead of page-faulting afresh (~1 ms a cast in our VM)."""
    np.empty(1 << 20)


class _Shapes:
    """Shapes of one kind: ``data`` (N, 3) circles [x, y, r] or (N, 4) segments [x1, y1, x2, y2]
    (m), ``group`` (N,), and their binning: ``cell`` (2, E) int64 cells ``floor(coord / size)``,
    ``ids`` (E,) shape of each entry, ``always`` (A,) shapes tested against every ray."""

    def __init__(self, data, group, cell, ids, always):
        self.data, self.group, self.cell, self.ids, self.always = data, group, cell, ids, always

    def __add__(self, other: _Shapes) -> _Shapes:
        n = len(self.data)
        return _Shapes(np.concatenate([self.data, other.data]),
                       np.concatenate([self.group, other.group]),
                       np.concatenate([self.cell, other.cell], axis=1),
                       np.concatenate([self.ids, other.ids + n]),
                       np.concatenate([self.always, other.always + n]))


def as_array(a, cols: int, name: str) -> np.ndarray:
    """Returns ``a`` as a finite float64 (N, cols) array; None gives (0, cols)."""
    out = np.zeros((0, cols)) if a is None else np.asarray(a, dtype=np.float64)
    out = out.reshape(0, cols) if out.size == 0 else out
    if out.ndim != 2 or out.shape[1] != cols or not np.isfinite(out).all():
        raise ValueError(f"{name} must be a finite (N, {cols}) array, got shape {out.shape}")
    return out


def as_groups(g, n: int, name: str) -> np.ndarray:
    """Returns the (n,) int64 group array, zeros (no group) when ``g`` is None."""
    out = np.zeros(n, dtype=np.int64) if g is None else np.asarray(g, dtype=np.int64).ravel()
    if out.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {out.shape}")
    return out


def _rays(origins, directions, max_range):
    """Validates rays; returns (ox, oy, dx, dy, max_range), each (R,), world frame, m, with the
    directions made unit (a zero direction stays zero)."""
    o, d = as_array(origins, 2, "origins"), as_array(directions, 2, "directions")
    if d.shape != o.shape:
        raise ValueError(f"directions shape {d.shape} differs from origins {o.shape}")
    (ox, oy), (dx, dy) = o.T.copy(), d.T.copy()
    norm = np.sqrt(dx * dx + dy * dy)
    norm[norm == 0] = 1.0
    mr = np.array(np.broadcast_to(np.asarray(max_range, dtype=np.float64), len(o)))
    if not (np.isfinite(mr).all() and (mr >= 0).all()):
        raise ValueError("max_range must be finite and non-negative")
    return ox, oy, dx / norm, dy / norm, mr


def _expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Enumerates items 0 .. counts[i] - 1 of every owner i (any order): (owner, rank) int64."""
    counts = counts.astype(np.int64)
    n, total, width = len(counts), int(counts.sum()), int(counts.max(initial=0))
    if width * n <= 4 * total + 64:  # a slot mask beats np.repeat when the counts are even
        flat = np.flatnonzero(counts > np.arange(width)[:, None])
        local = flat // n  # np.divmod and % are several times slower
        flat -= local * n
        return flat, local
    owner = np.repeat(np.arange(n), counts)
    return owner, np.arange(total) - (np.cumsum(counts) - counts)[owner]


def _box_cells(x0, y0, x1, y1, cs: float):
    """Returns (owner (E,), cell (2, E) int64, big (B,)): the cells of side ``cs`` overlapped by
    boxes (corners (N,) x0 <= x1, y0 <= y1; m) spanning <= ``_MAX_CELLS`` cells, other boxes."""
    cx, cy = np.floor(x0 / cs), np.floor(y0 / cs)
    sx, sy = np.floor(x1 / cs) - cx + 1, np.floor(y1 / cs) - cy + 1
    small = sx * sy <= _MAX_CELLS
    idx = np.flatnonzero(small)
    owner, local = _expand(sx[idx] * sy[idx])
    owner = idx[owner]
    row = np.floor(local / sy[owner])
    cell = np.stack([cx[owner] + row, cy[owner] + local - row * sy[owner]]).astype(np.int64)
    return owner, cell, np.flatnonzero(~small)


def _bin(circles, segments, circle_group, segment_group, cs: float) -> tuple[_Shapes, _Shapes]:
    """Validates and bins circles ``[x, y, r]`` and segments (m) into cells of side ``cs``."""
    c, s = as_array(circles, 3, "circles"), as_array(segments, 4, "segments")
    x, y, r = c.T
    if (r < 0).any():
        raise ValueError("circle radii must be non-negative")
    ids, cell, always = _box_cells(x - r, y - r, x + r, y + r, cs)
    circ = _Shapes(c, as_groups(circle_group, len(c), "circle_group"), cell, ids, always)
    x1, y1, x2, y2 = s.T
    ex, ey = x2 - x1, y2 - y1
    length = np.hypot(ex, ey)
    keep = np.flatnonzero(length > 0)
    box = (np.minimum(x1, x2), np.minimum(y1, y2), np.maximum(x1, x2), np.maximum(y1, y2))
    ids, cell, always = _box_cells(*(a[keep] for a in box), cs)
    ids = keep[ids]
    wx, wy = (cell[0] + 0.5) * cs - x1[ids], (cell[1] + 0.5) * cs - y1[ids]
    near = np.abs(ex[ids] * wy - ey[ids] * wx) <= length[ids] * cs * 0.7072  # half a diagonal
    return circ, _Shapes(s, as_groups(segment_group, len(s), "segment_group"), cell[:, near],
                         ids[near], keep[always])


class _Grid:
    """Dense cell table of one cast, and the float32 inputs of the broad tests.

    Attributes:
        tables: Per family, (counts, starts, ids): shapes per table entry, first position of
            each entry in ``ids``, shapes sorted by entry; None when no shape is binned.
        origin: (x, y) world position of the table's corner, m; cs: side of an entry, m.
        rays, tabs: Broad-test inputs (see ``__init__``).
    """

    def __init__(self, shapes: tuple[_Shapes, _Shapes], cols, ray, cs: float):
        cells = np.concatenate([f.cell for f in shapes], axis=1)
        self.tables = None
        if not cells.size:
            return
        g0, g1 = cells.min(axis=1), cells.max(axis=1)
        (wx, wy), k = (g1 - g0).tolist(), 1
        while (wx // k + 1) * (wy // k + 1) > _MAX_TABLE:
            k *= 2  # merge k x k grid cells per table entry
        self.nx, self.ny = wx // k + 1, wy // k + 1
        self.cs, self.origin = cs * k, (g0 * cs).tolist()
        self.tables = []
        for f in shapes:
            rel = (f.cell - g0[:, None]) // k
            keys = rel[0] * self.ny + rel[1]
            counts = np.bincount(keys, minlength=self.nx * self.ny)
            self.tables.append((counts, np.cumsum(counts) - counts,
                                f.ids[np.argsort(keys, kind="stable")]))
        # Broad-test inputs, float32, relative to the origin (m): per ray (dx, dy, cross(o, d)),
        # per family its shapes in table order (see _near_circles and _near_segments).
        (x0, y0), (circ, seg), (ox, oy, dx, dy, _) = self.origin, cols, ray
        ic, iseg = self.tables[0][2], self.tables[1][2]
        cn = (ox - x0) * dy - (oy - y0) * dx
        tabs = [[circ[0][ic] - x0, circ[1][ic] - y0, circ[2][ic]],
                [seg[0][iseg] - x0, seg[1][iseg] - y0, seg[2][iseg], seg[3][iseg]]]
        slack = _F32 * (1.0 + max(np.abs(a).max(initial=0.0) for a in [cn, *tabs[0], *tabs[1]]))
        tabs[0][2] = tabs[0][2] + slack
        tabs[1].append(np.array(slack))
        self.rays = [a.astype(np.float32) for a in (dx, dy, cn)]
        self.tabs = [[a.astype(np.float32) for a in t] for t in tabs]

    def ray_cells(self, xa, ya, xb, yb):
        """Returns (ray (M,), key (M,), brute (b,)): the table entries crossed by the rays from
        (xa, ya) to (xb, yb) (each (B,), world frame, m), and the rays too long for it."""
        cs, (x0, y0) = self.cs, self.origin
        xa, ya, xb, yb = xa - x0, ya - y0, xb - x0, yb - y0
        pad = _PAD * (1.0 + abs(x0) + abs(y0) + max(np.abs(a).max(initial=0.0)
                                                    for a in (xa, ya, xb, yb)))
        c0 = np.maximum(np.floor((np.minimum(xa, xb) - pad) / cs), 0.0)
        sx = np.minimum(np.floor((np.maximum(xa, xb) + pad) / cs), self.nx - 1) - c0 + 1
        sx = np.maximum(sx, 0.0)
        brute = np.flatnonzero(sx > _MAX_CELLS)
        sx[brute] = 0
        dxab = xb - xa
        inv = 1.0 / np.where(np.abs(dxab) < 1e-300, 1e-300, dxab)  # vertical: all their y
        ray, col = _expand(sx)
        col = col + c0[ray]
        left, f, dy = col * cs - xa[ray], inv[ray], (yb - ya)[ray]
        v0 = np.clip(left * f, 0.0, 1.0) * dy  # y at the column's edges, from ya
        v1 = np.clip((left + cs) * f, 0.0, 1.0) * dy
        lo, hi, base = np.minimum(v0, v1), np.maximum(v0, v1), ya[ray] - pad
        lo += base
        hi += base + 2 * pad
        r0 = np.maximum(np.floor(lo / cs), 0.0)
        owner, row = _expand(np.maximum(np.minimum(np.floor(hi / cs), self.ny - 1) - r0 + 1, 0))
        key = (col * self.ny + r0).astype(np.int64)[owner]
        key += row
        return ray[owner], key, brute

    def candidates(self, shapes, xa, ya, xb, yb):
        """Candidate (ray (P,), shape (P,)) pairs of each family for the rays from (xa, ya) to
        (xb, yb), each (R,), world frame, m."""
        rc_ray = brute = np.zeros(0, dtype=np.int64)
        if self.tables:
            rc_ray, rc_key, brute = self.ray_cells(xa, ya, xb, yb)
            rc = [a[rc_ray] for a in self.rays]
        result = []
        for i, fam in enumerate(shapes):
            n, every = len(xa), np.arange(len(fam.data))
            parts = [self.near(i, rc_ray, rc_key, rc) if self.tables else (rc_ray, rc_ray),
                     (np.arange(n).repeat(len(fam.always)), np.tile(fam.always, n)),
                     (brute.repeat(len(every)), np.tile(every, len(brute)))]
            result.append(tuple(np.concatenate(a) for a in zip(*parts)))
        return result

    def near(self, family: int, rc_ray, rc_key, rc):
        """(ray (P,), shape (P,)) pairs of a family passing the broad test, for the ray-entry
        pairs ``rc_ray``, ``rc_key`` (``rc``: ``rays`` data of each)."""
        counts, starts, ids = self.tables[family]
        j, pos = _expand(counts[rc_key])
        pos += starts[rc_key][j]
        keep = (_near_circles, _near_segments)[family](rc, j, pos, self.tabs[family])
        return rc_ray[j[keep]], ids[pos[keep]]


def _near_circles(rc, j, pos, tab):
    """Broad float32 test: indices of the pairs whose circle reaches the ray's line.

    Args:
        rc: Per ray-entry pair (dx, dy, cross(o, d)), o relative to the grid origin, m.
        j, pos: (P,) ray-entry pair and table position of each candidate.
        tab: Circles in table order: (x, y, r + slack), relative to the grid origin, m.
    """
    h = tab[0][pos]
    h *= rc[1][j]
    tmp = tab[1][pos]
    tmp *= rc[0][j]
    h -= tmp
    h -= rc[2][j]
    return np.flatnonzero(np.abs(h, out=h) <= tab[2][pos])


def _near_segments(rc, j, pos, tab):
    """As ``_near_circles`` for segments crossing the ray's line; ``tab`` = (x1, y1, x2 - x1,
    y2 - y1, slack)."""
    dx, dy = rc[0][j], rc[1][j]
    un = tab[0][pos] * dy - tab[1][pos] * dx
    un -= rc[2][j]  # cross(p - o, d)
    q = tab[2][pos] * dy - tab[3][pos] * dx  # the crossing is at -un / q along the segment
    un *= 2
    un += q
    return np.flatnonzero(np.abs(un, out=un) <= np.abs(q) + tab[4])


def _hit_circles(ray, circles, pr, pc):
    """Exact float64 distances (P,) at which rays ``pr`` enter circles ``pc``, m; inf if not
    within range. ``ray`` = (ox, oy, dx, dy, max_range), each (R,); ``circles`` = rows x, y, r;
    world frame, m."""
    ox, oy, dx, dy, mr = ray
    ddx, ddy, r = dx[pr], dy[pr], circles[2][pc]
    mx, my = ox[pr] - circles[0][pc], oy[pr] - circles[1][pc]
    b = mx * ddx + my * ddy  # -t of the closest approach
    h = mx * ddy - my * ddx  # distance from the centre to the ray's line
    disc = (r - h) * (r + h)
    enter = -b - np.sqrt(np.maximum(disc, 0.0))
    inside = mx * mx + my * my < r * r  # strictly: starting on the edge going out is no hit
    ok = ((disc >= 0) & (enter >= 0) | inside) & (enter <= mr[pr])
    return np.where(ok, np.maximum(enter, 0.0), np.inf)


def _hit_segments(ray, seg, pr, ps):
    """As ``_hit_circles`` for segments, ``seg`` = rows x1, y1, x2 - x1, y2 - y1."""
    ox, oy, dx, dy, mr = ray
    ex, ey, ddx, ddy = seg[2][ps], seg[3][ps], dx[pr], dy[pr]
    wx, wy = seg[0][ps] - ox[pr], seg[1][ps] - oy[pr]
    den = ddx * ey - ddy * ex
    safe = np.where(den == 0, 1.0, den)  # parallel or zero-length: a miss
    with np.errstate(over="ignore"):  # a huge t (nearly parallel) is out of range anyway
        t, u = (wx * ey - wy * ex) / safe, (wx * ddy - wy * ddx) / safe  # along ray, segment
    ok = (den != 0) & (t >= 0) & (t <= mr[pr]) & (u >= 0) & (u <= 1)
    return np.where(ok, t, np.inf)


_ROWS, _COLS = (slice(None), None), (None, slice(None))  # index views: (R, 1) and (1, N)


def _columns(data: np.ndarray, segments: bool) -> np.ndarray:
    """Shapes as rows of coordinates (x, y, r) or (x1, y1, x2 - x1, y2 - y1), as the hit
    functions take them."""
    col = data.T.copy()
    if segments:
        col[2:] -= col[:2]
    return col


def _all_pairs(ray, rg, static, circles, segments, circle_group, segment_group):
    """Distances by testing every (ray, shape) pair, or None when there are over ``_ALL_PAIRS``.

    A few robots in a small world cast a few dozen rays: building the grid then costs far more
    (hundreds of microseconds of numpy calls) than testing every pair in one go. The hit
    functions get index *views* (``_ROWS``, ``_COLS``), so they broadcast to (rays, shapes)
    without gathering anything.
    """
    c, s = as_array(circles, 3, "circles"), as_array(segments, 4, "segments")
    if (c[:, 2] < 0).any():
        raise ValueError("circle radii must be non-negative")
    n_rays = len(rg)
    if n_rays * (len(static[0].data) + len(c) + len(static[1].data) + len(s)) > _ALL_PAIRS:
        return None
    fams = ((static[0], c, as_groups(circle_group, len(c), "circle_group"), _hit_circles),
            (static[1], s, as_groups(segment_group, len(s), "segment_group"), _hit_segments))
    out = ray[4].copy()
    for fixed, moving, moving_group, hit in fams:
        if not len(fixed.data) + len(moving):
            continue
        col = np.concatenate([fixed.columns, _columns(moving, hit is _hit_segments)], axis=1)
        group = np.concatenate([fixed.group, moving_group])
        dist = hit(ray, col, _ROWS, _COLS)
        dist[(rg[_ROWS] != 0) & (rg[_ROWS] == group[_COLS])] = np.inf
        np.minimum(out, dist.min(axis=1), out=out)
    return out


class RayCaster:
    """Casts many 2D rays against circles and line segments at once.

    Static shapes are given once to :meth:`set_static` and kept binned; moving shapes are given
    to every :meth:`cast`. Both are hit alike.

    Attributes:
        cell_size: Side of the grid cells, m.
    """

    def __init__(self, cell_size: float = 2.0) -> None:
        """Creates a caster with no static shapes.

        Args:
            cell_size: Side of the grid cells, m. Changes the speed only; best near max_range.
        """
        if not (np.isfinite(cell_size) and cell_size > 0):
            raise ValueError(f"cell_size must be a positive number of metres, got {cell_size}")
        self.cell_size = float(cell_size)
        self.set_static()
        warm_allocator()

    def set_static(self, circles=None, segments=None, circle_group=None,
                   segment_group=None) -> None:
        """Replaces the static shapes, tested by every later :meth:`cast`.

        Args:
            circles: (C, 3) [x, y, radius], world frame, m; None for none.
            segments: (S, 4) [x1, y1, x2, y2], world frame, m; None for none.
            circle_group: (C,) int groups, 0 = none; None for all 0.
            segment_group: (S,) int groups, 0 = none; None for all 0.
        """
        self._static = _bin(circles, segments, circle_group, segment_group, self.cell_size)
        for fam, segs in zip(self._static, (False, True)):  # for casts that test all pairs
            fam.columns = _columns(fam.data, segs)

    def cast(self, origins, directions, max_range, circles, segments, ray_group=None,
             circle_group=None, segment_group=None) -> np.ndarray:
        """Distance from each ray's origin to the first shape it hits.

        Args:
            origins: (R, 2) ray starts, world frame, m.
            directions: (R, 2) ray directions, world frame; unit expected (normalised here).
            max_range: Scalar or (R,) finite, non-negative ray lengths, m.
            circles: (C, 3) [x, y, radius] moving circles, world frame, m, or None; tested
                together with the static shapes.
            segments: (S, 4) [x1, y1, x2, y2] moving segments, world frame, m, or None.
            ray_group: (R,) int; a ray never hits a shape of its own non-zero group.
            circle_group: (C,) int groups of ``circles``, 0 = none.
            segment_group: (S,) int groups of ``segments``, 0 = none.

        Returns:
            (R,) float64 distances in [0, max_range], m; exactly max_range when nothing is hit.
        """
        ray = _rays(origins, directions, max_range)
        (ox, oy, dx, dy, mr), rg = ray, as_groups(ray_group, len(ray[0]), "ray_group")
        small = _all_pairs(ray, rg, self._static, circles, segments, circle_group, segment_group)
        if small is not None:
            return small
        dyn = _bin(circles, segments, circle_group, segment_group, self.cell_size)
        shapes = (self._static[0] + dyn[0], self._static[1] + dyn[1])
        cols = [f.data.T.copy() for f in shapes]
        cols[1][2:] -= cols[1][:2]
        grid = _Grid(shapes, cols, ray, self.cell_size)
        rg = np.where(rg == 0, min(f.group.min(initial=0) for f in shapes) - 1, rg)  # no shape's
        out = mr.copy()
        pairs = grid.candidates(shapes, ox, oy, ox + dx * mr, oy + dy * mr)
        for fam, col, hit, (pr, ps) in zip(shapes, cols, (_hit_circles, _hit_segments), pairs):
            keep = np.flatnonzero(rg[pr] != fam.group[ps])
            np.minimum.at(out, pr[keep], hit(ray, col, pr[keep], ps[keep]))
        return out
