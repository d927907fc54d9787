"""The world's static geometry as an occupancy grid (``/map``): the floor's walls and every
static object (mass 0), rasterised at a fixed resolution.

Cells hold 0 (free) or 100 (occupied), ROS's convention; a cell is occupied when its centre lies
inside a static shape. The grid covers the floor plus one cell of wall on each side; row 0 is
the lowest y, column 0 the lowest x; ``origin`` is the world (x, y) of cell (0, 0)'s outer
corner, as nav_msgs/MapMetaData wants it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

RESOLUTION = 0.05  # m per cell
OCCUPIED, FREE = 100, 0


@dataclass(frozen=True)
class Occupancy:
    """An occupancy grid: ``cells`` (rows along y, columns along x), int8."""

    resolution: float
    origin: tuple[float, float]
    cells: np.ndarray

    @classmethod
    def of_layout(cls, layout: dict, resolution: float = RESOLUTION) -> "Occupancy":
        """The grid of a layout document's floor and static objects."""
        floor = layout.get("floor") or {}
        length, width = float(floor.get("length", 10.0)), float(floor.get("width", 10.0))
        nx = int(math.ceil(length / resolution)) + 2
        ny = int(math.ceil(width / resolution)) + 2
        origin = (-nx * resolution / 2.0, -ny * resolution / 2.0)
        cells = np.full((ny, nx), FREE, dtype=np.int8)
        cells[[0, -1], :] = OCCUPIED
        cells[:, [0, -1]] = OCCUPIED
        xs = origin[0] + (np.arange(nx) + 0.5) * resolution
        ys = origin[1] + (np.arange(ny) + 0.5) * resolution
        for obj in layout.get("objects", ()):
            if float(obj.get("mass", 0.0)) == 0.0:
                _fill(cells, xs, ys, obj)
        return cls(resolution, origin, cells)


def _fill(cells: np.ndarray, xs: np.ndarray, ys: np.ndarray, obj: dict) -> None:
    """Mark the cells whose centres lie inside one object's footprint."""
    size = obj.get("size") or (0.0, 0.0, 0.0)
    half = math.hypot(size[0], size[1]) / 2.0
    x0, y0 = float(obj["x"]), float(obj["y"])
    cols = np.nonzero(np.abs(xs - x0) <= half)[0]
    rows = np.nonzero(np.abs(ys - y0) <= half)[0]
    if not len(cols) or not len(rows):
        return
    gx, gy = np.meshgrid(xs[cols] - x0, ys[rows] - y0)
    if obj.get("shape") == "box":
        c, s = math.cos(obj.get("yaw", 0.0)), math.sin(obj.get("yaw", 0.0))
        u, v = gx * c + gy * s, -gx * s + gy * c
        inside = (np.abs(u) <= size[0] / 2.0) & (np.abs(v) <= size[1] / 2.0)
    else:  # cylinder, sphere: a circle of diameter size[0]
        inside = gx * gx + gy * gy <= (size[0] / 2.0) ** 2
    block = cells[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    block[inside] = OCCUPIED
