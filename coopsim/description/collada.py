"""COLLADA (``.dae``) meshes of a description: their triangles, read by
:mod:`coopsim.description.daereader` (coopsim's own reader, over defusedxml), bounded like the STL
and OBJ files of :mod:`coopsim.description.meshes`, and handed to MuJoCo as binary STL from memory
(MuJoCo reads STL, OBJ and MSH only; docs/files.md "Meshes").

A ``.dae`` is untrusted XML: a DTD or entity declaration is refused before it is parsed, its
size is bounded (:data:`~coopsim.description.meshes.MAX_MESH_BYTES`), its tags counted
(:data:`~coopsim.description.daereader.MAX_TAGS`) and its declared primitive counts summed before
parsing (:func:`_declared`), its triangles counted instance by instance before any is
transformed. Every geometry instance of its scene is taken with its node transforms, in
metres (the asset's ``<unit meter>``); materials, textures and cameras are not read (a
texture the file names but lacks is no error), nor the normals and texture coordinates of the
primitives' corners. Peak memory stays within about 4 times the file's size plus the mesh it
yields (tests/formats/test_collada_hostile.py).

A mesh over :data:`ENGINE_FACES` triangles is given to MuJoCo decimated by vertex clustering
(:func:`for_engine`, :func:`decimated`); drawing (the 3D view's ``/sim`` 27, Foxglove) reads
the full mesh. Triangles are cached per file (path, size and mtime), so a robot of 20 links
naming one foot mesh four times parses it once, and on disk by content
(:mod:`coopsim.description.meshcache`), so a second process does not parse it again.

Units: metres, the file's frame (a description's ``scale`` applies after).
"""

from __future__ import annotations

import os
import re
import struct
from functools import lru_cache

import numpy as np

from ..model.errors import FileFormatError
from ..model.scenerydoc import READERS
from . import daereader, meshcache
from ..model.files import read_mesh_bytes

MAX_BYTES = 64 << 20  # bytes of one .dae (meshes.MAX_MESH_BYTES)
MUJOCO_FACES = 200_000  # MuJoCo's limit of faces per mesh: above it the mesh is decimated
#: Triangles of one mesh MuJoCo is given (its collision hull, mass, camera images): a bigger
#: one is decimated (:func:`for_engine`). The 3D view and Foxglove draw the file's own.
ENGINE_FACES = 10_000
MAX_TRIANGLES = 1_000_000  # of one file read (meshes.MAX_TRIANGLES)
_COUNT = re.compile(rb"<(triangles|polylist|polygons|tristrips|trifans)\b[^>]*?\bcount=\"(\d+)\"")


def _declared(data: bytes, tags: list[int] | None = None) -> int:
    """The primitives the file declares (``count`` of each triangles/polygon element): a
    bound read before parsing (a polygon of n corners makes n - 2 triangles, counted after).
    The pattern is tried at each ``<`` (``tags``: :func:`daereader.tag_starts`), a match
    at a time as ``finditer`` would: a regex over a file's 24 MB of numbers cost 7 ms."""
    total, at = 0, 0
    for start in daereader.tag_starts(data) if tags is None else tags:
        found = _COUNT.match(data, start) if start >= at else None
        if found is not None:
            total += int(found.group(2))
            at = found.end()
    return total


def _read(path: str) -> tuple[bytes, list[int]]:
    """(the bytes of ``path``, the offset of each ``<`` in them); refused: over
    :data:`~coopsim.description.daereader.MAX_TAGS` tags (counted before they are listed), a DTD
    anywhere, an entity in the first 4 kB."""
    data = read_mesh_bytes(path, MAX_BYTES)
    if data.count(b"<") > daereader.MAX_TAGS:
        at = -1
        for _ in range(daereader.MAX_TAGS + 1):
            at = data.find(b"<", at + 1)
        raise FileFormatError(path, daereader.line_at(data, at), "COLLADA file has over "
                              f"{daereader.MAX_TAGS} tags (the limit)")
    tags = daereader.tag_starts(data)
    for start in tags:
        if data.startswith(b"!", start + 1) and (data.startswith(b"<!DOCTYPE", start) or (
                data.startswith(b"<!ENTITY", start) and start + 8 <= 4096)):
            raise FileFormatError(path, daereader.line_at(data, start),
                                  "a DTD or entity in a COLLADA file is refused")
    return data, tags


