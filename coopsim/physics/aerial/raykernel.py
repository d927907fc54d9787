"""The compiled ray cast of the ``aerial`` engine's range sensing in 3D
(:mod:`coopsim.physics.aerial.rays` builds the tables).

Every ray is tested against the floor plane and against the solids whose bounding box its
segment passes through (the slab test). Up to :data:`FEW` solids a ray tests them all; beyond,
each solid is registered in the cells of a grid that its bounding box covers, and a ray walks
its segment in parts of two cells, testing the solids of the cells each part may cross, nearest
part first, and stops once the nearest surface met lies before the next part (no solid left
can be nearer: it would have been registered in a cell already looked at). Each test is MuJoCo's (``engine_ray.c``: ``ray_plane``,
``ray_box``, ``ray_cylinder``, ``ray_sphere``): the first non-negative distance at which the ray
meets the solid's surface, so a ray starting inside a solid meets it where it leaves. The
bounding boxes only choose which solids are tested (grown, so rounding cannot drop one), and a
minimum does not depend on the order, so the grid walk gives the bits of testing every solid
(no libm call, no ``fastmath``: ``sqrt`` is correctly rounded everywhere).

Layouts (float64): ``solids`` (S, :data:`WIDTH`) one row a solid: :data:`KIND` (0 cylinder,
1 box, 2 ball: :mod:`coopsim.model.placement`'s codes), :data:`OWNER` (the robot row whose own
solid it is, -1 for the world's), the centre (:data:`CX`, :data:`CY`, :data:`CZ`, m, world),
its frame :data:`MAT` ... (3x3 row-major, the solid's axes in the world: columns), the half
sizes :data:`SA`, :data:`SB`, :data:`SH` (a box's along its x, y, z; a cylinder's radius and
-, half height; a ball's radius); ``boxes`` (S, 6) each solid's world bounding box, lowest
x, y, z then highest, m.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.compiled import jit, warmer

CYLINDER, BOX, BALL = 0, 1, 2  # as coopsim.model.placement's CIRCLE, BOX, BALL
KIND, OWNER, CX, CY, CZ, MAT, SA, SB, SH = 0, 1, 2, 3, 4, 5, 14, 15, 16
WIDTH = 17  # columns of a solid row
MINVAL = 1e-15  # MuJoCo's mjMINVAL
GROW = 1e-9  # m, and relative: the bounding boxes and segments are grown by this much
FEW = 32  # solids up to which every ray tests every solid (no grid)
MAX_CELLS = 256  # a solid covering more grid cells than this is tested by every ray


@jit()
def cast(pnt, vec, row, reach, solids, boxes, floor, out):
    """Distances of the rays into ``out`` (m,): to the nearest of the floor and the solids
    not of the ray's robot, -1 where none is met (whatever the reach: the caller caps).

    Args:
        pnt: (m, 3) origins, m, world. vec: (m, 3) unit directions, world.
        row: (m,) int64 each ray's robot row (its own solids are not seen).
        reach: (m,) farthest distance that matters, m (the segment the solids are found on).
        solids: (S, WIDTH) the solids. boxes: (S, 6) their bounding boxes.
        floor: (2,) the floor plane's half length and half width, m (MuJoCo's plane size).
        out: (m,) distances, m.
    """
    start, items, wide, x0, y0, size, nx, ny = _grid(boxes)
    return _rays(pnt, vec, row, reach, solids, boxes, floor, out, start, items, wide, x0, y0,
                 size, nx, ny)


@jit(counted=False)  # a few tests of a solid a ray: numba's counts cost 6x the work
def _rays(pnt, vec, row, reach, solids, boxes, floor, out, start, items, wide, x0, y0, size,
          nx, ny):
    """:func:`cast`'s rays, ``start`` ... ``ny`` its grid (:func:`_grid`)."""
    for i in range(len(out)):
        best = _floor(pnt[i, 0], pnt[i, 1], pnt[i, 2], vec[i, 0], vec[i, 1], vec[i, 2], floor)
        far = reach[i] * (1.0 + GROW) + GROW
        inv = (_inverse(vec[i, 0]), _inverse(vec[i, 1]), _inverse(vec[i, 2]))
        for k in range(len(wide)):
            best = _try(pnt, vec, row, i, solids, boxes, wide[k], far, inv, best)
        if nx == 0:  # few solids: every one (wide holds them all)
            out[i] = best
            continue
        step, parts = 2.0 * size, 1
        if far < step * 1e6:
            parts = int(far / step) + 1
        else:  # an unbounded (or vast) reach: one part, the cells its box covers
            step = far
        for part in range(parts):
            ta = part * step if part else 0.0  # (0 inf is NaN)
            if best >= 0.0 and best < ta * (1.0 - GROW) - GROW:
                break  # what is left lies beyond the nearest met (see the module)
            best = _cells(pnt, vec, row, i, solids, boxes, start, items, x0, y0, size, nx,
                          ny, ta, min(ta + step, far), far, inv, best)
        out[i] = best
    return True


