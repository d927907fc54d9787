"""The four real-robot types running their textbook behaviour in the real viewer under Xvfb:
e-pucks avoiding obstacles with their LED rings lit from the scenario file, 100 Kilobots
aggregating with their LEDs showing their state (green resting, red walking), a TurtleBot3
following the office map's walls, a Thymio following its band. Screenshots go to
test-artifacts/screenshots/robots_*.png (docs/images/robots_*.png are copies a person looked
at, referenced from docs/robots.md)."""

from __future__ import annotations

import numpy as np
import pytest

from test_viewer import SHOTS, Sim, close, connected, pixel, pump, screenshot, viewer_for  # noqa: F401

RUN_WAIT = 240.0  # s of the window's CPU for the run to reach the shot's sim time (a guard)
ORANGE, CYAN, MAGENTA, YELLOW = (255, 128, 0), (0, 255, 255), (255, 0, 255), (255, 255, 0)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _running(viewer, until: float):
    return lambda: connected(viewer)() and viewer.link.frame.time >= until


def _shoot(viewer_for, scenario: str, until: float, name: str, speed: str = "8",  # noqa: F811
           zoom: float = 1.0, centre=None):
    """Run ``scenario`` headless with its drivers, watch it until sim time ``until``, shoot
    (``zoom`` times closer than the fitted view, centred on robot ``centre``'s row).

    ``speed`` 8: what is checked depends on the sim time only (the steps are the same at any
    speed); at 2-4x the test waited 31 s of wall time for 115 s of sim time, mostly idle. Not
    as fast as possible: the shot would come later than ``until`` by however far the run
    raced ahead while the viewer started."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    sim = Sim(scenario, "--speed", speed)
    try:
        viewer = viewer_for(sim.endpoint)
        pump(viewer, _running(viewer, until), f"{scenario} at {until} s", timeout=RUN_WAIT)
        if zoom != 1.0:
            viewer.camera.scale *= zoom
            if centre is not None:
                viewer.camera.cx, viewer.camera.cy = viewer.scene.robot_xy[centre]
        image = screenshot(viewer, name)
        layout, columns = viewer.link.layout, viewer.link.frame.columns
        names = list(viewer.link.layout["columns"])
    finally:
        sim.stop()
    return viewer, image, layout, columns, names


def _led_pixels(viewer, image, k: int, radius: float) -> list:
    """Colours of the pixels round robot ``k``'s LED 0 (on its ring, ahead)."""
    x, y = viewer.scene.robot_xy[k]
    yaw = viewer.link.frame.robots[k, 2]
    r = 0.68 * radius
    px, py = viewer.camera.to_screen(x + r * np.cos(yaw), y + r * np.sin(yaw))
    near = range(-4, 5)  # a few pixels round it: the heading arrow may cover its middle
    return [pixel(image, px + dx, py + dy) for dx in near for dy in near]


def test_epucks_avoid_obstacles_with_their_rings_lit(display, viewer_for):  # noqa: F811
    viewer, image, layout, columns, names = _shoot(
        viewer_for, "scenarios/epuck_braitenberg.scenario", 10.0, "robots_epuck")
    assert columns[:, names.index("led0")].tolist() == [16744448, 65535, 16711935, 16776960]
    for k, colour in enumerate((ORANGE, CYAN, MAGENTA, YELLOW)):
        assert any(close(p, colour, tol=60) for p in _led_pixels(viewer, image, k, 0.035)), k


def test_kilobots_aggregate_showing_their_state_on_their_leds(display, viewer_for):  # noqa: F811
    viewer, image, layout, columns, names = _shoot(
        viewer_for, "scenarios/kilobot_aggregation.scenario", 60.0, "robots_kilobot",
        zoom=2.0)
    led = columns[:, names.index("led0")]
    assert len(led) == 100 and set(led.tolist()) <= {200 * 256, 200 * 65536}
    assert (led == 200 * 256).sum() >= 5  # some rest among neighbours already
    rgb = np.frombuffer(image.get_data("RGB", image.width * 3), np.uint8).reshape(-1, 3)
    for colour in ((0, 200, 0), (200, 0, 0)):  # both states' LEDs are drawn (robots move on
        assert (np.abs(rgb.astype(int) - colour).max(axis=1) <= 40).sum() >= 10  # meanwhile)


def test_a_turtlebot3_follows_the_office_walls(display, viewer_for):  # noqa: F811
    viewer, image, layout, columns, names = _shoot(
        viewer_for, "scenarios/turtlebot3_wall_follow.scenario", 30.0, "robots_turtlebot3",
        zoom=4.0, centre=0)
    walls = [o for o in layout["objects"] if o["name"].startswith("MAP_")]
    assert len(walls) > 20  # the map is drawn as walls
    x, y = viewer.scene.robot_xy[0]
    assert abs(x + 10.5) + abs(y + 1.0) > 0.5  # it moved from its start
    px, py = viewer.camera.to_screen(x, y)
    robot = tuple(layout["robots"][0]["color"])
    assert any(close(pixel(image, px + dx, py + dy), robot, tol=40)
               for dx in (-1, 0, 1) for dy in (-1, 0, 1))


def test_a_thymio_follows_its_band(display, viewer_for):  # noqa: F811
    viewer, image, layout, columns, names = _shoot(
        viewer_for, "scenarios/thymio_line.scenario", 15.0, "robots_thymio")
    assert columns[0, names.index("led0")] == 2142975
    x, y = viewer.scene.robot_xy[0]
    # the band is the 0.6 x 0.5 m box at the origin: its edge follower stays near the edge
    edge = min(abs(abs(x) - 0.3), abs(abs(y) - 0.25))
    assert edge < 0.12 and abs(x) < 0.45 and abs(y) < 0.4
    assert any(close(p, (32, 178, 255), tol=60) for p in _led_pixels(viewer, image, 0, 0.056))
