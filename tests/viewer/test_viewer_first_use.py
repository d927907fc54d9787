"""The viewer leaves a first-time user in no doubt, checked on real windows under Xvfb and on
their screenshots (kept in test-artifacts/screenshots/):

* a robot's heading arrow points the way the robot faces, at any yaw, zoomed in or far out;
* the status bar and the controls show the run's state: finished (and why), paused, stalled
  (waiting for controllers), recording, a recorder error; Pause and Step are disabled on a
  finished run, whose Reset starts it over;
* the replay timeline's end time is not covered by the scrub bar's handle.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from coopsim.client import Client

from test_viewer import (Sim, click, connected, frame, pump, screenshot,  # noqa: F401
                         viewer_for)

YAWS = (0.0, 30.0, 60.0, 135.0, -22.0, 200.0)  # degrees
WHITE = 215  # an arrow pixel (white at alpha 0.9 on the body) has every channel this bright
ROBOT_COLORS = [(40, 90, 230), (230, 40, 40), (40, 160, 60), (230, 200, 30), (150, 60, 200),
                (30, 30, 30)]

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


# -- heading arrows ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def yawed(display):
    """An empty 10 x 10 m world, paused, with one robot per yaw of YAWS in a row (one run for
    the arrow tests: they only look at it)."""
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


# -- the run's state in the status bar and the controls ---------------------------------------------

def _status(viewer) -> dict[str, str]:
    """The status bar's pieces by kind (their texts joined), as drawn in the last frame."""
    out: dict[str, str] = {}
    for text, kind in viewer.status_parts:
        out[kind] = (out.get(kind, "") + " | " + text).strip(" |")
    return out


def _badge_colour(viewer, image, index: int) -> tuple[int, int, int]:
    """The brightest colour of status bar piece ``index`` (its text) in a screenshot."""
    x0, y0, x1, y1 = viewer.ui.marks[f"status.{index}"]
    rgb = _pixels(image)[viewer.height - int(y1):viewer.height - int(y0), int(x0):int(x1)]
    flat = rgb.reshape(-1, 3).astype(int)
    return tuple(flat[flat.sum(axis=1).argmax()])


def _click_scene(viewer) -> None:
    from pyglet.window import mouse

    x, y = viewer.width / 2, viewer.height / 2
    viewer.dispatch_event("on_mouse_motion", x, y, 0, 0)
    frame(viewer)
    for event in ("on_mouse_press", "on_mouse_release"):
        viewer.dispatch_event(event, x, y, mouse.LEFT, 0)
        frame(viewer)


def _spec(**settings):
    from coopsim.model.specs import Settings
    from helpers import robot, scenario

    spec = scenario(robots=[robot("r1", -2.0, 0.0), robot("r2", 2.0, 0.0)], mode="realtime")
    return __import__("dataclasses").replace(spec, settings=Settings(**settings))


def test_a_finished_run_says_why_and_only_start_over_acts(display, viewer_for):
    from pyglet.window import key

    from nethelpers import live

    with live(_spec(duration=1.0), controllers=False) as run, Client(
            run.network.endpoint) as client:
        viewer = viewer_for(run.network.endpoint)
        pump(viewer, lambda: connected(viewer)() and viewer.link.run.get("finished"),
             "the run to finish")
        frame(viewer)
        assert "FINISHED: duration 1 s reached" in _status(viewer)["state"]
        assert viewer.ui.enabled["controls.play"] is False
        assert viewer.ui.enabled["controls.step"] is False
        assert viewer.ui.enabled["controls.reset"] is True
        image = screenshot(viewer, "run_finished")
        state = next(i for i, (_, k) in enumerate(viewer.status_parts) if k == "state")
        assert _badge_colour(viewer, image, state)[2] < 140  # amber, not the grey figures
        before = client.sim().status()["step"]
        click(viewer, "controls.play")  # disabled: nothing is sent
        click(viewer, "controls.step")
        _click_scene(viewer)  # the keys go to the scene, not the widget clicked last
        viewer.dispatch_event("on_key_press", key.SPACE, 0)  # the keys say why instead
        frame(viewer)
        assert viewer.controls.outcome.error and "has finished" in viewer.controls.outcome.text
        assert client.sim().status()["step"] == before
        click(viewer, "controls.reset")  # "Start over"
        pump(viewer, lambda: viewer.controls.outcome.pending is None
             and not viewer.link.run.get("finished"), "the run to start over")
        assert client.sim().state()["finished"] == ""
        frame(viewer)
        assert viewer.ui.enabled["controls.play"] and "state" not in _status(viewer)
        screenshot(viewer, "run_started_over")


def _until_fields_land(run, recorder_error: str) -> None:
    """Add ``waiting_for`` (the lead's) and ``recorder_error`` (the recording helper's) to the
    run's /sim state while its server does not send them yet: the robots attached in lockstep
    (they are all silent here) and a recorder failure's sentence. A server that sends them
    is left alone."""
    server = run.network.sim
    plain = server._state

    def state(msg):
        reply = plain(msg)
        doc = json.loads(reply.text)
        doc.setdefault("waiting_for", sorted(run.stepper.stats().attached))
        if "recorder_error" not in doc:
            doc["recorder_error"] = recorder_error
        return msg.reply(json.dumps(doc), params=reply.params)
    server._state = state


