"""Mesh files (STL binary and ASCII, OBJ): triangle counts and bounds read cheaply, limits and
malformed files refused with file:line (coopsim.description.meshes), and a description's meshes
found through ``package://`` and its search folders, then built on MuJoCo."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from coopsim.formats.files import load_scenario
from coopsim.description.meshes import mesh_info
from coopsim.model.errors import FileFormatError
from coopsim.model.plugins import ROBOT_TYPES

DATA = Path(__file__).resolve().parent.parent / "data" / "descriptions"
#: A tetrahedron's four faces, m.
TETRA = np.array([[[0, 0, 0], [0.1, 0, 0], [0, 0.2, 0]], [[0, 0, 0], [0, 0, 0.3], [0.1, 0, 0]],
                  [[0, 0, 0], [0, 0.2, 0], [0, 0, 0.3]], [[0.1, 0, 0], [0, 0, 0.3], [0, 0.2, 0]]],
                 dtype=np.float32)


def binary_stl(path: Path, tris: np.ndarray, count: int | None = None) -> Path:
    body = b"".join(struct.pack("<12fH", 0, 0, 0, *t.ravel(), 0) for t in tris)
    path.write_bytes(b"x" * 80 + struct.pack("<I", len(tris) if count is None else count) + body)
    return path


def ascii_stl(path: Path, tris: np.ndarray) -> Path:
    facets = "".join("facet normal 0 0 0\n outer loop\n" + "".join(
        f"  vertex {x} {y} {z}\n" for x, y, z in t) + " endloop\nendfacet\n" for t in tris)
    path.write_text(f"solid tetra\n{facets}endsolid tetra\n")
    return path


def test_the_three_formats_give_the_same_count_and_bounds(tmp_path):
    obj = tmp_path / "t.obj"
    obj.write_text("v 0 0 0\nv 0.1 0 0\nv 0 0.2 0\nv 0 0 0.3\nf 1 2 3\nf 1 4 2\nf 1 3 4\n"
                   "f 2 4 3\n")
    for path in (binary_stl(tmp_path / "b.stl", TETRA), ascii_stl(tmp_path / "a.stl", TETRA),
                 obj):
        info = mesh_info(path)
        assert info.triangles == 4
        assert info.lower == pytest.approx((0, 0, 0)) and info.upper == pytest.approx((0.1, 0.2,
                                                                                       0.3))


def test_a_quad_face_counts_two_triangles_and_the_limit_holds(tmp_path):
    obj = tmp_path / "q.obj"
    obj.write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n")
    assert mesh_info(obj).triangles == 2
    with pytest.raises(FileFormatError, match="over 1 triangles") as info:
        mesh_info(obj, max_triangles=1)
    assert info.value.line == 5


def test_malformed_meshes_are_refused(tmp_path):
    with pytest.raises(FileFormatError, match="says 9 triangles"):
        mesh_info(binary_stl(tmp_path / "short.stl", TETRA, count=9))
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nv 1 zero 0\n")
    with pytest.raises(FileFormatError, match="expected 3 numbers") as info:
        mesh_info(bad)
    assert info.value.line == 2
    with pytest.raises(FileFormatError, match="is not read"):
        mesh_info(tmp_path / "robot.ply")  # COLLADA (.dae) is read: description/collada.py
    with pytest.raises(FileFormatError, match="no such mesh file"):
        mesh_info(tmp_path / "gone.stl")


def test_a_package_mesh_is_found_through_the_search_folders_and_built(tmp_path):
    pytest.importorskip("mujoco")
    from coopsim.sim.simulation import Simulation
    (tmp_path / "pkgs" / "tiny" / "meshes").mkdir(parents=True)
    binary_stl(tmp_path / "pkgs" / "tiny" / "meshes" / "fore.stl", TETRA)
    urdf = (DATA / "tiny_arm.urdf").read_text().replace(
        '<box size="0.04 0.04 0.2"/>', '<mesh filename="package://tiny/meshes/fore.stl" '
                                       'scale="2 2 2"/>')
    (tmp_path / "arm.urdf").write_text(urdf)
    (tmp_path / "s.scenario").write_text(
        f"[WORLD]\nfile {DATA / 'floor.world'}\n[ROBOT_1]\ndescription arm.urdf\nname m1\n"
        "position 0 0 0\nsearch pkgs\n[SETTINGS]\nengine mujoco\n")
    spec = load_scenario(tmp_path / "s.scenario")
    mesh = ROBOT_TYPES.get(spec.robots[0].type).DESCRIPTION.link("fore").meshes[0]
    assert mesh.triangles == 4 and mesh.bounds[1] == pytest.approx((0.2, 0.4, 0.6))
    sim = Simulation(spec)
    sim.physics()
    model = sim.world.engine.model
    assert model.nmesh == 1 and model.mesh_facenum[0] == 4
