"""model/scenerydoc.mesh_triangles reads a mesh file's triangles for the wire (/sim command 27,
the 3D view): binary STL, ASCII STL (a robot's mesh file is read from its path, not kept as
parsed) and OBJ give the same corners; a broken ASCII file is a ValueError, not a crash."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from coopsim.model.scenery import MeshSpec
from coopsim.model.scenerydoc import mesh_triangles

CORNERS = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 0], [0, 1, 0], [0, 0, 1]]],
                   dtype=float)


def _ascii(path, corners) -> None:
    facets = "".join("facet normal 0 0 0\n outer loop\n" + "".join(
        f"  vertex {x:g} {y:g} {z:g}\n" for x, y, z in tri) + " endloop\nendfacet\n"
        for tri in corners)
    path.write_text(f"solid probe\n{facets}endsolid probe\n")


def _binary(path, corners) -> None:
    body = b"".join(struct.pack("<12fH", 0, 0, 0, *tri.ravel(), 0) for tri in corners)
    path.write_bytes(b"\0" * 80 + struct.pack("<I", len(corners)) + body)


@pytest.mark.parametrize("write, name", [(_ascii, "a.stl"), (_binary, "b.stl")])
def test_ascii_and_binary_stl_give_the_same_corners(tmp_path, write, name):
    write(tmp_path / name, CORNERS)
    got = mesh_triangles(MeshSpec(name, str(tmp_path / name), (0.0, 0.0, 0.0)))
    assert np.array_equal(got, CORNERS)


def test_a_broken_ascii_stl_is_a_value_error(tmp_path):
    (tmp_path / "c.stl").write_text("solid x\nfacet normal 0 0 0\n vertex 0 0 0\nendsolid x\n")
    with pytest.raises(ValueError, match="three a facet"):
        mesh_triangles(MeshSpec("c.stl", str(tmp_path / "c.stl"), (0.0, 0.0, 0.0)))
