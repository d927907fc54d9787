"""Reading an untrusted file: a regular file only, opened without blocking, read within a
bound. The section grammar (coopsim.formats.sections), the description files' meshes
(coopsim.description.meshes, collada) and the map images read through it.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO, Union

from .errors import FileFormatError

PathLike = Union[str, "os.PathLike[str]"]


def open_regular(path: PathLike) -> BinaryIO:
    """``path`` opened for reading bytes, if it is a regular file.

    Why: reading a FIFO waits for a writer, forever (and SIGTERM cannot interrupt the open),
    and a device may never end. So the file is opened without blocking (``O_NONBLOCK``: a FIFO
    opens at once) and what was opened is checked (fstat: a file swapped for a FIFO after a
    check is still caught).

    Raises:
        OSError: missing or unreadable; IsADirectoryError for a directory; OSError(ENXIO,
            "not a regular file (a FIFO, device or socket)") for anything else.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory, not a file")
        raise OSError(errno.ENXIO, "not a regular file (a FIFO, device or socket)")
    return os.fdopen(fd, "rb")


def read_mesh_bytes(path: PathLike, limit: int) -> bytes:
    """The bytes of mesh file ``path`` by :func:`open_regular`'s rules, at most ``limit``.

    Raises:
        FileFormatError: ``path:0:`` missing, unreadable, not a regular file, or over
            ``limit`` bytes.
    """
    try:
        fh = open_regular(path)
    except FileNotFoundError:
        raise FileFormatError(str(path), 0, "no such mesh file") from None
    except OSError as exc:
        raise FileFormatError(str(path), 0, f"cannot read mesh: {exc.strerror or exc}") from None
    with fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileFormatError(str(path), 0, f"mesh too large (over {limit} bytes)")
    return data