@jit(inline=True)
def _cells(pnt, vec, row, i, solids, boxes, start, items, x0, y0, size, nx, ny, ta, tb,
           far, inv, best):
    """``best`` after the solids registered in the cells that the part ``ta`` .. ``tb`` (m)
    of ray ``i`` may cross (the cells its bounding box, grown, covers)."""
    xa, xb = _at(pnt[i, 0], vec[i, 0], ta), _at(pnt[i, 0], vec[i, 0], tb)
    ya, yb = _at(pnt[i, 1], vec[i, 1], ta), _at(pnt[i, 1], vec[i, 1], tb)
    lo0, hi0 = min(xa, xb), max(xa, xb)
    lo1, hi1 = min(ya, yb), max(ya, yb)
    fx0 = (lo0 - GROW * (1.0 + abs(lo0)) - x0) / size
    fx1 = (hi0 + GROW * (1.0 + abs(hi0)) - x0) / size
    fy0 = (lo1 - GROW * (1.0 + abs(lo1)) - y0) / size
    fy1 = (hi1 + GROW * (1.0 + abs(hi1)) - y0) / size
    if not (fx1 >= 0.0 and fy1 >= 0.0 and fx0 <= nx and fy0 <= ny):  # (NaN: none)
        return best
    ax, bx = int(math.floor(max(fx0, 0.0))), min(int(math.floor(min(fx1, nx))), nx - 1)
    ay, by = int(math.floor(max(fy0, 0.0))), min(int(math.floor(min(fy1, ny))), ny - 1)
    for ix in range(ax, bx + 1):
        for iy in range(ay, by + 1):
            for k in range(start[ix * ny + iy], start[ix * ny + iy + 1]):
                best = _try(pnt, vec, row, i, solids, boxes, items[k], far, inv, best)
    return best


@jit(inline=True)
def _at(p, v, t):
    """p + t v, p where v = 0 (t may be inf: a ray along the other axes stays at p)."""
    return p + t * v if v != 0.0 else p


@jit()
def _grid(boxes):
    """Every solid registered in each cell of a grid of squares that its bounding box covers
    (x, y), about one solid a cell: (start (cells + 1,) each cell's first index in ``items``,
    items, wide (the solids every ray tests: all of them when there are at most
    :data:`FEW`, else those covering more than :data:`MAX_CELLS` cells), lowest x, y, the
    cell's side (m), nx, ny); nx = ny = 0 when there is no grid."""
    n = len(boxes)
    if n <= FEW:
        return np.zeros(1, np.int64), np.zeros(0, np.int64), np.arange(n), 0.0, 0.0, 1.0, 0, 0
    x0, y0, x1, y1, pad = boxes[:, 0].min(), boxes[:, 1].min(), boxes[:, 3].max(), \
        boxes[:, 4].max(), np.inf
    for j in range(n):  # the smallest solid's half width sets the cell (a drone's)
        pad = min(pad, max(boxes[j, 3] - boxes[j, 0], boxes[j, 4] - boxes[j, 1]) * 0.5)
    size = max(4.0 * pad, 1e-3)
    while ((x1 - x0) / size + 1.0) * ((y1 - y0) / size + 1.0) > 4.0 * n + 16.0:
        size *= 2.0
    nx, ny = int((x1 - x0) / size) + 1, int((y1 - y0) / size) + 1
    cover = np.empty((n, 4), np.int64)
    start = np.zeros(nx * ny + 1, np.int64)
    wide = np.zeros(n, np.bool_)
    for j in range(n):
        a, b = min(int((boxes[j, 0] - x0) / size), nx - 1), min(int((boxes[j, 3] - x0) / size),
                                                                nx - 1)
        c, d = min(int((boxes[j, 1] - y0) / size), ny - 1), min(int((boxes[j, 4] - y0) / size),
                                                                ny - 1)
        cover[j] = a, b, c, d
        wide[j] = (b - a + 1) * (d - c + 1) > MAX_CELLS
        if not wide[j]:
            for ix in range(a, b + 1):
                for iy in range(c, d + 1):
                    start[ix * ny + iy + 1] += 1
    for cell in range(nx * ny):
        start[cell + 1] += start[cell]
    fill, items = start[:-1].copy(), np.empty(start[-1], np.int64)
    for j in range(n):
        if not wide[j]:
            for ix in range(cover[j, 0], cover[j, 1] + 1):
                for iy in range(cover[j, 2], cover[j, 3] + 1):
                    items[fill[ix * ny + iy]] = j
                    fill[ix * ny + iy] += 1
    return start, items, np.flatnonzero(wide), x0, y0, size, nx, ny


