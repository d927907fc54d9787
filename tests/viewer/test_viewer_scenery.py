"""A world's meshes and terrain in the real viewer under Xvfb (protocol 9's ``scenery``): a
live MuJoCo world served over real sockets; from above, the platform mesh's footprint is filled
in its grey and the terrain's extent tinted, the floor beside them is not.
Screenshot: test-artifacts/screenshots/scenery_top.png."""

from __future__ import annotations

import pytest

from nethelpers import live
from scenery_helpers import scenario_text, write_world
from test_viewer import close, connected, pixel, pump, screenshot, viewer_for  # noqa: F401

pytest.importorskip("mujoco")
pytest.importorskip("PIL")

TB = "[ROBOT_1]\ntype turtlebot3\nname tb\nposition -4 -4 0\n"

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def test_the_meshes_outlines_and_the_terrain_are_drawn_from_above(display, viewer_for,  # noqa: F811
                                                                    tmp_path):
    from coopsim.formats.files import load
    write_world(tmp_path)
    (tmp_path / "s.scenario").write_text(scenario_text(TB))
    with live(load(tmp_path / "s.scenario"), paused=True) as run:
        viewer = viewer_for(run.network.endpoint)
        pump(viewer, connected(viewer), "the scenery world")
        image = screenshot(viewer, "scenery_top")
        cam = viewer.camera
    floor = pixel(image, *cam.to_screen(3.5, 3.5))  # bare floor
    platform = pixel(image, *cam.to_screen(-2.0, 3.0))  # the 1 x 1 m platform's middle
    wall = pixel(image, *cam.to_screen(3.0, 0.5))  # the wall's 0.2 m footprint
    terrain = pixel(image, *cam.to_screen(1.0, -1.3))  # inside the 4 x 4 m field
    assert close(platform, (158, 158, 157), tol=20), platform  # grey over the floor
    assert close(wall, (158, 158, 157), tol=20), wall
    assert not close(terrain, floor, tol=8) and terrain[2] < floor[2], (terrain, floor)
