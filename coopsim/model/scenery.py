"""A world's scenery beyond boxes, cylinders and spheres: static meshes (STL, OBJ) and one
height field from a grey image (normative syntax: ``docs/files.md``, *Meshes and terrain*).

The parser (:mod:`coopsim.formats.scenery`) reads the files, checks them against the limits
below and builds these frozen specs; the mujoco engine builds them
(:mod:`coopsim.physics.mujoco.scenery`); the 2D engines refuse a world that has them.

Frames and units: world frame (z up), metres, radians. A mesh's vertices are in its file's
own frame and units, multiplied by ``scale`` and then turned and moved by its pose. A height
field's grid row 0 lies at its lowest y, column 0 at its lowest x.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

Vec3 = tuple[float, float, float]

#: Limits of scenery files (docs/files.md, *Meshes and terrain*): a world is refused, whole,
#: beyond them.
MAX_MESHES = 1000  # [MESH_n] sections in one world
MAX_MESH_EXTENT = 1000.0  # m, each side of a mesh's scaled bounding box
MIN_MESH_EXTENT = 0.001  # m, the largest side of a mesh's scaled bounding box at least
SCALE_RANGE = (1e-4, 1e4)  # each scale factor
MAX_HFIELD_SIDE = 4096  # pixels, each side of a height field's image
MAX_HFIELD_PIXELS = 4096 * 4096  # pixels in all (a float32 each in MuJoCo's model: 64 MB)
MIN_HFIELD_SIDE = 2  # pixels: a grid needs two samples each way
HFIELD_SIZE_RANGE = (0.01, 20000.0)  # m, a height field's length and width
HFIELD_HEIGHT_RANGE = (0.001, 1000.0)  # m, its height (white) above its base
HFIELD_BASE_RANGE = (0.001, 1000.0)  # m, the thickness below its lowest point
MESH_COLOR = (150, 150, 150)  # a mesh's colour when its section names none


@dataclass(frozen=True)
class MeshSpec:
    """One ``[MESH_n]``: a static mesh of the world.

    Attributes:
        name: Its section's name (``MESH_1``).
        path: The mesh file (STL binary or ASCII, or OBJ), absolute.
        position: Where its file frame's origin is, m, world frame.
        rpy: Roll, pitch, yaw, rad (about x, then y, then z: fixed axes).
        scale: Factors on the file's x, y and z (the file's units into metres).
        color: R, G, B (0-255), for drawing.
        line: Line of its section header.
        triangles: How many triangles its file holds.
        bounds: ((x, y, z) min, (x, y, z) max) of its vertices, file units and frame.
        vertices: (3 n, 3) the corners of its n triangles, file units, for a file MuJoCo does
            not read itself (an ASCII STL); None: MuJoCo reads ``path``.
    """

    name: str
    path: str
    position: Vec3
    rpy: Vec3 = (0.0, 0.0, 0.0)
    scale: Vec3 = (1.0, 1.0, 1.0)
    color: tuple[int, int, int] = (150, 150, 150)
    line: int = 0
    triangles: int = 0
    bounds: tuple[Vec3, Vec3] = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    vertices: np.ndarray | None = field(default=None, compare=False, repr=False)

    def quat(self) -> tuple[float, float, float, float]:
        """(w, x, y, z): the rotation ``rpy`` (z * y * x, fixed axes)."""
        return rpy_quat(*self.rpy)

    def corners(self) -> np.ndarray:
        """(8, 3) the world corners of its scaled, turned and moved bounding box, m."""
        lo, hi = (np.asarray(b, dtype=float) * self.scale for b in self.bounds)
        box = np.array([[(lo, hi)[i][0], (lo, hi)[j][1], (lo, hi)[k][2]]
                        for i in (0, 1) for j in (0, 1) for k in (0, 1)])
        return box @ rotation(self.quat()).T + np.asarray(self.position)


@dataclass(frozen=True)
class TerrainSpec:
    """The ``[TERRAIN]``: a height field from a grey image (MuJoCo's hfield).

    Attributes:
        path: The image (PNG or PGM), absolute.
        size: (length along x, width along y, height of white above black), m.
        position: Its centre (x, y) and its black level z, m, world frame.
        base: Its thickness below the black level, m (MuJoCo's hfield base).
        heights: (rows, cols) float32 in [0, 1] (black 0, white 1), row 0 at the lowest y.
        seen_above: Height above the black level from which its cells are walls to the 2D
            range sensors, m; None: they never are.
        outline: The rectangles of those cells, (cx, cy, length, width) m, world frame.
        line: Line of its section header.
    """

    path: str
    size: Vec3
    position: Vec3 = (0.0, 0.0, 0.0)
    base: float = 0.1
    heights: np.ndarray = field(default=None, compare=False, repr=False)
    seen_above: float | None = None
    outline: tuple = ()
    line: int = 0

    def height_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The ground's height at world points (x, y), m: the grid interpolated (bilinear)
        inside the field, 0 (the floor) outside it; never below the floor."""
        rows, cols = self.heights.shape
        length, width, top = self.size
        u = (np.asarray(x, dtype=float) - self.position[0] + length / 2) / length * (cols - 1)
        v = (np.asarray(y, dtype=float) - self.position[1] + width / 2) / width * (rows - 1)
        inside = (u >= 0) & (u <= cols - 1) & (v >= 0) & (v <= rows - 1)
        u, v = np.clip(u, 0, cols - 1), np.clip(v, 0, rows - 1)
        c0, r0 = np.minimum(u.astype(np.int64), cols - 2), np.minimum(v.astype(np.int64), rows - 2)
        fu, fv = u - c0, v - r0
        h = self.heights
        z = ((h[r0, c0] * (1 - fu) + h[r0, c0 + 1] * fu) * (1 - fv)
             + (h[r0 + 1, c0] * (1 - fu) + h[r0 + 1, c0 + 1] * fu) * fv)
        return np.where(inside, np.maximum(self.position[2] + z * top, 0.0), 0.0)


def rpy_quat(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """(w, x, y, z) of Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy)


def rotation(q) -> np.ndarray:
    """(3, 3) rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _turn(o, a, b) -> float:
    """> 0 when o -> a -> b turns counter-clockwise."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def hull(points: np.ndarray) -> np.ndarray:
    """(k, 2) the convex hull of (n, 2) points, counter-clockwise (Andrew's monotone chain)."""
    pts = np.unique(np.asarray(points, dtype=float).round(9), axis=0)
    if len(pts) < 3:
        return pts

    def half(seq):
        out: list = []
        for p in seq:
            while len(out) >= 2 and _turn(out[-2], out[-1], p) <= 0:
                out.pop()
            out.append(p)
        return out[:-1]
    return np.array(half(pts) + half(pts[::-1]))
