"""Range sensing in 3D on the ``aerial`` engine: rays cast from the robots against the aerial
world's 3D geometry, as the ``mujoco`` engine builds the same world, so a sensor reads on both
what the geometry says (to 1 cm; tests/physics/test_aerial_rays.py).

What a ray may meet:

* the floor plane z = 0 (from above; as MuJoCo's, it ends 1 m beyond the floor's edges);
* the floor's edge walls: boxes 1 m thick just outside the floor, 4 m tall (:data:`WALL_HEIGHT`,
  MuJoCo's): a sensor above them sees over them;
* static objects (the aerial engine has no movable ones): a box turned by its yaw, a cylinder,
  a ball, over their height, standing on the floor unless their bottom is above it
  (:func:`coopsim.model.placement.object_rows`, what mujoco builds);
* other robots' bodies as the engine sizes them: each shape of the body (a disc a cylinder, a
  box a box) over its height (a flyer's centred on its origin and turned with its attitude, a
  ground robot's standing on it, :data:`coopsim.model.placement.DEFAULT_HEIGHT` when its type
  gives none), never the robot's own.

The cast is one compiled kernel over all rays (:mod:`coopsim.physics.aerial_raykernel`), loaded
off the stepper thread; until it is (or without numba, or on the engine's numpy backend)
:func:`cast_numpy` serves with the same bits: it tests every ray against every solid whose
bounding box its segment meets, with the same operations as the kernel.

Frames and units: world frame (z up), metres; quaternions (w, x, y, z) body to world; a body's
solids in its own frame (x ahead, z up, origin at the body's origin).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..model import placement as pl
from . import aerial_raykernel as ark
from .aerial_raykernel import BALL, BOX, CX, CZ, GROW, KIND, MAT, MINVAL, OWNER, SA, SB, SH, \
    WIDTH
from .mujoco_state import wall_boxes

WALL_HEIGHT = 4.0  # m, as coopsim.physics.mujoco_build's (a test keeps them equal)
WALL_THICKNESS = 1.0  # m, as coopsim.physics.mujoco_build's


def body_solids(body, height: float) -> np.ndarray:
    """(K, 8) a robot body's solids in its own frame (placement's columns KIND ... ZHI): its
    shapes over ``height`` m (0: :data:`coopsim.model.placement.DEFAULT_HEIGHT`), a free
    body's centred on its origin, a ground one's standing on it."""
    level = dataclasses.replace(body, position=(0.0, 0.0), yaw=0.0, z=0.0, height=height)
    return pl.body_rows(level)[:, :pl.ZHI + 1]


def _rows(kind, x, y, z, yaw, a, b, h, owner=-1.0) -> np.ndarray:
    """(n, WIDTH) solid rows, level, turned by ``yaw`` (arrays or scalars)."""
    n = max(np.size(v) for v in (kind, x, y, z, yaw, a, b, h))
    out = np.zeros((n, WIDTH))
    out[:, KIND], out[:, OWNER] = kind, owner
    out[:, CX], out[:, CX + 1], out[:, CZ] = x, y, z
    c, s = np.cos(yaw), np.sin(yaw)
    out[:, MAT], out[:, MAT + 1], out[:, MAT + 3], out[:, MAT + 4] = c, -s, s, c
    out[:, MAT + 8] = 1.0
    out[:, SA], out[:, SB], out[:, SH] = a, b, h
    return out


def bounding_boxes(solids: np.ndarray) -> np.ndarray:
    """(S, 6) each solid's world bounding box (lowest x, y, z, then highest), m, grown by
    :data:`~coopsim.physics.aerial_raykernel.GROW` (relative and absolute)."""
    half = solids[:, [SA, SB, SH]].copy()
    round_ = solids[:, KIND] != BOX
    half[round_, 1] = solids[round_, SA]  # a cylinder's and a ball's radius across
    ball = solids[:, KIND] == BALL
    half[ball, 2] = solids[ball, SA]
    mat = np.abs(solids[:, MAT:MAT + 9].reshape(-1, 3, 3))
    reach = np.einsum("nij,nj->ni", mat, half) * (1.0 + GROW) + GROW
    centre = solids[:, CX:CZ + 1]
    return np.hstack([centre - reach, centre + reach])


class Scene:
    """The solids a ray may meet in one aerial world, one table: the walls and objects (kept
    until the objects change), then the robots' (placed at each cast from their state).

    Args:
        floor: The world's FloorSpec.
    """

    def __init__(self, floor) -> None:
        walls = wall_boxes(floor.length, floor.width, WALL_THICKNESS)
        self._walls = np.vstack([_rows(BOX, cx, cy, WALL_HEIGHT / 2, 0.0, hx, hy,
                                       WALL_HEIGHT / 2) for (cx, cy), (hx, hy) in walls])
        self.floor = np.array([floor.length / 2 + WALL_THICKNESS,
                               floor.width / 2 + WALL_THICKNESS])
        self._objects: tuple | None = None
        self._static = self._walls
        self._bodies = None
        self._local = np.zeros((0, ark.LOCAL))
        self._extent = np.zeros((0, 2))
        self._table: tuple | None = None  # (solids, boxes), the static rows filled in

    def tables(self, objects, bodies: list, state: np.ndarray,
               compiled: bool) -> tuple[np.ndarray, np.ndarray]:
        """(solids, boxes): every solid of the world, the robots' where ``state`` (N, 13)
        places them (``compiled``: by the kernel, else its numpy twin: the same bits)."""
        local, solids, boxes, start = self.unplaced(objects, bodies)
        if compiled:
            ark.place(local, state, solids, boxes, start)
        else:
            place_numpy(local, state, solids, boxes, start)
        return solids, boxes

    def unplaced(self, objects, bodies: list) -> tuple:
        """(local, solids, boxes, start): the tables of :meth:`tables` with the robots' rows
        (from ``start`` on) as the last placing left them, for a caller placing them itself
        (``aerial_raykernel.place``: a fused step)."""
        objects = tuple(objects)
        if objects != self._objects:
            self._static, self._objects, self._table = _static(self._walls, objects), \
                objects, None
        local = self._layout(bodies)
        if self._table is None:
            solids = np.vstack([self._static, np.zeros((len(local), WIDTH))])
            boxes = bounding_boxes(solids)
            self._table = solids, boxes
        solids, boxes = self._table
        return local, solids, boxes, len(self._static)

    def extent(self, bodies: list, rows: np.ndarray) -> np.ndarray:
        """(len(rows), 2) lowest and highest body-frame z of each robot's solids, m."""
        self._layout(bodies)
        return self._extent[np.asarray(rows, dtype=np.int64)]

    def _layout(self, bodies: list) -> np.ndarray:
        """The robots' solids in their own frames, (R, LOCAL) rows, worked out once a layout."""
        if bodies is not self._bodies:
            parts, extent = [], np.zeros((len(bodies), 2))
            for k, body in enumerate(bodies):
                s = body.solids
                lo, hi = s[:, pl.ZLO], s[:, pl.ZHI]
                extent[k] = (lo.min(), hi.max()) if len(s) else (0.0, 0.0)
                parts.append(np.column_stack([np.full(len(s), float(k)), s[:, pl.KIND],
                                              s[:, pl.X], s[:, pl.Y], (lo + hi) / 2,
                                              np.cos(s[:, pl.YAW]), np.sin(s[:, pl.YAW]),
                                              s[:, pl.A], s[:, pl.B], (hi - lo) / 2]))
            self._local = np.vstack(parts) if parts else np.zeros((0, ark.LOCAL))
            self._bodies, self._extent, self._table = bodies, extent, None
        return self._local

    def cast(self, objects, bodies: list, state: np.ndarray, rows: np.ndarray,
             origins: np.ndarray, directions: np.ndarray, reach: np.ndarray,
             compiled: bool = True) -> np.ndarray:
        """(n, k) distances, m, from ``origins`` (n, 3) along ``directions`` (n, k, 3) of
        robots ``rows``, their own solids skipped; ``reach`` (n,) where nothing is within it.
        ``compiled``: the kernels may serve (once loaded)."""
        n, k = directions.shape[:2]
        reach = np.asarray(reach, dtype=float)
        compiled = compiled and ark.WARM is not None and ark.WARM.ready
        solids, boxes = self.tables(objects, bodies, state, compiled)
        pnt = np.ascontiguousarray(origins, dtype=float)
        row, far = np.asarray(rows, dtype=np.int64), reach
        if k > 1:
            pnt, row, far = np.repeat(pnt, k, axis=0), np.repeat(row, k), np.repeat(reach, k)
        vec = np.ascontiguousarray(directions, dtype=float).reshape(n * k, 3)
        if compiled:
            dist = np.empty(n * k)
            ark.cast(pnt, vec, row, far, solids, boxes, self.floor, dist)
        else:
            dist = cast_numpy(pnt, vec, row, far, solids, boxes, self.floor)
        dist = dist.reshape(n, k)
        cap = reach[:, None]
        return np.where((dist >= 0.0) & (dist < cap), dist, cap)


