"""The layout document's ``scenery`` (protocol 9): a world's static meshes and height field as
a viewer draws them, bounded in size (its keys: :data:`SCENERY_KEYS`, docs/reference/state.md).

No triangle goes on the wire: a mesh is its file's basename (nothing of the server's paths),
its pose, scale, colour, triangle count and the outline of its floor footprint; the terrain is
a grid of at most :data:`GRID_MAX` x :data:`GRID_MAX` heights sampled from its image. The
server's own Foxglove bridge draws a mesh's triangles from its local file
(:func:`mesh_triangles`).

Frames and units: world frame (z up), metres; quaternions (w, x, y, z).
"""

from __future__ import annotations

import errno
import os
import stat
from functools import lru_cache

import numpy as np

from .scenery import MeshSpec, TerrainSpec, hull, rotation
from .statedoc import DocKey

#: The most samples each way of the terrain's grid in the document (heights of the image's
#: pixels nearest to an even spacing, corners included): 33 x 33 floats at most.
GRID_MAX = 33
#: The largest mesh file read, bytes: the bound the world and description loads check
#: (coopsim.description.meshes.MAX_MESH_BYTES; model/ cannot import formats/).
MESH_FILE_BYTES = 64 << 20
_STL_RECORD = np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])


def scenery_document(meshes, terrain: TerrainSpec | None) -> dict | None:
    """The ``scenery`` key of the layout document, or None for a world with neither meshes
    nor terrain (the key is then left out)."""
    if not meshes and terrain is None:
        return None
    doc: dict = {"meshes": [mesh_document(m) for m in meshes]}
    if terrain is not None:
        doc["terrain"] = terrain_document(terrain)
    return doc


def mesh_document(m: MeshSpec) -> dict:
    """One mesh: ``name``, ``file`` (basename), ``x, y, z`` (m), ``quat`` (w, x, y, z),
    ``scale``, ``color``, ``triangles``, ``bounds`` (file frame and units: [min, max]),
    ``outline`` (its footprint's convex hull on the floor, [[x, y], ...] m, counter-clockwise)
    and ``top`` / ``bottom`` (its highest and lowest point, m)."""
    outline, bottom, top = _footprint(m)
    return {"name": m.name, "file": os.path.basename(m.path), "x": m.position[0],
            "y": m.position[1], "z": m.position[2], "quat": list(m.quat()),
            "scale": list(m.scale), "color": list(m.color), "triangles": m.triangles,
            "bounds": [list(m.bounds[0]), list(m.bounds[1])], "outline": outline,
            "bottom": bottom, "top": top}


@lru_cache(maxsize=256)  # MeshSpec is frozen: a world's /sim state answers read no file again
def _footprint(m: MeshSpec) -> tuple[list, float, float]:
    try:
        points = mesh_triangles(m).reshape(-1, 3) * m.scale
        points = points @ rotation(m.quat()).T + np.asarray(m.position)
    except (OSError, ValueError):  # the file went away since the world was read: its box
        points = m.corners()
    outline = [[round(float(x), 4), round(float(y), 4)] for x, y in _hull(points[:, :2])]
    return outline, float(points[:, 2].min()), float(points[:, 2].max())


def _hull(xy: np.ndarray) -> np.ndarray:
    """(k, 2) the convex hull of (n, 2) points, counter-clockwise: Qhull's (a mesh may have
    millions of vertices), the pure-Python chain for a flat footprint Qhull refuses."""
    from scipy.spatial import ConvexHull, QhullError  # here: SciPy costs every run ~0.3 s to import
    try:
        return xy[ConvexHull(xy).vertices]  # 2D: counter-clockwise
    except (QhullError, ValueError):
        return hull(xy)


def terrain_document(t: TerrainSpec) -> dict:
    """The terrain: ``file`` (basename), ``x, y, z`` (its centre and black level, m),
    ``size`` (length, width, height of white, m), ``base`` (m), ``rows`` / ``cols`` (its
    image's), ``grid`` (rows of heights above ``z``, m, row 0 at the lowest y, at most
    :data:`GRID_MAX` each way), ``min`` / ``max`` (the full image's lowest and highest, m)."""
    rows, cols = t.heights.shape
    grid, low, high = _grid(t)
    return {"file": os.path.basename(t.path), "x": t.position[0], "y": t.position[1],
            "z": t.position[2], "size": list(t.size), "base": t.base, "rows": rows,
            "cols": cols, "grid": [list(row) for row in grid], "min": low, "max": high}


@lru_cache(maxsize=16)  # a 4096 x 4096 image's min and max are not read again per /sim state
def _grid(t: TerrainSpec) -> tuple[tuple, float, float]:
    h = np.asarray(t.heights, dtype=float)
    rows, cols = h.shape
    r = np.unique(np.linspace(0, rows - 1, min(rows, GRID_MAX)).round().astype(int))
    c = np.unique(np.linspace(0, cols - 1, min(cols, GRID_MAX)).round().astype(int))
    top = t.size[2]
    grid = tuple(map(tuple, (h[np.ix_(r, c)] * top).round(4).tolist()))
    return grid, float(h.min() * top), float(h.max() * top)


#: Suffix -> (path -> (n, 3, 3) triangles) of formats a lower layer cannot read itself: the
#: file readers register here (coopsim.description.collada: ``.dae``), so model/ imports no format.
READERS: dict = {}


