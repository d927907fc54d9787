"""The 3D view's mesh triangles: fetched once per mesh over ``/sim`` command 27 ``mesh``
(protocol 11, model/meshwire.py) on the link's thread, kept for the window's life.

A world mesh is asked for by its section name, an imported robot's mesh by a robot of that
type and the file's basename (one request per robot type and file, however many robots use
it). Until its triangles come, and for good when the server cannot send them (a server before
protocol 11, a replay, a file gone), a mesh is drawn as before: a world mesh as its outline's
prism, a link's mesh as a dot. Units and frame of the triangles: the mesh file's own.
"""

from __future__ import annotations

import logging

import numpy as np

from ..model.linkposes import links_of
from ..model.meshwire import flat_rows, parse_reply

log = logging.getLogger(__name__)

MESH = 27  # the /sim command (coopsim.net.protocol.SIM_COMMANDS)


def robot_key(robot_type: str, file: str) -> str:
    """The instance kind of a robot type's mesh file in the 3D view (``mesh:TYPE:FILE``)."""
    return f"mesh:{robot_type}:{file}"


def world_key(name: str) -> str:
    return f"mesh:world:{name}"


class MeshCache:
    """Each mesh's (3 T, 6) triangle rows (x, y, z, nx, ny, nz; file frame and units) by
    key, as the replies arrive; ``version`` grows with each arrival."""

    def __init__(self) -> None:
        self.rows: dict[str, np.ndarray] = {}
        self.version = 0
        self._pending: dict = {}  # key -> Future of the reply
        self._asked: set[str] = set()
        self._layout = None  # the document last looked through

    def want(self, link, layout: dict | None) -> None:
        """Ask ``link`` (anything with ``submit``) for every mesh of ``layout`` not yet asked
        for, and take the replies that came."""
        if link is None or layout is None or not hasattr(link, "submit"):
            return
        if layout is not self._layout:  # a new document: look for new names (not per frame)
            self._layout = layout
            for key, text in _named(layout):
                if key not in self._asked:
                    self._asked.add(key)
                    self._pending[key] = link.submit("/sim", MESH, text)
        for key, future in list(self._pending.items()):
            if future.done():
                del self._pending[key]
                self._take(key, future)

    def _take(self, key: str, future) -> None:
        try:
            reply = future.result()
            if reply is None:  # a link without a server (the benchmarks' canned one)
                return
            verts, faces, _ = parse_reply(reply.params, reply.data)
            self.rows[key] = flat_rows(verts, faces)
            self.version += 1
        except Exception as exc:  # noqa: BLE001 -- any refusal: the mesh keeps its stand-in
            log.info("mesh %s drawn without its triangles: %s", key, exc)


def _named(layout: dict) -> list[tuple[str, str]]:
    """(key, request text) of every mesh ``layout`` names: world meshes, then the first
    robot's of each type for each of its mesh files."""
    out = [(world_key(m["name"]), m["name"])
           for m in (layout.get("scenery") or {}).get("meshes", ()) if m.get("name")]
    for robot in layout.get("robots", ()):
        doc = links_of(robot)
        for link in (doc or {}).get("links", ()):
            for v in link.get("visuals", ()):
                if v.get("kind") == "mesh" and v.get("file"):
                    out.append((robot_key(robot.get("type", ""), v["file"]),
                                f"{robot['name']} {v['file']}"))
    return out