def _gathered(primitives, path: str, limit: int,
              unit: float = 1.0) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """(triangles, (vertices, corners)): the (n, 3, 3) float32 triangles of ``primitives``
    ((vertex, vertex index) pairs) times ``unit`` (m per file unit), and the same as an
    indexed mesh (``triangles == vertices[corners].reshape(-1, 3, 3)``, which the
    decimation merges on: :func:`decimated`). The vertices are scaled and rounded to
    float32 before the corners are gathered from them: the same numbers as gathering first,
    a sixth of the work (a soup repeats each vertex about six times)."""
    vertices, corners, total, offset = [], [], 0, 0
    for vertex, index in primitives:
        total += len(index)
        if total > limit:
            raise FileFormatError(path, 0, f"mesh has over {limit} triangles (the limit)")
        vertex = (np.asarray(vertex, dtype=float) * unit).astype(np.float32)
        vertices.append(vertex)
        corners.append(np.asarray(index, dtype=np.int64).reshape(-1) + offset)
        offset += len(vertex)
    if not vertices:
        raise FileFormatError(path, 0, "mesh has no triangles")
    table, corner = np.concatenate(vertices), np.concatenate(corners)
    tris = table[corner].reshape(-1, 3, 3)
    corner = corner.astype(np.int32)  # kept beside the triangles: half the bytes
    table.setflags(write=False)
    corner.setflags(write=False)
    return tris, (table, corner)


@lru_cache(maxsize=64)  # float32 corners: the Z1's nine files hold 9 MB, Go1's trunk 13 MB
def _cached(path: str, size: int, mtime: int, limit: int) -> tuple:
    """(triangles, indexed or None, cache entry name): see :func:`dae_triangles`; the
    indexed mesh of :func:`_gathered` where the file was parsed here (not read from the
    disk cache)."""
    data, tags = _read(path)
    if _declared(data, tags) > 2 * limit:  # a polygon makes >= 1 triangle: refused before parsing
        raise FileFormatError(path, 0, f"mesh has over {limit} triangles (the limit)")
    name = meshcache.key(data, "dae")
    tris = meshcache.get(name, (3, 3), np.float32)  # read and checked by an earlier process
    indexed = None
    if tris is None:
        tris, indexed = _read_indexed(path, data, tags, limit)
        meshcache.put(name, tris)
    if len(tris) > limit:
        raise FileFormatError(path, 0, f"mesh has over {limit} triangles (the limit)")
    tris.setflags(write=False)  # shared by every caller of the cache
    return tris, indexed, name


def _converted(path: str, data: bytes) -> np.ndarray:
    """(n, 3, 3) float32 triangles of the COLLADA bytes ``data``, m."""
    return _read_indexed(path, data)[0]


def _read_indexed(path: str, data: bytes, tags: list[int] | None = None,
                  limit: int = MAX_TRIANGLES) -> tuple:
    """:func:`_converted`'s triangles and their indexed mesh (:func:`_gathered`), read by
    :mod:`.daereader` (at most ``limit`` triangles)."""
    parts, unit = daereader.triangles(path, data, tags, limit)
    tris, indexed = _gathered(parts, path, limit, unit)
    if not np.isfinite(tris).all():  # a finite vertex and transform can still overflow
        raise FileFormatError(path, 0, "mesh has a vertex that is not a finite number")
    return tris, indexed


def dae_triangles(path: str, limit: int = 1_000_000) -> np.ndarray:
    """(n, 3, 3) the triangles of the COLLADA file ``path`` (float32, read-only), m, its file
    frame.

    Raises:
        FileFormatError: ``path:line:`` missing, unreadable, too large, over ``limit``
            triangles, a DTD, malformed, no triangles (daereader's refusals, at their line).
    """
    try:
        st = os.stat(path)
    except OSError:
        raise FileFormatError(path, 0, "no such mesh file") from None
    return _cached(os.path.realpath(path), st.st_size, st.st_mtime_ns, limit)[0]


