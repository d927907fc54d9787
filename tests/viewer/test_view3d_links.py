"""Imported robots in the 3D view (viewer/view3d_links.py): every visual shape is drawn at the
pose contract 3's link_poses gives, from the links document MuJoCo's compile of the file makes
and the streamed ``link_q`` columns; bones join each link to its parent. No window needed: what
is drawn is the instance rows the view uploads."""

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
    # a bone per link with a parent, from the parent's origin to the link's
    bones = len([link for link in doc["links"] if link["parent"]])
    cylinders = len([1 for _, v, _ in shapes if v.kind == "cylinder"])
    assert len(drawn["cylinder"]) == bones + cylinders
    # the joints' turn moves the shapes: the same robot at zero is drawn elsewhere
    still = link_rows(robots, pose, None, names)
    assert not np.allclose(still["box"][:, :3], drawn["box"][:, :3])
