"""Grids of the numba ray caster (:mod:`coopsim.raycast.jitcast`): shapes binned into cells, in CSR.

Square cells (side ``cell_size``, doubled while there would be too many) over the shapes'
bounding box: ``start[c] .. start[c + 1]`` are cell c's entries, copies of its shapes'
coordinates and groups (no indirection in the casting loop). A circle is binned into the cells of
its box, a segment into those along it, both padded by ``pad`` (:mod:`coopsim.raycast.jitcast` says
why); shapes spanning too many cells go to an *always* bucket every ray tests; zero-length
segments nowhere. Static shapes are binned once, moving ones every cast on the static grid's
geometry when they fit in it, and :func:`combine` merges the two grids cell by cell.

Frames and units: world frame, metres.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.compiled import jit as _jit
from ..model.compiled import prange

_MAX_CELLS = 1024  # a circle's box spanning more cells is tested by every ray instead
_BUF = 4 * _MAX_CELLS  # cells a segment may be binned into (more: tested by every ray)
REL = 1e-6  # shape padding per metre of magnitude, >> any rounding it must cover (above)
_NEVER, _BINNED, _ALWAYS = 0, 1, 2  # what becomes of a shape
# A grid set is a tuple (geom, cstart, cdata, cgroup, sstart, sdata, sgroup) of one or two grids.
# geom (G, 10) holds per grid the columns below: corner, cell side, extent, padding (m), cells
# per axis, and its first offset in the start arrays. Grid g's cell (column c, row r) is base +
# c * ny + r, its always bucket base + nx * ny; the start arrays hold nx * ny + 2 offsets per
# grid into the entries: circles (x, y, r), segments (x1, y1, x2 - x1, y2 - y1), and groups.
X0, Y0, CS, INV, W, H, NX, NY, PAD, BASE = range(10)


@_jit()
def circle_hit(ox, oy, dx, dy, mr, cx, cy, r):
    """Distance (m) at which the ray from (ox, oy) along unit (dx, dy), of length ``mr``,
    enters circle (cx, cy, r), 0 from strictly inside; inf for no hit. World frame, m.
    the exact hit of one (ray, circle) pair. Branch-free (bitwise & and |, a select): whether a
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
def segment_hit(ox, oy, dx, dy, mr, x1, y1, ex, ey):
    """As :func:`circle_hit` for the segment from (x1, y1) to (x1 + ex, y1 + ey)."""
    wx, wy = x1 - ox, y1 - oy
    den = dx * ey - dy * ex
    if den == 0.0:  # parallel or zero-length: a miss
        return math.inf
    t, u = (wx * ey - wy * ex) / den, (wx * dy - wy * dx) / den  # along the ray, the segment
    if t >= 0.0 and t <= mr and u >= 0.0 and u <= 1.0:
        return t
    return math.inf


@_jit(inline=True)
def cell_span(a, b, s, inv, n):
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




@_jit(inline=True)
def _circle_box(k, circles, cs, box, fate):
    x, y, r = circles[k, 0], circles[k, 1], circles[k, 2]
    box[k, 0], box[k, 1], box[k, 2], box[k, 3] = x - r, y - r, x + r, y + r
    fate[k] = _ALWAYS if (2.0 * r / cs + 3.0) ** 2 > _MAX_CELLS else _BINNED


@_jit(parallel=True)
def _circle_boxes_threads(circles, cs, box, fate):
    """:func:`_circle_box` of every circle (a swarm's robots), on the threads."""
    for k in prange(len(circles)):
        _circle_box(np.int64(k), circles, cs, box, fate)


@_jit()
def _boxes(circles, segments, cs, many):
    """Bounding boxes (n, 4) [x0, y0, x1, y1] (m) of the circles then the segments, and each
    shape's fate (_NEVER, _BINNED, _ALWAYS) for cells of side ``cs`` (m); the circles' on the
    threads if ``many`` (a parallel launch costs ~3 us even on one thread)."""
    nc = len(circles)
    box, fate = np.empty((nc + len(segments), 4)), np.full(nc + len(segments), _BINNED)
    if many:
        _circle_boxes_threads(circles, cs, box, fate)
    else:
        for k in range(nc):
            _circle_box(k, circles, cs, box, fate)
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
    pad = REL * (1.0 + 4.0 * (abs(x0) + abs(y0) + (x1 - x0) + (y1 - y0)))
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
    c0, c1 = cell_span(px, px + ex, s, inv, nx)
    for c in range(c0, c1 + 1):
        u0, u1 = _slab(px - c * cs, ex, cs, s, 0.0, 1.0)  # the part of it in column c
        r0, r1 = cell_span(py + ey * u0, py + ey * u1, s, inv, ny)
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
    c0, c1 = cell_span(box[k, 0] - x0, box[k, 2] - x0, s, inv, nx)
    r0, r1 = cell_span(box[k, 1] - y0, box[k, 3] - y0, s, inv, ny)
    if (c1 - c0 + 1) * (r1 - r0 + 1) > _MAX_CELLS:
        return int(nx * ny), int(nx * ny), 0, 0
    return c0, c1, r0, r1


@_jit(inline=True)
def _span(k, box, fate, geom, ncell, span):
    c0, c1, r0, r1 = _box_span(box, k, geom) if fate[k] == _BINNED else (ncell, ncell, 0, 0)
    span[k, 0], span[k, 1], span[k, 2], span[k, 3] = c0, c1, r0, r1


