"""Batched 2D ray casting in numba-compiled loops: :class:`RayCaster`'s results, faster.

Why numba: the numpy caster (:mod:`coopsim.sim.raycast`) spends its time building and filtering
arrays of (ray, shape) candidate pairs, ~35 ms for the 110,000 sonar rays of 10,000 robots.
Compiled loops need no pair arrays: each ray walks the grid cells it crosses, nearest first,
tests the shapes there, and stops once the next cell starts beyond its nearest hit.

1. Grid: square cells (side ``cell_size``, doubled while there would be too many) over the
   shapes' bounding box, in CSR layout: ``start[c] .. start[c + 1]`` are cell c's entries, copies
   of its shapes' coordinates and groups (no indirection in the inner loop). A circle is binned
   into the cells of its box, a segment into those along it, both padded by ``pad`` (below);
   shapes spanning too many cells go to an *always* bucket that every ray tests; zero-length
   segments nowhere. Static shapes are binned once (:meth:`JitRayCaster.set_static`), moving
   ones every cast, on the static grid's geometry if they fit in it: the two grids are then
   merged cell by cell and a ray walks one.
2. Walk: an Amanatides-Woo DDA from the ray's origin until the next cell starts beyond the best
   hit so far. Rounding may make it skip a cell the ray grazes, or put a computed hit slightly
   off its shape (~1e-8 x the coordinates' magnitude for a near-tangent circle): every shape is
   padded by ``pad = _REL x`` the grid's magnitude, far more than either, so the cell reached at
   the hit distance holds the shape. A ray from beyond ~3 grid sizes could need more: it tests
   every shape of the grid (never so in a simulation, whose rays start within its walls).
3. Hits: :mod:`coopsim.sim.raycast`'s float64 formulas, operation for operation, and a minimum, so
   the distances equal the numpy caster's bit for bit (except hits whose rounding error exceeds
   the padding: rays almost parallel to a segment).

Conventions (world frame, metres) are :mod:`coopsim.sim.raycast`'s: a circle is hit where the ray
enters it, 0 if the origin is strictly inside; a segment where the ray crosses it, endpoints
included; a segment parallel to the ray or of zero length never; a ray never hits a shape of its
own non-zero group; nothing hit gives exactly max_range.

Threads: one ``prange`` kernel on numba's default threading layer, with
``numba.get_num_threads()`` threads: the ``NUMBA_NUM_THREADS`` environment variable, which
defaults to the CPU count; ``numba.set_num_threads(n)`` lowers it at run time. Casts of fewer
than ``_PARALLEL_MIN`` rays run it on the calling thread alone. Kernels compile on first use
and are cached on disk (``cache=True``: ``__pycache__`` or ``NUMBA_CACHE_DIR``), so only a process
without the cache compiles. Without numba this module still imports: :func:`make_caster` then
returns the numpy :class:`RayCaster` and :func:`sonar_distances` computes with numpy.
"""

from __future__ import annotations

import math

import numpy as np

from .raycast import RayCaster, _array, _groups, _warm_allocator

try:
    import numba
    from numba import prange
except ImportError:  # numba missing: the numpy caster serves
    numba = None
    prange = range

_MAX_CELLS = 1024  # a circle's box spanning more cells is tested by every ray instead
_BUF = 4 * _MAX_CELLS  # cells a segment may be binned into (more: tested by every ray)
_REL = 1e-6  # shape padding per metre of magnitude, >> any rounding it must cover (above)
_PARALLEL_MIN = 4096  # rays from which the threads pay
_CHUNK = 512  # rows (robots or rays) a thread takes at a time: as fast as a static split
_NEVER, _BINNED, _ALWAYS = 0, 1, 2  # what becomes of a shape
# A grid set is a tuple (geom, cstart, cdata, cgroup, sstart, sdata, sgroup) of one or two grids.
# geom (G, 10) holds per grid the columns below: corner, cell side, extent, padding (m), cells
# per axis, and its first offset in the start arrays. Grid g's cell (column c, row r) is base +
# c * ny + r, its always bucket base + nx * ny; the start arrays hold nx * ny + 2 offsets per
# grid into the entries: circles (x, y, r), segments (x1, y1, x2 - x1, y2 - y1), and groups.
X0, Y0, CS, INV, W, H, NX, NY, PAD, BASE = range(10)


