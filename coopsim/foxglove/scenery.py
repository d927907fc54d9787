"""A world's meshes and terrain in the still scene (the layout document's ``scenery``,
protocol 9): each mesh a TriangleListPrimitive, the terrain a triangle list of its grid.

The live bridge runs beside the world, so a mesh's triangles come from its local file (the
world's :class:`~coopsim.model.scenery.MeshSpec`, passed in ``specs``); a replay or an export
has only the document, so a mesh is drawn as the prism of its floor outline from its
``bottom`` to its ``top``. Frames and units: world frame (z up), metres.
"""

from __future__ import annotations

import logging

import numpy as np

from ..model.scenerydoc import mesh_triangles
from ..model.scenery import rotation
from .proto import Msg, color, pose, world_entity

log = logging.getLogger(__name__)

#: The most triangles of one mesh drawn from its file: beyond, its outline's prism (a scene
#: update of a few MB at most; Foxglove draws it once per layout).
MAX_DRAWN_TRIANGLES = 200_000
TERRAIN_COLOR = (120, 110, 90)
_POINT = np.dtype([("tag", "u1"), ("len", "u1"), ("tx", "u1"), ("x", "<f8"), ("ty", "u1"),
                   ("y", "<f8"), ("tz", "u1"), ("z", "<f8")])


#: The key of a live bridge's own copy of the layout document holding mesh name -> MeshSpec
#: (never on the wire: :class:`~coopsim.foxglove.bridge.LiveSource` adds it).
LOCAL_MESHES = "_local_meshes"


def scenery_entities(layout: dict, specs: dict | None = None) -> list[Msg]:
    """SceneEntity messages of ``layout``'s ``scenery`` (none without it).

    Args:
        layout: The layout document (docs/protocol.md section 4).
        specs: Mesh name -> its MeshSpec, to draw its triangles from its local file; a mesh
            not in it (or whose file cannot be read) is drawn as its outline's prism.
    """
    scenery = layout.get("scenery") or {}
    specs = layout.get(LOCAL_MESHES, {}) if specs is None else specs
    out = [_mesh(m, specs.get(m.get("name"))) for m in scenery.get("meshes", ())]
    if scenery.get("terrain"):
        out.append(_terrain(scenery["terrain"]))
    return out


def _triangles(points: np.ndarray, rgb, alpha: float = 1.0) -> Msg:
    """A TriangleListPrimitive in the world frame of the (3 n, 3) corners ``points``, m."""
    rec = np.zeros(len(points), _POINT)
    rec["tag"], rec["len"], rec["tx"], rec["ty"], rec["tz"] = 2 << 3 | 2, 27, 9, 17, 25
    rec["x"], rec["y"], rec["z"] = points[:, 0], points[:, 1], points[:, 2]
    prim = Msg().sub(1, pose(0.0, 0.0, 0.0, 0.0, 1.0))
    prim.data += rec.tobytes()  # repeated Point3 (field 2), each x, y, z written
    return prim.sub(3, color(rgb, alpha))


def _mesh(doc: dict, spec) -> Msg:
    """One mesh: its file's triangles, scaled, turned and moved, or its outline's prism."""
    points = None
    if spec is not None and spec.triangles <= MAX_DRAWN_TRIANGLES:
        try:
            local = mesh_triangles(spec).reshape(-1, 3) * spec.scale
            points = local @ rotation(spec.quat()).T + np.asarray(spec.position)
        except (OSError, ValueError) as exc:
            log.warning("mesh %s drawn as its outline: %s", spec.name, exc)
    if points is None:
        points = prism(doc.get("outline", ()), doc.get("bottom", 0.0), doc.get("top", 0.0))
    entity = world_entity(f"mesh/{doc.get('name', '')}")
    entity.sub(6, Msg().string(1, "file").string(2, str(doc.get("file", ""))))
    return entity.sub(12, _triangles(points, doc.get("color", (150, 150, 150))))


def prism(outline, bottom: float, top: float) -> np.ndarray:
    """(3 n, 3) the triangles of the upright prism over the convex polygon ``outline``
    ([[x, y]...] m) from ``bottom`` to ``top`` (m): its sides and its top."""
    ring = np.asarray(outline, dtype=float).reshape(-1, 2)
    if len(ring) < 3:
        return np.zeros((0, 3))
    nxt = np.roll(ring, -1, axis=0)
    lo = np.column_stack([ring, np.full(len(ring), bottom)])
    hi = np.column_stack([ring, np.full(len(ring), top)])
    lo2 = np.column_stack([nxt, np.full(len(ring), bottom)])
    hi2 = np.column_stack([nxt, np.full(len(ring), top)])
    sides = np.stack([lo, lo2, hi2, lo, hi2, hi], axis=1).reshape(-1, 3)
    fan = np.stack([np.repeat(hi[:1], len(ring) - 2, 0), hi[1:-1], hi[2:]], axis=1)
    return np.vstack([sides, fan.reshape(-1, 3)])


def _terrain(doc: dict) -> Msg:
    """The terrain: two triangles per cell of the document's grid, at its heights."""
    grid = np.asarray(doc.get("grid", ()), dtype=float)
    entity = world_entity("terrain")
    if grid.ndim != 2 or min(grid.shape) < 2 or len(doc.get("size", ())) < 2:
        return entity  # a damaged document: nothing to draw
    length, width = float(doc["size"][0]), float(doc["size"][1])
    rows, cols = grid.shape
    xs = doc.get("x", 0.0) + np.linspace(-length / 2, length / 2, cols)
    ys = doc.get("y", 0.0) + np.linspace(-width / 2, width / 2, rows)
    gx, gy = np.meshgrid(xs, ys)
    corners = np.stack([gx, gy, grid + doc.get("z", 0.0)], axis=-1)
    a, b = corners[:-1, :-1], corners[:-1, 1:]
    c, d = corners[1:, :-1], corners[1:, 1:]
    points = np.stack([a, b, d, a, d, c], axis=2).reshape(-1, 3)
    return entity.sub(12, _triangles(points, TERRAIN_COLOR))

