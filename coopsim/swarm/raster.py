"""The floor rasterised for :func:`coopsim.swarm.grid.build_grid`: which cells a robot's centre
may not enter.

A cell is blocked when its centre lies within the inflation (the robot radius plus clearance,
m) of the floor's edge, a static object (a box, cylinder or sphere's 2D outline) or a no-go
polygon. Each shape's signed distance is evaluated with numpy over the cell centres of its
inflated bounding window only; a polygon's inside is the even-odd rule. Frames and cell layout
are :mod:`coopsim.swarm.grid`'s: rows along +y, columns along +x, the floor centred on the
origin.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ..model.specs import FloorSpec, ObjectSpec

from .errors import SwarmError


def blocked_cells(floor: FloorSpec, objects: Iterable[ObjectSpec], no_go: Iterable,
                  resolution: float, inflate: float,
                  include_movable: bool = False) -> tuple[np.ndarray, tuple[float, float]]:
    """The blocked cells of a floor with its objects and no-go polygons.

    Args:
        floor: The floor; its edges are walls.
        objects: Objects; only static ones (mass 0) unless ``include_movable``.
        no_go: Polygons, each a (k, 2) array of vertices, m, world frame, k >= 3.
        resolution: Cell side, m per cell (> 0).
        inflate: Distance kept from every obstacle and edge, m.
        include_movable: Also block movable objects where they are now.

    Returns:
        ((rows, cols) bool array, True where blocked; (x0, y0), m: the world position of cell
        (0, 0)'s lower-left corner).

    Raises:
        SwarmError: a polygon with fewer than 3 vertices, an unknown shape.
    """
    cols = max(1, int(math.ceil(floor.length / resolution - 1e-9)))
    rows = max(1, int(math.ceil(floor.width / resolution - 1e-9)))
    origin = (-floor.length / 2, -floor.width / 2)
    xs = origin[0] + (np.arange(cols) + 0.5) * resolution
    ys = origin[1] + (np.arange(rows) + 0.5) * resolution
    blocked = (np.abs(ys)[:, None] > floor.width / 2 - inflate) \
        | (np.abs(xs)[None, :] > floor.length / 2 - inflate)
    for obj in objects:
        if obj.static or include_movable:
            _stamp(blocked, xs, ys, _object_bounds(obj, inflate),
                   lambda px, py, o=obj: _object_distance(o, px, py) <= inflate)
    for poly in no_go:
        verts = _polygon(poly)
        lo, hi = verts.min(axis=0) - inflate, verts.max(axis=0) + inflate
        _stamp(blocked, xs, ys, (lo[0], lo[1], hi[0], hi[1]),
               lambda px, py, v=verts: _polygon_blocked(v, px, py, inflate))
    return blocked, origin


def _stamp(blocked: np.ndarray, xs: np.ndarray, ys: np.ndarray, bounds, test) -> None:
    """OR ``test(x, y)`` into ``blocked`` over the cells whose centres lie within ``bounds``."""
    x0, y0, x1, y1 = bounds
    c0, c1 = np.searchsorted(xs, x0), np.searchsorted(xs, x1, side="right")
    r0, r1 = np.searchsorted(ys, y0), np.searchsorted(ys, y1, side="right")
    if c0 >= c1 or r0 >= r1:
        return
    px, py = np.meshgrid(xs[c0:c1], ys[r0:r1])
    blocked[r0:r1, c0:c1] |= test(px, py)


def _object_bounds(obj: ObjectSpec, inflate: float) -> tuple[float, float, float, float]:
    """World bounding box (x0, y0, x1, y1) of an object grown by ``inflate``, m."""
    x, y = obj.position[0], obj.position[1]
    if obj.shape == "box":
        hx, hy = obj.size[0] / 2, obj.size[1] / 2
        c, s = abs(math.cos(obj.yaw)), abs(math.sin(obj.yaw))
        ex, ey = c * hx + s * hy, s * hx + c * hy
    elif obj.shape in ("cylinder", "sphere"):
        ex = ey = obj.radius
    else:
        raise SwarmError(f"object {obj.name!r}: unknown shape {obj.shape!r}")
    return x - ex - inflate, y - ey - inflate, x + ex + inflate, y + ey + inflate


def _object_distance(obj: ObjectSpec, px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """Signed distance (m, negative inside) from points to an object's 2D outline."""
    dx, dy = px - obj.position[0], py - obj.position[1]
    if obj.shape != "box":
        return np.hypot(dx, dy) - obj.radius
    c, s = math.cos(obj.yaw), math.sin(obj.yaw)
    lx, ly = c * dx + s * dy, -s * dx + c * dy  # into the box frame
    qx, qy = np.abs(lx) - obj.size[0] / 2, np.abs(ly) - obj.size[1] / 2
    outside = np.hypot(np.maximum(qx, 0), np.maximum(qy, 0))
    return outside + np.minimum(np.maximum(qx, qy), 0)


def _polygon(poly) -> np.ndarray:
    verts = np.asarray(poly, dtype=float)
    if verts.ndim != 2 or verts.shape[1] != 2 or len(verts) < 3:
        raise SwarmError(f"a no-go polygon needs a (k, 2) array of k >= 3 vertices, "
                         f"got shape {verts.shape}")
    return verts


def _polygon_blocked(verts: np.ndarray, px: np.ndarray, py: np.ndarray,
                     inflate: float) -> np.ndarray:
    """True where points are inside the polygon or within ``inflate`` m of its edges."""
    inside = np.zeros(px.shape, dtype=bool)
    near = np.zeros(px.shape, dtype=bool)
    for (ax, ay), (bx, by) in zip(verts, np.roll(verts, -1, axis=0)):
        crosses = (ay > py) != (by > py)  # even-odd rule, one edge at a time
        with np.errstate(divide="ignore", invalid="ignore"):
            x_at = ax + (py - ay) * (bx - ax) / (by - ay)
        inside ^= crosses & (px < x_at)
        ex, ey = bx - ax, by - ay
        t = np.clip(((px - ax) * ex + (py - ay) * ey) / max(ex * ex + ey * ey, 1e-300), 0, 1)
        near |= np.hypot(px - ax - t * ex, py - ay - t * ey) <= inflate
    return inside | near