@jit(inline=True)
def _try(pnt, vec, row, i, solids, boxes, j, far, inv, best):
    """``best`` or ray ``i``'s distance to solid ``j`` if nearer (not its own robot's, its box
    on the ray's way: the slab test first)."""
    if solids[j, OWNER] == row[i] or not _slab(pnt, i, boxes, j, far, inv[0], inv[1], inv[2]):
        return best
    t = _solid(pnt, vec, i, solids, j)
    if t >= 0.0 and (best < 0.0 or t < best):
        return t
    return best


@jit(inline=True)
def _inverse(v):
    """1 / v, 0 for v = 0 (an axis :func:`_slab` then tests by the origin alone)."""
    return 1.0 / v if v != 0.0 else 0.0


@jit(inline=True)
def _slab(pnt, i, boxes, j, far, inv0, inv1, inv2):
    """Whether ray ``i``, from 0 to ``far``, passes through box ``j`` (the slab test; the box
    is grown, so rounding cannot make it miss a solid the ray meets)."""
    t0, t1 = 0.0, far
    for a in range(3):
        inv, p = (inv0, inv1, inv2)[a], pnt[i, a]
        if inv == 0.0:
            if p < boxes[j, a] or p > boxes[j, a + 3]:
                return False
            continue
        ta, tb = (boxes[j, a] - p) * inv, (boxes[j, a + 3] - p) * inv
        if ta > tb:
            ta, tb = tb, ta
        t0, t1 = max(t0, ta), min(t1, tb)
        if t0 > t1:
            return False
    return True


@jit(inline=True)
def _floor(p0, p1, p2, v0, v1, v2, floor):
    """MuJoCo's ``ray_plane`` for the floor (z = 0, up, half sizes ``floor``): -1 if missed."""
    if v2 > -MINVAL:
        return -1.0
    x = -p2 / v2
    if x < 0.0:
        return -1.0
    if abs(p0 + x * v0) <= floor[0] and abs(p1 + x * v1) <= floor[1]:
        return x
    return -1.0


@jit(inline=True)
def _solid(pnt, vec, i, solids, j):
    """Distance along ray ``i`` to solid ``j``'s surface (MuJoCo's tests), -1 if missed."""
    d0, d1, d2 = pnt[i, 0] - solids[j, CX], pnt[i, 1] - solids[j, CY], pnt[i, 2] - solids[j, CZ]
    v0, v1, v2 = vec[i, 0], vec[i, 1], vec[i, 2]
    kind = solids[j, KIND]
    if kind == BALL:
        return _ball(d0, d1, d2, v0, v1, v2, solids[j, SA])
    m = MAT
    lp0 = solids[j, m] * d0 + solids[j, m + 3] * d1 + solids[j, m + 6] * d2
    lp1 = solids[j, m + 1] * d0 + solids[j, m + 4] * d1 + solids[j, m + 7] * d2
    lp2 = solids[j, m + 2] * d0 + solids[j, m + 5] * d1 + solids[j, m + 8] * d2
    lv0 = solids[j, m] * v0 + solids[j, m + 3] * v1 + solids[j, m + 6] * v2
    lv1 = solids[j, m + 1] * v0 + solids[j, m + 4] * v1 + solids[j, m + 7] * v2
    lv2 = solids[j, m + 2] * v0 + solids[j, m + 5] * v1 + solids[j, m + 8] * v2
    if kind == BOX:
        return _box(lp0, lp1, lp2, lv0, lv1, lv2, solids[j, SA], solids[j, SB], solids[j, SH])
    return _cylinder(lp0, lp1, lp2, lv0, lv1, lv2, solids[j, SA], solids[j, SH])


@jit(inline=True)
def _nearer(x, sol):
    """The nearer of a distance so far ``x`` (-1: none) and a non-negative ``sol``."""
    return sol if x < 0.0 or sol < x else x


