"""The viewer draws a map read from an image (its walls) and robots' LEDs in the colours a
controller set over the network: real runs, a real window under Xvfb, screenshots kept in
test-artifacts/screenshots/ for a person to look at."""

from __future__ import annotations

import math

import pytest


from coopsim.client import Client

from test_viewer import SHOTS, Sim, close, connected, pixel, pump, screenshot, viewer_for  # noqa: F401

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def test_the_office_map_is_drawn_as_walls(display, viewer_for):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    sim = Sim("scenarios/office.scenario")
    try:
        viewer = viewer_for(sim.endpoint)
        pump(viewer, connected(viewer), "the office's robots")
        image = screenshot(viewer, "map_office")
    finally:
        sim.stop()
    walls = [o for o in viewer.link.layout["objects"] if o["name"].startswith("MAP_")]
    assert len(walls) > 20
    # the middle of the 0.9 x 1.5 m desk at (-7.5, 6.25) (worlds/maps/make_maps.py) is wall
    desk = min(walls, key=lambda o: math.hypot(o["x"] + 7.5, o["y"] - 6.25))
    px, py = viewer.camera.to_screen(desk["x"], desk["y"])
    assert close(pixel(image, px, py), (90, 90, 90), tol=20)
    fx, fy = viewer.camera.to_screen(-7.3, 8.4)  # the floor of that room, off the grid lines
    assert close(pixel(image, fx, fy), (222, 222, 214), tol=20)


def test_leds_set_over_the_network_are_drawn_in_their_colour(display, viewer_for, tmp_path):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    (tmp_path / "small.world").write_text("[FLOOR]\nsize 0.6 0.6 0.1\n")
    (tmp_path / "leds.scenario").write_text(
        "[WORLD]\nfile small.world\n[ROBOT_1]\ntype epuck\nname ep\nposition 0 0 0\n"
        "[SETTINGS]\nmode realtime\n")
    sim = Sim(str(tmp_path / "leds.scenario"))
    try:
        with Client(sim.endpoint, timeout=10.0) as client:
            client.robot("ep").leds.set(255, 0, 0)
        viewer = viewer_for(sim.endpoint)
        pump(viewer, connected(viewer), "the e-puck")
        lit = lambda: viewer.link.frame is not None and viewer.link.frame.columns is not None \
            and viewer.link.frame.columns.size and \
            (viewer.link.frame.columns == 255 * 65536).any()  # noqa: E731
        pump(viewer, lit, "the LED colours on the state stream")
        image = screenshot(viewer, "leds_epuck_red")
    finally:
        sim.stop()
    x, y = viewer.scene.robot_xy[0]
    r = 0.035 * 0.68  # LED 0 sits on the ring, straight ahead (the e-puck faces +x)
    px, py = viewer.camera.to_screen(x + r, y)
    assert close(pixel(image, px, py), (255, 0, 0), tol=40)
