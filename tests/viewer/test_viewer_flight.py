"""Flying bodies in the real viewer under Xvfb: a live MuJoCo world (engine ``mujoco``) holding
two quadrotor-sized free bodies (tests/flyhelpers.py), one at 1 m and one at 2 m, served over real sockets and drawn
from the state stream's 3D block. The run is paused so they hang where the scenario puts them.
Screenshots: test-artifacts/screenshots/flight_*.png."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.model.specs import FloorSpec, RobotSpec, ScenarioSpec, Settings, WorldSpec

from flyhelpers import flyer_type
from nethelpers import live
from test_viewer import close, pixel, pump, screenshot, viewer_for  # noqa: F401

pytest.importorskip("mujoco")

RED, GREEN = (220, 40, 40), (40, 170, 60)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _world(engine: str = "mujoco", z=(1.0, 2.0)) -> ScenarioSpec:
    kind = flyer_type() if engine == "mujoco" else "single"
    robots = (RobotSpec(kind, "low", (-1.0, -0.5, z[0]), 0.0, RED),
              RobotSpec(kind, "high", (1.0, -0.5, z[1]), 0.0, GREEN))
    return ScenarioSpec(WorldSpec(FloorSpec(6.0, 4.0)), robots=robots,
                        settings=Settings(mode="lockstep", engine=engine), name="flight")


def _shown(viewer):
    return lambda: (viewer.link.connected and viewer.link.frame is not None
                    and viewer.scene.layout is not None and len(viewer.scene.robot_names) == 2)


def _colour_pixels(image, centre, colour, reach: float) -> int:
    """How many pixels within ``reach`` px of ``centre`` (window px, y up) are ``colour``."""
    cx, cy = centre
    return sum(close(pixel(image, cx + dx, cy + dy), colour, tol=40)
               for dx in range(-int(reach), int(reach) + 1)
               for dy in range(-int(reach), int(reach) + 1))


def test_a_body_at_2_m_is_drawn_higher_larger_and_labelled_apart_from_one_at_1_m(
        display, viewer_for):  # noqa: F811
    from coopsim.viewer.hud import label_texts

    with live(_world(), paused=True) as run:
        viewer = viewer_for(run.network.endpoint)
        pump(viewer, _shown(viewer), "the flying bodies")
        pose3d = viewer.link.frame.pose3d
        assert pose3d is not None and pose3d[:, 2] == pytest.approx([1.0, 2.0], abs=0.01)
        image = screenshot(viewer, "flight_top_and_side")
        scene, cam = viewer.scene, viewer.camera
        lift = scene.drawn_xy[:, 1] - scene.robot_xy[:, 1]  # the window's top is +y, unturned
        assert lift == pytest.approx([0.35, 0.70], abs=0.01)
        assert label_texts(scene) == ["low 1.00 m", "high 2.00 m"]
        # each body is drawn in its colour where it is lifted to, the higher one larger
        body = [cam.to_screen(*xy) for xy in scene.drawn_xy]
        assert close(pixel(image, *body[0]), RED, 40) and close(pixel(image, *body[1]), GREEN, 40)
        reach = 0.25 * 1.4 * cam.scale
        assert _colour_pixels(image, body[1], GREEN, reach) > \
            1.15 * _colour_pixels(image, body[0], RED, reach)
        # the shadows lie on the floor at the true positions, the higher one fainter
        floor = pixel(image, *cam.to_screen(0.0, 1.5))
        shade = [sum(pixel(image, *cam.to_screen(x, y - 0.2))) for x, y in scene.robot_xy]
        assert shade[0] < shade[1] < sum(floor) - 30
        _side_view_shows_altitude(viewer, image)


def _side_view_shows_altitude(viewer, image) -> None:
    """The x-z panel: both bodies in their colours, the 2 m one twice as high above the floor
    line; V then shows y-z (same heights), then hides the panel."""
    from pyglet.window import key

    x0, y0, x1, y1 = viewer.side.rect
    panel = [(x, viewer.height - y) for y in range(int(y0) + 20, int(y1))
             for x in range(int(x0), int(x1))]  # ImGui's y runs down, pyglet's up
    heights = {}
    for name, colour in (("low", RED), ("high", GREEN)):
        ys = [y for x, y in panel if close(pixel(image, x, y), colour, 40)]
        assert ys, f"{name} is not in the side view"
        heights[name] = (max(ys) + min(ys)) / 2  # the disc's centre, px (y up)
    floor_y = viewer.height - (y1 - 8.0)
    assert heights["high"] - floor_y == pytest.approx(2 * (heights["low"] - floor_y), rel=0.2)
    for axis in ("y", None, "x"):
        viewer.dispatch_event("on_key_press", key.V, 0)
        viewer.dispatch_event("on_key_release", key.V, 0)
        screenshot(viewer, f"flight_side_{axis}")
        assert viewer.side.axis == axis and (viewer.side.rect is None) == (axis is None)


def test_a_2d_world_shows_no_altitude_cues(display, viewer_for):  # noqa: F811
    with live(_world("kinematic"), paused=True) as run:
        viewer = viewer_for(run.network.endpoint)
        pump(viewer, _shown(viewer), "the ground robots")
        screenshot(viewer, "flight_none_in_2d")
        assert viewer.link.frame.pose3d is None and viewer.scene.altitude is None
        assert viewer.side.rect is None and "shadows" not in viewer.scene.layers
        np.testing.assert_array_equal(viewer.scene.drawn_xy, viewer.scene.robot_xy)


def test_a_replay_of_a_3d_recording_shows_the_altitude_cues(display, viewer_for,  # noqa: F811
                                                            tmp_path):
    from coopsim.replay.servers import Replay

    from rechelpers import record

    path = tmp_path / "flight.mcap"
    record(path, 10, _world(), drive=False)
    with Replay(str(path), port=0) as replay:
        viewer = viewer_for(replay.endpoint)
        pump(viewer, lambda: _shown(viewer)() and viewer.side.rect is not None, "the replay")
        screenshot(viewer, "flight_replay")
        assert viewer.link.playback is not None
        z = viewer.scene.altitude
        assert 0.8 < z[0] <= 1.0 and 1.8 < z[1] <= 2.0  # falling, from 1 m and 2 m
        lift = viewer.scene.drawn_xy[:, 1] - viewer.scene.robot_xy[:, 1]
        assert lift == pytest.approx(0.35 * z, abs=1e-6)
