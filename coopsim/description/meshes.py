"""Mesh files (STL binary and ASCII, Wavefront OBJ, MuJoCo's binary MSH): their triangle count
and bounds, read
cheaply and bounded, before MuJoCo loads them (docs/files.md "Meshes").

A description's meshes and a world's static meshes are untrusted files: each is checked here
first, so that a huge or malformed one is refused with ``file:line: what is wrong`` instead of
taking the simulator's memory or crashing MuJoCo's loader. A binary STL is checked from its
header and size alone (its count must match its length) with its bounds read as one numpy
array; ASCII STL and OBJ are read line by line.

Units: as in the file (metres for coopsim; a description's ``scale`` applies after).
"""

from __future__ import annotations

import os
import re
import struct
import warnings
from dataclasses import dataclass

import numpy as np

from ..model.errors import FileFormatError
from ..model.files import PathLike, open_regular, read_mesh_bytes
from ..model.scenerydoc import READERS

SUFFIXES = (".stl", ".obj")
MAX_MESH_BYTES = 64 << 20  # bytes of one mesh file
MAX_TRIANGLES = 1_000_000  # triangles of one mesh (an OBJ polygon of n corners counts n - 2)
#: triangles of one STL: MuJoCo's STL decoder refuses more (an OBJ may hold MAX_TRIANGLES)
MAX_STL_TRIANGLES = 200_000
_STL_HEADER = 80
_STL_RECORD = 50  # bytes per triangle of a binary STL: normal, 3 corners, attribute


@dataclass(frozen=True)
class MeshInfo:
    """What a mesh file holds.

    Attributes:
        path: The file.
        triangles: Triangle count.
        lower, upper: Corners of its axis-aligned bounding box, m (file units).
    """

    path: str
    triangles: int
    lower: tuple[float, float, float]
    upper: tuple[float, float, float]


