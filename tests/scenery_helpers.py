"""Small scenery files written by tests (no binaries kept in the repository): a binary STL
box, an OBJ box, a grey PGM bump, and a world holding them (docs/files.md, *Meshes and
terrain*)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

_FACES = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7),
          (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]


def _box(lo, hi) -> np.ndarray:
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                     for z in (lo[2], hi[2])], dtype=float)


def write_stl(path: Path, lo, hi, ascii: bool = False) -> Path:
    """A binary (or ASCII) STL of the box from ``lo`` to ``hi`` (file units)."""
    v = _box(lo, hi)
    if ascii:
        path.write_text("solid box\n" + "".join(
            "facet normal 0 0 0\nouter loop\n" + "".join(
                f"vertex {x:g} {y:g} {z:g}\n" for x, y, z in v[[a, b, c]])
            + "endloop\nendfacet\n" for a, b, c in _FACES) + "endsolid box\n")
        return path
    data = b"\0" * 80 + struct.pack("<I", len(_FACES))
    for a, b, c in _FACES:
        data += struct.pack("<12fH", 0, 0, 0, *v[a], *v[b], *v[c], 0)
    path.write_bytes(data)
    return path


def write_obj(path: Path, lo, hi) -> Path:
    """An OBJ of the box from ``lo`` to ``hi``."""
    v = _box(lo, hi)
    path.write_text("".join(f"v {x:g} {y:g} {z:g}\n" for x, y, z in v)
                    + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in _FACES))
    return path


def write_bump(path: Path, n: int = 64) -> Path:
    """An n x n 8-bit PGM: a round bump, white at its centre, black at its edges."""
    x = np.linspace(-1, 1, n)
    gx, gy = np.meshgrid(x, x)
    grey = (255 * np.exp(-(gx ** 2 + gy ** 2) / 0.2)).astype(np.uint8)
    path.write_bytes(b"P5\n%d %d\n255\n" % (n, n) + grey.tobytes())
    return path


WORLD = """[FLOOR]
size 10 10 0.1

[MESH_1]                # a wall 0.2 x 2 x 1 m, its near face at x = 2.9
file wall.stl
position 3 0 0

[MESH_2]                # a 1 x 1 x 0.3 m platform, turned 30 degrees
file platform.obj
position -2 3 0
orientation 0 0 30

[TERRAIN]               # a 0.3 m bump, 4 x 4 m, centred on the origin
image bump.pgm
size 4 4 0.3
"""


def write_world(folder: Path, text: str = WORLD) -> Path:
    """The files of :data:`WORLD` in ``folder``; the world file's path."""
    write_stl(folder / "wall.stl", (-0.1, -1, 0), (0.1, 1, 1))
    write_obj(folder / "platform.obj", (-0.5, -0.5, 0), (0.5, 0.5, 0.3))
    write_bump(folder / "bump.pgm")
    (folder / "t.world").write_text(text)
    return folder / "t.world"


def scenario_text(robots: str, world: str = "t.world") -> str:
    """A mujoco scenario on ``world`` with the ``[ROBOT_n]`` sections ``robots``."""
    return f"[WORLD]\nfile {world}\n{robots}\n[SETTINGS]\nengine mujoco\ndt 0.02\n"