def _jit(parallel: bool = False, inline: bool = False):
    """numba's ``njit``, cached, without Python's division checks (divisors are checked or
    non-zero); the identity without numba, so that the module imports.

    ``inline`` inlines in numba's IR. The per-ray functions need it: a call passing arrays
    increfs and decrefs each (atomic operations, contended by the threads, costlier than the
    ray), and LLVM inlines only small functions. Each is inlined at one place (compile time).
    """
    if numba is None:
        return lambda f: f
    return numba.njit(cache=True, parallel=parallel, error_model="numpy",
                      inline="always" if inline else "never")


@_jit()
def _circle_hit(ox, oy, dx, dy, mr, cx, cy, r):
    """Distance (m) at which the ray from (ox, oy) along unit (dx, dy), of length ``mr``,
    enters circle (cx, cy, r), 0 from strictly inside; inf for no hit. World frame, m.
    raycast._hit_circles for one pair. Branch-free (bitwise & and |, a select): whether a
    candidate is hit is unpredictable, and a mispredicted branch costs more than the sqrt."""
    mx, my = ox - cx, oy - cy
    b = mx * dx + my * dy  # -t of the closest approach
    h = mx * dy - my * dx  # distance from the centre to the ray's line
    disc = (r - h) * (r + h)
    enter = -b - math.sqrt(max(disc, 0.0))
    inside = mx * mx + my * my < r * r  # strictly: starting on the edge going out is no hit
    ok = ((disc >= 0.0) & (enter >= 0.0) | inside) & (enter <= mr)
    return max(enter, 0.0) if ok else math.inf


@_jit()
def _segment_hit(ox, oy, dx, dy, mr, x1, y1, ex, ey):
    """As :func:`_circle_hit` for the segment from (x1, y1) to (x1 + ex, y1 + ey)."""
    wx, wy = x1 - ox, y1 - oy
    den = dx * ey - dy * ex
    if den == 0.0:  # parallel or zero-length: a miss
        return math.inf
    t, u = (wx * ey - wy * ex) / den, (wx * dy - wy * dx) / den  # along the ray, the segment
    if t >= 0.0 and t <= mr and u >= 0.0 and u <= 1.0:
        return t
    return math.inf


@_jit(inline=True)
def _span(a, b, s, inv, n):
    """First and last index (clipped to 0 .. n - 1) of the cells of side 1 / ``inv`` covering
    [min(a, b) - s, max(a, b) + s], coordinates relative to the grid's corner (m)."""
    lo, hi = math.floor((min(a, b) - s) * inv), math.floor((max(a, b) + s) * inv)
    return int(min(max(lo, 0.0), n - 1.0)), int(min(max(hi, 0.0), n - 1.0))


@_jit()
def _slab(p, d, size, s, lo, hi):
    """Narrows the parameter interval [lo, hi] to where p + d * t lies in [-s, size + s] (one
    axis of a cell, padded by s; m); empty if lo > hi."""
    if d == 0.0:
        return (lo, hi) if -s <= p <= size + s else (1.0, 0.0)
    ta, tb = (-s - p) / d, (size + s - p) / d
    return max(lo, min(ta, tb)), min(hi, max(ta, tb))


@_jit()
def _axis(p, inv_d, i, cs):
    """DDA along one axis from coordinate ``p`` in cell ``i`` (m, grid-relative), 1 / the
    direction component ``inv_d`` (0: no motion): (step, parameter of the next cell border,
    parameter per cell). Multiplies by the inverse: a division costs as much as a cell."""
    if inv_d > 0.0:
        return 1, ((i + 1) * cs - p) * inv_d, cs * inv_d
    if inv_d < 0.0:
        return -1, (i * cs - p) * inv_d, -cs * inv_d
    return 0, math.inf, math.inf


@_jit()
def _entry(x, y, ix, iy, w, h, pad, mr):
    """Parameter (m) at which a ray from (x, y) (grid-relative, m), of inverse direction (ix,
    iy) (0: no motion) and length mr, enters [0, w] x [0, h] padded by ``pad``; inf: never."""
    if 0.0 <= x <= w and 0.0 <= y <= h:
        return 0.0
    lo, hi = 0.0, mr
    for p, inv_d, size in ((x, ix, w), (y, iy, h)):
        if inv_d == 0.0 and not -pad <= p <= size + pad:
            return math.inf
        if inv_d != 0.0:
            ta, tb = (-pad - p) * inv_d, (size + pad - p) * inv_d
            lo, hi = max(lo, min(ta, tb)), min(hi, max(ta, tb))
    return lo if lo <= hi else math.inf


