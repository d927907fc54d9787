"""The 3D view's still scenery: the floor's zones, the world's meshes and its terrain
(the layout's ``zones`` and ``scenery``, protocol 9) as triangle meshes in the world frame.

A world mesh is drawn from its triangles once ``/sim`` has sent them (protocol 11,
viewer/view3d_meshes.py), placed by the layout's ``scale``, ``quat`` and ``x, y, z``; until then
(and from a server that cannot send them) as what the layout gives: its floor outline (a convex
polygon) raised from its ``bottom`` to its ``top``. The terrain is drawn from its grid of
heights. Units: metres.
"""

from __future__ import annotations

import numpy as np

from ..model.polygons import ear_indices
from .view3d_bodies import qrot, rgba
from .view3d_meshes import world_key

TERRAIN = (150, 120, 80)
ZONE_LIFT = 0.001  # m above the floor, under the grid lines


def _rows(tris: np.ndarray) -> np.ndarray:
    """(T*3, 6) vertex rows with each triangle's flat normal from (T, 3, 3) triangles."""
    n = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(length > 1e-12, n / np.where(length > 1e-12, length, 1.0), (0.0, 0.0, 1.0))
    return np.concatenate((tris, np.repeat(n[:, None], 3, axis=1)), axis=2).reshape(-1, 6)


def polygon_triangles(polygon, z: float) -> np.ndarray:
    """(T, 3, 3) a simple polygon's triangles (ear clipping) at height z."""
    pts = np.asarray(polygon, dtype=float)
    idx = np.asarray(ear_indices(pts), dtype=int).reshape(-1, 3)
    return np.concatenate((pts[idx], np.full(idx.shape + (1,), z)), axis=2)


def prism(outline, bottom: float, top: float) -> np.ndarray:
    """(T, 3, 3) a polygon raised from ``bottom`` to ``top``, m: sides and top."""
    pts = np.asarray(outline, dtype=float)
    nxt = np.roll(pts, -1, axis=0)
    lo = lambda p: np.column_stack((p, np.full(len(p), bottom)))  # noqa: E731
    hi = lambda p: np.column_stack((p, np.full(len(p), top)))  # noqa: E731
    sides = np.concatenate((np.stack((lo(pts), lo(nxt), hi(nxt)), axis=1),
                            np.stack((lo(pts), hi(nxt), hi(pts)), axis=1)))
    return np.concatenate((sides, polygon_triangles(pts, top)))


def terrain_triangles(t: dict) -> np.ndarray:
    """(T, 3, 3) the terrain's height grid (rows from the lowest y, columns from the lowest
    x) as triangles."""
    grid = np.asarray(t["grid"], dtype=float)
    rows, cols = grid.shape
    length, width = float(t["size"][0]), float(t["size"][1])
    xs = float(t.get("x", 0.0)) + np.linspace(-length / 2, length / 2, cols)
    ys = float(t.get("y", 0.0)) + np.linspace(-width / 2, width / 2, rows)
    X, Y = np.meshgrid(xs, ys)
    P = np.stack((X, Y, grid + float(t.get("z", 0.0))), axis=2)
    a, b, c, d = P[:-1, :-1], P[:-1, 1:], P[1:, 1:], P[1:, :-1]
    return np.concatenate((np.stack((a, b, c), axis=2).reshape(-1, 3, 3),
                           np.stack((a, c, d), axis=2).reshape(-1, 3, 3)))


def placed(rows: np.ndarray, mesh: dict) -> np.ndarray:
    """(V, 6) a world mesh's file-frame triangle rows scaled, turned and moved as its layout
    entry says (``scale``, ``quat`` w, x, y, z, ``x, y, z``), normals turned with them."""
    tris = rows[:, :3].reshape(-1, 3, 3) * np.asarray(mesh.get("scale", (1, 1, 1)), dtype=float)
    quat = np.broadcast_to(np.asarray(mesh.get("quat", (1, 0, 0, 0)), dtype=float),
                           tris.shape[:2] + (4,))
    xyz = np.array([mesh.get(k, 0.0) for k in "xyz"], dtype=float)
    return _rows(qrot(quat, tris) + xyz)


def static_meshes(layout: dict, triangles: dict | None = None) -> list[tuple[np.ndarray, tuple]]:
    """The layout's zones, meshes and terrain: (vertex rows (V, 6), RGBA 0-1) each; a mesh
    whose triangle rows ``triangles`` holds (by view3d_meshes.world_key) drawn from them."""
    triangles = triangles or {}
    out = []
    for zone in layout.get("zones", []):
        if len(zone.get("polygon", ())) >= 3:
            out.append((_rows(polygon_triangles(zone["polygon"], ZONE_LIFT)),
                        rgba(zone.get("color", (60, 120, 220)), zone.get("alpha", 200) / 255)))
    scenery = layout.get("scenery") or {}
    terrain = scenery.get("terrain")
    if terrain and np.asarray(terrain.get("grid", ())).ndim == 2:
        out.append((_rows(terrain_triangles(terrain)), rgba(TERRAIN)))
    for mesh in scenery.get("meshes", ()):
        got = triangles.get(world_key(mesh.get("name", "")))
        if got is not None:
            out.append((placed(got, mesh), rgba(mesh.get("color", (150, 150, 150)))))
        elif len(mesh.get("outline", ())) >= 3:
            out.append((_rows(prism(mesh["outline"], float(mesh.get("bottom", 0.0)),
                                    float(mesh.get("top", 0.1)))),
                        rgba(mesh.get("color", (150, 150, 150)))))
    return out
