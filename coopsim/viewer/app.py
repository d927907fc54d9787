"""The viewer window: the scene under the camera, the widget layer on top, input, the frame loop.

The window renders at ``fps`` frames per second (10 by default, as CoopDynSim); while the user
is pressing, dragging, scrolling or typing it renders at least 30 times a second so the widgets
feel immediate, then falls back. Mouse: left drag turns the view, right drag pans, the wheel
zooms at the cursor; a right click (no drag) orders the squad selected in the Squads panel
there (viewer/game.py). Keys: F fits the world, S toggles sensor rays (sonar), N robot names, V cycles
a 3D world's side view (x-z, y-z, hidden; viewer/sideview.py), Space pauses or resumes (the run, or
the replay), . takes one step, Ctrl+Q quits; T drives the robot picked with the keys or a
gamepad and gives it back (viewer/teleop.py). A world on a 3D engine opens in the 3D view
(viewer/view3d.py: its own mouse; Tab switches views, C follows the selected robot).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pyglet
from imgui_bundle import imgui
from imgui_bundle.python_backends import pyglet_backend
from pyglet.math import Mat4
from pyglet.window import key, mouse

from . import QUIT, lower_priority
from . import ViewerError
from .camera import Camera
from .connection import Link
from .game import CLICK_SLOP, SQUADS_WIDTH, SquadPanel, draw_game
from .hud import (Controls, Timeline, draw_disconnected, draw_names, draw_status, status_parts,
                  status_text)
from .menus import MenuBar
from .panels import ObjectManager, RobotManager, TargetManager
from .replayproc import ReplayProcess
from .scene import BACKGROUND, Scene
from .sideview import SideView
from .teleop import TeleopControl
from .ui import Outcome, Ui
from .view3d import View3D

BUSY_FPS = 30.0  # frames per second while the user interacts
BUSY_FOR = 0.6  # s of fast frames after the last input event
STATUS_HEIGHT = 26.0  # px, status bar (for fitting the world between the bars)
TIMELINE_HEIGHT = 36.0  # px, replay timeline
CONTROLS_HEIGHT = 34.0  # px, run controls under the menu bar
MENU_HEIGHT = 19.0  # px, the menu bar with ImGui's default font


class Viewer(pyglet.window.Window):
    """The render process's window.

    Args:
        nameserver: Endpoint of the name server to follow.
        fps: Frames per second when idle.
        link: A started link to use instead of a new one (for benchmarks on canned data).
        width, height: Window size, px.
        visible: Whether to map the window (tests and benchmarks may hide it).
        keys: CurveZMQ client keys for a run started with ``--keys`` (None: no Curve).
    """

    def __init__(self, nameserver: str, fps: float = 10.0, link: Link | None = None,
                 width: int = 1100, height: int = 760, visible: bool = True,
                 keys=None) -> None:
        super().__init__(width, height, caption=f"coopsim view - {nameserver}", resizable=True,
                         visible=visible, vsync=False)
        self.set_minimum_size(480, 360)
        imgui.create_context()
        imgui.get_io().set_ini_filename(None)  # no imgui.ini left in the user's folder
        self.gui = pyglet_backend.create_renderer(self)
        self.link = link or Link(nameserver, keys).start()
        self.live_endpoint, self.live_keys = nameserver, keys
        self.ui = Ui(self.link)
        self.scene = Scene()
        self.camera = Camera(width, height)
        self.view3d = View3D(width, height)
        self.managers = {"object": ObjectManager(self.ui), "robot": RobotManager(self.ui),
                         "target": TargetManager(self.ui)}
        self.controls = Controls(self.ui)
        self.squads = SquadPanel(self.ui)
        self.side = SideView()
        self.timeline = Timeline(self.ui)
        self.notice = Outcome()
        self.menu = MenuBar(self)
        self.teleop = TeleopControl(self)
        self.push_handlers(self.teleop)  # above the window's handlers: its keys while driving
        self.replay: ReplayProcess | None = None
        self.show_names = True
        self.status_text = ""
        self.status_parts: list[tuple[str, str]] = []
        self.fps = max(0.5, float(fps))
        self.frames = 0
        self.closed = False
        self._fit_pending = True
        self._generation = -1
        self._ui_drag = False
        self._right_press: tuple[float, float] | None = None  # where a right click began
        self._left_press: tuple[float, float] | None = None  # where a left click began (3D)
        self._busy_until = 0.0
        self._last_frame = 0.0
        self._last_gui = time.monotonic()

    # -- the frame ----------------------------------------------------------------------------

    def render(self) -> None:
        """Draw one frame into the back buffer (call :meth:`flip` to show it)."""
        self.switch_to()
        self._sync()
        pyglet.gl.glClearColor(*BACKGROUND)
        self.clear()
        if self.view3d.active:
            self.view3d.draw(self.scene, self.link.frame, self.link)
        else:
            self.view = Mat4(*self.camera.matrix())
            self.scene.draw()
            self.view = Mat4()
        self._gui()
        self.frames += 1

    def _sync(self) -> None:
        """Bring the scene up to the link's latest layout and frame."""
        link = self.link
        if link.generation != self._generation:
            self._generation, self._fit_pending = link.generation, True
        layout = link.layout
        if layout is not None:
            self.scene.set_layout(layout)
            self._fit_pending |= self.view3d.sync(layout)
            if self._fit_pending:
                self.fit()
        self.scene.set_scale(self.camera.scale, self.camera.angle)
        self.scene.update(link.frame, flat=not self.view3d.active)
        self.status_parts = status_parts(link)
        self.status_text = status_text(self.status_parts)
        self.teleop.tick()  # the gamepad, while driving

    def _gui(self) -> None:
        io = imgui.get_io()
        now = time.monotonic()
        io.delta_time = max(1e-3, now - self._last_gui)
        self._last_gui = now
        imgui.new_frame()
        self.menu.draw()
        top = self.menu.height
        if self.link.playback is None:
            self.controls.draw(top)
        for manager in self.managers.values():
            manager.draw()
        self.squads.draw(top)
        self.teleop.draw(top)
        draw_game(self.scene, self.cam, self.link.run, self.link.layout)
        status = draw_status(self.status_parts, self.notice, self.width, self.height, self.ui)
        self.timeline.draw(self.height - max(status, STATUS_HEIGHT), self.width)
        if self.view3d.active:
            self.view3d.draw_names(self.scene, self.show_names)
        else:
            draw_names(self.scene, self.camera, self.show_names)
        if not self.view3d.active:  # the top view's altitude aid; the 3D view shows heights
            self.side.draw(self.scene, self.link.layout, (self.width, self.height),
                           max(status, STATUS_HEIGHT) + self.timeline_height())
        draw_disconnected(self.link, self.width, self.height)
        imgui.render()
        self.gui.render(imgui.get_draw_data())

    def timeline_height(self) -> float:
        """Pixels the replay timeline takes above the status bar (0 in a live run)."""
        return TIMELINE_HEIGHT if self.link.playback is not None else 0.0

    @property
    def cam(self):
        """The camera of the view shown (2D top view or 3D)."""
        return self.view3d.camera if self.view3d.active else self.camera

    def fit(self) -> None:
        """Fit the floor into the window between the bars, unturned (3D: from the front)."""
        self.view3d.camera.resize(self.width, self.height)
        self.view3d.fit(self.scene)
        length, width = self.scene.floor
        if length <= 0 or width <= 0:
            return
        bottom = STATUS_HEIGHT + self.timeline_height()
        self.camera.resize(self.width, self.height)
        menu = self.menu.height or MENU_HEIGHT  # not measured before the first frame
        right = SQUADS_WIDTH if self.squads.squads() else 0.0  # the panel's band stays clear
        self.camera.fit(length, width, top=int(menu + CONTROLS_HEIGHT),
                        bottom=int(bottom), right=int(right))
        self._fit_pending = False

    def fit_soon(self) -> None:
        """Fit again once the next layout has arrived (after a load)."""
        self._fit_pending = True

    # -- recordings ---------------------------------------------------------------------------

    def open_recording(self, path: str, outcome: Outcome) -> None:
        """Start ``coopsim replay path`` and show it in this window."""
        proc = ReplayProcess(path)

        def opened(endpoint: str) -> None:
            if self.replay is not None:
                self.replay.stop()
            self.replay = proc
            self.link.switch(endpoint)  # the replay child serves on loopback, without Curve
            self.menu.dialogs["recording"].open = False
            self.notice.text, self.notice.error = f"replaying {Path(path).name}", False

        outcome.start(proc.start(), f"opened {Path(path).name}", opened)

    def back_to_live(self) -> None:
        """Stop the replay this window started and follow the live run again."""
        if self.replay is not None:
            self.replay.stop()
            self.replay = None
        self.link.switch(self.live_endpoint, self.live_keys)
        self.notice.text, self.notice.error = "back to the live run", False

    # -- input ---------------------------------------------------------------------------------

    def _poke(self) -> None:
        self._busy_until = time.monotonic() + BUSY_FOR

    def _ui_wants_mouse(self) -> bool:
        return bool(imgui.get_io().want_capture_mouse)

    def on_mouse_motion(self, x, y, dx, dy):
        self._poke()

    def on_mouse_press(self, x, y, button, modifiers):
        self._ui_drag = self._ui_wants_mouse()
        self._right_press = (x, y) if button == mouse.RIGHT and not self._ui_drag else None
        self._left_press = (x, y) if button == mouse.LEFT and not self._ui_drag else None
        self._poke()

    def on_mouse_release(self, x, y, button, modifiers):
        self._ui_drag = False
        start, self._right_press = self._right_press, None
        if button == mouse.RIGHT and start is not None and \
                max(abs(x - start[0]), abs(y - start[1])) <= CLICK_SLOP:
            self.squads.right_click(*self.cam.to_world(x, y), self.link.run)
        left, self._left_press = self._left_press, None
        if button == mouse.LEFT and left is not None and self.view3d.active and \
                max(abs(x - left[0]), abs(y - left[1])) <= CLICK_SLOP:
            self.view3d.click(x, y)
        self._poke()

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self._poke()
        if self._ui_drag:
            return
        if self.view3d.active:
            self.view3d.drag(dx, dy, buttons)
        elif buttons & mouse.LEFT:
            self.camera.rotate(x, y, dx, dy)
        elif buttons & mouse.RIGHT:
            self.camera.pan(dx, dy)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self._poke()
        if not self._ui_wants_mouse():
            self.cam.zoom(x, y, scroll_y)

    def on_text(self, text):
        self._poke()

    def on_key_press(self, symbol, modifiers):
        self._poke()
        if symbol == key.Q and modifiers & key.MOD_CTRL:
            self.close()
            return
        if imgui.get_io().want_capture_keyboard:
            return  # the user is typing into a field
        replay = self.link.playback is not None
        actions = {key.F: self.fit,
                   key.SPACE: self.timeline.toggle if replay else self.controls.toggle,
                   key.PERIOD: self.controls.step,
                   key.S: lambda: setattr(self.scene, "show_rays", not self.scene.show_rays),
                   key.N: lambda: setattr(self, "show_names", not self.show_names),
                   key.V: self.side.cycle, key.TAB: self.view3d.toggle,
                   key.C: lambda: self._say(self.view3d.toggle_follow())}
        action = actions.get(symbol)
        if action is not None and not (replay and symbol == key.PERIOD):
            action()

    def _say(self, text: str) -> None:
        self.notice.text, self.notice.error = text, False

    def on_resize(self, width, height):
        super().on_resize(width, height)
        self.camera.resize(width, height)
        self.view3d.camera.resize(width, height)
        self._poke()

    def on_draw(self):
        pass  # frames are drawn by _tick at the viewer's own rate

    # -- the loop ------------------------------------------------------------------------------

    def _tick(self, _dt: float) -> None:
        if QUIT.is_set():
            self.close()
            return
        now = time.monotonic()
        period = 1.0 / self.fps
        if now < self._busy_until:
            period = min(period, 1.0 / BUSY_FPS)
        if now - self._last_frame >= period * 0.95:
            self._last_frame = now
            self.render()
            self.flip()

    def run(self) -> None:
        """Show frames until the window is closed."""
        pyglet.clock.schedule_interval(self._tick, 1.0 / max(self.fps, BUSY_FPS))
        pyglet.app.run(None)

    def close(self) -> None:
        """Close the window, the replay it started, and the link."""
        if self.closed:
            return
        self.closed = True
        pyglet.clock.unschedule(self._tick)
        self.teleop.stop()  # the robot goes back to its controller
        if self.replay is not None:
            self.replay.stop()
        self.link.close()
        self.view3d.close()
        self.gui.shutdown()
        imgui.destroy_context()
        super().close()


def main(nameserver: str, fps: float = 10.0, keys=None) -> int:
    """Run the viewer until its window is closed (or SIGTERM / SIGINT ask it to close: install
    :func:`coopsim.viewer.quit_on_signals` first).

    Returns:
        0: the window was closed on purpose (``coopsim run --gui`` then ends the run).
    """
    lower_priority()  # before the window: Mesa's threads inherit it
    try:
        viewer = Viewer(nameserver, fps, keys=keys)
    except (pyglet.window.NoSuchDisplayException, pyglet.gl.ContextException) as exc:
        raise ViewerError(f"cannot open the viewer window: {exc}") from None
    print(f"viewer: showing {nameserver}", file=sys.stderr, flush=True)
    viewer.run()
    return 0
