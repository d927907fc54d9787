"""The viewer on a capture-the-flag run: zones, bases and flags drawn in the teams' colours, the
score in the status bar, and a right-click that orders the selected squad on /squads, which
publishes the order on /squads/events (a real SUB socket checks it).

Here rather than in tests/games because pyglet keeps its first X display for the process: every
window test shares this folder's Xvfb.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq

from coopsim.client import Client
from coopsim.client.squads import Squads
from coopsim.model.orders import parse_order
from coopsim.net.protocol import Message

from nethelpers import until_heard
from test_viewer import (Sim, click, close, connected, frame, pixel, pump, screenshot,  # noqa: F401
                         viewer_for)

SCENARIO = Path(__file__).resolve().parents[1] / "games" / "data" / "ctf_view.scenario"
WATER = (60, 120, 220)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def right_click(viewer, x: float, y: float) -> None:
    """A right press and release at world point (x, y), m, through the window's handlers."""
    from pyglet.window import mouse
    px, py = viewer.camera.to_screen(x, y)
    viewer.dispatch_event("on_mouse_motion", px, py, 0, 0)
    frame(viewer)
    viewer.dispatch_event("on_mouse_press", px, py, mouse.RIGHT, 0)
    frame(viewer)
    viewer.dispatch_event("on_mouse_release", px, py, mouse.RIGHT, 0)
    frame(viewer)


def published(sub, timeout: float = 10.0):
    """The next order on /squads/events: (topic, order)."""
    assert sub.poll(int(timeout * 1000)), "nothing published on /squads/events"
    topic, wire = sub.recv_multipart()
    msg = Message.from_wire(wire)
    return topic.decode(), parse_order(msg.text, msg.data, msg.params[0])


def test_zones_flags_score_and_a_right_click_order(display, viewer_for):
    run = Sim(str(SCENARIO))
    try:
        viewer = viewer_for(run.endpoint)
        pump(viewer, connected(viewer), "the ctf run")
        pump(viewer, lambda: "A 0 : 0 B" in viewer.status_text, "the score in the status bar")
        image = screenshot(viewer, "ctf_zones_flags_bases")
        water = viewer.camera.to_screen(0.0, 0.0)  # the river's middle
        assert close(pixel(image, *water), (66, 123, 218), tol=30), pixel(image, *water)
        fx, fy = viewer.camera.to_screen(8.0, 0.0)  # B's flag: its blue pennant above the pole
        s = 0.15 * viewer.camera.scale
        pennant = pixel(image, fx + 0.9 * s, fy + 2.5 * s)
        assert pennant[2] > 150 and pennant[0] < 120, pennant
        bx, by = viewer.camera.to_screen(-8.0 - 1.0, 0.0)  # A's base ring, red
        ring = [pixel(image, bx + d, by) for d in (-1, 0, 1)]
        assert any(p[0] > 150 and p[2] < 110 for p in ring), ring

        with Client(run.endpoint) as client:
            sub = client._ctx.socket(zmq.SUB)
            sub.setsockopt(zmq.SUBSCRIBE, b"A")
            sub.connect(client.lookup("/squads/events", "pub"))
            until_heard(Squads(client), sub)  # the subscription reaches the publisher
            click(viewer, "squads.A")
            right_click(viewer, -5.0, -4.0)
            topic, order = published(sub)
            assert (topic, order.verb) == ("A", "goto")
            assert abs(order.point[0] + 5.0) < 0.1 and abs(order.point[1] + 4.0) < 0.1
            right_click(viewer, 8.1, 0.1)  # on B's flag: capture it
            topic, order = published(sub)
            assert (topic, order.verb, order.point) == ("A", "capture", (8.0, 0.0))
            pump(viewer, lambda: "sent: A capture" in viewer.squads.outcome.text,
                 "the panel saying what was sent")
            screenshot(viewer, "ctf_squad_ordered")
            sub.close(0)
    finally:
        run.stop()
