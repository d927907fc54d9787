"""Meshes of described robots in one MuJoCo world: two files' COLLADA meshes given
from memory keep their own shapes (both were ``coopsim_dae_0.stl``, and the last robot's
replaced the first's), robots of one file share one copy of their meshes (100 Z1 arms took
over 20 GB), a removed robot takes the meshes nobody else uses with it, and a mesh over
``ENGINE_FACES`` triangles reaches MuJoCo decimated while drawing reads the file's own."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("collada")

from coopsim.formats.files import load  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data" / "descriptions"
ARM = (DATA / "tiny_arm.urdf").read_text()
BOX = ('<collision><origin xyz="0 0 0.1"/><geometry><box size="0.04 0.04 0.2"/></geometry>'
       '</collision>')
MESH = '<collision><geometry><mesh filename="{uri}"/></geometry></collision>'


def _world(folder: Path, robots: list[tuple[str, str]]) -> Simulation:
    """A mujoco run of robots (name, URDF file in ``folder``) 1 m apart."""
    (folder / "floor.world").write_text("[FLOOR]\nsize 8 8 0.1\n")
    sections = "".join(f"[ROBOT_{k + 1}]\ndescription {urdf}\nname {name}\n"
                       f"position {k:g} 0 0\n\n" for k, (name, urdf) in enumerate(robots))
    (folder / "s.scenario").write_text(f"[WORLD]\nfile floor.world\n\n{sections}"
                                       "[SETTINGS]\nengine mujoco\nmode lockstep\n")
    sim = Simulation(load(str(folder / "s.scenario")))
    sim.physics()
    return sim


def _size(model, robot: str) -> float:
    """The largest extent (m) of the mesh of ``robot``'s geom with one."""
    for g in range(model.ngeom):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or ""
        body = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, model.geom_bodyid[g]) or ""
        if body.startswith(f"{robot}/") and model.geom_dataid[g] >= 0 and name is not None:
            m = model.geom_dataid[g]
            verts = model.mesh_vert[model.mesh_vertadr[m]:model.mesh_vertadr[m]
                                    + model.mesh_vertnum[m]]
            return float(np.ptp(verts, axis=0).max())
    raise AssertionError(f"{robot} has no mesh geom")


def _two_cubes(folder: Path) -> None:
    """small.urdf (a 0.1 m COLLADA cube) and big.urdf (0.3 m) in separate folders, each
    naming its own ``cube.dae``."""
    text = (DATA / "cube.dae").read_text()
    for sub, scale in (("small", "0.001"), ("big", "0.003")):
        (folder / sub).mkdir()
        (folder / sub / "cube.dae").write_text(text.replace(
            "<matrix>0.001 0 0 0 0 0.001 0 0 0 0 0.001 0",
            f"<matrix>{scale} 0 0 0 0 {scale} 0 0 0 0 {scale} 0"))
        (folder / f"{sub}.urdf").write_text(ARM.replace(BOX, MESH.format(uri=f"{sub}/cube.dae"),
                                                         1).replace('<robot name="tiny_arm"',
                                                                    f'<robot name="{sub}"'))


def test_two_files_collada_meshes_keep_their_own_shapes_in_one_world(tmp_path):
    assert "<matrix>0.001 0 0 0 0 0.001 0 0 0 0 0.001 0" in (DATA / "cube.dae").read_text()
    _two_cubes(tmp_path)
    model = _world(tmp_path, [("a", "small.urdf"), ("b", "big.urdf")]).world.engine.model
    assert _size(model, "a") == pytest.approx(0.1, rel=1e-3)
    assert _size(model, "b") == pytest.approx(0.3, rel=1e-3)


def test_robots_of_one_file_share_their_meshes_and_a_removed_one_leaves_them(tmp_path):
    _two_cubes(tmp_path)
    sim = _world(tmp_path, [("a", "small.urdf"), ("b", "small.urdf"), ("c", "small.urdf"),
                            ("d", "big.urdf")])
    engine = sim.world.engine
    assert engine.model.nmesh == 2  # one cube for a, b and c, one for d
    assert _size(engine.model, "c") == pytest.approx(0.1, rel=1e-3)
    sim.world.remove_robot("a")  # whose meshes b and c use
    sim.physics()
    assert engine.model.nmesh == 2 and _size(engine.model, "b") == pytest.approx(0.1, rel=1e-3)
    sim.world.remove_robot("d")  # nobody else uses its mesh
    sim.physics()
    assert engine.model.nmesh == 1