def _static(walls: np.ndarray, objects: tuple) -> np.ndarray:
    """The walls' and ``objects``' (ObjectSpecs) solid rows."""
    solids = [walls]
    for o in objects:
        kind, x, y, yaw, a, b, lo, hi = pl.object_rows(o)[0, :pl.ZHI + 1]
        solids.append(_rows(kind, x, y, (lo + hi) / 2, yaw, a, b, (hi - lo) / 2))
    return np.vstack(solids)


def place_numpy(local, state, solids, boxes, start: int) -> None:
    """:func:`coopsim.physics.aerial_raykernel.place` in numpy: the same operations, so the
    same bits."""
    j = slice(start, start + len(local))
    o = local[:, ark.L_ROW].astype(np.int64)
    w, x, y, z = state[o, 3], state[o, 4], state[o, 5], state[o, 6]
    m = ((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
         (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
         (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))
    c0, c1, c2 = local[:, ark.L_X], local[:, ark.L_Y], local[:, ark.L_Z]
    cy, sy = local[:, ark.L_COS], local[:, ark.L_SIN]
    solids[j, KIND], solids[j, OWNER] = local[:, ark.L_KIND], local[:, ark.L_ROW]
    for i in range(3):
        r0, r1, r2 = m[i]
        solids[j, CX + i] = state[o, i] + (r0 * c0 + r1 * c1 + r2 * c2)
        solids[j, MAT + 3 * i] = r0 * cy + r1 * sy
        solids[j, MAT + 3 * i + 1] = r1 * cy - r0 * sy
        solids[j, MAT + 3 * i + 2] = r2
    solids[j, SA], solids[j, SB], solids[j, SH] = local[:, ark.L_A], local[:, ark.L_B], \
        local[:, ark.L_H]
    boxes[j] = bounding_boxes(solids[j])


# -- the numpy twin of aerial_raykernel.cast -----------------------------------------------------

def cast_numpy(pnt, vec, row, reach, solids, boxes, floor, chunk: int = 4096) -> np.ndarray:
    """:func:`coopsim.physics.aerial_raykernel.cast` in numpy, the same bits (see there):
    (m,) distances, -1 where nothing is met. Rays go ``chunk`` at a time (memory)."""
    out = np.empty(len(pnt))
    for start in range(0, len(pnt), chunk):
        part = slice(start, start + chunk)
        out[part] = _chunk(pnt[part], vec[part], row[part], reach[part], solids, boxes, floor)
    return out


def _chunk(pnt, vec, row, reach, solids, boxes, floor) -> np.ndarray:
    """One chunk of :func:`cast_numpy`."""
    best = _floor(pnt, vec, floor)
    far = reach * (1.0 + GROW) + GROW
    lo, hi = _span(pnt, vec, far)
    meets = (solids[None, :, OWNER] != row[:, None]).astype(bool)
    for axis in range(3):
        meets &= (boxes[None, :, axis] <= hi[:, axis, None]) & \
            (boxes[None, :, axis + 3] >= lo[:, axis, None])
    ray, solid = np.nonzero(meets)
    t = _solid(pnt[ray], vec[ray], solids[solid])
    hit = t >= 0.0
    nearest = np.full(len(pnt), np.inf)
    np.minimum.at(nearest, ray[hit], t[hit])
    found = np.isfinite(nearest)
    take = found & ((best < 0.0) | (nearest < best))
    best[take] = nearest[take]
    return best


def _span(pnt, vec, far) -> tuple[np.ndarray, np.ndarray]:
    """Each ray's segment's bounding box, grown: (m, 3) lowest and highest coordinates."""
    with np.errstate(invalid="ignore"):  # an unbounded reach along an axis it does not move
        end = np.where(vec != 0.0, pnt + far[:, None] * vec, pnt)
    lo, hi = np.minimum(pnt, end), np.maximum(pnt, end)
    return lo - GROW * (1.0 + np.abs(lo)), hi + GROW * (1.0 + np.abs(hi))


def _floor(pnt, vec, floor) -> np.ndarray:
    """The kernel's ``_floor`` (MuJoCo's ``ray_plane``) for every ray: (m,), -1 if missed."""
    p0, p1, p2, v0, v1, v2 = pnt[:, 0], pnt[:, 1], pnt[:, 2], vec[:, 0], vec[:, 1], vec[:, 2]
    down = v2 <= -MINVAL
    with np.errstate(divide="ignore", invalid="ignore"):
        x = -p2 / np.where(down, v2, -1.0)
        inside = (np.abs(p0 + x * v0) <= floor[0]) & (np.abs(p1 + x * v1) <= floor[1])
    return np.where(down & (x >= 0.0) & inside, x, -1.0)


def _solid(pnt, vec, solids) -> np.ndarray:
    """The kernel's ``_solid`` for pairs (ray i's pnt[i], vec[i] against solids[i]): (p,)."""
    d = pnt - solids[:, CX:CZ + 1]
    d0, d1, d2 = d[:, 0], d[:, 1], d[:, 2]
    v0, v1, v2 = vec[:, 0], vec[:, 1], vec[:, 2]
    m = [solids[:, MAT + i] for i in range(9)]
    lp0 = m[0] * d0 + m[3] * d1 + m[6] * d2
    lp1 = m[1] * d0 + m[4] * d1 + m[7] * d2
    lp2 = m[2] * d0 + m[5] * d1 + m[8] * d2
    lv0 = m[0] * v0 + m[3] * v1 + m[6] * v2
    lv1 = m[1] * v0 + m[4] * v1 + m[7] * v2
    lv2 = m[2] * v0 + m[5] * v1 + m[8] * v2
    kind, a, b, h = solids[:, KIND], solids[:, SA], solids[:, SB], solids[:, SH]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        box = _box(lp0, lp1, lp2, lv0, lv1, lv2, a, b, h)
        cyl = _cylinder(lp0, lp1, lp2, lv0, lv1, lv2, a, h)
        ball = _ball(d0, d1, d2, v0, v1, v2, a)
    return np.where(kind == BALL, ball, np.where(kind == BOX, box, cyl))


def _nearer(x, sol, ok):
    """The kernel's ``_nearer`` where ``ok``: (p,)."""
    return np.where(ok & (sol >= 0.0) & ((x < 0.0) | (sol < x)), sol, x)


def _ball(d0, d1, d2, v0, v1, v2, r):
    """The kernel's ``_ball``."""
    a = v0 * v0 + v1 * v1 + v2 * v2
    b = v0 * d0 + v1 * d1 + v2 * d2
    c = d0 * d0 + d1 * d1 + d2 * d2 - r * r
    det = b * b - a * c
    sq = np.sqrt(np.maximum(det, 0.0))
    x1, x2 = (-b - sq) / a, (-b + sq) / a
    x = np.where(x1 >= 0.0, x1, np.where(x2 >= 0.0, x2, -1.0))
    return np.where((det < MINVAL) | (a < MINVAL), -1.0, x)


def _box(p0, p1, p2, v0, v1, v2, s0, s1, s2):
    """The kernel's ``_box`` (its six faces in the same order)."""
    x = np.full(len(p0), -1.0)
    for p, v, s, q0, w0, t0, q1, w1, t1 in ((p0, v0, s0, p1, v1, s1, p2, v2, s2),
                                            (p1, v1, s1, p0, v0, s0, p2, v2, s2),
                                            (p2, v2, s2, p0, v0, s0, p1, v1, s1)):
        ok = np.abs(v) > MINVAL
        for sol in ((-s - p) / v, (s - p) / v):
            within = (np.abs(q0 + sol * w0) <= t0) & (np.abs(q1 + sol * w1) <= t1)
            x = _nearer(x, sol, ok & within)
    return x


def _cylinder(p0, p1, p2, v0, v1, v2, r, h):
    """The kernel's ``_cylinder`` (caps, then the side's two roots)."""
    x = np.full(len(p0), -1.0)
    ok = np.abs(v2) > MINVAL
    for side in (-1.0, 1.0):
        sol = (side * h - p2) / v2
        q0, q1 = p0 + sol * v0, p1 + sol * v1
        x = _nearer(x, sol, ok & (q0 * q0 + q1 * q1 <= r * r))
    a = v0 * v0 + v1 * v1
    b = v0 * p0 + v1 * p1
    c = p0 * p0 + p1 * p1 - r * r
    det = b * b - a * c
    ok = (a >= MINVAL) & (det >= MINVAL)
    sq = np.sqrt(np.maximum(det, 0.0))
    for sol in ((-b - sq) / a, (-b + sq) / a):
        x = _nearer(x, sol, ok & (np.abs(p2 + sol * v2) <= h))
    return x
