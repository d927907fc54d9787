"""The compiled screen in front of ``mujoco.mj_ray`` for rays cast one by one from the robots
(an altimeter's one ray from each of many quadrotors): most such rays meet nothing but the
floor, and ``mj_ray`` tests every geom of the model (~4 us a ray with 100 quadrotors; 100 such
rays a step cost more than MuJoCo's step).

:func:`screen` tests each ray against the bounding box of every geom that may be seen
(MuJoCo's ``geom_aabb``, in the geom's frame, slightly grown): a ray none of whose boxes it
crosses within its reach meets only the planes, and its distance to them is worked out here
as MuJoCo's ``ray_plane`` does, the same operations in the same order, for planes whose frame
is the world's (the floor): the same bits as ``mj_ray``. Every other ray is left to ``mj_ray``
(marked :data:`ASK`).

Frames and units: world frame, metres; ``xmat`` row-major 3x3 (MuJoCo's ``geom_xmat``).
"""

from __future__ import annotations

import numpy as np

from ...model.compiled import jit, warmer

ASK = -2.0  # a ray whose distance mj_ray must give (a geom's box lies on its way)
_MINVAL = 1e-15  # MuJoCo's mjMINVAL
_GROW = 1e-9  # m, and relative: the boxes are grown by this much (rounding cannot slip by)
BIG = 0.5  # m, half width along x from which a geom's box is looked at by every ray


@jit()
def screen(pnt, vec, body, reach, geoms, geom_body, xpos, xmat, aabb, planes, ppos, psize,
           out):
    """Each ray's distance to the nearest plane, or :data:`ASK`, into ``out`` (m,).

    Args:
        pnt: (m, 3) ray origins. vec: (m, 3) directions. body: (m,) each ray's excluded body.
        reach: (m,) farthest distance that matters, m.
        geoms: (g,) ids of the geoms (not planes) a ray may see; geom_body: (ngeom,) bodies.
        xpos: (ngeom, 3), xmat: (ngeom, 9) the geoms' frames; aabb: (ngeom, 6) their boxes.
        planes: (p,) ids of the planes a ray may see, frames the world's; ppos: (p, 3) their
            positions; psize: (p, 3) their sizes (MuJoCo's: half extents, 0 unbounded).
        out: (m,) distances, m (-1: no plane met), or ASK.
    """
    box = np.empty((len(geoms), 6))  # each geom's box in the world: centre, half extents
    for j in range(len(geoms)):
        _world_box(xpos, xmat, aabb, geoms[j], box, j)
    # the boxes narrower than BIG along x sorted by their centre's x: a ray looks only at
    # those whose x range can meet its own (a few), and at every wide one (walls, tables)
    big = np.flatnonzero(box[:, 3] > BIG)
    small = np.flatnonzero(box[:, 3] <= BIG)
    small = small[np.argsort(box[small, 0])]
    xs = box[small, 0].copy()
    wide = box[small, 3].max() if len(small) else 0.0
    for i in range(len(out)):
        out[i] = -1.0
        far = reach[i] * (1.0 + _GROW) + _GROW
        end = pnt[i, 0] + far * vec[i, 0]
        pad = wide * (1.0 + _GROW) + 2 * _GROW
        first = _bisect(xs, min(pnt[i, 0], end) - pad)
        last = _bisect(xs, max(pnt[i, 0], end) + pad)
        for k in range(len(big) + last - first):
            j = big[k] if k < len(big) else small[first + k - len(big)]
            g = geoms[j]
            if geom_body[g] != body[i] and _near(pnt, vec, i, far, box, j) and \
                    _crosses(pnt, vec, i, far, xpos, xmat, aabb, g):
                out[i] = ASK
                break
        if out[i] == ASK:
            continue
        for j in range(len(planes)):
            x = _plane(pnt, vec, i, ppos, psize, j)
            if x >= 0 and (x < out[i] or out[i] < 0):
                out[i] = x