# --- grid building --------------------------------------------------------------------------


@_jit()
def _boxes(circles, segments, cs):
    """Bounding boxes (n, 4) [x0, y0, x1, y1] (m) of the circles then the segments, and each
    shape's fate (_NEVER, _BINNED, _ALWAYS) for cells of side ``cs`` (m)."""
    nc = len(circles)
    box, fate = np.empty((nc + len(segments), 4)), np.full(nc + len(segments), _BINNED)
    for k in range(nc):
        x, y, r = circles[k, 0], circles[k, 1], circles[k, 2]
        box[k, 0], box[k, 1], box[k, 2], box[k, 3] = x - r, y - r, x + r, y + r
        fate[k] = _ALWAYS if (2.0 * r / cs + 3.0) ** 2 > _MAX_CELLS else _BINNED
    for j in range(len(segments)):
        x1, y1, x2, y2 = segments[j, 0], segments[j, 1], segments[j, 2], segments[j, 3]
        box[nc + j, 0], box[nc + j, 1] = min(x1, x2), min(y1, y2)
        box[nc + j, 2], box[nc + j, 3] = max(x1, x2), max(y1, y2)
        if x1 == x2 and y1 == y2:
            fate[nc + j] = _NEVER
        elif 3.0 * ((abs(x2 - x1) + abs(y2 - y1)) / cs + 8.0) > _BUF:
            fate[nc + j] = _ALWAYS
    return box, fate


