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
its rays walked one by one instead. The per-robot parts are inline functions: :func:`fan_rays`
(the directions), :func:`fan_grids` (the hits against a grid set, such as
:func:`coopsim.raycast.jitcast.static_grids` builds) and :func:`fan_circles` (against a run of
circles); :func:`fan_rows` puts them together for a block of robots, and every fan kernel calls
it (:func:`fan_gather`, which the batch backends' casters call too, and the batched copies'
step, coopsim/env/copykernels.py).
Frames and units: world frame, metres.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.compiled import jit as _jit
from ..model.compiled import prange
from .jitgrid import BASE, CS, INV, NX, NY, PAD, X0, Y0, cell_span, circle_hit, segment_hit
from .jitwalk import fan_dir, trace

_MAX_BOX = 64  # cells a robot's reach may cover before its rays are walked one by one


@_jit(inline=True)
def fan_rays(n, d, angles, dirs, reach, edge, out):
    """Unit directions of robot n's rays into dirs[n] (as _one_ray makes them; (2, K): the
    x components, then the y ones, so that a shape's test over the rays reads them in lanes
    and compiles to vector instructions: 1.6 x faster in a map than (K, 2)), its best hits
    (out[n]) at the rays' length; returns (length, reach, edge, back), m: no point of the rays
    lies more than ``back`` behind the robot along its heading d[n] (0 for a fan facing
    forward, as the sonar's -90 to +90 degrees)."""
    rn, en, front = reach[n], edge[n], 1.0
    for k in range(out.shape[1]):
        dx, dy = fan_dir(d, n, angles, k, True)
        norm = math.sqrt(dx * dx + dy * dy)
        dirs[n, 0, k], dirs[n, 1, k] = (dx / norm, dy / norm) if norm != 0.0 else (dx, dy)
        front = min(front, dirs[n, 0, k] * d[n, 0] + dirs[n, 1, k] * d[n, 1])
        out[n, k] = rn + en
    return rn + en, rn, en, (rn + en) * max(0.0, -front)


@_jit(inline=True)
def fan_circles(n, ox, oy, mr, g, lo, hi, cdata, cgroup, dirs, out, hx, hy, back):
    """Robot n's best hits (out[n]) against the circle entries lo .. hi - 1; (hx, hy): its
    heading, ``back``: as :func:`fan_rays` returns it."""
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
            dx, dy = dirs[n, 0, k], dirs[n, 1, k]
            h = mx * dy - my * dx
            if (r - h) * (r + h) < 0.0 and not inside:  # circle_hit's miss, without the sqrt
                continue
            out[n, k] = min(out[n, k], circle_hit(ox, oy, dx, dy, mr, cx, cy, r))


@_jit(inline=True)
def _segments(n, ox, oy, mr, g, lo, hi, sdata, sgroup, dirs, out, box, xcut, ycut):
    """Robot n's best hits (out[n]) against the segment entries lo .. hi - 1; ``box`` (x0, y0,
    x1, y1): the box of the robot's rays, world frame, m, padded (see :func:`_ray_box`).

    The entries are one cell's; ``xcut`` (``ycut``) is its left (lower) side, m, when the
    robot visited the cells to the left (below) before, else -inf. An axis-aligned segment
    (a map's walls) reaching past that side is binned there too (by more than the grid's
    padding, far above rounding): its copy was tested, so this one is skipped (the result is
    a minimum; the same bits either way)."""
    for e in range(lo, hi):
        if g != 0 and sgroup[e] == g:
            continue
        x1, y1, ex, ey = sdata[e, 0], sdata[e, 1], sdata[e, 2], sdata[e, 3]
        if (min(x1, x1 + ex) > box[2] or max(x1, x1 + ex) < box[0] or
                min(y1, y1 + ey) > box[3] or max(y1, y1 + ey) < box[1]):
            continue  # its box misses the rays' box: no ray can cross it (a map's walls)
        if (ey == 0.0 and min(x1, x1 + ex) < xcut) or (ex == 0.0 and min(y1, y1 + ey) < ycut):
            continue  # a copy in the cell to the left (below) was tested
        wx, wy = x1 - ox, y1 - oy
        for k in range(out.shape[1]):
            # segment_hit's formulas without its branches (den 0 gives an inf or NaN that
            # fails the test as its early return did): the rays' loop then runs straight
            dx, dy = dirs[n, 0, k], dirs[n, 1, k]
            den = dx * ey - dy * ex
            t, u = (wx * ey - wy * ex) / den, (wx * dy - wy * dx) / den
            ok = (t >= 0.0) & (t <= mr) & (u >= 0.0) & (u <= 1.0)
            out[n, k] = min(out[n, k], t if ok else math.inf)