def test_stalled_recording_recorder_error_and_paused_show_in_the_status_bar(display, viewer_for,
                                                                           tmp_path):
    from nethelpers import Peer, live

    path = tmp_path / "shown.mcap"
    failure = "writing shown.mcap failed: [Errno 28] No space left on device"
    with live(_spec(mode="lockstep"), controllers=False, record=str(path)) as run, Client(
            run.network.endpoint) as client:
        _until_fields_land(run, failure)
        client.sim().set_lease(60.0)  # the longest lease (docs/protocol.md)
        silent = Peer(client.lookup("/r2"))
        silent.ok(100, data=[0.0, 0.0])  # attaches r2, which then says nothing more
        viewer = viewer_for(run.network.endpoint)
        # a stalled run publishes no state frame: the window shows the state document's
        pump(viewer, lambda: viewer.link.connected and viewer.link.run.get("waiting_for"),
             "the stalled run")
        frame(viewer)
        shown = _status(viewer)
        assert shown["state"] == "STALLED: waiting for r2"
        assert shown["rec"] == "REC shown.mcap"
        assert shown["error"] == f"RECORDER ERROR: {failure}"
        image = screenshot(viewer, "run_stalled_recording_recorder_error")
        kinds = [k for _, k in viewer.status_parts]
        colours = {k: _badge_colour(viewer, image, kinds.index(k)) for k in ("state", "rec",
                                                                               "error")}
        assert colours["state"][2] < 140 and colours["rec"][0] > 200 > colours["rec"][1]
        assert colours["error"][0] > 200 > colours["error"][2]
        client.sim().pause()
        # paused, not stalled (from the stream, or the state document a second later)
        pump(viewer, lambda: _status(viewer).get("state") == "PAUSED", "the pause")
        screenshot(viewer, "run_paused_recording")
        silent.close()


# -- the replay timeline ----------------------------------------------------------------------------

GRAB = (61, 133, 224)  # ImGui's slider handle colour (its dark style)


def _region(viewer, image, mark: str) -> np.ndarray:
    """The pixels of widget ``mark`` in a screenshot, rows top to bottom."""
    x0, y0, x1, y1 = viewer.ui.marks[mark]
    rgb = _pixels(image)[viewer.height - int(y1):viewer.height - int(y0), int(x0):int(x1)]
    return rgb[::-1].astype(int)


def _grab_columns(region: np.ndarray) -> np.ndarray:
    """x of the columns of ``region`` where the slider handle's colour is."""
    handle = (np.abs(region - np.array(GRAB)).max(axis=2) <= 40).any(axis=0)
    return np.flatnonzero(handle)


def test_the_scrub_handle_leaves_the_times_readable(display, viewer_for, tmp_path):
    """At the replay's start, middle and end, the handle is where the time is and covers
    neither time label. One replay and one window sought three times (a window and a replay
    each cost ~1.5 s to open; the window follows a seek as it shows a position it opened at).
    """
    from coopsim.replay.servers import Replay

    from rechelpers import record

    path = tmp_path / "timeline.mcap"
    record(path, 150)  # 3 s at dt 0.02
    with Replay(str(path), port=0, paused=True) as rp, Client(rp.endpoint) as client:
        pb = client.playback().status()
        viewer = None
        for where, at in (("start", 0.0), ("middle", 0.5), ("end", 1.0)):
            target = pb["start"] + at * (pb["end"] - pb["start"])
            client.playback().seek(target)
            viewer = viewer or viewer_for(rp.endpoint)
            pump(viewer, lambda: connected(viewer)() and viewer.link.playback is not None
                 and abs(viewer.link.playback.position - target) < 0.03
                 and abs(viewer.timeline.shown - target) < 0.03
                 and "timeline.end" in viewer.ui.marks, f"the replay at its {where}")
            frame(viewer)
            _handle_at(viewer, screenshot(viewer, f"timeline_handle_at_{where}"), at)


def _handle_at(viewer, image, fraction_wanted: float) -> None:
    """The scrub bar's handle in ``image`` is at ``fraction_wanted`` of the bar and covers
    neither time label, which show text."""
    scrub, end = viewer.ui.marks["timeline.scrub"], viewer.ui.marks["timeline.end"]
    label = viewer.ui.marks["timeline.position"]
    assert label[2] <= scrub[0] and scrub[2] <= end[0], "the labels are beside the bar"
    grab = _grab_columns(_region(viewer, image, "timeline.scrub"))
    assert len(grab), "no handle on the scrub bar"
    fraction = grab.mean() / (scrub[2] - scrub[0])  # where along the bar the handle is
    assert fraction == pytest.approx(fraction_wanted, abs=0.05)
    for mark in ("timeline.end", "timeline.position"):
        region = _region(viewer, image, mark)
        assert not len(_grab_columns(region)), f"the handle covers {mark}"
        assert (region.min(axis=2) > 150).sum() > 20, f"{mark} shows no text"
