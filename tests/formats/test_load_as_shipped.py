"""Description files as their packages ship them: COLLADA meshes read and handed to
MuJoCo, ``package://`` and relative mesh URIs, the ``links`` document's root listed, and the
lies that are refused with ``file:line`` (a mesh of 10 M triangles, inverted limits, a rotor
axis of zero length, two roots) with ``coopsim check`` exiting 2 (docs/files.md; docs/experiments/robot-files.md
"Every robot of example-robot-data")."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from coopsim.description.collada import MUJOCO_FACES, dae_triangles, decimated, stl_bytes
from coopsim.formats.files import load_scenario
from coopsim.model.errors import FileFormatError
from coopsim.model.plugins import ROBOT_TYPES

DATA = Path(__file__).resolve().parent.parent / "data" / "descriptions"
ARM = (DATA / "tiny_arm.urdf").read_text()
CUBE_VISUAL = ('<visual><geometry><mesh filename="{uri}" scale="2 2 2"/></geometry></visual>'
               '<collision><geometry><mesh filename="{uri}"/></geometry></collision>')


def _scenario(folder: Path, urdf: str, name: str = "arm.urdf") -> Path:
    (folder / name).write_text(urdf)
    path = folder / "s.scenario"
    path.write_text(f"[WORLD]\nfile {DATA / 'floor.world'}\n\n[ROBOT_1]\ndescription {name}\n"
                    "name arm1\nposition 0.5 0 0\n\n[SETTINGS]\nengine mujoco\n")
    return path


def _described(folder: Path, urdf: str):
    spec = load_scenario(_scenario(folder, urdf))
    return ROBOT_TYPES.get(spec.robots[0].type).DESCRIPTION


def _with_cube(uri: str) -> str:
    return ARM.replace('<collision><origin xyz="0 0 0.1"/><geometry><box size="0.04 0.04 0.2"/>'
                       '</geometry></collision>', CUBE_VISUAL.format(uri=uri))


def _error(folder: Path, urdf: str) -> FileFormatError:
    with pytest.raises(FileFormatError) as info:
        load_scenario(_scenario(folder, urdf))
    return info.value


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_collada_mesh_is_read_with_its_node_transform_and_a_missing_texture():
    tris = dae_triangles(str(DATA / "cube.dae"))
    assert tris.shape == (12, 3, 3)
    assert np.allclose(tris.reshape(-1, 3).min(axis=0), 0) and \
        np.allclose(tris.reshape(-1, 3).max(axis=0), 0.1)  # the node's 0.001 scale applied
    volume = np.einsum("ij,ij->i", tris[:, 0], np.cross(tris[:, 1], tris[:, 2])).sum() / 6
    assert volume == pytest.approx(1e-3, rel=1e-6)  # the winding kept: outward faces


def test_a_package_uri_collada_mesh_loads_compiles_and_is_drawn(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    package = tmp_path / "tiny_description"
    (package / "meshes").mkdir(parents=True)
    (package / "urdf").mkdir()
    shutil.copy(DATA / "cube.dae", package / "meshes" / "cube.dae")
    urdf = _with_cube("package://tiny_description/meshes/cube.dae")
    d = _described(package / "urdf", urdf)
    (mesh, _) = d.link("fore").meshes  # visual and collision: one file
    assert mesh.path == str(package / "meshes" / "cube.dae") and mesh.triangles == 12
    assert np.allclose(mesh.bounds, ((0, 0, 0), (0.2, 0.2, 0.2)))  # the visual's scale 2
    assert [name for name, _ in d.assets] == ["coopsim_dae_0.stl"]
    from coopsim.physics.mujoco.imported import description_spec
    from coopsim.physics.mujoco.links import links_document
    model = description_spec(d).compile()
    assert model.nmesh == 2 and list(model.mesh_facenum) == [12, 12]  # a mesh per scale
    fore = next(link for link in links_document(d)["links"] if link["name"] == "fore")
    (shape,) = fore["visuals"]
    assert (shape["kind"], shape["file"], shape["scale"]) == ("mesh", "cube.dae", [2, 2, 2])
    from types import SimpleNamespace

    from coopsim.model.scenerydoc import mesh_triangles
    drawn = mesh_triangles(SimpleNamespace(path=mesh.path, vertices=None))
    assert drawn.shape == (12, 3, 3)  # what /sim 27 and Foxglove send
    del mujoco


def test_a_relative_collada_uri_resolves_beside_the_description(tmp_path):
    (tmp_path / "meshes").mkdir()
    shutil.copy(DATA / "cube.dae", tmp_path / "meshes" / "cube.dae")
    d = _described(tmp_path, _with_cube("meshes/cube.dae"))
    assert d.link("fore").meshes[0].path == str(tmp_path / "meshes" / "cube.dae")


@pytest.mark.slow
def test_a_big_mesh_is_decimated_to_mujocos_limit_and_stays_in_its_bounds():
    rng = np.random.default_rng(1)
    tris = rng.uniform(-1, 1, (MUJOCO_FACES + 5000, 3, 3))
    small = decimated(tris)
    assert 0 < len(small) <= MUJOCO_FACES
    assert small.min() >= -1 and small.max() <= 1
    assert decimated(tris[:100]) is not None and len(decimated(tris[:100])) == 100
    data = stl_bytes(small)
    assert len(data) == 84 + 50 * len(small)


def test_a_collada_mesh_of_10_million_triangles_is_refused_before_parsing(tmp_path):
    text = (DATA / "cube.dae").read_text().replace('count="12"', 'count="10000000"')
    (tmp_path / "cube.dae").write_text(text)
    exc = _error(tmp_path, _with_cube("cube.dae"))
    assert exc.path == str(tmp_path / "arm.urdf")
    assert exc.line == _line(_with_cube("cube.dae"), "cube.dae")
    assert "mesh 'cube.dae': mesh has over 1000000 triangles (the limit)" in exc.reason


def test_an_stl_claiming_10_million_triangles_is_refused(tmp_path):
    (tmp_path / "big.stl").write_bytes(b"\0" * 80 + (10_000_000).to_bytes(4, "little"))
    urdf = _with_cube("big.stl")
    exc = _error(tmp_path, urdf)
    # an STL's own bound is MuJoCo's STL reader's (200,000), checked before the general one
    assert exc.line == _line(urdf, "big.stl")
    assert "an STL holds at most 200000 triangles" in exc.reason and "10000000" in exc.reason


def test_a_collada_file_with_a_dtd_or_broken_xml_is_refused(tmp_path):
    text = (DATA / "cube.dae").read_text()
    (tmp_path / "cube.dae").write_text(text.replace(
        "<COLLADA", '<!DOCTYPE c [<!ENTITY a "aaaa">]>\n<COLLADA', 1))
    assert "a DTD or entity in a COLLADA file is refused" in _error(
        tmp_path, _with_cube("cube.dae")).reason
    (tmp_path / "cube.dae").write_text(text[:len(text) // 2])
    exc = _error(tmp_path, _with_cube("cube.dae"))  # at the mesh file's own line
    assert exc.path == str(tmp_path / "cube.dae") and exc.line > 0
    assert exc.reason.startswith("not well-formed XML"), str(exc)


def test_inverted_limits_are_refused_at_their_line(tmp_path):
    urdf = ARM.replace('lower="-2.0" upper="2.0"', 'lower="2.0" upper="-2.0"')
    exc = _error(tmp_path, urdf)
    assert (exc.line, exc.reason) == (_line(urdf, 'upper="-2.0"'), "joint 'elbow': lower limit "
                                                                   "2 is above the upper -2")


def test_a_rotor_axis_of_zero_length_is_refused_at_its_line(tmp_path):
    rotor = ARM.replace("</robot>", '<link name="rotor_0"><inertial><mass value="0.01"/>'
                        '<inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/>'
                        '</inertial></link>\n<joint name="rotor_0_joint" type="continuous">'
                        '<parent link="base_link"/><child link="rotor_0"/>\n'
                        '<axis xyz="0 0 0"/></joint>\n</robot>')
    exc = _error(tmp_path, rotor)
    assert (exc.line, exc.reason) == (_line(rotor, 'axis xyz="0 0 0"'),
                                      "joint 'rotor_0_joint': the axis is zero")


def test_a_tree_with_two_roots_is_refused_at_the_second(tmp_path):
    two = ARM.replace("</robot>", '<link name="stray"/>\n</robot>')
    exc = _error(tmp_path, two)
    assert exc.line == _line(two, 'name="stray"')
    assert "links 'base_link' and 'stray' both have no parent joint" in exc.reason


def test_coopsim_check_exits_2_on_a_lie_and_0_with_a_repair_warning(tmp_path):
    from click.testing import CliRunner

    from coopsim.app.cli import main
    _scenario(tmp_path, ARM.replace('lower="-2.0" upper="2.0"', 'lower="2.0" upper="-2.0"'))
    result = CliRunner().invoke(main, ["check", str(tmp_path / "s.scenario")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{tmp_path / 'arm.urdf'}:" in result.output and "lower limit 2" in result.output
    _scenario(tmp_path, ARM.replace('izz="0.001"', 'izz="-3.5e-08"'))
    result = CliRunner().invoke(main, ["check", str(tmp_path / "s.scenario")])
    assert result.exit_code == 0, result.output


def test_the_links_document_lists_a_root_mujoco_made_its_world(tmp_path):
    pytest.importorskip("mujoco")
    from coopsim.physics.mujoco.links import links_document
    world = ARM.replace('<robot name="tiny_arm">', '<robot name="tiny_arm">\n<link name="world"/>'
                        '<joint name="to_world" type="fixed"><parent link="world"/>'
                        '<child link="base_link"/><origin xyz="0 0 0.2"/></joint>')
    d = _described(tmp_path, world)
    doc = links_document(d)
    assert doc["root"] == "world"
    first, second = doc["links"][:2]
    assert (first["name"], first["parent"], first["xyz"], first["quat"]) == \
        ("world", "", [0, 0, 0], [1, 0, 0, 0])
    assert (second["name"], second["parent"]) == ("base_link", "world")
    # the section's pose is the world link's (the robot's root, as Pinocchio's and PyBullet's):
    # the file's offset of base_link from it stays, in the world (mujoco.imported.attach) and
    # in the document (an MJCF root body's own pos is what is dropped)
    assert second["xyz"] == pytest.approx([0, 0, 0.2])
    assert [link["parent"] for link in doc["links"]].count("") == 1


def test_two_mesh_files_of_one_basename_are_told_apart_in_the_links_document(tmp_path):
    pytest.importorskip("mujoco")
    from coopsim.physics.mujoco.links import links_document
    from coopsim.sim.meshsource import mesh_source
    for folder, size in (("torso", 0.1), ("gripper", 0.02)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "base.obj").write_text(
            f"v 0 0 0\nv {size} 0 0\nv 0 {size} 0\nv 0 0 {size}\n"
            "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    urdf = ARM.replace('<box size="0.05 0.05 0.3"/>', '<mesh filename="torso/base.obj"/>') \
              .replace('<box size="0.04 0.04 0.2"/>', '<mesh filename="gripper/base.obj"/>')
    d = _described(tmp_path, urdf)
    assert sorted(d.mesh_names().values()) == ["gripper/base.obj", "torso/base.obj"]
    files = {link["name"]: [v.get("file") for v in link["visuals"]]
             for link in links_document(d)["links"]}
    assert files["upper"] == ["torso/base.obj"] and files["fore"] == ["gripper/base.obj"]
    world = type("W", (), {"robots": [type("R", (), {"name": "arm1", "type": "tiny_arm"})()]})()
    assert mesh_source(world, ["arm1", "gripper/base.obj"]).path == \
        str(tmp_path / "gripper" / "base.obj")
