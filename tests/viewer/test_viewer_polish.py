"""The viewer leaves a first-time user in no doubt, checked on real windows under Xvfb and on
their screenshots (kept in test-artifacts/screenshots/):

* a robot's heading arrow points the way the robot faces, at any yaw, zoomed in or far out;
* the status bar and the controls show the run's state: finished (and why), paused, stalled
  (waiting for controllers), recording, a recorder error; Pause and Step are disabled on a
  finished run, whose Reset starts it over;
* the replay timeline's end time is not covered by the scrub bar's handle.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from coopsim.client import Client

from test_viewer import (Sim, close, connected, display, frame, pixel, pump,  # noqa: F401
                         screenshot, viewer_for)

YAWS = (0.0, 30.0, 60.0, 135.0, -22.0, 200.0)  # degrees
WHITE = 215  # an arrow pixel (white at alpha 0.9 on the body) has every channel this bright
ROBOT_COLORS = [(40, 90, 230), (230, 40, 40), (40, 160, 60), (230, 200, 30), (150, 60, 200),
                (30, 30, 30)]


# -- heading arrows ---------------------------------------------------------------------------------

@pytest.fixture
def yawed(display):
    """An empty 10 x 10 m world, paused, with one robot per yaw of YAWS in a row."""
    run = Sim("worlds/empty.world", "--no-controllers")
    try:
        with Client(run.endpoint) as client:
            sim = client.sim()
            sim.pause()
            for i, (yaw, color) in enumerate(zip(YAWS, ROBOT_COLORS)):
                sim.insert_robot(f"r{i}", "single", (-2.5 + 1.0 * i, 0.0, 0.0),
                                 math.radians(yaw), color=color)
        yield run
    finally:
        run.stop()


def _white(rgb) -> bool:
    return min(int(v) for v in rgb) >= WHITE


def _pixels(image) -> np.ndarray:
    """(height, width, 3) RGB of a screenshot; row 0 is the bottom (pyglet's y goes up)."""
    raw = image.get_data("RGB", image.width * 3)
    return np.frombuffer(raw, dtype=np.uint8).reshape(image.height, image.width, 3)


def _arrow_pixels(rgb: np.ndarray, camera, x: float, y: float, radius: float) -> np.ndarray:
    """Offsets (dx, dy; px, y up) of the white pixels inside a robot's disc from its centre."""
    px, py = camera.to_screen(x, y)
    r = camera.scale * radius
    n = int(r) + 1
    dy, dx = np.mgrid[-n:n + 1, -n:n + 1]
    inside = dx ** 2 + dy ** 2 <= (r - 1) ** 2
    patch = rgb[int(py) - n:int(py) + n + 1, int(px) - n:int(px) + n + 1]
    white = inside & (patch.min(axis=2) >= WHITE)
    # from the robot's centre to each pixel's centre (pixel i covers i .. i + 1)
    return np.stack((dx[white] + int(px) + 0.5 - px, dy[white] + int(py) + 0.5 - py), axis=1)


def _check_arrows(viewer, image, name: str) -> None:
    """Each robot's arrow: its white pixels lie ahead of the centre, along the heading; a point
    well ahead on the axis is white, points behind and to either side are not."""
    camera = viewer.camera
    layout = viewer.link.layout
    rgb = _pixels(image)
    for robot, (x, y) in zip(layout["robots"], viewer.scene.robot_xy):
        yaw = robot["yaw"] + camera.angle
        r = camera.scale * robot["radius"]
        ahead = np.array((math.cos(yaw), math.sin(yaw)))
        side = np.array((-ahead[1], ahead[0]))
        pixels = _arrow_pixels(rgb, camera, x, y, robot["radius"])
        where = f"{name}: {robot['name']} at {math.degrees(robot['yaw']):.0f} deg, r {r:.1f} px"
        # a shape needs pixels: a couple of dozen, whatever the zoom (a thin arrow on a small
        # robot is a dash of a few pixels that points nowhere)
        assert len(pixels) >= 20, f"{where}: an arrow of {len(pixels)} px does not read"
        head = pixels[pixels @ ahead > 0.4 * r] @ side
        middle = pixels[np.abs(pixels @ ahead) < 0.2 * r] @ side
        spans = [np.ptp(p) + 1 if len(p) else 0 for p in (head, middle)]
        assert spans[0] >= spans[1] + 1, f"{where}: no head wider than the shaft {spans}"
        assert pixels.mean(axis=0) @ ahead > 0.15 * r, f"{where}: the arrow's mass is not ahead"
        # the arrow's outer part (its head) lies along the heading: within a pixel's angle
        outer = pixels[np.hypot(*pixels.T) > 0.45 * r].mean(axis=0)
        off = math.degrees(math.atan2(outer @ side, outer @ ahead))
        assert abs(off) < 8 + math.degrees(1 / r), f"{where}: points {off:.0f} deg off"
        # the arrow's extent: from near the centre to near the rim, along the heading only
        spread = pixels @ ahead
        assert spread.max() > 0.6 * r and spread.min() > -0.5 * r, where
        px, py = camera.to_screen(x, y)
        at = lambda u, v: rgb[int(py + u[1] * v), int(px + u[0] * v)]  # noqa: E731
        assert _white(at(ahead, 0.6 * r)), f"{where}: not white on the axis ahead"
        for u in (-ahead, side, -side):
            assert not _white(at(u, 0.6 * r)), f"{where}: white off the axis"


def test_heading_arrows_point_the_way_robots_face(yawed, viewer_for):
    viewer = viewer_for(yawed.endpoint)
    pump(viewer, lambda: connected(viewer)() and len(viewer.scene.robot_names) == len(YAWS),
         "the robots")
    viewer.show_names = False
    _zoom_to(viewer, 0.0, 0.0, 160.0)  # robots 32 px across
    _check_arrows(viewer, screenshot(viewer, "heading_arrows_zoomed_in"), "zoomed in")
    viewer.camera.angle = math.radians(50.0)  # a turned view turns the arrows with it
    _check_arrows(viewer, screenshot(viewer, "heading_arrows_view_turned"), "view turned")
    viewer.camera.angle = 0.0


@pytest.mark.parametrize("scale", [60.0, 30.0])
def test_heading_arrows_still_read_at_small_zooms(yawed, viewer_for, scale):
    viewer = viewer_for(yawed.endpoint)
    pump(viewer, lambda: connected(viewer)() and len(viewer.scene.robot_names) == len(YAWS),
         "the robots")
    _zoom_to(viewer, 0.0, 0.0, scale)  # robots 24 px, then 12 px across
    name = f"heading_arrows_{int(scale)}px_per_m"
    _check_arrows(viewer, screenshot(viewer, name), name)


def _zoom_to(viewer, x: float, y: float, scale: float) -> None:
    viewer.camera.cx, viewer.camera.cy, viewer.camera.scale = x, y, scale
    frame(viewer)