def test_a_mesh_over_the_engine_budget_reaches_mujoco_decimated(tmp_path):
    from coopsim.description import collada
    from coopsim.model.scenerydoc import mesh_triangles

    n = 80  # a sphere of 2 * 80 * 160 = 25,600 triangles (some degenerate at the poles)
    theta, phi = np.meshgrid(np.linspace(0, np.pi, n + 1), np.linspace(0, 2 * np.pi, 2 * n + 1))
    grid = 0.1 * np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi),
                           np.cos(theta)], axis=-1)
    a, b, c, d = grid[:-1, :-1], grid[1:, :-1], grid[1:, 1:], grid[:-1, 1:]
    tris = np.concatenate([np.stack([a, b, c], -2).reshape(-1, 3, 3),
                           np.stack([a, c, d], -2).reshape(-1, 3, 3)]).astype(np.float32)
    assert len(tris) > collada.ENGINE_FACES
    (tmp_path / "ball.stl").write_bytes(collada.stl_bytes(tris))
    (tmp_path / "ball.urdf").write_text(ARM.replace(BOX, MESH.format(uri="ball.stl"), 1))
    model = _world(tmp_path, [("a", "ball.urdf")]).world.engine.model
    assert 0 < model.nmeshface <= collada.ENGINE_FACES
    assert _size(model, "a") == pytest.approx(0.2, rel=0.02)
    drawn = mesh_triangles(SimpleNamespace(vertices=None, path=str(tmp_path / "ball.stl")))
    assert len(drawn) == len(tris)  # drawn whole
    from coopsim.formats.description import load_description
    from coopsim.description.robot import DescriptionSpec
    from coopsim.physics.mujoco.links import links_document
    doc = json.dumps(links_document(load_description(DescriptionSpec(str(tmp_path /
                                                                          "ball.urdf")))))
    assert '"ball.stl"' in doc and "coopsim_" not in doc  # clients are told the file


def _ball_obj(path: Path, n: int = 80) -> int:
    """An OBJ sphere of radius 0.1 m (shared vertices, 2 n^2 quads as triangles) at
    ``path``: its triangle count."""
    theta, phi = np.meshgrid(np.linspace(0, np.pi, n + 1), np.linspace(0, 2 * np.pi, 2 * n + 1),
                             indexing="ij")
    grid = 0.1 * np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi),
                           np.cos(theta)], axis=-1).reshape(-1, 3)
    idx = np.arange(len(grid)).reshape(n + 1, 2 * n + 1) + 1
    a, b, c, d = idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3),
                            np.stack([a, c, d], -1).reshape(-1, 3)])
    path.write_text("".join(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in grid)
                    + "".join(f"f {i} {j} {k}\n" for i, j, k in faces))
    return len(faces)


