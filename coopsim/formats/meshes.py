"""Mesh files (STL binary and ASCII, Wavefront OBJ): their triangle count and bounds, read
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
import struct
from dataclasses import dataclass

import numpy as np

from ..model.errors import FileFormatError
from .sections import PathLike, open_regular, read_mesh_bytes

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


def mesh_info(path: PathLike, max_triangles: int = MAX_TRIANGLES) -> MeshInfo:
    """Triangle count and bounds of the STL or OBJ file ``path``.

    Raises:
        FileFormatError: ``path:line:`` missing, unreadable, not a regular file, over
            :data:`MAX_MESH_BYTES` or ``max_triangles``, another format, or malformed.
    """
    text = os.fspath(path)
    suffix = os.path.splitext(text)[1].lower()
    if suffix == ".dae":  # COLLADA: a description's mesh, read by formats.collada
        from .collada import box, dae_triangles
        points = dae_triangles(text, max_triangles).reshape(-1, 3)
        lo, hi = box(points)
        return MeshInfo(text, len(points) // 3, tuple(map(float, lo)), tuple(map(float, hi)))
    if suffix not in SUFFIXES:
        raise FileFormatError(text, 0, f"mesh format {suffix or '(none)'!r} is not read: "
                                       f"give {' or '.join(SUFFIXES)}")
    data = read_mesh_bytes(text, MAX_MESH_BYTES)
    from . import meshcache
    entry = meshcache.key(data, "info", suffix, max_triangles)  # a robot's next load reads it
    held = meshcache.get(entry, (7,), np.float64)
    if held is not None:
        return MeshInfo(text, int(held[0, 0]), tuple(map(float, held[0, 1:4])),
                        tuple(map(float, held[0, 4:7])))
    if suffix == ".obj":
        count, points = _obj(text, data, max_triangles)
    elif _binary_stl(data):
        count, points = _stl_binary(text, data, min(max_triangles, MAX_STL_TRIANGLES))
    else:
        count, points = _stl_ascii(text, data, min(max_triangles, MAX_STL_TRIANGLES))
    if count == 0 or points.size == 0:
        raise FileFormatError(text, 0, "mesh has no triangles")
    if not np.isfinite(points).all():
        raise FileFormatError(text, 0, "mesh has a vertex that is not a finite number")
    from .collada import box
    lo, hi = box(points)
    meshcache.put(entry, np.array([[count, *lo, *hi]], dtype=np.float64))
    return MeshInfo(text, count, tuple(map(float, lo)), tuple(map(float, hi)))


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
