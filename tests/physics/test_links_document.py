"""Contract 3: an imported robot's links document (the state document's ``links``) and
:func:`coopsim.model.linkposes.link_poses` give every link where MuJoCo puts it, from what a
network client has: the document, the base pose and the ``link_q`` columns."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from coopsim.formats.description import load_description  # noqa: E402
from coopsim.description.robot import DescriptionSpec  # noqa: E402
from coopsim.model.scenerydoc import mesh_triangles  # noqa: E402
from coopsim.model.linkposes import (link_poses, link_visuals, placed_visuals,  # noqa: E402
                                     quat_rotate)
from coopsim.physics.mujoco.links import _standalone, links_document  # noqa: E402

from linkhelpers import robots_share  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def panda_path() -> Path:
    return robots_share() / "example-robot-data/robots/panda_description/urdf/panda.urdf"


def _described(path: Path):
    d = load_description(DescriptionSpec(path=os.path.abspath(path)))
    return d, links_document(d)


def _turned(d, model, seed: int):
    """MuJoCo's data with every moving joint at a random position, and the same as columns."""
    data, rng, columns = mujoco.MjData(model), np.random.default_rng(seed), {}
    for k, j in enumerate(d.moving):
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j.name)
        v = rng.uniform(-1.0, 1.0) * (0.02 if j.kind == "prismatic" else 1.0)
        data.qpos[model.jnt_qposadr[jid]] = columns[f"link_q{k + 1}"] = v
    mujoco.mj_kinematics(model, data)
    return data, columns


def _quat_close(a, b, tol: float) -> bool:
    return min(np.abs(a - b).max(), np.abs(a + b).max()) < tol


@pytest.mark.parametrize("path", ["tests/data/descriptions/tiny_arm.urdf",
                                  "tests/data/descriptions/tiny_arm.xml",
                                  "tests/data/descriptions/slider_arm.urdf",
                                  "examples/descriptions/rover.urdf", "panda"])
def test_link_poses_are_mujocos(path):
    """Each link's world pose from the document and the columns is MuJoCo's, at a random
    pose of the joints and a turned, lifted base."""
    d, doc = _described(panda_path() if path == "panda" else ROOT / path)
    model = _standalone(d)
    data, columns = _turned(d, model, 3)
    base = (0.5, -1.0, 0.2, np.cos(0.4), 0.0, 0.0, np.sin(0.4))  # yaw 0.8 rad
    poses = link_poses({"name": "r", "links": doc}, base, columns)
    assert set(poses) == {mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)
                          for b in range(1, model.nbody)}
    for b in range(1, model.nbody):
        xyz, quat = poses[mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)]
        want = np.array(base[:3]) + quat_rotate(np.array(base[3:]), data.xpos[b])
        assert np.abs(xyz - want).max() < 1e-5
        from coopsim.model.linkposes import quat_mul
        assert _quat_close(quat, quat_mul(np.array(base[3:]), data.xquat[b]), 1e-5)


def test_panda_meshes_place_their_files():
    """A mesh's pose places its *file's* frame: the file's vertices, put there, fill the box
    MuJoCo's (re-centred) mesh fills; the document names basenames only."""
    d, doc = _described(panda_path())
    model = _standalone(d)
    data, columns = _turned(d, model, 5)
    shapes = [s for s in placed_visuals(doc, (0, 0, 0, 1, 0, 0, 0), columns)
              if s[1].kind == "mesh"]
    assert len(shapes) >= 9 and all("/" not in s[1].file for s in shapes)
    for link, visual, (xyz, quat) in shapes[:4]:
        path = next(m.path for lk in d.links for m in lk.meshes
                    if os.path.basename(m.path) == visual.file)
        # the file's triangles as every client reads them (the Panda's visuals are COLLADA)
        tri = mesh_triangles(SimpleNamespace(path=path, vertices=None)).reshape(-1, 3)
        placed = xyz + np.array([quat_rotate(quat, p) for p in tri[::7] * visual.scale])
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, link)
        meshes = [g for g in range(model.body_geomadr[b], model.body_geomadr[b]
                                   + model.body_geomnum[b])
                  if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH]
        g = next((g for g in meshes if model.geom_contype[g] == 0
                  and model.geom_conaffinity[g] == 0), meshes[0])  # the visual one
        m = model.geom_dataid[g]
        verts = model.mesh_vert[model.mesh_vertadr[m]:model.mesh_vertadr[m]
                                + model.mesh_vertnum[m]]
        world = data.geom_xpos[g] + verts @ data.geom_xmat[g].reshape(3, 3).T
        assert np.abs(placed.min(0) - world.min(0)).max() < 2e-3
        assert np.abs(placed.max(0) - world.max(0)).max() < 2e-3


def test_rover_document_is_bounded_and_names_wheels():
    """The rover's wheels are streamed columns; primitives carry sizes; a robot without a
    document has no links, and missing columns leave joints at zero."""
    d, doc = _described(ROOT / "examples/descriptions/rover.urdf")
    joints = {j["name"]: j["column"] for lk in doc["links"] for j in lk["moving"]}
    assert joints == {"wheel_left_joint": "link_q1", "wheel_right_joint": "link_q2"}
    kinds = {v.kind for vs in link_visuals(doc).values() for v in vs}
    assert {"cylinder", "box"} <= kinds
    assert link_poses({"name": "plain"}, (0, 0, 0)) == {}
    still = link_poses(doc, (1.0, 2.0, 0.0))
    assert np.allclose(still[doc["root"]][0][:2], [1.0, 2.0], atol=1e-6)