def mesh_triangles(m: MeshSpec) -> np.ndarray:
    """(n, 3, 3) the corners of ``m``'s triangles, its file's frame and units, read from its
    local file (already checked against the limits when the world was read).

    Raises:
        OSError: the file cannot be read; ValueError: it no longer parses.
    """
    if m.vertices is not None:  # an ASCII STL: kept as read
        return np.asarray(m.vertices, dtype=float).reshape(-1, 3, 3)
    reader = READERS.get(os.path.splitext(m.path)[1].lower())
    if reader is not None:  # a robot's COLLADA mesh (checked when it loaded; read by the same
        try:                # file rules: a regular file, its size bound, opened non-blocking)
            return np.array(reader(m.path), dtype=float)
        except Exception as exc:  # noqa: BLE001 -- FileFormatError, as the callers expect
            raise ValueError(str(exc)) from None
    data = read_mesh_file(m.path)
    if m.path.lower().endswith(".obj"):
        return _obj_triangles(data)
    count = int(np.frombuffer(data, "<u4", 1, 80)[0]) if len(data) >= 84 else -1
    if 84 + 50 * count != len(data):  # not a binary STL: an ASCII one (a robot's mesh file)
        return _stl_ascii_triangles(data)
    return np.frombuffer(data, _STL_RECORD, count, 84)["v"].astype(float)


def read_mesh_file(path: str, limit: int = MESH_FILE_BYTES) -> bytes:
    """The bytes of mesh file ``path``, read by the rules of every file the server reads
    (coopsim.model.files.open_regular): opened without blocking (a FIFO put in a
    mesh's place would hold the reading thread until a writer came), a regular file only,
    refused unread when its size is over ``limit`` (a 1 GiB sparse file was read whole).

    Raises:
        OSError: missing, unreadable, not a regular file, or over ``limit`` bytes.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)  # of what was opened: a file swapped after a check is caught
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.ENXIO, "not a regular file (a FIFO, device, socket or "
                                       "directory)")
        if st.st_size > limit:
            raise OSError(errno.EFBIG, f"mesh too large ({st.st_size} bytes, over {limit})")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # grew since the fstat
        raise OSError(errno.EFBIG, f"mesh too large (over {limit} bytes)")
    return data


def _stl_ascii_triangles(data: bytes) -> np.ndarray:
    """An ASCII STL's facets, (n, 3, 3): its ``vertex x y z`` lines three by three."""
    points = [[float(w) for w in words[1:4]]
              for words in (line.split() for line in data.decode("ascii", "replace").splitlines())
              if words and words[0] == "vertex"]
    if not points or len(points) % 3:
        raise ValueError(f"an ASCII STL of {len(points)} vertices (three a facet)")
    return np.asarray(points, dtype=float).reshape(-1, 3, 3)


def _obj_triangles(data: bytes) -> np.ndarray:
    """An OBJ's faces as triangles (a polygon as a fan from its first corner)."""
    verts, faces = [], []
    for raw in data.decode("utf-8", "replace").splitlines():
        words = raw.split()
        if words and words[0] == "v":
            verts.append([float(w) for w in words[1:4]])
        elif words and words[0] == "f":
            # "v", "v/vt", "v//vn" or "v/vt/vn"; a negative index counts from the last vertex
            idx = [int(w.split("/")[0]) for w in words[1:]]
            idx = [i - 1 if i > 0 else len(verts) + i for i in idx]
            faces += [(idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1)]
    if not faces:
        raise ValueError("no faces")
    return np.asarray(verts, dtype=float)[np.asarray(faces)]


#: The keys of ``scenery`` (docs/reference/state.md is generated from them).
SCENERY_KEYS = (
    DocKey("meshes", "list of objects", "each `[MESH_n]` of the world, in section order",
           fields=(
        DocKey("name", "string", "its section's name (`MESH_1`): what `/sim` 27 `mesh` asks "
               "for"),
        DocKey("file", "string", "the file's basename: no path"),
        DocKey("x", "number, m", "its file frame's origin"), DocKey("y", "number, m", ""),
        DocKey("z", "number, m", ""),
        DocKey("quat", "[w, x, y, z]", "its file frame's orientation in the world's"),
        DocKey("scale", "[sx, sy, sz]", "the file's units to m, per axis"),
        DocKey("color", "[R, G, B] 0-255", ""),
        DocKey("triangles", "integer", "its file's triangle count"),
        DocKey("bounds", "[[x, y, z], [x, y, z]]", "min and max of its vertices, file frame "
               "and units"),
        DocKey("outline", "[[x, y]...] m", "the convex hull of its footprint on the floor, "
               "counter-clockwise"),
        DocKey("bottom", "number, m", "its lowest point"),
        DocKey("top", "number, m", "its highest point"))),
    DocKey("terrain", "object", "the `[TERRAIN]` height field", present="a world with "
           "`[TERRAIN]`", fields=(
        DocKey("file", "string", "the image's basename"),
        DocKey("x", "number, m", "its centre"), DocKey("y", "number, m", "its centre"),
        DocKey("z", "number, m", "its black level"),
        DocKey("size", "[length, width, height] m", "along x, along y, and the height of "
               "white above `z`"),
        DocKey("base", "number, m", "its thickness below black"),
        DocKey("rows", "integer", "its image's pixel rows"),
        DocKey("cols", "integer", "its image's pixel columns"),
        DocKey("grid", "rows of numbers, m", f"at most {GRID_MAX} x {GRID_MAX} heights above "
               "`z`, the image sampled evenly, corners included: rows from the lowest y, "
               "columns from the lowest x"),
        DocKey("min", "number, m", "the whole image's lowest height above `z`"),
        DocKey("max", "number, m", "the whole image's highest height above `z`"))),
)