@_jit(inline=True)
def _ray_box(ox, oy, xl, xh, yl, yh, mr):
    """The world-frame box (x0, y0, x1, y1), m, of rays from (ox, oy) whose ends span [xl, xh]
    x [yl, yh] about it, padded by far more than the rounding of a hit point: a segment a ray
    crosses within its length has a point in it, so a segment whose box misses it is no hit."""
    s = 1e-6 * (1.0 + mr + abs(ox) + abs(oy))
    return ox + xl - s, oy + yl - s, ox + xh + s, oy + yh + s


@_jit(inline=True)
def fan_grids(n, o, h, back, grids, rg, mr, dirs, out):
    """Robot n's best hits (out[n]) among the shapes of every grid of the set; h[n] its
    heading, ``back`` as :func:`fan_rays` returns it."""
    gm, cstart, cdata, cgroup, sstart, sdata, sgroup = grids
    ox, oy, g, hx, hy = o[n, 0], o[n, 1], rg[n], h[n, 0], h[n, 1]
    xl = xh = yl = yh = 0.0  # the box of the rays (from the origin), m
    for k in range(out.shape[1]):
        ex, ey = mr * dirs[n, 0, k], mr * dirs[n, 1, k]
        xl, xh, yl, yh = min(xl, ex), max(xh, ex), min(yl, ey), max(yh, ey)
    box = _ray_box(ox, oy, xl, xh, yl, yh, mr)
    for gi in range(len(gm)):
        base, nx, ny = int(gm[gi, BASE]), gm[gi, NX], gm[gi, NY]
        inv, pad, ncell = gm[gi, INV], gm[gi, PAD], int(gm[gi, NX] * gm[gi, NY])
        x, y = ox - gm[gi, X0], oy - gm[gi, Y0]
        c0, c1 = cell_span(x + xl, x + xh, pad, inv, nx)  # padded as the shapes: see the module
        r0, r1 = cell_span(y + yl, y + yh, pad, inv, ny)
        if ncell == 0 or (c1 - c0 + 1) * (r1 - r0 + 1) > _MAX_BOX:
            for k in range(out.shape[1]):  # long rays: walk them (their always bucket too)
                dx, dy = dirs[n, 0, k], dirs[n, 1, k]
                ix = 1.0 / dx if abs(dx) >= 1e-150 else 0.0
                iy = 1.0 / dy if abs(dy) >= 1e-150 else 0.0
                out[n, k] = trace(grids, gi, ox, oy, dx, dy, ix, iy, mr, g, out[n, k])
            continue
        a = base + ncell  # the always bucket, then the cells around the robot
        fan_circles(n, ox, oy, mr, g, cstart[a], cstart[a + 1], cdata, cgroup, dirs, out, hx,
                    hy, back)
        _segments(n, ox, oy, mr, g, sstart[a], sstart[a + 1], sdata, sgroup, dirs, out, box,
                  -math.inf, -math.inf)
        gx, gy, cs = gm[gi, X0], gm[gi, Y0], gm[gi, CS]
        for c in range(c0, c1 + 1):
            first = base + c * int(ny)
            lo, hi = first + r0, first + r1 + 1  # a column's cells are contiguous
            fan_circles(n, ox, oy, mr, g, cstart[lo], cstart[hi], cdata, cgroup, dirs, out,
                        hx, hy, back)
            xcut = gx + c * cs if c > c0 else -math.inf
            for r in range(r0, r1 + 1):
                _segments(n, ox, oy, mr, g, sstart[first + r], sstart[first + r + 1], sdata,
                          sgroup, dirs, out, box, xcut, gy + r * cs if r > r0 else -math.inf)