def mesh_info(path: PathLike, max_triangles: int = MAX_TRIANGLES,
              hull: bool = False) -> MeshInfo:
    """Triangle count and bounds of the STL or OBJ file ``path``; with ``hull`` (a robot
    description's mesh) an OBJ of vertices without faces (MuJoCo's SDF plugin's die) counts
    no triangles: MuJoCo takes its vertices' convex hull (at least 4 vertices).

    Raises:
        FileFormatError: ``path:line:`` missing, unreadable, not a regular file, over
            :data:`MAX_MESH_BYTES` or ``max_triangles``, another format, or malformed.
    """
    text = os.fspath(path)
    suffix = os.path.splitext(text)[1].lower()
    if suffix == ".dae":  # COLLADA: a description's mesh, read by description.collada
        from .collada import box, dae_triangles
        points = dae_triangles(text, max_triangles).reshape(-1, 3)
        lo, hi = box(points)
        return MeshInfo(text, len(points) // 3, tuple(map(float, lo)), tuple(map(float, hi)))
    if suffix not in SUFFIXES + (".msh",):
        raise FileFormatError(text, 0, f"mesh format {suffix or '(none)'!r} is not read: "
                                       f"give {' or '.join(SUFFIXES)}")
    data = read_mesh_bytes(text, MAX_MESH_BYTES)
    if suffix == ".msh":  # binary, read as one array: its bounds not cached (its triangles
        # for MuJoCo, where over the budget, are: msh_as_binary_stl)
        count, points = _msh(text, data, max_triangles)
        from .collada import box
        lo, hi = box(points)
        return MeshInfo(text, count, tuple(map(float, lo)), tuple(map(float, hi)))
    from . import meshcache
    digest = meshcache.content(text, data)
    entry = meshcache.key(digest, "info", suffix, max_triangles, hull)  # a next load reads it
    held = meshcache.get(entry, (7,), np.float64)
    if held is not None:
        return MeshInfo(text, int(held[0, 0]), tuple(map(float, held[0, 1:4])),
                        tuple(map(float, held[0, 4:7])))
    fast = _obj_fast(data) if suffix == ".obj" else None
    if fast is not None and len(fast[1]) <= max_triangles:
        count, points = len(fast[1]), fast[0]
        # the triangles MuJoCo is given (obj_as_binary_stl), from this one read
        meshcache.put(meshcache.key(digest, "obj-stl"), points[fast[1]].astype(np.float32))
    elif suffix == ".obj":
        count, points = _obj(text, data, max_triangles)
    elif _binary_stl(data):
        count, points = _stl_binary(text, data, min(max_triangles, MAX_STL_TRIANGLES))
    else:
        count, points = _stl_ascii(text, data, min(max_triangles, MAX_STL_TRIANGLES))
    if points.size == 0 or (count == 0 and not (hull and suffix == ".obj"
                                                and len(points) >= 4)):
        raise FileFormatError(text, 0, "mesh has no triangles")
    if not np.isfinite(points).all():
        raise FileFormatError(text, 0, "mesh has a vertex that is not a finite number")
    from .collada import box
    lo, hi = box(points)
    meshcache.put(entry, np.array([[count, *lo, *hi]], dtype=np.float64))
    return MeshInfo(text, count, tuple(map(float, lo)), tuple(map(float, hi)))


def _msh(path: str, data: bytes, limit: int) -> tuple[int, np.ndarray]:
    """Triangle count and vertices of a MuJoCo MSH file (its legacy binary mesh: four int32
    counts, vertices, normals, texture coordinates, faces; MuJoCo's own check: the counts
    must add up to the file's length, at least 4 vertices; no faces: MuJoCo takes the
    vertices' convex hull)."""
    if len(data) < 16:
        raise FileFormatError(path, 0, "MSH file shorter than its 16-byte header")
    nvert, nnorm, ntex, nface = struct.unpack_from("<4i", data, 0)
    if min(nvert, nnorm, ntex, nface) < 0 or nvert < 4 or (nnorm and nnorm != nvert) or \
            (ntex and ntex != nvert):
        raise FileFormatError(path, 0, f"MSH header invalid (vertices {nvert}, normals "
                                       f"{nnorm}, texture coordinates {ntex}, faces {nface})")
    _too_many(path, 0, nface, limit)
    size = 16 + 12 * (nvert + nnorm + nface) + 8 * ntex
    if len(data) != size:
        raise FileFormatError(path, 0, f"MSH header says {size} bytes, the file is "
                                       f"{len(data)} (truncated or not an MSH file)")
    points = np.frombuffer(data, "<f4", 3 * nvert, 16).reshape(-1, 3).astype(float)
    if not np.isfinite(points).all():
        raise FileFormatError(path, 0, "mesh has a vertex that is not a finite number")
    faces = np.frombuffer(data, "<i4", 3 * nface, size - 12 * nface)
    if faces.size and (faces.min() < 0 or faces.max() >= nvert):
        raise FileFormatError(path, 0, "MSH face refers to a vertex it does not have")
    return nface, points


def _binary_stl(data: bytes) -> bool:
    """True when ``data`` is a binary STL: its triangle count matches its length (an ASCII
    file starting with ``solid`` can pass only by that coincidence, which is checked too)."""
    if len(data) < _STL_HEADER + 4:
        return False
    count = struct.unpack_from("<I", data, _STL_HEADER)[0]
    fits = len(data) == _STL_HEADER + 4 + _STL_RECORD * count
    return fits or not data.lstrip().startswith(b"solid")


def _too_many(path: str, line: int, count: int, limit: int) -> None:
    if count > limit:
        why = (f"mesh has over {limit} triangles (the limit)" if limit != MAX_STL_TRIANGLES else
               f"an STL holds at most {limit} triangles (MuJoCo's STL reader), this one "
               f"{'has more' if line else f'has {count}'}: decimate it, or save it as OBJ "
               f"(at most {MAX_TRIANGLES})")
        raise FileFormatError(path, line, why)


def _stl_binary(path: str, data: bytes, limit: int) -> tuple[int, np.ndarray]:
    count = struct.unpack_from("<I", data, _STL_HEADER)[0]
    _too_many(path, 0, count, limit)
    if len(data) != _STL_HEADER + 4 + _STL_RECORD * count:
        raise FileFormatError(path, 0, f"binary STL says {count} triangles but is {len(data)} "
                                       "bytes long (truncated or not an STL)")
    rec = np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    tris = np.frombuffer(data, dtype=rec, count=count, offset=_STL_HEADER + 4)
    return count, tris["v"].reshape(-1, 3).astype(float)


def _floats(path: str, line: int, words: list, n: int) -> list:
    try:
        values = [float(w) for w in words[:n]]
    except ValueError:
        values = []
    if len(values) != n:
        raise FileFormatError(path, line, f"expected {n} numbers, got {' '.join(words)!r}")
    return values


def _stl_ascii(path: str, data: bytes, limit: int) -> tuple[int, np.ndarray]:
    points, count = [], 0
    for n, raw in enumerate(data.decode("ascii", "replace").splitlines(), 1):
        words = raw.split()
        if not words:
            continue
        if words[0] == "vertex":
            points.append(_floats(path, n, words[1:], 3))
        elif words[0] == "facet":
            count += 1
            _too_many(path, n, count, limit)
        elif n == 1 and words[0] != "solid":
            raise FileFormatError(path, 1, "not an STL file (neither binary nor 'solid ...')")
    if len(points) != 3 * count:
        raise FileFormatError(path, 0, f"ASCII STL has {count} facets but {len(points)} "
                                       "vertices (3 per facet expected)")
    return count, np.asarray(points, dtype=float).reshape(-1, 3)


def _obj(path: str, data: bytes, limit: int) -> tuple[int, np.ndarray]:
    points, count = [], 0
    for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        words = raw.split()
        if not words:
            continue
        if words[0] == "v":
            points.append(_floats(path, n, words[1:], 3))
        elif words[0] == "f":
            if len(words) < 4:
                raise FileFormatError(path, n, "a face needs at least 3 corners")
            count += len(words) - 3
            _too_many(path, n, count, limit)
    return count, np.asarray(points, dtype=float).reshape(-1, 3)


def ascii_stl_as_binary(path: str) -> bytes | None:
    """The binary STL of the ASCII STL file ``path`` (already checked by :func:`mesh_info`),
    or None when ``path`` is no ASCII STL."""
    if not path.lower().endswith(".stl"):
        return None
    with open_regular(path) as fh:
        data = fh.read(MAX_MESH_BYTES + 1)
    if _binary_stl(data):
        return None
    count, points = _stl_ascii(path, data, MAX_TRIANGLES)
    rec = np.zeros(count, dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    rec["v"] = points.reshape(count, 3, 3)
    return b"\0" * _STL_HEADER + struct.pack("<I", count) + rec.tobytes()


def obj_as_binary_stl(path: str) -> bytes | None:
    """The binary STL MuJoCo is given for the OBJ file ``path``: its triangles (vertices and
    faces; normals and texture coordinates left out) decimated to
    :data:`~coopsim.description.collada.ENGINE_FACES` as every mesh MuJoCo is given
    (:func:`coopsim.description.collada.for_engine`), from the mesh cache when it holds them
    (:mod:`coopsim.description.meshcache`), or None: not an OBJ, a face of more than three
    corners or an index out of range (MuJoCo then reads the OBJ itself). MuJoCo's compiler
    parses an OBJ's text on every compile, a binary STL it only copies: robosuite's UR5e's
    20 OBJ files (30 MB) took 0.89 s of a compile's CPU, the same triangles as STL 0.33 s,
    with the same masses and inertias; its compile's CPU grows with the triangles (a
    bounding volume hierarchy of each mesh's faces: robosuite's Sawyer, 390,000 triangles
    in 59 files)."""
    if not path.lower().endswith(".obj"):
        return None
    from . import collada, meshcache
    digest = meshcache.content(path)  # mesh_info's read of it, where this process made one
    triangles = entry = None
    if digest is not None:
        entry = meshcache.key(digest, "obj-stl")
        triangles = meshcache.get(entry, (3, 3), np.float32)
    if triangles is None:
        try:
            data = read_mesh_bytes(path, MAX_MESH_BYTES)
        except FileFormatError:
            return None
        entry = meshcache.key(meshcache.content(path, data), "obj-stl")
        triangles = meshcache.get(entry, (3, 3), np.float32)
    if triangles is None:
        triangles = _obj_triangles(data)
        if triangles is None:
            return None
        meshcache.put(entry, triangles)
    return collada.stl_bytes(collada.for_engine(triangles, source=entry))


_OBJ_INDENTED = re.compile(rb"(?:\A|\n)[ \t]+[vf][ \t]")  # faster than ^ with re.M


def _obj_triangles(data: bytes) -> np.ndarray | None:
    """(n, 3, 3) float32 corners of an OBJ's triangles, or None (see obj_as_binary_stl)."""
    read = _obj_fast(data)
    return None if read is None else read[0][read[1]].astype(np.float32)


def _obj_fast(data: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """An OBJ of triangles only: its vertices (n, 3) and faces' vertex indices (m, 3, from
    0), read by whole lines and numpy's C number parser, not word by word in Python
    (robosuite's Spot, 44 MB in 23 files: 0.6 s of CPU, 1.4 s with a regular expression
    over the text and numpy's string arrays); None for anything else (an indented line,
    colours after a vertex, a face of more corners, an index out of range), which
    :func:`_obj` reads."""
    if (data[:1] in (b" ", b"\t") or b"\n " in data or b"\n\t" in data) and \
            _OBJ_INDENTED.search(data):
        return None
    lines = data.splitlines()
    v = [line[2:] for line in lines if line[:2] == b"v "]
    f = [line[2:] for line in lines if line[:2] == b"f "]
    if not f:
        return None
    with warnings.catch_warnings():  # a word that is no number ends the parse: counted
        warnings.simplefilter("ignore")
        vertices = np.fromstring(b" ".join(v), dtype=np.float64, sep=" ")
        index = np.fromstring(re.sub(rb"/\S*", b"", b" ".join(f)), dtype=np.int64, sep=" ")
    if len(vertices) != 3 * len(v) or len(index) != 3 * len(f):
        return None  # colours after a vertex, a face of more corners: MuJoCo reads the OBJ
    vertices, index = vertices.reshape(-1, 3), index.reshape(-1, 3)
    index = np.where(index > 0, index - 1, len(vertices) + index)
    if index.min() < 0 or index.max() >= len(vertices) or not np.isfinite(vertices).all():
        return None
    return vertices, index


def msh_triangles(path: str) -> np.ndarray:
    """(n, 3, 3) the corners of a MuJoCo MSH file's triangles (checked as
    :func:`mesh_info` checks it; one without faces: none), for the 3D view and Foxglove."""
    data = read_mesh_bytes(path, MAX_MESH_BYTES)
    count, points = _msh(path, data, MAX_TRIANGLES)
    faces = np.frombuffer(data, "<i4", 3 * count, len(data) - 12 * count).reshape(-1, 3)
    return points[faces]


def msh_as_binary_stl(path: str) -> bytes | None:
    """The binary STL MuJoCo is given for the MSH file ``path`` when it has over
    :data:`~coopsim.description.collada.ENGINE_FACES` triangles: its triangles (read and
    checked as :func:`mesh_info` checks them) decimated to that, cached by content
    (:func:`coopsim.description.collada.for_engine`); None for a smaller one (MuJoCo reads
    it as written, as cheaply as binary STL from memory: dm_control's fruit fly's 85 files,
    0.40 s of a compile's CPU, 0.43 s as STL; the same fly with its six meshes over the
    budget decimated, 0.26 s), one without faces (MuJoCo takes its hull) or one that cannot
    be read (its check refuses it first).
    """
    if not path.lower().endswith(".msh"):
        return None
    from . import collada, meshcache
    try:
        with open_regular(path) as fh:  # its header alone: most are under the budget
            head = fh.read(16)
    except OSError:
        return None
    if len(head) < 16 or struct.unpack_from("<4i", head, 0)[3] <= collada.ENGINE_FACES:
        return None
    try:
        data = read_mesh_bytes(path, MAX_MESH_BYTES)
        count, points = _msh(path, data, MAX_TRIANGLES)
    except FileFormatError:
        return None
    faces = np.frombuffer(data, "<i4", 3 * count, len(data) - 12 * count).reshape(-1, 3)
    triangles = points.astype(np.float32)[faces]
    entry = meshcache.key(meshcache.content(path, data), "msh-stl")
    return collada.stl_bytes(collada.for_engine(triangles, source=entry))


READERS[".msh"] = msh_triangles  # /sim 27, Foxglove: model.scenerydoc.mesh_triangles reads it
