"""What a first-time user saw wrong in the viewer, checked on real windows under Xvfb and their
screenshots (test-artifacts/screenshots/): the speed field shows the run's speed; the Squads
panel leaves the arena clear; a stopped run does not claim a broken real time; heading arrows
read at the default zoom."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from coopsim.client import Client
from coopsim.model.snapshot import RT_BREAK
from coopsim.viewer.hud import status_parts

from test_viewer import Sim, connected, frame, pump, screenshot, viewer_for  # noqa: F401
from test_viewer_game import SCENARIO
from test_viewer_first_use import _arrow_pixels, _check_arrows, _pixels, _zoom_to, yawed  # noqa: F401


@pytest.mark.slow
def test_the_speed_field_shows_the_runs_speed(display, viewer_for):
    run = Sim("--no-controllers", "--speed", "2")
    try:
        viewer = viewer_for(run.endpoint)
        pump(viewer, connected(viewer), "the demo")
        pump(viewer, lambda: viewer.controls.speed == "2", "the field showing 2 (--speed 2)")
        with Client(run.endpoint) as client:
            client.sim().set_speed(4.0)  # another client changes it
        pump(viewer, lambda: viewer.controls.speed == "4", "the field showing 4")
        screenshot(viewer, "speed_field_4x")
        viewer.controls.speed = "8"  # typed, not yet set: the user's text stays
        for _ in range(3):
            frame(viewer)
        assert viewer.controls.speed == "8"
    finally:
        run.stop()


@pytest.mark.slow
def test_the_squads_panel_leaves_the_arena_clear(display, viewer_for):
    run = Sim(str(SCENARIO))
    try:
        viewer = viewer_for(run.endpoint)
        pump(viewer, connected(viewer), "the ctf run")
        for _ in range(3):
            frame(viewer)
        screenshot(viewer, "squads_panel_beside_the_arena")
        length, width = viewer.scene.floor
        right, top = viewer.camera.to_screen(length / 2, width / 2)  # the floor's corner
        panel_left = min(viewer.ui.marks[m][0] for m in viewer.ui.marks if m.startswith("squads."))
        assert right < panel_left - 4, (right, panel_left)
        assert viewer.camera.to_screen(-length / 2, 0.0)[0] > 0  # and the arena still fits
    finally:
        run.stop()


def _link(paused: bool, finished: str = ""):
    frame = SimpleNamespace(time=12.0, rtf=0.09, speed=1.0, missed=30, mode="realtime",
                            paused=paused, attached=0, late=0.9, recent_rtf=0.09)
    run = {"finished": finished} if finished else {}
    return SimpleNamespace(connected=True, run=run, frame=frame, nameserver="tcp://x:1")


@pytest.mark.parametrize("paused, finished, shown", [
    (False, "", True),  # stepping and late: broken
    (True, "", False),  # paused: its last second of stepping is history
    (True, "duration 10 s reached", False),  # finished after a pause
    (False, "duration 10 s reached", False),
])
def test_real_time_broken_shows_only_while_the_run_steps(paused, finished, shown):
    assert 0.9 > RT_BREAK
    text = " ".join(t for t, _ in status_parts(_link(paused, finished)))
    assert ("REAL TIME BROKEN" in text) == shown, text


@pytest.mark.slow
@pytest.mark.parametrize("scale", [55.0, 71.5])  # robots 11 and 14 px in radius (the demo's)
def test_heading_arrows_read_at_the_default_zoom(yawed, viewer_for, scale):  # noqa: F811
    viewer = viewer_for(yawed.endpoint)
    pump(viewer, lambda: connected(viewer)() and len(viewer.scene.robot_names) == 6, "robots")
    viewer.show_names = False
    _zoom_to(viewer, 0.0, 0.0, scale)
    name = f"heading_arrows_default_zoom_{int(scale)}"
    image = screenshot(viewer, name)
    _check_arrows(viewer, image, name)
    rgb = _pixels(image)
    for robot, (x, y) in zip(viewer.link.layout["robots"], viewer.scene.robot_xy):
        r = scale * robot["radius"]
        pixels = _arrow_pixels(rgb, viewer.camera, x, y, robot["radius"])
        ahead = np.array((math.cos(robot["yaw"]), math.sin(robot["yaw"])))
        along, across = pixels @ ahead, pixels @ np.array((-ahead[1], ahead[0]))
        # a head about a radius wide (0.75 of it in fully white pixels), a tenth of the disc
        # (the arrow that did not read: a head 0.64 radius wide, 7 % of the disc)
        where = f"{name}: {robot['name']}"
        assert np.ptp(along) >= 0.6 * r, f"{where}: {np.ptp(along):.1f} px long"
        assert np.ptp(across) >= 0.75 * r, f"{where}: {np.ptp(across):.1f} px wide"
        assert len(pixels) >= 0.1 * math.pi * r * r, f"{where}: {len(pixels)} px"


def test_names_of_close_robots_do_not_overlap():
    from coopsim.viewer.hud import place_labels

    size = (96.0, 13.0)  # "team1_helper" in the default font
    # transport at 22 s: team1_helper and team2_leader side by side, 43 px apart
    labels = [((540.0, 447.0), 11.0, size), ((583.0, 449.0), 11.0, size),
              ((592.0, 405.0), 11.0, size), ((617.0, 503.0), 11.0, size)]
    spots = place_labels(labels)
    boxes = [(x, y, x + size[0], y + size[1]) for x, y in spots]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    assert spots[0] == (540.0 - 48.0, 447.0 + 13.0)  # the first name: below, as before
    lone = place_labels([((100.0, 100.0), 10.0, size)])
    assert lone == [(52.0, 112.0)]


@pytest.mark.parametrize("late, recent, broken", [
    (0.26, 1.00, False),  # late steps the schedule caught up with: the run kept 1x (jitter)
    (0.26, 0.77, True),  # late and behind: broken
])
def test_the_cli_state_and_viewer_say_one_thing_about_real_time(capsys, late, recent, broken):
    """One definition and one wording (model.snapshot): the CLI's line, /sim state's flag
    (Stats.rt_broken) and the viewer's badge agree, and the badge's figure is the line's."""
    from coopsim.app.console import RtBreakReport
    from coopsim.sim.pacing import Stats

    stats = Stats(100, 1.0, 1.0, 0.97, 26, "realtime", 1.0, False, (), "", (), 0.0, late, recent)
    assert stats.rt_broken == broken
    RtBreakReport()(stats)
    line = capsys.readouterr().err.strip()
    link = _link(False)
    link.frame.late, link.frame.recent_rtf, link.frame.rtf = late, recent, 0.97
    badges = [t for t, kind in status_parts(link) if kind == "error"]
    if not broken:
        assert line == "" and badges == []
        return
    words = f"real time broken: {recent:.2f}x real time over the last second, 1x asked (26% of"
    assert line.startswith(f"realtime: {words}")
    assert len(badges) == 1
    assert badges[0] == line.removeprefix("realtime: ").replace("real time broken",
                                                                "REAL TIME BROKEN")
    assert "rtf 0.97 (whole run)" in " ".join(t for t, _ in status_parts(link))


def test_controllers_driving_a_realtime_run_are_counted_not_shown_as_zero_attached():
    """A realtime run attaches no controller; the status bar counts the robots controllers
    drive (own) instead of saying 'attached controllers 0'."""
    import json

    from coopsim.viewer.connection import run_state
    from nethelpers import live
    from helpers import robot, scenario

    with live(scenario(robots=[robot("r1"), robot("r2")]), mode="realtime") as run, \
            Client(run.network.endpoint) as c:
        c.robot("r1").motors.set_speeds(0.1, 0.1)
        c.robot("r2").motors.set_speeds(0.1, 0.1)
        state = json.loads(c.sim().call(23).text)
    link = _link(False)
    link.run = run_state(state)
    link.frame.mode, link.frame.attached = "realtime", len(state["attached"])
    text = " ".join(t for t, _ in status_parts(link))
    assert state["attached"] == [] and "controllers drive 2 robot(s)" in text, text
    assert "attached" not in text
    link.frame.mode = "lockstep"
    assert "controllers drive 2 robot(s), 0 attached (lockstep)" in " ".join(
        t for t, _ in status_parts(link))
