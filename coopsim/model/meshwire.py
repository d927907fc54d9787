"""A mesh's triangles on the wire (protocol 11, ``/sim`` command 27 ``mesh``): a world mesh's
or an imported robot's link mesh's triangles, welded and, beyond :data:`MAX_TRIANGLES`,
decimated by vertex clustering, as indexed vertices a client draws (docs/protocol.md section 5).

Nothing from the network names a path: a request names a world mesh by its section name
(``MESH_1``) or a robot's mesh by the robot's name and the file's basename, as the layout
document gives them; the server finds the file among those the world and its descriptions
already read and checked. Frames and units: the mesh file's own frame and units (the layout
document's ``scale`` and pose place it).
"""

from __future__ import annotations

import numpy as np

#: The most triangles one reply carries: about 0.5 MB of msgpack (a mesh of more is decimated).
MAX_TRIANGLES = 20_000
#: Grid cells along the mesh's longest side tried, finest first, when clustering vertices.
_CELLS = (512, 256, 128, 64, 32, 16, 8, 4)


def indexed(tris: np.ndarray, cap: int = MAX_TRIANGLES) -> tuple[np.ndarray, np.ndarray]:
    """(V, 3) vertices and (T, 3) vertex indices of the (n, 3, 3) triangles ``tris``: equal
    corners welded; when more than ``cap`` triangles remain, corners clustered on the
    finest grid (cells along the longest side: :data:`_CELLS`) that leaves at most ``cap``
    non-degenerate triangles, each cluster at its corners' mean. Triangles keep their
    winding. Units and frame: ``tris``'s own.

    Raises:
        ValueError: no triangle, or a corner not finite.
    """
    pts = np.asarray(tris, dtype=float).reshape(-1, 3)
    if not len(pts) or not np.isfinite(pts).all():
        raise ValueError("the mesh has no triangles, or a corner that is not a number")
    verts, inverse = np.unique(pts, axis=0, return_inverse=True)
    faces = _kept(inverse.reshape(-1, 3))
    if len(faces) <= cap:
        return verts, faces
    lo, size = pts.min(axis=0), max(float(np.ptp(pts, axis=0).max()), 1e-12)
    for cells in _CELLS:
        ijk = np.minimum(((pts - lo) / size * cells).astype(np.int64), cells)
        key = (ijk[:, 0] * (cells + 1) + ijk[:, 1]) * (cells + 1) + ijk[:, 2]  # one int a cell
        _, cluster = np.unique(key, return_inverse=True)
        cluster = cluster.reshape(-1)
        faces = _kept(cluster.reshape(-1, 3))
        if len(faces) <= cap or cells == _CELLS[-1]:
            break
    count = int(cluster.max()) + 1
    weight = np.bincount(cluster, minlength=count)[:, None]
    mean = np.stack([np.bincount(cluster, pts[:, k], count) for k in range(3)], axis=1)
    return mean / weight, faces[:cap]


def _kept(faces: np.ndarray) -> np.ndarray:
    """The faces with three distinct corners, each set of corners once."""
    faces = faces[(faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2])
                  & (faces[:, 0] != faces[:, 2])]
    _, first = np.unique(np.sort(faces, axis=1), axis=0, return_index=True)
    return faces[np.sort(first)]


def reply_fields(verts: np.ndarray, faces: np.ndarray, source: int) -> tuple[tuple, tuple]:
    """The ``mesh`` reply's params and data: params ``[V, T, source triangles, i0, i1, ...]``
    (the T faces' vertex indices, three each), data the V vertices' x, y, z."""
    params = (len(verts), len(faces), int(source), *(int(i) for i in faces.reshape(-1)))
    return params, tuple(float(v) for v in np.asarray(verts, dtype=float).reshape(-1))


def parse_reply(params, data) -> tuple[np.ndarray, np.ndarray, int]:
    """(V, 3) vertices, (T, 3) faces and the source's triangle count from a ``mesh`` reply.

    Raises:
        ValueError: the counts disagree with the lengths, or an index is out of range.
    """
    if len(params) < 3:
        raise ValueError("a mesh reply's params start with V, T and the source's count")
    v, t, source = (int(x) for x in params[:3])
    if len(params) != 3 + 3 * t or len(data) != 3 * v:
        raise ValueError(f"a mesh reply of {v} vertices and {t} triangles has "
                         f"{len(params) - 3} indices and {len(data)} coordinates")
    faces = np.asarray(params[3:], dtype=np.int64).reshape(t, 3)
    if t and (faces.min() < 0 or faces.max() >= v):
        raise ValueError("a mesh reply's vertex index is out of range")
    return np.asarray(data, dtype=float).reshape(v, 3), faces, source


def flat_rows(verts: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(3 T, 6) unindexed corners with each triangle's flat normal (x, y, z, nx, ny, nz):
    what a renderer without index buffers uploads."""
    tris = np.asarray(verts, dtype=float)[np.asarray(faces, dtype=np.int64)]
    n = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(length > 1e-12, n / np.where(length > 1e-12, length, 1.0), (0.0, 0.0, 1.0))
    return np.concatenate((tris, np.repeat(n[:, None], 3, axis=1)), axis=2).reshape(-1, 6)