@jit(inline=True)
def _ball(d0, d1, d2, v0, v1, v2, r):
    """MuJoCo's ``ray_sphere``: the smaller non-negative root of |d + x v| = r, or -1."""
    a = v0 * v0 + v1 * v1 + v2 * v2
    b = v0 * d0 + v1 * d1 + v2 * d2
    c = d0 * d0 + d1 * d1 + d2 * d2 - r * r
    det = b * b - a * c
    if det < MINVAL or a < MINVAL:
        return -1.0
    sq = math.sqrt(det)
    x1, x2 = (-b - sq) / a, (-b + sq) / a
    return x1 if x1 >= 0.0 else (x2 if x2 >= 0.0 else -1.0)


@jit(inline=True)
def _face(x, sol, q0, w0, s0, q1, w1, s1):
    """``x`` or ``sol`` (the nearer) when the point ``sol`` along the ray is within a face:
    |q0 + sol w0| <= s0 and |q1 + sol w1| <= s1 (the face's other two axes)."""
    if sol >= 0.0 and abs(q0 + sol * w0) <= s0 and abs(q1 + sol * w1) <= s1:
        return _nearer(x, sol)
    return x


@jit(inline=True)
def _box(p0, p1, p2, v0, v1, v2, s0, s1, s2):
    """MuJoCo's ``ray_box`` in the box's frame (half sizes s0, s1, s2): -1 if missed."""
    x = -1.0
    if abs(v0) > MINVAL:
        x = _face(x, (-s0 - p0) / v0, p1, v1, s1, p2, v2, s2)
        x = _face(x, (s0 - p0) / v0, p1, v1, s1, p2, v2, s2)
    if abs(v1) > MINVAL:
        x = _face(x, (-s1 - p1) / v1, p0, v0, s0, p2, v2, s2)
        x = _face(x, (s1 - p1) / v1, p0, v0, s0, p2, v2, s2)
    if abs(v2) > MINVAL:
        x = _face(x, (-s2 - p2) / v2, p0, v0, s0, p1, v1, s1)
        x = _face(x, (s2 - p2) / v2, p0, v0, s0, p1, v1, s1)
    return x


@jit(inline=True)
def _cylinder(p0, p1, p2, v0, v1, v2, r, h):
    """MuJoCo's ``ray_cylinder`` in the cylinder's frame (radius ``r``, half height ``h``, axis
    z): its caps, then its side (both roots, each within the height): -1 if missed."""
    x = -1.0
    if abs(v2) > MINVAL:
        for side in (-1.0, 1.0):
            sol = (side * h - p2) / v2
            if sol >= 0.0:
                q0, q1 = p0 + sol * v0, p1 + sol * v1
                if q0 * q0 + q1 * q1 <= r * r:
                    x = _nearer(x, sol)
    a = v0 * v0 + v1 * v1
    b = v0 * p0 + v1 * p1
    c = p0 * p0 + p1 * p1 - r * r
    det = b * b - a * c
    if a < MINVAL or det < MINVAL:
        return x
    sq = math.sqrt(det)
    for sol in ((-b - sq) / a, (-b + sq) / a):
        if sol >= 0.0 and abs(p2 + sol * v2) <= h:
            x = _nearer(x, sol)
    return x


#: Columns of a robot's solid in its own frame (:func:`place`): the robot row, the kind, the
#: centre (m), the cosine and sine of its yaw, the half sizes as :data:`SA` ... :data:`SH`
L_ROW, L_KIND, L_X, L_Y, L_Z, L_COS, L_SIN, L_A, L_B, L_H = range(10)
LOCAL = 10


@jit(counted=False)
def place(local, state, solids, boxes, start):
    """Write the robots' solids where ``state`` (N, 13) places them into ``solids`` and
    ``boxes`` from row ``start`` on: one row a ``local`` (R, :data:`LOCAL`) row. The same
    operations for any thread count (no libm call), so the same bits."""
    for r in range(len(local)):
        o, j = int(local[r, L_ROW]), start + r
        w, x, y, z = state[o, 3], state[o, 4], state[o, 5], state[o, 6]
        m00, m01, m02 = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)
        m10, m11, m12 = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)
        m20, m21, m22 = 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)
        c0, c1, c2 = local[r, L_X], local[r, L_Y], local[r, L_Z]
        cy, sy = local[r, L_COS], local[r, L_SIN]
        solids[j, KIND], solids[j, OWNER] = local[r, L_KIND], local[r, L_ROW]
        solids[j, CX] = state[o, 0] + (m00 * c0 + m01 * c1 + m02 * c2)
        solids[j, CY] = state[o, 1] + (m10 * c0 + m11 * c1 + m12 * c2)
        solids[j, CZ] = state[o, 2] + (m20 * c0 + m21 * c1 + m22 * c2)
        _turned(solids, j, m00, m01, m02, cy, sy, 0)
        _turned(solids, j, m10, m11, m12, cy, sy, 1)
        _turned(solids, j, m20, m21, m22, cy, sy, 2)
        solids[j, SA], solids[j, SB], solids[j, SH] = local[r, L_A], local[r, L_B], local[r, L_H]
        _box_of(solids, boxes, j)
    return True


