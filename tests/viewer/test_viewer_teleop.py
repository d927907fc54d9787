"""Teleop in the real viewer under Xvfb, with synthetic key events through the window's own
event stack: T takes the robot under the pointer from its controller (told with error 13), the
keys held drive it (teleop_twist_keyboard's), letting go stops it (the dead-man), T gives it
back. A gamepad: a virtual one through /dev/uinput where the machine allows it (else skipped,
saying why), and pyglet's controller object read by the same code (the device's edge stood in
for)."""

from __future__ import annotations

import os

import pytest
from helpers import robot, scenario
from nethelpers import Peer, live, lookup
from test_viewer import SHOTS, connected, frame, pump, screenshot, viewer_for  # noqa: F401

MOTORS_READ, SPEEDS = 103, 100

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


class _Keys:
    """pyglet's key symbols, imported when a test runs (importing pyglet.window needs the
    session's display, which the fixture starts)."""

    def __getattr__(self, name):
        from pyglet.window import key as symbols
        return getattr(symbols, name)


key = _Keys()


@pytest.fixture(scope="module")
def run():
    world = scenario(robots=[robot("r1", -2.0, 0.0), robot("r2", 2.0, 0.0)], mode="realtime",
                     dt=0.01, seed=5)
    with live(world) as run:
        yield run


def _wheels(peer: Peer):
    return tuple(peer.ok(MOTORS_READ)[4][:2])


def _drive(viewer, run, name: str):
    pump(viewer, connected(viewer), "the layout")
    x, y = viewer.camera.to_screen(*((-2.0, 0.0) if name == "r1" else (2.0, 0.0)))
    viewer.dispatch_event("on_mouse_motion", x, y, 0, 0)
    viewer.dispatch_event("on_key_press", key.T, 0)
    pump(viewer, lambda: viewer.teleop.driver is not None, "teleop taking the robot")
    assert viewer.teleop.robot == name


def test_keys_drive_the_robot_under_the_pointer_and_t_gives_it_back(run, viewer_for):  # noqa: F811
    endpoint = lookup(run.network.endpoint, "/r1")
    controller, reader = Peer(endpoint), Peer(endpoint)
    controller.ok(SPEEDS, data=[0.05, 0.05])
    viewer = viewer_for(run.network.endpoint)
    _drive(viewer, run, "r1")
    refused = controller.ask(SPEEDS, data=[0.05, 0.05])
    assert refused[0] == 13 and "driven by teleop" in refused[1], refused
    viewer.dispatch_event("on_key_press", key.I, 0)
    pump(viewer, lambda: min(_wheels(reader)) > 0.4, "i: forward at 0.5 m/s")
    viewer.dispatch_event("on_key_press", key.J, 0)  # i + j held: u, forward turning left
    pump(viewer, lambda: _wheels(reader)[1] > _wheels(reader)[0] > 0, "i + j: u")
    SHOTS.mkdir(parents=True, exist_ok=True)
    screenshot(viewer, "teleop_driving")  # the HUD line while driving (a person looked at it)
    steps = viewer.link.frame.step
    viewer.dispatch_event("on_key_press", key.PERIOD, 0)  # a drive key now, not one step
    viewer.dispatch_event("on_key_release", key.PERIOD, 0)
    viewer.dispatch_event("on_key_release", key.I, 0)
    viewer.dispatch_event("on_key_release", key.J, 0)
    pump(viewer, lambda: _wheels(reader) == (0.0, 0.0), "let go: the dead-man stops it")
    assert not viewer.link.run.get("paused") and viewer.link.frame.step >= steps
    viewer.dispatch_event("on_key_press", key.T, 0)
    frame(viewer)  # a window queues the events dispatched to it until it dispatches them
    assert viewer.teleop.robot == "" and "gave r1 back to the connection from" in \
        viewer.notice.text, viewer.notice.text
    assert controller.ok(SPEEDS, data=[0.05, 0.05])[0] == 0, "back to its controller"
    controller.ok(SPEEDS + 2)
    controller.close()
    reader.close()


class _Stick:
    x = y = 0.0


class _Pad:
    """pyglet's Controller as the device leaves it: sticks as vectors in [-1, 1] (y up),
    buttons as booleans."""

    name = "stand-in pad"
    leftshoulder = False

    def __init__(self):
        self.left_analog, self.right_analog = _Stick(), _Stick()

    def close(self):
        pass


def test_the_gamepad_drives_only_while_its_deadman_is_held(run, viewer_for):  # noqa: F811
    reader = Peer(lookup(run.network.endpoint, "/r2"))
    viewer = viewer_for(run.network.endpoint)
    pad = _Pad()
    _drive(viewer, run, "r2")
    viewer.teleop.pad.device, viewer.teleop.pad.name = pad, pad.name
    pad.left_analog.y = 1.0
    for _ in range(5):
        frame(viewer)
    assert _wheels(reader) == (0.0, 0.0), "the stick alone, without the dead-man: nothing"
    pad.leftshoulder = True
    pump(viewer, lambda: min(_wheels(reader)) > 0.4, "LB held, left stick up: forward")
    pad.leftshoulder = False
    pump(viewer, lambda: _wheels(reader) == (0.0, 0.0), "LB let go: stopped")
    viewer.dispatch_event("on_key_press", key.T, 0)
    frame(viewer)
    assert viewer.teleop.robot == ""
    reader.close()


def test_a_virtual_gamepad_through_uinput(run, viewer_for):  # noqa: F811
    if not os.path.exists("/dev/uinput") or not os.access("/dev/uinput", os.W_OK):
        pytest.skip("no writable /dev/uinput on this machine (a container without the uinput "
                    "device): the virtual gamepad cannot be made; the stand-in test covers "
                    "the mapping")
    import pyglet
    from uinputpad import VirtualPad

    def devices_read(until):  # pyglet reads input devices in its app loop's select: step it
        return lambda: pyglet.app.platform_event_loop.step(0.01) is not False and until()

    reader = Peer(lookup(run.network.endpoint, "/r1"))
    with VirtualPad() as pad:
        viewer = viewer_for(run.network.endpoint)
        _drive(viewer, run, "r1")
        pump(viewer, lambda: viewer.teleop.pad.device is not None, "pyglet finding the pad")
        pad.hold(lefty=1.0, deadman=True)
        pump(viewer, devices_read(lambda: min(_wheels(reader)) > 0.4),
             "the virtual pad drives forward")
        pad.hold(lefty=0.0, deadman=False)
        pump(viewer, devices_read(lambda: _wheels(reader) == (0.0, 0.0)), "released: stopped")
        viewer.dispatch_event("on_key_press", key.T, 0)
    frame(viewer)
    assert viewer.teleop.robot == ""
    reader.close()