def dae_engine(path: str) -> np.ndarray:
    """The triangles of the COLLADA file ``path`` MuJoCo is given (:func:`for_engine`), m:
    decimated on its indexed mesh where this process parsed it (the same triangles as from
    the soup, a sixth of the corners sorted)."""
    dae_triangles(path)  # checked (and cached) as every reader of the file
    st = os.stat(path)
    tris, indexed, name = _cached(os.path.realpath(path), st.st_size, st.st_mtime_ns,
                                  1_000_000)
    return for_engine(tris, indexed=indexed, source=name)


#: Cells a side of the grid the corners are merged on first (:func:`decimated`): 2^21, 63
#: bits a key; a micrometre of a 2 m mesh, so only coincident corners merge.
_FINE = 1 << 21


def decimated(tris: np.ndarray, limit: int = MUJOCO_FACES, indexed=None) -> np.ndarray:
    """``tris`` with at most ``limit`` triangles: vertices merged on a grid (vertex
    clustering), the grid coarsened until few enough triangles stay non-degenerate; a mesh
    within ``limit`` is returned as is. The corners are merged once on a fine grid (a
    triangle soup repeats each vertex about six times), so each coarser grid sorts the
    vertices, not the corners (B1-Z1's 14 meshes: 0.63 s of CPU before, 0.3 s); given
    ``indexed`` (``(vertices, corners)``, ``tris == vertices[corners]``: :func:`_gathered`),
    that merge sorts the vertices too (:func:`_merged_indexed`), with the same result."""
    if len(tris) <= limit:
        return tris
    points = tris.reshape(-1, 3)
    if indexed is None:
        lo, hi = box(points)
        unit = (points - lo) / (float((hi - lo).max()) or 1.0)
        _, first, inverse = np.unique(_keys(unit, _FINE), return_index=True,
                                      return_inverse=True)
        vertices = unit[first]
    else:
        vertices, first, inverse = _merged_indexed(points, *indexed)
    cells = max(8, int(2 * limit ** 0.5))  # a surface of n triangles spans ~sqrt(n) cells
    while True:
        faces, rep = _clustered(vertices, inverse, cells)
        if len(faces) <= limit:
            return points[first[rep]][faces]
        cells = max(1, int(cells * min(0.8, (limit / len(faces)) ** 0.5)))


