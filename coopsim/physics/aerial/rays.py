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

The cast is one compiled kernel over all rays (:mod:`coopsim.physics.aerial.raykernel`).

Frames and units: world frame (z up), metres; quaternions (w, x, y, z) body to world; a body's
solids in its own frame (x ahead, z up, origin at the body's origin).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...model import placement as pl
from . import raykernel as ark
from .raykernel import BALL, BOX, CX, CZ, GROW, KIND, MAT, OWNER, SA, SB, SH, \
    WIDTH
from ..mujoco.state import wall_boxes

WALL_HEIGHT = 4.0  # m, as coopsim.physics.mujoco.build's (a test keeps them equal)
WALL_THICKNESS = 1.0  # m, as coopsim.physics.mujoco.build's


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
    :data:`~coopsim.physics.aerial.raykernel.GROW` (relative and absolute)."""
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

    def tables(self, objects, bodies: list, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(solids, boxes): every solid of the world, the robots' where ``state`` (N, 13)
        places them."""
        local, solids, boxes, start = self.unplaced(objects, bodies)
        ark.place(local, state, solids, boxes, start)
        return solids, boxes

    def unplaced(self, objects, bodies: list) -> tuple:
        """(local, solids, boxes, start): the tables of :meth:`tables` with the robots' rows
        (from ``start`` on) as the last placing left them, for a caller placing them itself
        (``aerial.raykernel.place``: a fused step)."""
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
             origins: np.ndarray, directions: np.ndarray, reach: np.ndarray) -> np.ndarray:
        """(n, k) distances, m, from ``origins`` (n, 3) along ``directions`` (n, k, 3) of
        robots ``rows``, their own solids skipped; ``reach`` (n,) where nothing is within it."""
        n, k = directions.shape[:2]
        reach = np.asarray(reach, dtype=float)
        solids, boxes = self.tables(objects, bodies, state)
        pnt = np.ascontiguousarray(origins, dtype=float)
        row, far = np.asarray(rows, dtype=np.int64), reach
        if k > 1:
            pnt, row, far = np.repeat(pnt, k, axis=0), np.repeat(row, k), np.repeat(reach, k)
        vec = np.ascontiguousarray(directions, dtype=float).reshape(n * k, 3)
        dist = np.empty(n * k)
        ark.cast(pnt, vec, row, far, solids, boxes, self.floor, dist)
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
