"""The compiled caster's walk: one ray through a grid set's cells, nearest cell first.

An Amanatides-Woo DDA (:func:`trace`) from the ray's origin until the next cell starts beyond
the best hit so far, testing the shapes binned in each cell (:mod:`coopsim.raycast.jitgrid`)
with its exact hit functions; and the direction of one ray of a fan (:func:`fan_dir`). Shared by
the per-ray kernels (:mod:`coopsim.raycast.jitcast`) and the per-robot fans
(:mod:`coopsim.raycast.jitfan`); why the walk cannot miss a hit is in jitcast's docstring.
Frames and units: world frame, metres.
"""

from __future__ import annotations

import math

from ..model.compiled import jit as _jit
from .jitgrid import (BASE, CS, H, INV, NX, NY, PAD, REL, W, X0, Y0, cell_span, circle_hit,
                      segment_hit)


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


# --- traversal: inlined (see _jit), each function at one place -------------------------------


@_jit(inline=True)
def _test_cell(grids, cell, ox, oy, dx, dy, mr, rg, best):
    """Nearest hit (m) among ``best`` and the shapes of ``cell`` (an index into the start
    arrays); a ray of non-zero group ``rg`` skips the shapes of that group."""
    _, cstart, cdata, cgroup, sstart, sdata, sgroup = grids
    for e in range(cstart[cell], cstart[cell + 1]):
        hit = circle_hit(ox, oy, dx, dy, mr, cdata[e, 0], cdata[e, 1], cdata[e, 2])
        best = min(best, hit if (rg == 0) | (cgroup[e] != rg) else best)  # no branch
    for e in range(sstart[cell], sstart[cell + 1]):
        if rg == 0 or sgroup[e] != rg:
            best = min(best, segment_hit(ox, oy, dx, dy, mr, sdata[e, 0], sdata[e, 1],
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
    i, _ = cell_span(x + dx * t0, x + dx * t0, 0.0, inv, nx)
    j, _ = cell_span(y + dy * t0, y + dy * t0, 0.0, inv, ny)
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
def trace(grids, g, ox, oy, dx, dy, ix, iy, mr, rg, best):
    """Nearest hit (m), from ``best``, of the ray in grid g: its always bucket and the DDA, or
    for a ray whose slack ``s`` (a bound on its computed hits' error, 1e-8 x the coordinates'
    magnitude, with a wide margin) exceeds the shapes' padding, every cell."""
    gm = grids[0]
    base, ncell = int(gm[g, BASE]), int(gm[g, NX] * gm[g, NY])
    s = REL * (1.0 + abs(ox) + abs(oy) + mr + abs(gm[g, X0]) + abs(gm[g, Y0]) + gm[g, W] +
                gm[g, H])
    if ncell == 0 or s > gm[g, PAD]:
        for cell in range(base, base + ncell + 1):
            best = _test_cell(grids, cell, ox, oy, dx, dy, mr, rg, best)
        return best
    best = _test_cell(grids, base + ncell, ox, oy, dx, dy, mr, rg, best)
    return _dda(grids, g, ox, oy, dx, dy, ix, iy, mr, rg, best)


@_jit(inline=True)
def fan_dir(d, n, angles, k, fan):
    """Direction (dx, dy) of ray k of row n: d[n] itself, or for a ``fan`` the heading's unit
    direction d[n] = (cos, sin) rotated by the angle of angles[k] = (cos, sin), as
    :func:`coopsim.raycast.jitcast.fan_directions` computes it in numpy (same operations: same
    bits)."""
    if not fan:
        return d[n, 0], d[n, 1]
    ch, sh, ca, sa = d[n, 0], d[n, 1], angles[k, 0], angles[k, 1]
    return ch * ca - sh * sa, sh * ca + ch * sa