MJCF_BALL = """<mujoco model="ball_arm">
  <asset><mesh name="ball" file="ball.obj"/></asset>
  <worldbody>
    <body name="base">
      <geom type="box" size="0.05 0.05 0.05" mass="1"/>
      <body name="link" pos="0 0 0.2">
        <joint name="j" type="hinge" axis="0 0 1"/>
        <inertial pos="0 0 0" mass="0.5" diaginertia="0.01 0.01 0.01"/>
        <geom type="mesh" mesh="ball"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _msh(obj: Path, path: Path) -> None:
    """The OBJ file ``obj`` (triangles, shared vertices) written as MuJoCo's MSH ``path``
    (four int32 counts: vertices, normals, texture coordinates, faces; then float32
    vertices, int32 faces)."""
    from coopsim.description.meshes import _obj_fast

    vertices, faces = _obj_fast(obj.read_bytes())
    path.write_bytes(np.array([len(vertices), 0, 0, len(faces)], "<i4").tobytes()
                     + vertices.astype("<f4").tobytes() + faces.astype("<i4").tobytes())


@pytest.mark.parametrize("kind", ["urdf", "mjcf", "mjcf-stl", "mjcf-msh", "mjcf-meshdir",
                                  "mjcf-assetdir"])
def test_an_obj_mesh_reaches_mujoco_from_memory_and_decimated(tmp_path, kind):
    """An OBJ over the engine's budget, in an URDF or an MJCF, an MJCF's big binary STL
    (named ``./ball.stl``, as robosuite's GR1 names its meshes: MuJoCo's spec drops the
    ``./``) and its big MSH (dm_control's fruit fly), also under the compiler's meshdir or
    assetdir (dm_control's dog: MuJoCo's spec keeps the name as written), reach MuJoCo as
    binary STL from memory decimated as an URDF's big STL or COLLADA mesh does (MuJoCo's
    compile grows with the triangles; robosuite's Sawyer 390,000, its GR1 437,000), the
    shape kept, and clients are told the file."""
    from coopsim.description import collada
    from coopsim.description.meshes import obj_as_binary_stl

    assert _ball_obj(tmp_path / "ball.obj") > collada.ENGINE_FACES
    shown = "ball.obj"
    if kind == "urdf":
        (tmp_path / "ball.urdf").write_text(ARM.replace(BOX, MESH.format(uri="ball.obj"), 1))
    elif kind == "mjcf":
        (tmp_path / "ball.xml").write_text(MJCF_BALL)
    elif kind == "mjcf-msh":
        _msh(tmp_path / "ball.obj", tmp_path / "ball.msh")
        (tmp_path / "ball.obj").unlink()
        (tmp_path / "ball.xml").write_text(MJCF_BALL.replace("ball.obj", "ball.msh"))
        shown = "ball.msh"
    elif kind == "mjcf-assetdir":
        (tmp_path / "assets").mkdir()
        (tmp_path / "ball.obj").rename(tmp_path / "assets" / "ball.obj")
        (tmp_path / "ball.xml").write_text(MJCF_BALL.replace(
            "<asset>", '<compiler assetdir="assets"/><asset>'))
    else:
        tris = collada.stl_triangles(obj_as_binary_stl(str(tmp_path / "ball.obj")))
        full = collada.stl_bytes(collada.stl_triangles(
            collada.stl_bytes(np.concatenate([tris, tris[:, ::-1]]))))  # 2 x 10,000: big
        (tmp_path / "ball.obj").unlink()
        shown, folder, compiler = "ball.stl", tmp_path, ""
        if kind == "mjcf-meshdir":
            folder, compiler = tmp_path / "meshes", '<compiler meshdir="meshes/"/>'
            folder.mkdir()
        (folder / "ball.stl").write_bytes(full)
        (tmp_path / "ball.xml").write_text(MJCF_BALL.replace(
            '<asset><mesh name="ball" file="ball.obj"/>',
            f'{compiler}<asset><mesh name="ball" file="./ball.stl"/>'))
    model = _world(tmp_path, [("a", "ball.urdf" if kind == "urdf" else "ball.xml")]
                   ).world.engine.model
    assert 0 < model.nmeshface <= collada.ENGINE_FACES
    assert _size(model, "a") == pytest.approx(0.2, rel=0.02)
    from coopsim.formats.description import load_description
    from coopsim.description.robot import DescriptionSpec
    from coopsim.physics.mujoco.links import links_document
    name = "ball.urdf" if kind == "urdf" else "ball.xml"
    doc = json.dumps(links_document(load_description(DescriptionSpec(str(tmp_path / name)))))
    assert f'"{shown}"' in doc and "coopsim_" not in doc  # clients are told the file


def test_a_mesh_file_read_for_its_bounds_is_not_read_again_for_mujoco(tmp_path, monkeypatch):
    """A load reads and hashes an OBJ once: its bounds (mesh_info) and the triangles MuJoCo
    is given (obj_as_binary_stl) share the read's digest."""
    from coopsim.description import meshes

    _ball_obj(tmp_path / "ball.obj", 20)
    monkeypatch.setenv("COOPSIM_MESH_CACHE", str(tmp_path / "cache"))
    reads = []
    real = meshes.read_mesh_bytes
    monkeypatch.setattr(meshes, "read_mesh_bytes", lambda p, n: reads.append(p) or real(p, n))
    meshes.mesh_info(str(tmp_path / "ball.obj"), hull=True)
    assert meshes.obj_as_binary_stl(str(tmp_path / "ball.obj")) is not None
    assert len(reads) == 1
    (tmp_path / "ball.obj").write_text((tmp_path / "ball.obj").read_text() + "\n")
    assert meshes.obj_as_binary_stl(str(tmp_path / "ball.obj")) is not None  # changed: read
    assert len(reads) == 2
