"""The viewer on a real window under Xvfb, attached to real simulations over real sockets.

Every interaction goes through the window's own event handlers (mouse motion, press, release,
text), the way a person's clicks arrive; results are checked on ``/sim`` with the Python client
and on screenshots, which are kept in test-artifacts/screenshots/ for a person to look at.
"""

from __future__ import annotations

import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from coopsim.client import Client

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"
WAIT = 300.0  # s of CPU time for anything to show up: a guard against a hang, not a deadline
#                (at load 10 a robot inserted took over 15 s of wall to show, its window drawn in
#                software; at load 16 a robot's ~40 meshes took over 180 s)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


# -- set-up: an X server, simulations, the window ----------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sim:
    """``coopsim run --headless`` in a subprocess; ``endpoint`` is its name server."""

    def __init__(self, *args: str, port: int = 0) -> None:
        env = dict(os.environ)
        env.pop("DISPLAY", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coopsim", "run", "--headless", "--port", str(port), *args],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        self.endpoint = read_endpoint(self.proc)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def read_endpoint(proc: subprocess.Popen) -> str:
    """The "name server: tcp://..." line of a coopsim process's stderr."""
    for line in proc.stderr:
        match = re.search(r"name server: (tcp://\S+)", line)
        if match:
            return match.group(1)
    raise AssertionError(f"no name server line (exit {proc.wait()})")


def _viewer_pid(proc: subprocess.Popen) -> int:
    """The viewer's pid from the lines after the name server's: the step's path, then it."""
    line = proc.stderr.readline()
    assert line.startswith("step: composed ("), line  # said once, after the name server's line
    return int(re.search(r"viewer: pid (\d+)", proc.stderr.readline()).group(1))


@pytest.fixture
def sim(display):
    """The demo scenario without its controllers (robots stay where the file puts them)."""
    run = Sim("--no-controllers")
    yield run
    run.stop()


@pytest.fixture
def viewer_for(display):
    """Open viewer windows on demand; all are closed at the end. They show the 2D top view
    (a 3D world's too, as after Tab) unless ``top=False`` (then the world's default view)."""
    from coopsim.viewer.app import Viewer

    windows = []

    def open_viewer(endpoint: str, top: bool = True):
        windows.append(Viewer(endpoint, fps=10, width=1100, height=760))
        if top:
            windows[-1].view3d.chosen = False
        return windows[-1]
    yield open_viewer
    for window in windows:
        window.close()


# -- driving the window through its own event handlers ------------------------------------------

def frame(viewer) -> None:
    """Deliver queued events and draw one frame."""
    viewer.dispatch_events()
    viewer.render()
    viewer.flip()
    time.sleep(0.01)


def pump(viewer, until, what: str, timeout: float = WAIT) -> None:
    """Draw frames until ``until()`` holds; fail once this process (the window, and the run
    when the test hosts it) has used ``timeout`` s of CPU time meanwhile: a loaded machine
    makes the wait longer, not the work, and a hang still ends (each frame is drawn in
    software, on the CPU). Between two frames it waits three times as long as the frame took,
    so on a starved machine the frames take at most a quarter of what the process gets and
    the work waited for (the run's meshes, its steps) the rest."""
    deadline = time.process_time() + timeout
    while not until():
        assert time.process_time() < deadline, \
            f"no {what} after {timeout:.0f} s of CPU: {viewer.status_text}"
        started = time.perf_counter()
        frame(viewer)
        time.sleep(max(0.02, 3 * (time.perf_counter() - started)))


def click(viewer, mark: str) -> None:
    """Move to the middle of the widget marked ``mark`` and click it."""
    frame(viewer)  # a window that just appeared settles its layout in its second frame
    frame(viewer)
    x0, y0, x1, y1 = viewer.ui.marks[mark]
    x, y = (x0 + x1) / 2, viewer.height - (y0 + y1) / 2  # ImGui's y goes down, pyglet's up
    from pyglet.window import mouse
    viewer.dispatch_event("on_mouse_motion", x, y, 0, 0)
    frame(viewer)
    viewer.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    frame(viewer)
    viewer.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
    frame(viewer)


def type_into(viewer, mark: str, text: str) -> None:
    """Click a text field, select what it holds and type ``text`` over it."""
    from pyglet.window import key
    click(viewer, mark)
    viewer.dispatch_event("on_key_press", key.LCTRL, key.MOD_CTRL)
    viewer.dispatch_event("on_key_press", key.A, key.MOD_CTRL)
    frame(viewer)
    viewer.dispatch_event("on_key_release", key.A, key.MOD_CTRL)
    viewer.dispatch_event("on_key_release", key.LCTRL, 0)
    frame(viewer)
    viewer.dispatch_event("on_text", text)
    frame(viewer)
    viewer.dispatch_event("on_key_press", key.TAB, 0)  # leave the field
    frame(viewer)
    viewer.dispatch_event("on_key_release", key.TAB, 0)
    frame(viewer)


def menu(viewer, top: str, item: str) -> None:
    """Open menu ``top`` and click its item marked ``item``."""
    click(viewer, f"menu.{top}")
    frame(viewer)
    click(viewer, f"menu.{item}")


def frame_floor(viewer) -> None:
    """The 3D view framed on the whole floor (a new world opens framed on its robots): for the
    tests that look at scenery away from them."""
    length, width = viewer.scene.floor
    altitude = viewer.scene.altitude
    top = max([1.0] + [float(z) for z in (altitude if altitude is not None else [])])
    viewer.view3d.camera.fit((-length / 2, -width / 2, 0.0), (length / 2, width / 2, top))


def screenshot(viewer, name: str):
    """Draw a frame, keep it as test-artifacts/screenshots/NAME.png and return its pixels."""
    import pyglet
    viewer.dispatch_events()
    viewer.render()
    image = pyglet.image.get_buffer_manager().get_color_buffer().get_image_data()
    viewer.flip()
    image.save(str(SHOTS / f"{name}.png"))
    return image


def pixel(image, x: float, y: float) -> tuple[int, int, int]:
    """RGB of window pixel (x, y), pyglet coordinates (y up). The image's RGB bytes are
    converted once and kept on it (a screenshot does not change; converting the whole window
    for every pixel read cost minutes in tests that read hundreds)."""
    data = getattr(image, "_rgb_bytes", None)
    if data is None:
        data = image._rgb_bytes = image.get_data("RGB", image.width * 3)
    i = (int(y) * image.width + int(x)) * 3
    return tuple(data[i:i + 3])


def close(a, b, tol: int = 12) -> bool:
    return all(abs(int(p) - int(q)) <= tol for p, q in zip(a, b))


def _bare_floor(viewer) -> tuple[float, float]:
    """A point of the demo's floor between grid lines that nothing covers when the screenshot
    is taken: beyond every robot's sonar fan (2 m) and away from the obstacles and objects
    (where the robots pushed them) and the target. Robots that drove long (a loaded machine
    draws fewer frames a second) can bring their fans anywhere, so no point is fixed."""
    scene = viewer.scene
    cover = [(xy, 2.4) for xy in scene.robot_xy] + \
        [(xyz[:2], 1.0) for xyz in scene.objects_xyz] + \
        [((t["x"], t["y"]), 0.6) for t in viewer.link.layout["targets"]]
    grid = [(x + 0.5, y + 0.5) for x in range(-4, 4) for y in range(-4, 4)]
    score = lambda p: min(np.hypot(p[0] - xy[0], p[1] - xy[1]) - r  # noqa: E731
                          for xy, r in cover)
    best = max(grid, key=score)
    assert score(best) > 0, "no floor left bare to read its colour"
    return best


def connected(viewer):
    return lambda: viewer.link.connected and viewer.link.frame is not None \
        and viewer.scene.layout is not None and len(viewer.scene.robot_names) > 0


# -- tests --------------------------------------------------------------------------------------

def test_controllers_drive_robots_shown_in_their_colours_at_their_positions(display,
                                                                           viewer_for):
    demo = Sim()  # the demo with its four controller processes
    try:
        viewer = viewer_for(demo.endpoint)
        pump(viewer, connected(viewer), "the demo's robots")
        start = viewer.scene.robot_xy.copy()
        moved = lambda: np.hypot(*(viewer.scene.robot_xy - start).T) > 0.1  # noqa: E731
        pump(viewer, lambda: moved().sum() >= 2, "robots driven by their controllers")
        image = screenshot(viewer, "live_demo_controllers_driving")
    finally:
        demo.stop()
    layout = viewer.link.layout
    assert [r["name"] for r in layout["robots"]] == ["robot1", "robot2", "robot3", "robot4"]
    for robot, (x, y) in zip(layout["robots"], viewer.scene.robot_xy):
        px, py = viewer.camera.to_screen(x, y)
        assert close(pixel(image, px, py), robot["color"]), robot["name"]
    fx, fy = viewer.camera.to_screen(*_bare_floor(viewer))
    assert close(pixel(image, fx, fy), (222, 222, 214))
    assert viewer.status_text.startswith("t = ")


def test_object_manager_inserts_a_box_that_sim_then_has(sim, viewer_for):
    viewer = viewer_for(sim.endpoint)
    pump(viewer, connected(viewer), "the layout")
    menu(viewer, "Managers", "manager.object")
    pump(viewer, lambda: "object.insert" in viewer.ui.marks, "the object manager")
    type_into(viewer, "object.name", "crate1")
    type_into(viewer, "object.length", "0.6")
    type_into(viewer, "object.width", "0.4")
    type_into(viewer, "object.x", "1.0")
    type_into(viewer, "object.y", "-1.5")
    click(viewer, "object.insert")
    manager = viewer.managers["object"]
    pump(viewer, lambda: manager.outcome.pending is None and manager.outcome.text != "sending...",
         "the insert's answer")
    assert manager.outcome.text == "inserted crate1" and not manager.outcome.error
    with Client(sim.endpoint) as client:
        objects = client.sim().objects()
    assert "crate1" in objects and objects["crate1"][:2] == pytest.approx((1.0, -1.5), abs=0.05)
    pump(viewer, lambda: any(o["name"] == "crate1" for o in viewer.scene.layout["objects"]),
         "the new box on screen")
    image = screenshot(viewer, "object_manager_inserted_box")
    px, py = viewer.camera.to_screen(1.0, -1.5)
    assert close(pixel(image, px, py), (217, 140, 51))  # the manager's default colour


def test_a_bad_value_shows_inline_and_sends_nothing(sim, viewer_for):
    viewer = viewer_for(sim.endpoint)
    pump(viewer, connected(viewer), "the layout")
    with Client(sim.endpoint) as client:
        before = client.sim().objects()
    menu(viewer, "Managers", "manager.object")
    pump(viewer, lambda: "object.insert" in viewer.ui.marks, "the object manager")
    type_into(viewer, "object.length", "big")
    click(viewer, "object.insert")
    manager = viewer.managers["object"]
    assert manager.outcome.error and manager.outcome.pending is None
    assert manager.outcome.text == "length: 'big' is not a number"
    type_into(viewer, "object.length", "0.3")
    type_into(viewer, "object.mass", "-2")
    click(viewer, "object.insert")
    assert manager.outcome.text == ("mass must be 0 (static) or between 0.001 and 10000 kg, "
                                    "got -2 kg")
    screenshot(viewer, "object_manager_bad_value")
    with Client(sim.endpoint) as client:
        assert client.sim().objects() == before


def test_build_an_arena_with_the_managers_and_run_controls(sim, viewer_for):
    viewer = viewer_for(sim.endpoint)
    pump(viewer, connected(viewer), "the layout")
    menu(viewer, "Arena", "arena.empty")
    pump(viewer, lambda: viewer.link.layout is not None and not viewer.link.layout["robots"]
         and not viewer.link.layout["objects"], "the empty arena")
    menu(viewer, "Managers", "manager.robot")
    pump(viewer, lambda: "robot.insert" in viewer.ui.marks, "the robot manager")
    type_into(viewer, "robot.name", "scout")
    type_into(viewer, "robot.x", "-2")
    type_into(viewer, "robot.yaw", "90")
    click(viewer, "robot.insert")
    menu(viewer, "Managers", "manager.target")
    pump(viewer, lambda: "target.insert" in viewer.ui.marks, "the target manager")
    type_into(viewer, "target.x", "2")
    type_into(viewer, "target.y", "2")
    click(viewer, "target.insert")
    pump(viewer, lambda: len(viewer.scene.robot_names) == 1
         and len(viewer.scene.layout["targets"]) == 1, "the robot and the target")
    click(viewer, "controls.play")  # pause
    pump(viewer, lambda: viewer.link.frame is not None and viewer.link.frame.paused, "pause")
    step = viewer.link.frame.step
    click(viewer, "controls.step")
    pump(viewer, lambda: viewer.link.frame.step == step + 1, "one step")
    type_into(viewer, "controls.speed", "fast")
    click(viewer, "controls.set_speed")
    assert viewer.controls.outcome.text == "speed: 'fast' is not a number"
    screenshot(viewer, "arena_built_with_managers")
    with Client(sim.endpoint) as client:
        status = client.sim().status()
        assert list(client.sim().robots()) == ["scout"]
        targets = client.sim().call(12)
    assert status["paused"] == 1
    assert targets.text == "red" and targets.data[:2] == pytest.approx((2.0, 2.0))


def test_load_scenario_dialog_offers_the_bundled_files_and_loads_one(sim, viewer_for):
    """Every bundled scenario shows in the list, none below its fold (a 25th one hid
    one_robot.scenario: the click picked nothing, no load was sent, and the demo run ended
    at its 20 s duration, which the viewer showed as a run that stopped answering)."""
    from coopsim.viewer.menus import ROOT
    viewer = viewer_for(sim.endpoint)
    pump(viewer, connected(viewer), "the layout")
    menu(viewer, "File", "load_scenario")
    pump(viewer, lambda: "scenario.file.one_robot.scenario" in viewer.ui.marks, "the file list")
    frame(viewer)
    names = sorted(p.name for p in (ROOT / "scenarios").iterdir()
                   if p.suffix in (".scenario", ".world"))
    assert len(names) > 24  # more than the old list's rows
    below = viewer.ui.marks["scenario.open"][1]  # the list ends above its buttons
    hidden = [n for n in names if viewer.ui.marks[f"scenario.file.{n}"][3] > below]
    assert not hidden, f"below the list's fold: {hidden}"
    screenshot(viewer, "scenario_dialog")
    click(viewer, "scenario.file.one_robot.scenario")
    assert viewer.menu.dialogs["scenario"].path == str(ROOT / "scenarios" / "one_robot.scenario")
    click(viewer, "scenario.open")
    pump(viewer, lambda: connected(viewer)() and viewer.scene.robot_names == ["robot1"],
         "the loaded scenario", timeout=WAIT)  # a load builds and loads a new world's kernels
    frame(viewer)
    assert viewer.notice.text == "loaded one_robot.scenario"
    assert not viewer.menu.dialogs["scenario"].open
    screenshot(viewer, "scenario_loaded")


def test_mouse_turns_pans_and_zooms_and_keys_fit_and_hide_sonar(sim, viewer_for):
    from pyglet.window import key, mouse
    viewer = viewer_for(sim.endpoint)
    pump(viewer, connected(viewer), "the layout")
    cam = viewer.camera
    x, y = cam.to_screen(-3.0, -3.0)  # robot1
    scale = cam.scale
    viewer.dispatch_event("on_mouse_scroll", x, y, 0, 3)
    frame(viewer)
    assert cam.scale > scale and cam.to_screen(-3.0, -3.0) == pytest.approx((x, y), abs=0.5)
    before = cam.to_screen(0.0, 0.0)
    viewer.dispatch_event("on_mouse_press", 600, 300, mouse.RIGHT, 0)
    viewer.dispatch_event("on_mouse_drag", 650, 280, 50, -20, mouse.RIGHT, 0)
    viewer.dispatch_event("on_mouse_release", 650, 280, mouse.RIGHT, 0)
    frame(viewer)
    assert cam.to_screen(0.0, 0.0) == pytest.approx((before[0] + 50, before[1] - 20), abs=0.5)
    cx, cy = viewer.width / 2, viewer.height / 2  # a quarter turn about the window centre
    arc = [(cx + 200 * math.cos(a), cy + 200 * math.sin(a))
           for a in (i * math.pi / 16 for i in range(9))]
    viewer.dispatch_event("on_mouse_press", *arc[0], mouse.LEFT, 0)
    for (ax, ay), (bx, by) in zip(arc, arc[1:]):
        viewer.dispatch_event("on_mouse_drag", bx, by, bx - ax, by - ay, mouse.LEFT, 0)
    viewer.dispatch_event("on_mouse_release", *arc[-1], mouse.LEFT, 0)
    viewer.dispatch_event("on_key_press", key.S, 0)
    frame(viewer)
    assert cam.angle == pytest.approx(math.pi / 2, abs=1e-6) and not viewer.scene.show_rays
    image = screenshot(viewer, "view_turned_zoomed_no_sonar")
    for robot, (rx, ry) in zip(viewer.link.layout["robots"], viewer.scene.robot_xy):
        px, py = cam.to_screen(rx, ry)
        if 0 <= px < viewer.width and 40 <= py < viewer.height - 40:
            assert close(pixel(image, px, py), robot["color"]), robot["name"]
    viewer.dispatch_event("on_key_press", key.F, 0)
    frame(viewer)
    assert cam.angle == 0 and cam.scale == pytest.approx(scale)


def test_disconnected_then_reconnected_when_the_simulation_returns(display, viewer_for):
    port = free_port()
    first = Sim("--no-controllers", port=port)
    viewer = viewer_for(first.endpoint)
    try:
        pump(viewer, connected(viewer), "the first run")
        first.stop()
        pump(viewer, lambda: not viewer.link.connected, "the disconnection")
        frame(viewer)
        assert viewer.status_text.startswith("disconnected")
        screenshot(viewer, "disconnected")
        second = Sim("scenarios/one_robot.scenario", "--no-controllers", port=port)
        try:
            pump(viewer, lambda: connected(viewer)() and len(viewer.scene.robot_names) == 1,
                 "the reconnection")
        finally:
            second.stop()
    finally:
        first.stop()


def test_view_command_closing_the_window_ends_run_gui_but_a_crash_does_not(display):
    env = dict(os.environ)
    run = subprocess.Popen([sys.executable, "-m", "coopsim", "run", "--gui", "--port", "0",
                            "--no-controllers"], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = read_endpoint(run)
        pid = _viewer_pid(run)
        os.kill(pid, signal.SIGKILL)  # the viewer dies: the simulation goes on
        assert any("keeps running" in line for line in iter(run.stderr.readline, ""))
        with Client(endpoint) as client:
            assert client.sim().status()["robots"] == 4
    finally:
        run.send_signal(signal.SIGINT)
        out, _ = run.communicate(timeout=20)
    assert run.returncode == 0 and "sim time" in out

    run = subprocess.Popen([sys.executable, "-m", "coopsim", "run", "--gui", "--port", "0",
                            "--no-controllers"], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    read_endpoint(run)
    pid = _viewer_pid(run)
    assert run.stderr.readline().startswith("viewer: showing tcp://127.0.0.1:")  # window open
    os.kill(pid, signal.SIGTERM)  # closes the window as its close button does: exit 0
    out, err = run.communicate(timeout=20)
    assert run.returncode == 0, err
    assert "viewer closed: ending the run" in err and "sim time" in out


@pytest.mark.parametrize("endpoint, message", [
    ("tcp://127.0.0.1:1", "no display"),
    ("tcp://nowhere", "a name server endpoint looks like tcp://127.0.0.1:10000"),
])
def test_view_bad_start_is_one_line_and_exit_2(endpoint, message):
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    result = subprocess.run([sys.executable, "-m", "coopsim", "view", endpoint],
                            capture_output=True, text=True, env=env, timeout=30)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def recording(display, tmp_path_factory):
    """A 3 s recording of the demo with its controllers driving, in lockstep as fast as they
    answer (the same 301 frames in ~1.6 s less wall than in real time)."""
    path = tmp_path_factory.mktemp("rec") / "demo.mcap"
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    result = subprocess.run([sys.executable, "-m", "coopsim", "run", "--headless", "--port", "0",
                             "--duration", "3", "--mode", "lockstep", "--speed", "0",
                             "--record", str(path)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return path


def drag(viewer, mark: str, start: float, end: float) -> None:
    """Press on widget ``mark`` at fraction ``start`` of its width, drag to ``end``, release."""
    from pyglet.window import mouse
    frame(viewer)
    x0, y0, x1, y1 = viewer.ui.marks[mark]
    y = viewer.height - (y0 + y1) / 2
    xs = [x0 + (x1 - x0) * (start + (end - start) * i / 6) for i in range(7)]
    viewer.dispatch_event("on_mouse_motion", xs[0], y, 0, 0)
    frame(viewer)
    viewer.dispatch_event("on_mouse_press", xs[0], y, mouse.LEFT, 0)
    frame(viewer)
    for a, b in zip(xs, xs[1:]):
        viewer.dispatch_event("on_mouse_drag", b, y, b - a, 0, mouse.LEFT, 0)
        frame(viewer)
    viewer.dispatch_event("on_mouse_release", xs[-1], y, mouse.LEFT, 0)
    frame(viewer)


def test_open_a_recording_from_a_live_run_and_scrub_it(sim, viewer_for, recording):
    viewer = viewer_for(sim.endpoint)
    pump(viewer, connected(viewer), "the live run")
    menu(viewer, "File", "open_recording")
    pump(viewer, lambda: "recording.open" in viewer.ui.marks, "the open dialog")
    type_into(viewer, "recording.path", str(recording.with_name("missing.mcap")))
    click(viewer, "recording.open")
    assert "no such file" in viewer.menu.dialogs["recording"].outcome.text
    type_into(viewer, "recording.path", str(recording))
    click(viewer, "recording.open")
    pump(viewer, lambda: viewer.link.playback is not None and viewer.link.playback.end > 2.5
         and connected(viewer)(), "the replay")
    assert viewer.replay is not None and viewer.link.frame.mode == "playback"
    click(viewer, "timeline.play")  # pause, so the shown time stays where the scrub puts it
    pump(viewer, lambda: not viewer.link.playback.playing, "the pause")
    drag(viewer, "timeline.scrub", 0.1, 0.5)
    pb = viewer.link.playback
    middle = (pb.start + pb.end) / 2
    assert viewer.timeline.shown == pytest.approx(middle, abs=0.1 * (pb.end - pb.start))
    pump(viewer, lambda: viewer.timeline.wanted is None
         and abs(viewer.link.frame.time - viewer.timeline.shown) < 0.02, "the seek")
    frame(viewer)
    assert viewer.status_text.startswith(f"t = {viewer.link.frame.time:.2f} s")
    screenshot(viewer, "replay_scrubbed")
    robots = dict(zip(viewer.scene.robot_names, viewer.scene.robot_xy))
    assert robots["robot1"] != pytest.approx((-3.0, -3.0), abs=0.05)  # the wanderer moved
    menu(viewer, "File", "back_to_live")
    pump(viewer, lambda: viewer.link.playback is None and connected(viewer)(), "the live run")
    assert viewer.replay is None