@_jit(counted=False)
def fan_rows(r0, r1, o, d, angles, reach, edge, rg, grids, dirs, out, copy_of, width, cdata,
             cgroup, clip):
    """The fans of robots r0 .. r1 - 1 (int64), one after the other: rays from o[n] along the
    heading d[n] = (cos, sin) turned by each of ``angles`` (K, 2) = (cos, sin), of length
    reach[n] + edge[n], against the grid set ``grids`` (groups rg); with ``width`` > 0, also
    against the circle entries lo .. lo + width - 1 of ``cdata`` (C, 3) / ``cgroup`` (C,),
    lo = copy_of[n] x width (copy_of empty: the robot's own run of ``width`` rows,
    n // width x width); dirs (N, 2, K) its scratch; out[n, k] = min(reach[n], distance -
    edge[n]), m, clipped to [0, reach[n]] when ``clip`` (NaN kept). Every fan kernel calls it
    (:func:`fan_gather` and the batched copies' ``step_copies``): a kernel of its
    own (uncounted: it makes no array), compiled once, where each caller inlining the fan
    compiled it again; a call casts a block of robots, so its entry costs little."""
    for n in range(r0, r1):
        mr, rn, en, back = fan_rays(n, d, angles, dirs, reach, edge, out)
        fan_grids(n, o, d, back, grids, rg, mr, dirs, out)
        if width > 0:
            lo = copy_of[n] * width if len(copy_of) else n // width * width
            fan_circles(n, o[n, 0], o[n, 1], mr, rg[n], lo, lo + width, cdata, cgroup, dirs,
                        out, d[n, 0], d[n, 1], back)
        for k in range(out.shape[1]):
            v = rn if out[n, k] >= mr else out[n, k] - en
            if clip and not math.isnan(v):  # np.clip's ternaries
                v = v if v > 0.0 else 0.0
                v = v if v < rn else rn
            out[n, k] = v


#: Robots a call of :func:`fan_rows` casts in :func:`fan_gather` (numba's threads take whole
#: blocks: ``coopsim.raycast.jitcast`` hands them out in chunks of blocks)
FAN_BLOCK = 16


@_jit(parallel=True)
def fan_gather(o, d, angles, reach, edge, rg, grids, out, copy_of, width, cdata, cgroup):
    """Every robot's fan (see :func:`coopsim.raycast.jitcast._row`): rays from o[n] along the
    heading d[n] = (cos, sin) turned by each of ``angles`` (K, 2) = (cos, sin), of length
    reach[n] + edge[n], against ``grids`` and, with ``width`` > 0, the circles of robot n's
    copy (copy_of[n] x ``width`` .. + ``width`` - 1 of ``cdata`` (C, 3) [x, y, r], groups
    ``cgroup``: the batched copies' chassis, each copy in its own frame); out[n, k] =
    min(reach[n], distance - edge[n]), m: :func:`fan_rows` on blocks of :data:`FAN_BLOCK`
    robots, shared among numba's threads."""
    n_all = len(out)
    dirs = np.empty((n_all, 2, out.shape[1]))
    for b in prange((n_all + FAN_BLOCK - 1) // FAN_BLOCK):
        r0 = np.int64(b) * FAN_BLOCK  # prange's index is unsigned
        # np.bool_, as the other callers pass it: a literal compiles another
        fan_rows(r0, min(r0 + FAN_BLOCK, n_all), o, d, angles, reach, edge, rg, grids, dirs,
                 out, copy_of, width, cdata, cgroup, np.bool_(False))