@_jit()
def _geometry(box, fate, cs, cap):
    """geom row of a grid over the binned boxes, cells of side ``cs`` (m) doubled until at most
    ``cap``; no cells if none is binned. Shapes beyond float range become _ALWAYS."""
    x0, y0, x1, y1 = math.inf, math.inf, -math.inf, -math.inf
    for k in range(len(box)):
        if fate[k] == _BINNED:
            x0, y0 = min(x0, box[k, 0]), min(y0, box[k, 1])
            x1, y1 = max(x1, box[k, 2]), max(y1, box[k, 3])
    pad = _REL * (1.0 + 4.0 * (abs(x0) + abs(y0) + (x1 - x0) + (y1 - y0)))
    w, h = x1 - x0 + 2.0 * pad, y1 - y0 + 2.0 * pad
    if not (0.0 <= w < 1e300 and 0.0 <= h < 1e300):  # nothing binned, or beyond float range
        for k in range(len(box)):
            fate[k] = _ALWAYS if fate[k] == _BINNED else fate[k]
        return np.array([0.0, 0.0, cs, 1.0 / cs, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    while (w / cs + 1.0) * (h / cs + 1.0) > cap:
        cs *= 2.0  # the cell size changes the speed, never the result
    return np.array([x0 - pad, y0 - pad, cs, 1.0 / cs, w, h, math.floor(w / cs) + 1.0,
                     math.floor(h / cs) + 1.0, pad, 0.0])


@_jit()
def _fits(box, fate, geom):
    """Whether the grid of geom row ``geom`` holds all binned boxes, padded as its shapes."""
    x0, y0, pad = geom[X0], geom[Y0], geom[PAD]
    for k in range(len(box)):
        if fate[k] == _BINNED and not (box[k, 0] - pad >= x0 and box[k, 1] - pad >= y0 and
                                       box[k, 2] + pad <= x0 + geom[W] and
                                       box[k, 3] + pad <= y0 + geom[H]):
            return False
    return geom[NX] > 0.0


@_jit()
def _segment_cells(x1, y1, x2, y2, geom, buf):
    """Writes into ``buf`` the cells within geom's pad of the segment (m), column by column;
    returns their count, or -1 if ``buf`` cannot hold them (then tested by every ray)."""
    x0, y0, cs, inv, nx, ny, s = geom[X0], geom[Y0], geom[CS], geom[INV], geom[NX], geom[NY], \
        geom[PAD]
    px, py, ex, ey, n = x1 - x0, y1 - y0, x2 - x1, y2 - y1, 0
    c0, c1 = _span(px, px + ex, s, inv, nx)
    for c in range(c0, c1 + 1):
        u0, u1 = _slab(px - c * cs, ex, cs, s, 0.0, 1.0)  # the part of it in column c
        r0, r1 = _span(py + ey * u0, py + ey * u1, s, inv, ny)
        if u0 <= u1 and n + r1 - r0 + 1 > len(buf):
            return -1
        for r in range(r0, r1 + 1 if u0 <= u1 else r0):
            buf[n], n = c * int(ny) + r, n + 1
    return n


@_jit()
def _offsets(count, ncell):
    """CSR start offsets from per-cell counts kept at [cell + 1], and the write positions."""
    for c in range(ncell + 1):
        count[c + 1] += count[c]
    return count, count[:-1].copy(), np.empty(count[-1], np.int64)


@_jit(inline=True)
def _box_span(box, k, geom):
    """First and last column and row (c0, c1, r0, r1) of the cells of box k, padded by geom's
    pad; the always bucket (nx * ny, nx * ny, 0, 0) if they are too many."""
    x0, y0, inv, nx, ny, s = geom[X0], geom[Y0], geom[INV], geom[NX], geom[NY], geom[PAD]
    c0, c1 = _span(box[k, 0] - x0, box[k, 2] - x0, s, inv, nx)
    r0, r1 = _span(box[k, 1] - y0, box[k, 3] - y0, s, inv, ny)
    if (c1 - c0 + 1) * (r1 - r0 + 1) > _MAX_CELLS:
        return int(nx * ny), int(nx * ny), 0, 0
    return c0, c1, r0, r1


@_jit()
def _circle_csr(box, fate, geom):
    """CSR start offsets (cells + 2) and ids of the circles of boxes ``box`` (n, 4), m: count
    the entries per cell, then place them (inline loops: robots are most of a grid)."""
    ncell, ny = int(geom[NX] * geom[NY]), int(geom[NY])
    start = pos = ids = np.zeros(ncell + 2, np.int64)
    for fill in range(2):
        if fill:
            start, pos, ids = _offsets(start, ncell)
        for k in range(len(box)):
            c0, c1, r0, r1 = _box_span(box, k, geom) if fate[k] == _BINNED else (
                ncell, ncell, 0, 0)
            for c in range(c0, c1 + 1):
                for r in range(r0, r1 + 1):
                    cell = c * ny + r if c < ncell else ncell
                    if fill:
                        ids[pos[cell]], pos[cell] = k, pos[cell] + 1
                    else:
                        start[cell + 1] += 1
    return start, ids


@_jit()
def _segment_csr(segments, fate, geom):
    """CSR start offsets (cells + 2) and ids of segments (n, 4) [x1, y1, x2, y2], m."""
    ncell = int(geom[NX] * geom[NY])
    start = pos = ids = np.zeros(ncell + 2, np.int64)
    buf = np.empty(_BUF, np.int64)
    for fill in range(2):
        if fill:
            start, pos, ids = _offsets(start, ncell)
        for k in range(len(segments)):
            n = 0 if fate[k] == _NEVER else -1 if fate[k] == _ALWAYS else _segment_cells(
                segments[k, 0], segments[k, 1], segments[k, 2], segments[k, 3], geom, buf)
            if n < 0:
                buf[0], n = ncell, 1
            for j in range(n):
                if fill:
                    ids[pos[buf[j]]], pos[buf[j]] = k, pos[buf[j]] + 1
                else:
                    start[buf[j] + 1] += 1
    return start, ids


@_jit()
def _build(circles, cgroup, segments, sgroup, cell_size, cap, like):
    """The one-grid set of circles (C, 3) [x, y, r] and segments (S, 4) [x1, y1, x2, y2]
    (world frame, m) with their int64 groups: on geom row ``like`` if it holds them all, else
    with cells of ``cell_size`` m or coarser, at most ``cap`` of them."""
    nc = len(circles)
    box, fate = _boxes(circles, segments, cell_size)
    geom = like.copy() if _fits(box, fate, like) else _geometry(box, fate, cell_size, cap)
    cstart, cids = _circle_csr(box[:nc], fate[:nc], geom)
    sstart, sids = _segment_csr(segments, fate[nc:], geom)
    sdata = segments[sids]
    sdata[:, 2] -= sdata[:, 0]  # x2 - x1, y2 - y1 as raycast._columns has them
    sdata[:, 3] -= sdata[:, 1]
    return (geom.reshape(1, 10), cstart, circles[cids], cgroup[cids], sstart, sdata,
            sgroup[sids])


@_jit()
def _merge(fs, fd, fg, ms, md, mg, shared):
    """One family's start offsets, entries and groups of two grids: cell by cell if they share
    their geometry (the first's entries, then the second's), else one after the other."""
    data = np.empty((len(fd) + len(md), fd.shape[1]))
    group = np.empty(len(fd) + len(md), np.int64)
    if not shared:
        data[:len(fd)], data[len(fd):], group[:len(fd)], group[len(fd):] = fd, md, fg, mg
        return np.concatenate((fs, ms + len(fd))), data, group
    start = fs + ms
    for c in range(len(fs) - 1):  # element by element: a row slice costs 3 x (refcounts)
        p = start[c]
        for e in range(fs[c], fs[c + 1]):
            for q in range(fd.shape[1]):
                data[p, q] = fd[e, q]
            group[p], p = fg[e], p + 1
        for e in range(ms[c], ms[c + 1]):
            for q in range(fd.shape[1]):
                data[p, q] = md[e, q]
            group[p], p = mg[e], p + 1
    return start, data, group


@_jit()
def _combine(fixed, moving):
    """The grid set of a cast from the one-grid sets of the static and the moving shapes."""
    fg, mg = fixed[0], moving[0]
    shared = fg[0, NX] > 0.0 and (fg[0, :PAD] == mg[0, :PAD]).all()
    cstart, cdata, cgroup = _merge(fixed[1], fixed[2], fixed[3], moving[1], moving[2],
                                   moving[3], shared)
    sstart, sdata, sgroup = _merge(fixed[4], fixed[5], fixed[6], moving[4], moving[5],
                                   moving[6], shared)
    geom = fg.copy() if shared else np.concatenate((fg, mg))
    if not shared:
        geom[1, BASE] = len(fixed[1])
    return geom, cstart, cdata, cgroup, sstart, sdata, sgroup


# --- traversal: inlined (see _jit), each function at one place -------------------------------


@_jit(inline=True)
def _test_cell(grids, cell, ox, oy, dx, dy, mr, rg, best):
    """Nearest hit (m) among ``best`` and the shapes of ``cell`` (an index into the start
    arrays); a ray of non-zero group ``rg`` skips the shapes of that group."""
    _, cstart, cdata, cgroup, sstart, sdata, sgroup = grids
    for e in range(cstart[cell], cstart[cell + 1]):
        hit = _circle_hit(ox, oy, dx, dy, mr, cdata[e, 0], cdata[e, 1], cdata[e, 2])
        best = min(best, hit if (rg == 0) | (cgroup[e] != rg) else best)  # no branch
    for e in range(sstart[cell], sstart[cell + 1]):
        if rg == 0 or sgroup[e] != rg:
            best = min(best, _segment_hit(ox, oy, dx, dy, mr, sdata[e, 0], sdata[e, 1],
                                          sdata[e, 2], sdata[e, 3]))
    return best


@_jit(inline=True)
def _dda(grids, g, ox, oy, dx, dy, ix, iy, mr, rg, best):
    """Amanatides-Woo walk of the ray (world frame, unit direction (dx, dy) of inverses (ix,
    iy), length mr; m) through grid g's cells, nearest first, until the next one starts beyond
    ``best`` (<= mr) or is off the grid: the nearest hit (m)."""
    gm = grids[0]
    x, y, cs, inv = ox - gm[g, X0], oy - gm[g, Y0], gm[g, CS], gm[g, INV]
    nx, ny, base = int(gm[g, NX]), int(gm[g, NY]), int(gm[g, BASE])
    t0 = _entry(x, y, ix, iy, gm[g, W], gm[g, H], gm[g, PAD], mr)
    if t0 > best:
        return best
    i, _ = _span(x + dx * t0, x + dx * t0, 0.0, inv, nx)
    j, _ = _span(y + dy * t0, y + dy * t0, 0.0, inv, ny)
    (si, ti, di), (sj, tj, dj) = _axis(x, ix, i, cs), _axis(y, iy, j, cs)
    while True:
        best = _test_cell(grids, base + i * ny + j, ox, oy, dx, dy, mr, rg, best)
        if ti < tj:
            if ti > best:
                return best
            i, ti = i + si, ti + di
        else:
            if tj > best:
                return best
            j, tj = j + sj, tj + dj
        if i < 0 or i >= nx or j < 0 or j >= ny:
            return best


@_jit(inline=True)
def _trace(grids, g, ox, oy, dx, dy, ix, iy, mr, rg, best):
    """Nearest hit (m), from ``best``, of the ray in grid g: its always bucket and the DDA, or
    for a ray whose slack ``s`` (a bound on its computed hits' error, 1e-8 x the coordinates'
    magnitude, with a wide margin) exceeds the shapes' padding, every cell."""
    gm = grids[0]
    base, ncell = int(gm[g, BASE]), int(gm[g, NX] * gm[g, NY])
    s = _REL * (1.0 + abs(ox) + abs(oy) + mr + abs(gm[g, X0]) + abs(gm[g, Y0]) + gm[g, W] +
                gm[g, H])
    if ncell == 0 or s > gm[g, PAD]:
        for cell in range(base, base + ncell + 1):
            best = _test_cell(grids, cell, ox, oy, dx, dy, mr, rg, best)
        return best
    best = _test_cell(grids, base + ncell, ox, oy, dx, dy, mr, rg, best)
    return _dda(grids, g, ox, oy, dx, dy, ix, iy, mr, rg, best)


@_jit(inline=True)
def _one_ray(ox, oy, dx, dy, mr, rg, grids):
    """Distance (m) to the first shape of the grid set hit by the ray from (ox, oy) along
    (dx, dy) (made unit here, as raycast._rays does; zero stays zero), of length ``mr``."""
    norm = math.sqrt(dx * dx + dy * dy)
    dx, dy = (dx / norm, dy / norm) if norm != 0.0 else (dx, dy)
    # Inverse components for the walk; one below 1e-150 moves the ray by far less than the
    # padding over any length the DDA serves (see _trace), so it counts as none.
    ix = 1.0 / dx if abs(dx) >= 1e-150 else 0.0
    iy = 1.0 / dy if abs(dy) >= 1e-150 else 0.0
    best = mr
    for g in range(len(grids[0])):
        best = _trace(grids, g, ox, oy, dx, dy, ix, iy, mr, rg, best)
    return best


@_jit(inline=True)
def _row(n, o, d, fan, angles, reach, edge, rg, grids, out):
    """Fills row n of ``out`` (N, K): rays from o[n] (world frame, m) along d[n] (K = 1), or
    for a ``fan`` at heading d[n, 2] + the angles of (cos, sin) ``angles`` (K, 2), reach
    reach[n] + edge[n] and give min(reach[n], distance - edge[n]) (m): a Sonar reading from
    the chassis edge; edge 0: the distance. ``reach``, ``edge`` (1,): alike for all rows."""
    rn, en = reach[n if len(reach) > 1 else 0], edge[n if len(edge) > 1 else 0]
    mr = rn + en
    ch, sh = (math.cos(d[n, 2]), math.sin(d[n, 2])) if fan else (1.0, 0.0)
    for k in range(out.shape[1]):
        dx, dy = d[n, 0], d[n, 1]
        if fan:  # the heading's direction rotated by the angle: two libm calls a robot
            dx, dy = ch * angles[k, 0] - sh * angles[k, 1], sh * angles[k, 0] + ch * angles[k, 1]
        dist = _one_ray(o[n, 0], o[n, 1], dx, dy, mr, rg[n], grids)
        out[n, k] = rn if dist >= mr else dist - en


@_jit(parallel=True)
def _rows(o, d, fan, angles, reach, edge, rg, grids, out):
    """Every row of ``out`` (see :func:`_row`), shared among numba's threads. Also serves the
    small casts (on one thread): without ``prange``, numba increfs and decrefs the arrays
    around every inlined call, which made a serial kernel 3.5 x slower."""
    for n in prange(len(out)):
        _row(np.int64(n), o, d, fan, angles, reach, edge, rg, grids, out)  # prange's: unsigned


# --- Python side ----------------------------------------------------------------------------

_NO_GEOM = np.zeros(10)  # geom row of a grid without cells
_NO_ANGLES = np.zeros((1, 2))  # the fan angles of a plain cast (unused)
_NO_EDGE = np.zeros(1)  # a plain cast's rays start at their origin


def _c(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous writable array: the one layout the kernels are compiled for."""
    return a if a.flags.c_contiguous and a.flags.writeable else np.array(a, order="C")


def _shapes(circles, segments, circle_group, segment_group) -> tuple:
    """Validated circles (C, 3), segments (S, 4) and their int64 groups, as raycast._bin."""
    c, s = _array(circles, 3, "circles"), _array(segments, 4, "segments")
    if (c[:, 2] < 0).any():
        raise ValueError("circle radii must be non-negative")
    return (_c(c), _c(s), _c(_groups(circle_group, len(c), "circle_group")),
            _c(_groups(segment_group, len(s), "segment_group")))


def _grid(shapes: tuple, cell_size: float, like=_NO_GEOM, least: int = 1 << 12) -> tuple:
    """The one-grid set of ``_shapes``' output, on geom row ``like`` if it holds them. A cap of
    ``least`` cells, or 64 per shape, keeps the build linear in the shape count."""
    c, s, cg, sg = shapes
    cap = max(least, min(1 << 20, 64 * (len(c) + len(s))))
    return _build(c, cg, s, sg, cell_size, float(cap), like)


class JitRayCaster:
    """Casts many 2D rays against circles and line segments at once, in compiled loops.

    :class:`coopsim.sim.raycast.RayCaster`'s API and results: static shapes are given once to
    :meth:`set_static`, moving shapes to every :meth:`cast`; both are hit alike.

    Attributes:
        cell_size: Side of the grid cells, m.
    """

    def __init__(self, cell_size: float = 2.0) -> None:
        """Creates a caster with no static shapes.

        Args:
            cell_size: Side of the grid cells, m. Changes the speed only.

        Raises:
            ImportError: numba is not installed (:func:`make_caster` falls back to numpy).
        """
        if numba is None:
            raise ImportError("JitRayCaster needs numba; make_caster() falls back to numpy")
        if not (np.isfinite(cell_size) and cell_size > 0):
            raise ValueError(f"cell_size must be a positive number of metres, got {cell_size}")
        self.cell_size = float(cell_size)
        self.set_static()
        _warm_allocator()  # a large cast's output then reuses heap pages

    def set_static(self, circles=None, segments=None, circle_group=None,
                   segment_group=None) -> None:
        """Replaces the static shapes, tested by every later :meth:`cast`.

        Args:
            circles: (C, 3) [x, y, radius], world frame, m; None for none.
            segments: (S, 4) [x1, y1, x2, y2], world frame, m; None for none.
            circle_group: (C,) int groups, 0 = none; None for all 0.
            segment_group: (S,) int groups, 0 = none; None for all 0.
        """
        # Up to 65,536 cells, more than a moving grid's cap: moving shapes within are binned
        # on this geometry, so a few walls must not set the cell size for 10,000 robots.
        self._static = _grid(_shapes(circles, segments, circle_group, segment_group),
                             self.cell_size, least=1 << 16)

    def cast(self, origins, directions, max_range, circles, segments, ray_group=None,
             circle_group=None, segment_group=None) -> np.ndarray:
        """Distance from each ray's origin to the first shape it hits.

        Args:
            origins: (R, 2) ray starts, world frame, m.
            directions: (R, 2) ray directions, world frame; unit expected (normalised here).
            max_range: Scalar or (R,) finite, non-negative ray lengths, m.
            circles: (C, 3) [x, y, radius] moving circles, world frame, m, or None.
            segments: (S, 4) [x1, y1, x2, y2] moving segments, world frame, m, or None.
            ray_group: (R,) int; a ray never hits a shape of its own non-zero group.
            circle_group: (C,) int groups of ``circles``, 0 = none.
            segment_group: (S,) int groups of ``segments``, 0 = none.

        Returns:
            (R,) float64 distances in [0, max_range], m; exactly max_range when nothing is hit.
        """
        o, d = _array(origins, 2, "origins"), _array(directions, 2, "directions")
        if d.shape != o.shape:
            raise ValueError(f"directions shape {d.shape} differs from origins {o.shape}")
        mr = np.asarray(max_range, dtype=np.float64)  # a scalar stays one value: (1,)
        mr = np.array(mr.reshape(1) if mr.ndim == 0 else np.broadcast_to(mr, len(o)))
        if not (np.isfinite(mr).all() and (mr >= 0).all()):
            raise ValueError("max_range must be finite and non-negative")
        rg = _c(_groups(ray_group, len(o), "ray_group"))
        return self._run(_c(o), _c(d), False, _NO_ANGLES, mr, _NO_EDGE, rg,
                         (circles, segments, circle_group, segment_group), 1).reshape(len(o))

    def _sonar(self, poses, radius, angles, max_range, groups, moving) -> np.ndarray:
        """:func:`sonar_distances` in one kernel; ``moving`` = (circles, segments, groups)."""
        p, rad = _array(poses, 3, "poses"), _array(np.reshape(radius, (-1, 1)), 1, "radius")
        reach = _array(np.reshape(max_range, (-1, 1)), 1, "max_range")
        a = _array(np.reshape(angles, (-1, 1)), 1, "angles")[:, 0]
        if not len(p) == len(rad) == len(reach) or ((reach + rad) < 0).any():
            raise ValueError("poses, radius and max_range must have as many rows, and "
                             "max_range + radius must be non-negative")
        fan = np.column_stack((np.cos(a), np.sin(a)))
        return self._run(_c(p), _c(p), True, fan, _c(reach[:, 0]), _c(rad[:, 0]),
                         _c(_groups(groups, len(p), "groups")), moving, len(a))

    def _run(self, o, d, fan, angles, reach, edge, rg, moving, k) -> np.ndarray:
        """Bins the ``moving`` shapes (circles, segments, their groups) on the static grid's
        geometry if they fit (robots within static walls: one grid to walk), merges the two
        grids, runs :func:`_rows` (see :func:`_row`); returns (N, k) distances, m."""
        grids = _combine(self._static, _grid(_shapes(*moving), self.cell_size,
                                             self._static[0][0]))
        out = np.empty((len(o), k))
        threads, many = numba.get_num_threads(), out.size >= _PARALLEL_MIN
        # Both settings are this thread's own. Too few rays: one thread, waking the others
        # costs more. Many: rows handed out in chunks, so that when another process holds a
        # core, the threads still running take over the rows of the one preempted.
        numba.set_num_threads(threads if many else 1)
        chunk = numba.set_parallel_chunksize(_CHUNK)
        try:
            _rows(o, d, fan, angles, reach, edge, rg, grids, out)
        finally:
            numba.set_num_threads(threads)
            numba.set_parallel_chunksize(chunk)
        return out


def make_caster(kind: str = "auto", cell_size: float = 2.0):
    """A ray caster: ``"jit"`` a :class:`JitRayCaster` (needs numba), ``"numpy"`` a
    :class:`RayCaster`, ``"auto"`` the first if numba imports, else the second.

    Args:
        kind: "auto", "jit" or "numpy".
        cell_size: Side of the grid cells, m.
    """
    if kind not in ("auto", "jit", "numpy"):
        raise ValueError(f"kind must be 'auto', 'jit' or 'numpy', got {kind!r}")
    if kind == "jit" or (kind == "auto" and numba is not None):
        return JitRayCaster(cell_size)
    return RayCaster(cell_size)


def sonar_distances(caster, poses, radius, angles, max_range, groups, circles, circle_group,
                    segments, segment_group) -> np.ndarray:
    """Every robot's distance readings as :class:`coopsim.modules.Sonar` computes them: rays
    from the robot's centre (its own chassis skipped by group) at heading + angle, of length
    max_range + radius, less the radius; exactly max_range when nothing is within it.

    Args:
        caster: A JitRayCaster (one kernel) or a RayCaster (numpy), its static shapes set.
        poses: (N, 3) x, y (m) and yaw (rad) of the robots, world frame.
        radius: (N,) chassis radii, m.
        angles: (K,) sensor angles from the heading, rad, counter-clockwise.
        max_range: (N,) largest distance measured, m.
        groups: (N,) each robot's group.
        circles, circle_group, segments, segment_group: Moving shapes, as for ``cast``.

    Returns:
        (N, K) float64 distances, m (within 1e-12 m of the numpy path's: the jit rotates the
        heading's direction by each angle instead of taking cos and sin of their sum).
    """
    if isinstance(caster, JitRayCaster):
        return caster._sonar(poses, radius, angles, max_range, groups,
                             (circles, segments, circle_group, segment_group))
    poses, angles = np.asarray(poses, dtype=np.float64), np.ravel(angles)
    k = len(angles)
    ray_angles = (poses[:, 2:3] + angles[None, :]).ravel()
    edge, reach = np.repeat(radius, k), np.repeat(max_range, k)
    dist = caster.cast(np.repeat(poses[:, :2], k, axis=0),
                       np.column_stack((np.cos(ray_angles), np.sin(ray_angles))), reach + edge,
                       circles, segments, np.repeat(groups, k), circle_group, segment_group)
    return np.where(dist >= reach + edge, reach, dist - edge).reshape(len(poses), k)
