"""Robots from description files in Foxglove: every link drawn with its own visual shapes at
its pose (the layout document's ``links``, protocol 10; :mod:`coopsim.model.linkposes`).

Each link is an entity ``link/<robot>/<link>`` of the still scene (``/scene/world``, sent once
per layout and repeated for late joiners) in the frame ``<robot>/<link>``, frame-locked, so a
step sends no shape: only the links' frames, on ``/tf/arms`` (``foxglove.FrameTransforms``:
``<robot>`` -> ``<robot>/<root link>`` -> ... each link in its parent's frame, from the
stream's ``link_q`` columns). Shapes: a box a CubePrimitive, a sphere or ellipsoid a
SpherePrimitive, a cylinder a CylinderPrimitive, a capsule a cylinder and two spheres, a mesh
a TriangleListPrimitive of its file's triangles (a live run: the robot type of this process
knows each mesh's file, :attr:`~coopsim.description.robot.ImportedType.DESCRIPTION`; a file of
over 20,000 triangles decimated as ``/sim`` 27 serves it, model/meshwire.py) or, where
the file is not known here (an export or replay in another process: the document names only
basenames) or cannot be read, the box of its bounds. Frames and units: m; Foxglove's
quaternions x, y, z, w.
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from types import SimpleNamespace

import numpy as np

from ..model.linkposes import (link_columns, link_visuals, links_of, local_poses, quat_matrix,
                               row_columns)
from ..model.meshwire import MAX_TRIANGLES, indexed
from ..model.plugins import ROBOT_TYPES
from ..model.scenerydoc import mesh_triangles
from .proto import Msg, Slot, Template, color, pose3, quaternion4, vector3
from .scenery import MAX_DRAWN_TRIANGLES, _triangles

log = logging.getLogger(__name__)


def _rgb(c) -> tuple[list[float], float]:
    return [255.0 * float(v) for v in c[:3]], float(c[3]) if len(c) > 3 else 1.0


def _local_files(robot_type: str) -> dict[str, str]:
    """Mesh basename -> its file, from this process's robot type of that name (a live run);
    {} when the type is not known here."""
    try:
        cls = ROBOT_TYPES.get(robot_type) if robot_type in ROBOT_TYPES else None
    except Exception:  # noqa: BLE001 -- a registry problem is no reason not to draw
        cls = None
    d = getattr(cls, "DESCRIPTION", None)
    if d is None:
        return {}
    return {name: path for path, name in d.mesh_names().items()}


def _file_triangles(path: str) -> np.ndarray | None:
    """(n, 3, 3) a mesh file's triangles (STL, OBJ, COLLADA), at most :data:`MAX_TRIANGLES`
    of them (a larger mesh decimated as ``/sim`` 27 serves it to the 3D view, so a robot of
    large COLLADA meshes, the Z1's 244,000 triangles, stays within the scene's budget), or
    None (unreadable: its bounds' box)."""
    try:
        st = os.stat(path)
        return _bounded(path, st.st_size, st.st_mtime_ns)
    except (OSError, ValueError) as exc:
        log.warning("link mesh %s drawn as its bounds: %s", path, exc)
        return None


@lru_cache(maxsize=64)  # per file: a robot names one foot mesh four times
def _bounded(path: str, size: int, mtime: int) -> np.ndarray:
    tri = mesh_triangles(SimpleNamespace(path=path, vertices=None))
    if len(tri) <= MAX_TRIANGLES:
        return tri
    verts, faces = indexed(tri, MAX_TRIANGLES)
    return verts[faces]


def _place(xyz, quat) -> Msg:
    return pose3(*xyz, quat[1], quat[2], quat[3], quat[0])


def _shape(entity: Msg, v, files: dict, budget: list) -> None:
    """Add visual ``v`` (in the link frame) to ``entity``."""
    rgb, alpha = _rgb(v.color)
    if v.kind == "mesh":
        tri = _file_triangles(files[v.file]) if v.file in files else None
        if tri is not None and len(tri) <= budget[0]:
            budget[0] -= len(tri)
            points = (tri.reshape(-1, 3) * np.asarray(v.scale)) @ quat_matrix(v.quat).T + v.xyz
            entity.sub(12, _triangles(points, rgb, alpha))
            return
        lo, hi = np.asarray(v.bounds[0], float), np.asarray(v.bounds[1], float)
        centre = np.asarray(v.xyz) + quat_matrix(v.quat) @ ((lo + hi) / 2)
        entity.sub(8, Msg().sub(1, _place(centre, v.quat)).sub(2, vector3(*(hi - lo)))
                   .sub(3, color(rgb, alpha)))
    elif v.kind == "box":
        entity.sub(8, Msg().sub(1, _place(v.xyz, v.quat)).sub(2, vector3(*v.size[:3]))
                   .sub(3, color(rgb, alpha)))
    elif v.kind in ("sphere", "ellipsoid"):
        d = [2 * s for s in (v.size * 3 if v.kind == "sphere" else v.size)[:3]]
        entity.sub(9, Msg().sub(1, _place(v.xyz, v.quat)).sub(2, vector3(*d))
                   .sub(3, color(rgb, alpha)))
    elif v.kind in ("cylinder", "capsule"):
        r, length = v.size[0], v.size[1]
        entity.sub(10, Msg().sub(1, _place(v.xyz, v.quat)).sub(2, vector3(2 * r, 2 * r, length))
                   .double(3, 1.0).double(4, 1.0).sub(5, color(rgb, alpha)))
        if v.kind == "capsule":
            axis = quat_matrix(v.quat)[:, 2] * length / 2
            for end in (np.asarray(v.xyz) + axis, np.asarray(v.xyz) - axis):
                entity.sub(9, Msg().sub(1, _place(end, v.quat)).sub(2, vector3(2 * r, 2 * r, 2 * r))
                           .sub(3, color(rgb, alpha)))


def link_entities(layout: dict) -> list[Msg]:
    """SceneEntity messages of every link of every described robot of ``layout`` (module
    docstring), for the still scene; none without such robots."""
    out, budget = [], [MAX_DRAWN_TRIANGLES]
    for robot in layout.get("robots", ()):
        if links_of(robot) is None:
            continue
        files = _local_files(str(robot.get("type", "")))
        name = robot["name"]
        for link, visuals in link_visuals(robot).items():
            entity = (Msg().stamp(1).string(2, f"{name}/{link}").string(3, f"link/{name}/{link}")
                      .uint(5, 1))  # frame_locked: follows its frame's transforms
            for v in visuals:
                _shape(entity, v, files, budget)
            out.append(entity)
    return out


class LinkFrames:
    """The link frames of one layout's described robots on ``/tf/arms``, a template filled
    per step (``messages``: the FrameTransforms bytes, or None without such robots)."""

    def __init__(self, layout: dict, index: dict[str, int] | None = None) -> None:
        self.robots = [(r["name"], links_of(r)) for r in layout.get("robots", ())
                       if links_of(r) is not None]
        tf, count = Msg(), 0
        for name, doc in self.robots:
            for link in doc["links"]:
                parent = f"{name}/{link['parent']}" if link.get("parent") else name
                slots = [Slot(count + k) for k in range(7)]
                count += 7
                tf.sub(1, Msg().stamp(1).string(2, parent).string(3, f"{name}/{link['name']}")
                       .sub(4, vector3(*slots[:3])).sub(5, quaternion4(*slots[3:])))
        self.template = Template(tf, count) if self.robots else None

    def __bool__(self) -> bool:
        return bool(self.robots)

    def message(self, snap, ns: int) -> bytes | None:
        """FrameTransforms of every link at ``snap`` (None without described robots)."""
        if self.template is None:
            return None
        cols = link_columns(snap)
        values = []
        for name, doc in self.robots:
            row = snap.index.get(name)
            q = cols[row] if cols is not None and row is not None else ()
            for _, _, xyz, quat in local_poses(doc, row_columns(q)):
                values += [*xyz, quat[1], quat[2], quat[3], quat[0]]
        return self.template.fill(np.array(values), ns).tobytes()