@jit(inline=True)
def _bisect(xs, x) -> int:
    """How many of the sorted ``xs`` are below ``x`` (where ``x`` goes in them)."""
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit(inline=True)
def _world_box(xpos, xmat, aabb, g, box, j) -> None:
    """Geom ``g``'s box (``aabb``, its frame) bounded in the world frame, into ``box[j]``."""
    for a in range(3):
        box[j, a] = xpos[g, a]
        box[j, 3 + a] = 0.0
        for b in range(3):
            box[j, a] += xmat[g, 3 * a + b] * aabb[g, b]
            box[j, 3 + a] += abs(xmat[g, 3 * a + b]) * aabb[g, 3 + b]


@jit(inline=True)
def _near(pnt, vec, i, far, box, j) -> bool:
    """Whether ray ``i``'s segment [0, far] has its bounding box overlap ``box[j]`` (grown)."""
    for a in range(3):
        end = pnt[i, a] + far * vec[i, a]
        lo, hi = min(pnt[i, a], end), max(pnt[i, a], end)
        half = box[j, 3 + a] * (1.0 + _GROW) + _GROW
        if hi < box[j, a] - half or lo > box[j, a] + half:
            return False
    return True


@jit(inline=True)
def _crosses(pnt, vec, i, far, xpos, xmat, aabb, g) -> bool:
    """Whether ray ``i`` crosses geom ``g``'s grown box within [0, far] (slab test)."""
    lo, hi = 0.0, far
    for a in range(3):
        p = 0.0
        v = 0.0
        for b in range(3):  # into the geom's frame: mat' (pnt - pos), mat' vec
            p += xmat[g, 3 * b + a] * (pnt[i, b] - xpos[g, b])
            v += xmat[g, 3 * b + a] * vec[i, b]
        half = aabb[g, 3 + a] * (1.0 + _GROW) + _GROW
        low, high = aabb[g, a] - half - p, aabb[g, a] + half - p
        if abs(v) < _MINVAL:
            if low > 0.0 or high < 0.0:
                return False
            continue
        t1, t2 = low / v, high / v
        lo, hi = max(lo, min(t1, t2)), min(hi, max(t1, t2))
        if lo > hi:
            return False
    return True


@jit(inline=True)
def _plane(pnt, vec, i, ppos, psize, j) -> float:
    """MuJoCo's ``ray_plane`` for a plane whose frame is the world's (identity matrix): the
    same operations, so the same bits."""
    d0, d1, d2 = pnt[i, 0] - ppos[j, 0], pnt[i, 1] - ppos[j, 1], pnt[i, 2] - ppos[j, 2]
    lp0 = 1.0 * d0 + 0.0 * d1 + 0.0 * d2
    lp1 = 0.0 * d0 + 1.0 * d1 + 0.0 * d2
    lp2 = 0.0 * d0 + 0.0 * d1 + 1.0 * d2
    v0, v1, v2 = vec[i, 0], vec[i, 1], vec[i, 2]
    lv0 = 1.0 * v0 + 0.0 * v1 + 0.0 * v2
    lv1 = 0.0 * v0 + 1.0 * v1 + 0.0 * v2
    lv2 = 0.0 * v0 + 0.0 * v1 + 1.0 * v2
    if lv2 > -_MINVAL:
        return -1.0
    x = -lp2 / lv2
    if x < 0:
        return -1.0
    p0, p1 = lp0 + x * lv0, lp1 + x * lv1
    if (psize[j, 0] <= 0 or abs(p0) <= psize[j, 0]) and \
            (psize[j, 1] <= 0 or abs(p1) <= psize[j, 1]):
        return x
    return -1.0


def _load() -> None:
    """Compile (or load from numba's cache) :func:`screen` with one ray and one geom."""
    one3, ids = np.zeros((1, 3)), np.zeros(1, np.int64)
    screen(one3 + [0.0, 0.0, 1.0], one3 + [0.0, 0.0, -1.0], ids + 1, np.ones(1), ids,
           np.zeros(1, np.int32), one3, np.eye(3).reshape(1, 9), np.zeros((1, 6)), ids, one3,
           one3, np.empty(1))  # the dtypes MuJoCo's arrays have (geom_bodyid: int32)


WARM = warmer(_load)  # loaded with a run, before its first step (imported with the engine)
