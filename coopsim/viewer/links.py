"""Robots from description files in the viewer's top view: every link's visual shapes seen
from above (the layout document's ``links``, protocol 10; :mod:`coopsim.model.linkposes`).

Each shape is drawn as the box around it (a box itself; a mesh the box of its ``bounds``; a
sphere, ellipsoid, cylinder or capsule the box around it) at its link's pose, projected
straight down onto the floor: its six faces filled in the shape's colour, half transparent,
and its twelve edges in a darker shade, so the links read as outlines of the robot's parts.
The poses come from the robot's 3D pose and its streamed ``link_q`` columns (a replay streams
the recorded ones; a frame without them draws the joints at zero). World metres throughout.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..model.linkposes import (COLUMNS, link_visuals, links_of, placed_visuals, quat_matrix,
                               row_columns)
from .geometry import Layer, LineLayer, rgba, shade

SIGNS = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))  # the 8 corners
FACES = ((0, 1, 3, 2), (4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5))
EDGES = tuple((a, b) for a in range(8) for b in range(a + 1, 8)
              if np.count_nonzero(SIGNS[a] != SIGNS[b]) == 1)
_TRI = [k for f in FACES for k in (f[0], f[1], f[2], f[0], f[2], f[3])]  # 36 corners
_LINES = [k for e in EDGES for k in e]  # 24 corners
FILL_ALPHA = 150


def box_of(v) -> tuple[np.ndarray, np.ndarray]:
    """(centre, half extents) of the box around visual ``v`` in its own frame, m."""
    s = list(v.size)
    if v.kind == "mesh":
        lo, hi = np.asarray(v.bounds[0], float), np.asarray(v.bounds[1], float)
        return (lo + hi) / 2, np.maximum((hi - lo) / 2, 1e-3)
    half = {"box": lambda: np.array(s[:3]) / 2, "sphere": lambda: np.full(3, s[0]),
            "ellipsoid": lambda: np.array(s[:3]),
            "cylinder": lambda: np.array([s[0], s[0], s[1] / 2]),
            "capsule": lambda: np.array([s[0], s[0], s[1] / 2 + s[0]])}[v.kind]()
    return np.zeros(3), np.maximum(half, 1e-3)


class LinkDrawing:
    """The described robots of one layout, as two layers of the scene (faces, edges).

    Args:
        scene: The viewer's :class:`~coopsim.viewer.scene.Scene` (its batch, shader, groups).
        layout: The layout document.
    """

    def __init__(self, scene, layout: dict) -> None:
        robots = layout.get("robots", [])
        self.robots = [(i, r) for i, r in enumerate(robots) if links_of(r) is not None]
        columns = layout.get("columns", [])
        self._cols = [columns.index(c) if c in columns else -1 for c in COLUMNS]
        colors = [rgba([255 * c for c in v.color[:3]], FILL_ALPHA)
                  for _, r in self.robots for vs in link_visuals(r).values() for v in vs]
        self.boxes = [box_of(v) for _, r in self.robots for vs in link_visuals(r).values()
                      for v in vs]
        n = len(colors)
        self._faces = Layer(scene._shader, scene.batch, scene.groups["arm_links"],
                            np.zeros((n, len(_TRI), 2)), colors)
        self._edges = LineLayer(scene._shader, scene.batch, scene.groups["arm_joints"],
                                n * len(EDGES), [shade(c[:3], 0.5) for c in colors
                                                 for _ in EDGES])
        self.corners = np.zeros((n, 8, 3))  # each shape's box corners now, world m

    def __bool__(self) -> bool:
        return bool(self.robots)

    def delete(self) -> None:
        self._faces.delete()
        self._edges.delete()

    def columns(self, columns: np.ndarray | None, row: int) -> dict[str, float]:
        """The robot's streamed ``link_q`` values by name (NaN where not streamed)."""
        out = np.full(len(COLUMNS), np.nan)
        if columns is not None and row < len(columns):
            for k, c in enumerate(self._cols):
                if 0 <= c < columns.shape[1]:
                    out[k] = columns[row, c]
        return row_columns(out)

    def update(self, poses7: np.ndarray, columns: np.ndarray | None) -> None:
        """Move every link: ``poses7`` (N, 7) the robots' x, y, z, qw, qx, qy, qz."""
        if not self.robots:
            return
        k = 0
        for row, robot in self.robots:
            for _, _, (xyz, quat) in placed_visuals(robot, poses7[row],
                                                    self.columns(columns, row)):
                centre, half = self.boxes[k]
                local = centre + SIGNS * half
                self.corners[k] = xyz + local @ quat_matrix(quat).T
                k += 1
        flat = self.corners[:, :, :2]
        self._faces.write(flat[:, _TRI].reshape(-1, 2))
        ends = flat[:, _LINES].reshape(-1, 2, 2)
        self._edges.set_lines(ends[:, 0], ends[:, 1])
