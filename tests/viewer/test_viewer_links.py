"""Robots from description files in the real viewer under Xvfb (protocol 10's ``links``): a
live MuJoCo world of example-robot-data's Panda and the example rover (a URDF with wheels)
served over real sockets; from above, each link's shapes are drawn at the pose the stream's
``link_q`` columns and the robot's pose give (the Panda's hand over its tool point, bent at
its home angles), the floor beside them bare. Screenshot: test-artifacts/screenshots/
links_top.png."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linkhelpers import panda_section
from nethelpers import live
from test_viewer import close, pixel, pump, screenshot, viewer_for  # noqa: F401

pytest.importorskip("mujoco")

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _scenario(tmp: Path) -> Path:
    (tmp / "w.world").write_text("[FLOOR]\nsize 3 3 0.1\n")
    path = tmp / "links.scenario"
    path.write_text(f"""[WORLD]
file w.world
{panda_section(1, 0.3)}[ROBOT_2]
description {ROOT}/examples/descriptions/rover.urdf
name rover
position -0.8 0.6 0
orientation 0 0 90
wheels wheel_left_joint wheel_right_joint
[SETTINGS]
engine mujoco
dt 0.002
mode lockstep
seed 1
""")
    return path


def _drawn(viewer):
    def ready() -> bool:
        links = viewer.scene.links
        return (viewer.link.connected and viewer.link.frame is not None and links is not None
                and bool(links) and np.abs(links.corners).sum() > 0)
    return ready


def test_described_robots_are_drawn_link_by_link_from_above(display, viewer_for,  # noqa: F811
                                                            tmp_path):
    from coopsim.formats.files import load
    from coopsim.model.linkposes import link_poses, link_visuals
    with live(load(_scenario(tmp_path)), paused=True) as run:
        viewer = viewer_for(run.network.endpoint)
        pump(viewer, _drawn(viewer), "the described robots' links")
        image = screenshot(viewer, "links_top")
        scene, cam = viewer.scene, viewer.camera
        tool = run.stepper.view()[0].reading("panda", "tool")
    layout = scene.layout
    panda = next(r for r in layout["robots"] if r["name"] == "panda")
    assert panda["links"]["columns"] == 9 and scene.arms.arms == []  # links, not a chain
    corners = scene.links.corners
    # the hand's box is over the tool point (the home pose reaches 0.3 m ahead of the base)
    names = [(r["name"], link) for _, r in scene.links.robots
             for link, shapes in link_visuals(r).items() for _ in shapes]
    hand = corners[[k for k, n in enumerate(names) if n == ("panda", "panda_hand")][0]]
    lo, hi = hand.min(axis=0), hand.max(axis=0)
    assert lo[0] - 0.02 <= tool[0] <= hi[0] + 0.02 and lo[1] - 0.02 <= tool[1] <= hi[1] + 0.02
    assert tool[0] > 0.55  # bent forward: drawn at the streamed angles, not at zero
    # the link poses drawn are the contract's from the layout and the robot's pose
    poses = link_poses(panda, (0.3, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0),
                       {f"link_q{k}": q for k, q in enumerate(
                           (0, -0.785, 0, -2.356, 0, 1.571, 0.785), start=1)})
    assert np.linalg.norm(poses["panda_hand"][0][:2] - (lo[:2] + hi[:2]) / 2) < 0.08
    # from above: the link's fill over the floor where it is, the floor bare beside it
    floor = pixel(image, *cam.to_screen(1.2, -1.2))
    base = pixel(image, *cam.to_screen(0.3, 0.0))  # panda_link0 over the mount
    wheel = pixel(image, *cam.to_screen(-0.8 - 0.08, 0.6))  # the rover's left wheel (+y turned)
    assert not close(base, floor, tol=12), (base, floor)
    assert not close(wheel, floor, tol=12), (wheel, floor)
    # from the side (x-z): the hand's box where the panel's mapping puts it, bare panel above
    from coopsim.viewer.sideview import _extent, _heights, _Plot, _top
    plot = _Plot(viewer.side.rect, _extent(scene, "x"), _top(_heights(scene)))
    centre = (lo + hi) / 2
    hx, hy = plot.at(float(centre[0]), float(centre[2]))
    ex, ey = plot.at(float(centre[0]), float(hi[2]) + 0.4)
    drawn, empty = pixel(image, hx, viewer.height - hy), pixel(image, ex, viewer.height - ey)
    assert not close(drawn, empty, tol=20), (drawn, empty)
