"""A content-hash cache of converted meshes in the user's cache folder: a description's
COLLADA triangles, the smaller meshes MuJoCo is given (:mod:`coopsim.description.collada`,
:mod:`coopsim.description.robotxml`) and every STL and OBJ file's triangle count and bounds
(:func:`coopsim.description.meshes.mesh_info`: robosuite's UR5e parsed 20 OBJ files) are kept as ``.npy`` arrays keyed by the file's bytes and the
code that converted them, so a robot's second process reads them instead of parsing 20 MB of
XML again (docs/robots.md, *Robots loaded as shipped*).

Where: ``COOPSIM_MESH_CACHE`` (a folder; ``off`` turns the cache off), else
``$XDG_CACHE_HOME/coopsim/meshes``, else ``~/.cache/coopsim/meshes``. A folder that cannot be
written is no error (nothing is cached). An entry is checked when read (its shape, its type,
finite values) and an entry that fails is read again from the file and rewritten; entries
are written whole (a temporary file renamed). Deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np

_HERE = Path(__file__).resolve().parent
#: The modules whose code makes an entry: a change to either starts new keys.
_CODE = ("collada.py", "daereader.py", "meshcache.py", "meshes.py", "numbertext.py",
         "robotxml.py")


def folder() -> Path | None:
    """The cache folder (created), or None when it is off or cannot be made."""
    given = os.environ.get("COOPSIM_MESH_CACHE", "")
    if given.strip().lower() == "off":
        return None
    if given:
        path = Path(given)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "coopsim" / "meshes"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path


@lru_cache(maxsize=1)
def _stamp() -> bytes:
    """A digest of the converting code (:data:`_CODE`)."""
    h = hashlib.blake2b(digest_size=16)
    for name in _CODE:
        try:
            h.update((_HERE / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.digest()


def key(data: bytes, *parts) -> str:
    """The entry name of a conversion of the file bytes ``data`` with ``parts`` (what else
    it depends on: a limit, the kind of output; ``data`` any bytes-like object). SHA-256:
    on this CPU's SHA instructions 2.5 times BLAKE2b's speed (B1-Z1's 65 MB of COLLADA:
    0.034 s against 0.084)."""
    h = hashlib.sha256(data)
    h.update(_stamp())
    h.update(repr(parts).encode())
    return h.hexdigest()[:40]


#: (real path, size, modification time ns) -> the SHA-256 digest of a mesh file's bytes,
#: as this process read them: a file two readers convert (its bounds, its triangles for
#: MuJoCo) is read and hashed once (robosuite's Sawyer: 59 files, 0.06 s of CPU a load)
_DIGESTS: dict[tuple, bytes] = {}


def content(path: str, data: bytes | None = None) -> bytes | None:
    """The digest of the file ``path``'s bytes ``data`` (remembered for the file as it is
    now: its size and modification time), or, without ``data``, the one remembered (None:
    not read by this process, or changed since: the caller reads it). An entry's name from
    it is ``key(content(path, data), ...)``."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    at = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    if data is None or len(data) != st.st_size:  # a file changing as it was read: not kept
        return _DIGESTS.get(at) if data is None else hashlib.sha256(data).digest()
    if at not in _DIGESTS:
        if len(_DIGESTS) > 4096:
            _DIGESTS.clear()
        _DIGESTS[at] = hashlib.sha256(data).digest()
    return _DIGESTS[at]


def get(name: str, trailing: tuple[int, ...], dtype) -> np.ndarray | None:
    """The cached array ``name`` of shape (n, ``*trailing``) and type ``dtype``, read-only,
    or None (no cache, no entry, or an entry that fails its check)."""
    where = folder()
    if where is None:
        return None
    try:
        found = np.load(where / f"{name}.npy", allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if found.dtype != np.dtype(dtype) or found.shape[1:] != trailing or len(found) == 0 \
            or (found.dtype.kind == "f" and not np.isfinite(found).all()):
        return None
    found.setflags(write=False)
    return found


def put(name: str, array: np.ndarray) -> None:
    """Write ``array`` as entry ``name`` (whole, or not at all)."""
    where = folder()
    if where is None:
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=where, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, np.ascontiguousarray(array), allow_pickle=False)
        os.replace(tmp, where / f"{name}.npy")
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
