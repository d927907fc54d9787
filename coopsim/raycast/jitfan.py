"""The compiled caster's sonar fans: every ray of a robot against the shapes around it.

A fan's rays share their origin and their length, so instead of walking the grid once per ray
(:func:`coopsim.raycast.jitwalk.trace`), :func:`fan_gather` visits once per robot the cells of the
box of its rays (the origin and the rays' ends, padded as the shapes are: a hit point lies on a
ray, so in that box, and on the shape, so in its padded box; the cell holding it is binned with
the shape and visited) and tests each shape found there against the robot's rays:
a circle beyond reach of the centre is dropped with one comparison, one wholly behind a fan
facing forward (the sonar's) with another, a ray whose line misses a
circle with the same discriminant :func:`~coopsim.raycast.jitgrid.circle_hit` computes, so only the
few pairs that may hit pay the square root. The hits are the same functions' and the result a
minimum: the distances are the same bits as the walk's (tests/swarmscale/test_sensing.py).

A robot whose reach covers more than :data:`_MAX_BOX` cells (rays long against the cells) has
its rays walked one by one instead. Frames and units: world frame, metres.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.compiled import jit as _jit
from ..model.compiled import prange
from .jitgrid import BASE, INV, NX, NY, PAD, X0, Y0, cell_span, circle_hit, segment_hit
from .jitwalk import fan_dir, trace

_MAX_BOX = 64  # cells a robot's reach may cover before its rays are walked one by one


@_jit(inline=True)
def _directions(n, d, angles, dirs, reach, edge, out):
    """Unit directions of robot n's rays into dirs[n] (as _one_ray makes them), its best hits
    (out[n]) at the rays' length; returns (length, reach, edge, back), m: no point of the rays
    lies more than ``back`` behind the robot along its heading d[n] (0 for a fan facing
    forward, as the sonar's -90 to +90 degrees)."""
    rn, en, front = reach[n], edge[n], 1.0
    for k in range(out.shape[1]):
        dx, dy = fan_dir(d, n, angles, k, True)
        norm = math.sqrt(dx * dx + dy * dy)
        dirs[n, k, 0], dirs[n, k, 1] = (dx / norm, dy / norm) if norm != 0.0 else (dx, dy)
        front = min(front, dirs[n, k, 0] * d[n, 0] + dirs[n, k, 1] * d[n, 1])
        out[n, k] = rn + en
    return rn + en, rn, en, (rn + en) * max(0.0, -front)


@_jit(inline=True)
def _circles(n, ox, oy, mr, g, lo, hi, cdata, cgroup, dirs, out, hx, hy, back):
    """Robot n's best hits (out[n]) against the circle entries lo .. hi - 1; (hx, hy): its
    heading, ``back``: as :func:`_directions` returns it."""
    for e in range(lo, hi):
        cx, cy, r = cdata[e, 0], cdata[e, 1], cdata[e, 2]
        mx, my = ox - cx, oy - cy
        far = mr + r
        if (g != 0 and cgroup[e] == g) or mx * mx + my * my > far * far * 1.000001 + 1e-12:
            continue  # its own, or beyond reach of the centre (with a margin for rounding)
        if mx * hx + my * hy > r * 1.000001 + back + 1e-9 * (1.0 + abs(mx) + abs(my)):
            continue  # wholly behind the rays: further than r behind them along the heading
        inside = mx * mx + my * my < r * r
        for k in range(out.shape[1]):
            dx, dy = dirs[n, k, 0], dirs[n, k, 1]
            h = mx * dy - my * dx
            if (r - h) * (r + h) < 0.0 and not inside:  # circle_hit's miss, without the sqrt
                continue
            out[n, k] = min(out[n, k], circle_hit(ox, oy, dx, dy, mr, cx, cy, r))


@_jit(inline=True)
def _segments(n, ox, oy, mr, g, lo, hi, sdata, sgroup, dirs, out, box):
    """Robot n's best hits (out[n]) against the segment entries lo .. hi - 1; ``box`` (x0,
    x1, y0, y1), m: the box of its rays, padded (a segment wholly outside is dropped with four
    comparisons: a hit point lies on a ray and on the segment, so in both boxes). A ray the
    segment is behind or beside is dropped by the signs and sizes of segment_hit's numerators
    before its divisions (a product that underflows to 0 and the 1e-9 margin keep a pair in
    doubt: segment_hit then decides it, so the distances are its bits)."""
    x0, x1, y0, y1 = box
    for e in range(lo, hi):
        if g != 0 and sgroup[e] == g:
            continue
        sx, sy, ex, ey = sdata[e, 0], sdata[e, 1], sdata[e, 2], sdata[e, 3]
        if min(sx, sx + ex) > x1 or max(sx, sx + ex) < x0 or \
                min(sy, sy + ey) > y1 or max(sy, sy + ey) < y0:
            continue
        wx, wy = sx - ox, sy - oy
        for k in range(out.shape[1]):
            dx, dy = dirs[n, k, 0], dirs[n, k, 1]
            den = dx * ey - dy * ex  # segment_hit's terms: t = nt / den, u = nu / den
            nt, nu = wx * ey - wy * ex, wx * dy - wy * dx
            if nt * den < 0.0 or nu * den < 0.0 or abs(nu) > abs(den) * (1.0 + 1e-9):
                continue  # t < 0, u < 0 or u > 1 without dividing (segment_hit's miss)
            out[n, k] = min(out[n, k], segment_hit(ox, oy, dx, dy, mr, sx, sy, ex, ey))


@_jit(inline=True)
def _robot(n, o, h, back, grids, rg, mr, dirs, out):
    """Robot n's best hits (out[n]) among the shapes of every grid of the set; h[n] its
    heading, ``back`` as :func:`_directions` returns it."""
    gm, cstart, cdata, cgroup, sstart, sdata, sgroup = grids
    ox, oy, g, hx, hy = o[n, 0], o[n, 1], rg[n], h[n, 0], h[n, 1]
    xl = xh = yl = yh = 0.0  # the box of the rays (from the origin), m
    for k in range(out.shape[1]):
        ex, ey = mr * dirs[n, k, 0], mr * dirs[n, k, 1]
        xl, xh, yl, yh = min(xl, ex), max(xh, ex), min(yl, ey), max(yh, ey)
    pad = 1e-9 * (1.0 + abs(ox) + abs(oy) + mr)  # >> the rounding of a hit point, m
    box = (ox + xl - pad, ox + xh + pad, oy + yl - pad, oy + yh + pad)
    for gi in range(len(gm)):
        base, nx, ny = int(gm[gi, BASE]), gm[gi, NX], gm[gi, NY]
        inv, pad, ncell = gm[gi, INV], gm[gi, PAD], int(gm[gi, NX] * gm[gi, NY])
        x, y = ox - gm[gi, X0], oy - gm[gi, Y0]
        c0, c1 = cell_span(x + xl, x + xh, pad, inv, nx)  # padded as the shapes: see the module
        r0, r1 = cell_span(y + yl, y + yh, pad, inv, ny)
        if ncell == 0 or (c1 - c0 + 1) * (r1 - r0 + 1) > _MAX_BOX:
            for k in range(out.shape[1]):  # long rays: walk them (their always bucket too)
                dx, dy = dirs[n, k, 0], dirs[n, k, 1]
                ix = 1.0 / dx if abs(dx) >= 1e-150 else 0.0
                iy = 1.0 / dy if abs(dy) >= 1e-150 else 0.0
                out[n, k] = trace(grids, gi, ox, oy, dx, dy, ix, iy, mr, g, out[n, k])
            continue
        a = base + ncell  # the always bucket, then the cells around the robot
        _circles(n, ox, oy, mr, g, cstart[a], cstart[a + 1], cdata, cgroup, dirs, out, hx, hy,
                 back)
        _segments(n, ox, oy, mr, g, sstart[a], sstart[a + 1], sdata, sgroup, dirs, out, box)
        for c in range(c0, c1 + 1):
            first = base + c * int(ny)
            lo, hi = first + r0, first + r1 + 1  # a column's cells are contiguous
            _circles(n, ox, oy, mr, g, cstart[lo], cstart[hi], cdata, cgroup, dirs, out, hx,
                     hy, back)
            _segments(n, ox, oy, mr, g, sstart[lo], sstart[hi], sdata, sgroup, dirs, out, box)


@_jit(parallel=True)
def fan_gather(o, d, angles, reach, edge, rg, grids, out):
    """Every robot's fan (see :func:`coopsim.raycast.jitcast._row`): rays from o[n] along the
    heading d[n] = (cos, sin) turned by each of ``angles`` (K, 2) = (cos, sin), of length
    reach[n] + edge[n]; out[n, k] = min(reach[n], distance - edge[n]), m."""
    dirs = np.empty((len(out), out.shape[1], 2))
    for j in prange(len(out)):
        n = np.int64(j)  # prange's index is unsigned
        mr, rn, en, back = _directions(n, d, angles, dirs, reach, edge, out)
        _robot(n, o, d, back, grids, rg, mr, dirs, out)
        for k in range(out.shape[1]):
            out[n, k] = rn if out[n, k] >= mr else out[n, k] - en