def _merged_indexed(points: np.ndarray, table: np.ndarray,
                    corner: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The soup's merge on the fine grid (``np.unique`` of its corners' cells: each cell's
    first corner and each corner's cell, in cell order; the first corners' places in the
    unit box) computed on the vertices ``table`` the corners index (``points ==
    table[corner]``): a corner's cell is its vertex's, and a cell's first corner the least
    of its vertices' first corners. The corners' unit coordinates are made elementwise, so
    a vertex's are its corners' to the bit."""
    n = len(corner)
    earliest = np.full(len(table), n, dtype=np.int64)
    np.minimum.at(earliest, corner, np.arange(n, dtype=np.int64))
    used = np.flatnonzero(earliest < n)  # vertices some corner names
    lo, hi = box(table[used])  # the corners' box: the same values
    scale = float((hi - lo).max()) or 1.0
    _, cell = np.unique(_keys((table[used] - lo) / scale, _FINE), return_inverse=True)
    first = np.full(int(cell.max()) + 1, n, dtype=np.int64)
    np.minimum.at(first, cell, earliest[used])
    cell_of = np.zeros(len(table), dtype=np.int64)
    cell_of[used] = cell
    return (points[first] - lo) / scale, first, cell_of[corner]


def _keys(unit: np.ndarray, cells: int) -> np.ndarray:
    """One int64 per point of ``unit`` (in [0, 1]^3): its cell of a grid ``cells`` a side
    (``min(floor(u * cells), cells - 1)`` a coordinate, computed in place: no temporary
    the size of the points is made twice)."""
    ijk = (unit * cells).astype(np.int64)
    np.minimum(ijk, cells - 1, out=ijk)
    key = ijk[:, 0] * cells
    key += ijk[:, 1]
    key *= cells
    key += ijk[:, 2]
    return key


def _clustered(vertices: np.ndarray, inverse: np.ndarray,
               cells: int) -> tuple[np.ndarray, np.ndarray]:
    """(faces, first) of the merged corners ``vertices`` (in [0, 1]^3; ``inverse``: each
    corner's vertex, three a triangle) clustered on a grid of ``cells`` a side: each face's
    three cluster indices (faces whose corners merged dropped, a face twice kept once, the
    first's winding) and each cluster's first vertex."""
    _, first, cluster = np.unique(_keys(vertices, cells), return_index=True,
                                  return_inverse=True)
    faces = cluster.astype(np.int32)[inverse].reshape(-1, 3)  # int32: half the bytes
    a, b, c = faces[:, 0], faces[:, 1], faces[:, 2]
    keep = (a != b) & (b != c) & (a != c)
    kept = faces[keep]
    a, b, c = (kept[:, i].astype(np.int64) for i in range(3))
    low, high = np.minimum(np.minimum(a, b), c), np.maximum(np.maximum(a, b), c)
    middle = a + b + c - low - high  # the three sorted without a sort of each row
    n = np.int64(len(first))
    if n < 1 << 21:  # one int64 a face: a sort of numbers, not of rows
        _, once = np.unique((low * n + middle) * n + high, return_index=True)
    else:
        _, once = np.unique(np.stack([low, middle, high], axis=1), axis=0,
                            return_index=True)
    firsts = np.zeros(len(kept), dtype=bool)
    firsts[once] = True  # each face's first, in the faces' order (no sort of indices)
    return kept[firsts], first


def box(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) corners of the (n, 3) ``points``' bounding box: reduced along rows of
    a transposed copy (numpy's reduction down the columns of an (n, 3) array cost 25 times
    more: 40 ms for Go1's trunk)."""
    columns = np.ascontiguousarray(points.T)
    return columns.min(axis=1), columns.max(axis=1)


def for_engine(tris: np.ndarray, limit: int = ENGINE_FACES, indexed=None,
               source: str = "") -> np.ndarray:
    """``tris`` decimated to ``limit`` triangles (:func:`decimated`, on ``indexed`` where
    given) for MuJoCo: its compile of a 150,000-triangle trunk cost more CPU than the rest of
    the robot's load, and 100 arms' copies of their meshes filled gigabytes. Cached by
    content (:mod:`.meshcache`): keyed by ``source``, the cache entry of the file ``tris``
    were read from, where given (hashing the triangles again cost 20 ms for B1-Z1)."""
    if len(tris) <= limit:
        return tris
    tris = np.ascontiguousarray(tris, dtype=np.float32)
    name = meshcache.key(source.encode() if source else memoryview(tris).cast("B"),
                         "engine", limit)
    found = meshcache.get(name, (3, 3), np.float32)
    if found is None:
        found = decimated(tris, limit, indexed).astype(np.float32)
        meshcache.put(name, found)
    return found


def stl_triangles(data: bytes) -> np.ndarray:
    """(n, 3, 3) float32 corners of the binary STL ``data`` (already checked)."""
    count = struct.unpack_from("<I", data, 80)[0]
    rec = np.frombuffer(data, dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")],
                        count=count, offset=84)
    return rec["v"]


def stl_bytes(tris: np.ndarray) -> bytes:
    """The binary STL of ``tris`` ((n, 3, 3), float32 corners, zero normals: MuJoCo computes
    its own)."""
    rec = np.zeros(len(tris), dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    rec["v"] = tris
    return b"\0" * 80 + struct.pack("<I", len(tris)) + rec.tobytes()


READERS[".dae"] = dae_triangles  # /sim 27, Foxglove: model.scenerydoc.mesh_triangles reads it
