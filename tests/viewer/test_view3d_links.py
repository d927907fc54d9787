"""Imported robots in the 3D view (viewer/view3d_links.py): every visual shape is drawn at the
pose contract 3's link_poses gives, from the links document MuJoCo's compile of the file makes
and the streamed ``link_q`` columns; nothing else is drawn but for a robot with no visual shape
(its skeleton: bones). No window needed: what is drawn is the instance rows the view
uploads."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.formats.description import load_description  # noqa: E402
from coopsim.description.robot import DescriptionSpec  # noqa: E402
from coopsim.model.linkposes import placed_visuals  # noqa: E402
from coopsim.physics.mujoco.links import links_document  # noqa: E402
from coopsim.viewer.view3d_links import imported, link_rows  # noqa: E402

ARM = Path(__file__).resolve().parents[1] / "data" / "descriptions" / "tiny_arm.urdf"


def test_each_link_shape_is_drawn_where_link_poses_puts_it_with_the_joints_turned():
    doc = links_document(load_description(DescriptionSpec(path=os.path.abspath(ARM))))
    robots = [{"name": "plain"}, {"name": "arm", "links": doc}]
    assert imported(robots).tolist() == [False, True]
    pose = np.array([[0, 0, 0, 1, 0, 0, 0], [1.0, 2.0, 0.0, np.cos(0.4), 0, 0, np.sin(0.4)]])
    names = ["link_q1", "link_q2"]
    columns = np.array([[0.0, 0.0], [0.7, -0.5]])
    drawn = link_rows(robots, pose, columns, names)
    shapes = placed_visuals(doc, pose[1], {"link_q1": 0.7, "link_q2": -0.5})
    boxes = [p for _, v, p in shapes if v.kind == "box"]
    assert len(drawn["box"]) == len(boxes) == 2
    for row, (xyz, quat) in zip(drawn["box"], boxes):
        assert row[:3] == pytest.approx(xyz, abs=1e-6)
        assert abs(np.dot(row[3:7], quat)) == pytest.approx(1.0, abs=1e-6)
    # what the file draws only: no bone beside the shapes (the tool frame draws nothing)
    cylinders = len([1 for _, v, _ in shapes if v.kind == "cylinder"])
    assert len(drawn["cylinder"]) == cylinders
    # the joints' turn moves the shapes: the same robot at zero is drawn elsewhere
    still = link_rows(robots, pose, None, names)
    assert not np.allclose(still["box"][:, :3], drawn["box"][:, :3])


FRAME = """<mujoco model="framed">
  <worldbody>
    <body name="body">
      <geom type="box" size="0.3 0.1 0.05" rgba="0.9 0.7 0.2 1" mass="5"/>
      <body name="fixed_support" pos="0.3 0 0.2"><site name="mount"/></body>
      <body name="leg" pos="0.3 -0.1 0">
        <joint name="hip" axis="1 0 0"/>
        <geom type="box" size="0.03 0.03 0.1" pos="0 0 -0.1" mass="1"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
BARE = """<mujoco model="bare">
  <worldbody>
    <body name="a">
      <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      <body name="b" pos="0.3 0 0.2">
        <joint name="j" axis="0 1 0"/>
        <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _drawn(path: Path) -> tuple[dict, dict]:
    doc = links_document(load_description(DescriptionSpec(path=str(path))))
    rows = link_rows([{"name": "r", "links": doc}], np.array([[0, 0, 0.5, 1, 0, 0, 0]]), None,
                     [])
    return doc, rows


def _bones(rows: dict) -> int:
    from coopsim.viewer.view3d_links import BONE
    return sum(int(np.all(np.isclose(r[-4:], BONE))) for k in rows for r in rows[k])


def test_a_frame_without_shapes_draws_nothing_and_a_robot_without_any_its_skeleton(tmp_path):
    # robosuite's Spot had a grey bone across its back (its massless fixed_support frame,
    # 0.35 m from the body's origin) and the UR5e bones beside its links and past its tool:
    # the file draws only its geoms
    (tmp_path / "framed.xml").write_text(FRAME)
    doc, rows = _drawn(tmp_path / "framed.xml")
    shapes = sum(len(link["visuals"]) for link in doc["links"])
    assert shapes == 2 and sum(len(r) for r in rows.values()) == shapes
    assert _bones(rows) == 0
    (tmp_path / "bare.xml").write_text(BARE)
    _, rows = _drawn(tmp_path / "bare.xml")
    assert _bones(rows) == sum(len(r) for r in rows.values()) == 1  # b's bone to a


@pytest.mark.parametrize("file", ["models/assets/robots/spot/robot.xml",
                                  "models/assets/robots/ur5e/robot.xml"])
def test_robosuites_spot_and_ur5e_are_drawn_as_their_meshes_only(file):
    from tests.robotpackages import folder as package
    folder = package("robosuite")
    doc, rows = _drawn(folder / file)
    meshes = sum(v["kind"] == "mesh" for link in doc["links"] for v in link["visuals"])
    assert meshes >= 9
    assert _bones(rows) == 0
    assert sum(len(r) for r in rows.values()) == sum(len(link["visuals"])
                                                     for link in doc["links"])