@jit(inline=True)
def _turned(solids, j, r0, r1, r2, cy, sy, i):
    """Row ``i`` of the body's matrix row (r0, r1, r2) times a turn by the solid's yaw."""
    solids[j, MAT + 3 * i] = r0 * cy + r1 * sy
    solids[j, MAT + 3 * i + 1] = r1 * cy - r0 * sy
    solids[j, MAT + 3 * i + 2] = r2


@jit(inline=True)
def _box_of(solids, boxes, j):
    """Solid ``j``'s grown world bounding box into ``boxes[j]`` (``aerial.rays``'s rule)."""
    h0, h1, h2 = solids[j, SA], solids[j, SB], solids[j, SH]
    if solids[j, KIND] != BOX:
        h1 = h0
    if solids[j, KIND] == BALL:
        h2 = h0
    for k in range(3):
        m = MAT + 3 * k
        reach = (abs(solids[j, m]) * h0 + abs(solids[j, m + 1]) * h1
                 + abs(solids[j, m + 2]) * h2) * (1.0 + GROW) + GROW
        boxes[j, k] = solids[j, CX + k] - reach
        boxes[j, k + 3] = solids[j, CX + k] + reach


@jit(counted=False)
def underside(s, rows, reach, below, scene, ray, dist, out):
    """The ``below`` view of robots ``rows`` (:func:`coopsim.model.kernel.underside`, the same
    operations) inside a composed call: from each body's underside along its -z axis to what is
    below, m, up to ``reach`` (n,), into ``out`` (n,). ``s`` every robot's (N, 13) STATE3D;
    ``below`` (n,) each body's origin to its underside, m; ``scene`` (local, solids, boxes,
    first robot row of ``solids``, floor): :meth:`~coopsim.physics.aerial.fused.AerialFused.
    scene`, the robots' rows placed here on ``s``; ``ray`` scratch: (origins (n, 3),
    directions (n, 3), reaches (n,)) of the casts, contiguous as the plain path's cast takes
    them (so :func:`cast` has one compiled version); ``dist`` (n,) scratch."""
    local, solids, boxes, start, floor = scene
    pnt, vec, reaches = ray
    for i in range(len(rows)):
        r = rows[i]
        w, x, y, z = s[r, 3], s[r, 4], s[r, 5], s[r, 6]
        pnt[i, 0], pnt[i, 1], pnt[i, 2] = s[r, 0], s[r, 1], s[r, 2]
        vec[i, 0] = -(2 * (x * z + w * y))
        vec[i, 1] = -(2 * (y * z - w * x))
        vec[i, 2] = -(1 - 2 * (x * x + y * y))
        reaches[i] = reach[i] + below[i]
    place(local, s, solids, boxes, start)
    cast(pnt, vec, rows, reaches, solids, boxes, floor, dist)
    for i in range(len(rows)):
        d, far = dist[i], reaches[i]
        if not (d >= 0.0 and d < far):
            d = far
        out[i] = min(max(d - below[i], 0.0), reach[i])


def _load() -> None:
    """Compile (or load from numba's cache) :func:`cast` with one ray and one solid, and
    :func:`place`."""
    one3 = np.zeros((1, 3))
    solid = np.zeros((1, WIDTH))
    solid[0, MAT:MAT + 9] = np.eye(3).reshape(9)
    cast(one3 + [0.0, 0.0, 1.0], one3 + [0.0, 0.0, -1.0], np.zeros(1, np.int64), np.ones(1),
         solid, np.zeros((1, 6)), np.ones(2), np.empty(1))
    state = np.zeros((1, 13))
    state[0, 3] = 1.0
    place(np.zeros((1, LOCAL)), state, solid, np.zeros((1, 6)), 0)


WARM = warmer(_load)  # loaded with a run, before its first step (imported with the engine)