@_jit(parallel=True)
def _spans_threads(box, fate, geom, ncell, span):
    """span[k] = first and last column and row of box k's cells (:func:`_box_span`; the
    always bucket for a box not _BINNED), on the threads."""
    for k in prange(len(box)):
        _span(np.int64(k), box, fate, geom, ncell, span)


@_jit()
def _circle_csr(box, fate, geom, many):
    """CSR start offsets (cells + 2) and ids of the circles of boxes ``box`` (n, 4), m: each
    box's cells (on the threads), then count the entries per cell and place them in circle
    order (inline loops: robots are most of a grid)."""
    ncell, ny = int(geom[NX] * geom[NY]), int(geom[NY])
    start = pos = ids = np.zeros(ncell + 2, np.int64)
    span = np.empty((len(box), 4), np.int64)
    if many:
        _spans_threads(box, fate, geom, ncell, span)
    else:
        for k in range(len(box)):
            _span(k, box, fate, geom, ncell, span)
    for fill in range(2):
        if fill:
            start, pos, ids = _offsets(start, ncell)
        for k in range(len(box)):
            c0, c1, r0, r1 = span[k, 0], span[k, 1], span[k, 2], span[k, 3]
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
def build(circles, cgroup, segments, sgroup, cell_size, cap, like, many):
    """The one-grid set of circles (C, 3) [x, y, r] and segments (S, 4) [x1, y1, x2, y2]
    (world frame, m) with their int64 groups: on geom row ``like`` if it holds them all, else
    with cells of ``cell_size`` m or coarser, at most ``cap`` of them."""
    nc = len(circles)
    box, fate = _boxes(circles, segments, cell_size, many)
    geom = like.copy() if _fits(box, fate, like) else _geometry(box, fate, cell_size, cap)
    cstart, cids = _circle_csr(box[:nc], fate[:nc], geom, many)
    sstart, sids = _segment_csr(segments, fate[nc:], geom)
    sdata = segments[sids]
    sdata[:, 2] -= sdata[:, 0]  # x2 - x1, y2 - y1
    sdata[:, 3] -= sdata[:, 1]
    return (geom.reshape(1, 10), cstart, circles[cids], cgroup[cids], sstart, sdata,
            sgroup[sids])


@_jit()
def _merge(fs, fd, fg, ms, md, mg, shared, many):
    """One family's start offsets, entries and groups of two grids: cell by cell if they share
    their geometry (the first's entries, then the second's), else one after the other."""
    if shared and len(md) == 0:  # nothing moving of this family (walls only): no copy
        return fs, fd, fg
    if shared and len(fd) == 0:  # nothing static of it (robots among walls): no copy
        return ms, md, mg
    data = np.empty((len(fd) + len(md), fd.shape[1]))
    group = np.empty(len(fd) + len(md), np.int64)
    if not shared:
        data[:len(fd)], data[len(fd):], group[:len(fd)], group[len(fd):] = fd, md, fg, mg
        return np.concatenate((fs, ms + len(fd))), data, group
    start = fs + ms
    if many:
        _merge_cells_threads(fs, fd, fg, ms, md, mg, start, data, group)
    else:
        for c in range(len(fs) - 1):
            _merge_cell(c, fs, fd, fg, ms, md, mg, start, data, group)
    return start, data, group


@_jit(inline=True)
def _merge_cell(c, fs, fd, fg, ms, md, mg, start, data, group):
    """Cell c of :func:`_merge` of two grids sharing their geometry: the first's entries, then
    the second's, into data[start[c]:start[c + 1]] (and its groups), which no other cell
    writes."""
    p = start[c]
    for e in range(fs[c], fs[c + 1]):  # element by element: a row slice costs refcounts
        for q in range(fd.shape[1]):
            data[p, q] = fd[e, q]
        group[p], p = fg[e], p + 1
    for e in range(ms[c], ms[c + 1]):
        for q in range(fd.shape[1]):
            data[p, q] = md[e, q]
        group[p], p = mg[e], p + 1


@_jit(parallel=True)
def _merge_cells_threads(fs, fd, fg, ms, md, mg, start, data, group):
    """:func:`_merge_cell` of every cell, on the threads."""
    for c in prange(len(fs) - 1):
        _merge_cell(np.int64(c), fs, fd, fg, ms, md, mg, start, data, group)


@_jit()
def combine(fixed, moving, many):
    """The grid set of a cast from the one-grid sets of the static and the moving shapes
    (merged on the threads if ``many``)."""
    fg, mg = fixed[0], moving[0]
    shared = fg[0, NX] > 0.0 and (fg[0, :PAD] == mg[0, :PAD]).all()
    cstart, cdata, cgroup = _merge(fixed[1], fixed[2], fixed[3], moving[1], moving[2],
                                   moving[3], shared, many)
    sstart, sdata, sgroup = _merge(fixed[4], fixed[5], fixed[6], moving[4], moving[5],
                                   moving[6], shared, many)
    geom = fg.copy() if shared else np.concatenate((fg, mg))
    if not shared:
        geom[1, BASE] = len(fixed[1])
    return geom, cstart, cdata, cgroup, sstart, sdata, sgroup
