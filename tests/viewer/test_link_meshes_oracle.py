"""Every kind of robot of example-robot-data drawn where Pinocchio puts it: for an arm of
COLLADA meshes, a mobile manipulator with mirrored meshes, a quadruped, a humanoid, a hand and
a multirotor, the instance rows the 3D view makes (viewer/view3d_links.link_rows, from the
``links`` document, the joints' columns at random positions and a turned, lifted base) applied
to the triangles ``/sim`` 27 would serve (model/meshwire.indexed of the file's) put every
mesh within 1 mm of Pinocchio's own placement of its own reading of the file (linkoracle.py).
No window: the rows are what the view uploads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("pinocchio")

from test_view3d_robots import ROBOTS  # noqa: E402 -- the package's folder

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")]

FILES = ["ur_description/urdf/ur5_robot.urdf", "tiago_description/robots/tiago_dual.urdf",
         "solo_description/robots/solo12.urdf", "romeo_description/urdf/romeo_small.urdf",
         "allegro_hand_description/urdf/allegro_right_hand.urdf",
         "iris_description/robots/iris.urdf"]
BASE = (0.5, -1.0, 0.7, np.cos(0.4), 0.0, 0.0, np.sin(0.4))  # yaw 0.8 rad, 0.7 m up


def _turned(d) -> dict[str, float]:
    """Each moving joint at a random position (rad, or m for a slider), by its column."""
    rng = np.random.default_rng(7)
    return {f"link_q{k + 1}": float(rng.uniform(-0.6, 0.6) * (0.02 if j.kind == "prismatic"
                                                               else 1.0))
            for k, j in enumerate(d.moving[:32])}


@pytest.mark.parametrize("name", FILES, ids=lambda f: Path(f).stem)
def test_each_mesh_is_drawn_where_pinocchio_puts_it(name):
    import linkoracle
    from coopsim.formats.description import load_description
    from coopsim.description.robot import DescriptionSpec
    from coopsim.model.linkposes import COLUMNS, link_poses, quat_matrix
    from coopsim.model.meshwire import MAX_TRIANGLES, flat_rows, indexed
    from coopsim.model.scenerydoc import mesh_triangles
    from coopsim.physics.mujoco.links import links_document
    from coopsim.viewer.view3d_links import link_rows
    from coopsim.viewer.view3d_meshes import robot_key

    path = ROBOTS / name
    if not path.is_file():
        pytest.skip(f"{name} is not in this example-robot-data")
    d = load_description(DescriptionSpec(str(path), search=(str(ROBOTS.parent),)))
    doc, columns = links_document(d), _turned(d)
    files = {n: p for p, n in d.mesh_names().items()}
    served = {}
    for link in doc["links"]:
        for v in link["visuals"]:
            if v["kind"] == "mesh" and v["file"] not in served:
                tris = mesh_triangles(type("Spec", (), {"path": files[v["file"]],
                                                        "vertices": None})())
                served[robot_key("r", v["file"])] = flat_rows(*indexed(tris))
    entry = {"name": "r", "type": "r", "links": doc}
    drawn = link_rows([entry], np.array([BASE]), np.array([[columns.get(c, 0.0)
                                                             for c in COLUMNS]]),
                      list(COLUMNS), served)
    poses = link_poses(doc, BASE, columns)
    by_joint = {j.name: columns.get(f"link_q{k + 1}") for k, j in enumerate(d.moving)}
    expected = linkoracle.expected_meshes(
        str(path), str(ROBOTS.parent.parent), doc, by_joint.get,
        lambda link: (poses[link][0], quat_matrix(poses[link][1])) if link in poses else None)
    found = linkoracle.misplacements(expected, linkoracle.drawn_meshes(
        doc, files, drawn, served, lambda f: robot_key("r", f)), MAX_TRIANGLES)
    assert len(found) >= 5
    for which, pose, error, decimated in found:
        assert pose < 1e-3, f"{which} drawn {pose * 1000:.1f} mm from Pinocchio's"
        assert error < (1e-2 if decimated else 1e-3), \
            f"{which}'s served triangles {error * 1000:.1f} mm from the file's"
