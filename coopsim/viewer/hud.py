"""The heads-up parts: run controls, the status bar, the replay timeline, robot names and the
"disconnected" notice.

Controls talk to ``/sim`` (live runs); the timeline talks to ``/playback`` (replays). Which one
shows depends only on whether the name server has ``/playback``.
"""

from __future__ import annotations

from imgui_bundle import imgui

from .connection import LOAD_TIMEOUT
from .forms import Request, speed_request
from .ui import DIM_COLOR, ERROR_COLOR, Outcome, Ui

_BAR = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.no_move
        | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.always_auto_resize
        | imgui.WindowFlags_.no_focus_on_appearing)
MODES = ("realtime", "lockstep")
LABEL_MIN_RADIUS = 6.0  # px: names show once a robot is at least this large on screen


def status_line(link) -> str:
    """The status bar's text: time, real-time factor, misses, mode, controllers, connection,
    and why the recording failed, if it did (the state's ``recording_error``)."""
    if not link.connected:
        return f"disconnected from {link.nameserver}: {link.error}; retrying"
    frame = link.frame
    if frame is None:
        return f"connected to {link.nameserver}; waiting for the state stream"
    paused = "  paused" if frame.paused else ""
    line = (f"t = {frame.time:.2f} s   rtf {frame.rtf:.2f}   missed {frame.missed}   "
            f"{frame.mode}{paused}   speed {_speed(frame.speed)}   "
            f"attached controllers {frame.attached}   {link.nameserver}")
    failed = (link.layout or {}).get("recording_error")
    return f"{line}   | {failed}" if failed else line


def _speed(speed: float) -> str:
    return "max" if speed == 0 else f"{speed:g}x"


class Controls:
    """Play/pause, single step, reset, realtime/lockstep and the speed factor (``/sim``)."""

    def __init__(self, ui: Ui) -> None:
        self.ui = ui
        self.speed = "1"
        self.outcome = Outcome()

    def draw(self, top: float) -> None:
        """Draw the bar just below the menu bar (``top`` px from the window's top)."""
        frame = self.ui.link.frame
        imgui.set_next_window_pos(imgui.ImVec2(6.0, top + 4.0))
        imgui.begin("##controls", None, _BAR)
        paused = frame.paused if frame is not None else False
        if self.ui.button("Resume" if paused else "Pause", "controls.play"):
            self.toggle()
        imgui.same_line()
        if self.ui.button("Step", "controls.step"):
            self.ui.send(Request("step", params=(1,)), self.outcome, "stepped")
        imgui.same_line()
        if self.ui.button("Reset", "controls.reset"):
            self.ui.send(Request("reset"), self.outcome, "reset to the scenario and its seed",
                         timeout=LOAD_TIMEOUT)
        imgui.same_line()
        self._mode(frame.mode if frame is not None else "")
        imgui.same_line()
        self.speed = self.ui.field("##controls.speed", "controls.speed", self.speed, 60.0)
        imgui.same_line()
        if self.ui.button("Set speed", "controls.set_speed"):
            self.ui.submit(lambda: speed_request(self.speed), self.outcome,
                           f"speed {self.speed.strip()}x")
        self.outcome.show()
        imgui.end()

    def _mode(self, mode: str) -> None:
        for name in MODES:
            if imgui.radio_button(name, mode == name) and mode != name:
                self.ui.send(Request("set_mode", name), self.outcome, f"mode {name}")
            self.ui.mark(f"controls.{name}")
            imgui.same_line()

    def toggle(self) -> None:
        """Pause a running simulation, resume a paused one."""
        frame = self.ui.link.frame
        paused = frame.paused if frame is not None else False
        self.ui.send(Request("resume" if paused else "pause"), self.outcome,
                     "resumed" if paused else "paused")

    def step(self) -> None:
        """One step (pauses first)."""
        self.ui.send(Request("step", params=(1,)), self.outcome, "stepped")


class Timeline:
    """A replay's play/pause, step, speed and scrub bar (``/playback``)."""

    def __init__(self, ui: Ui) -> None:
        self.ui = ui
        self.speed = "1"
        self.outcome = Outcome()
        self.wanted: float | None = None  # where the user is dragging to
        self._seeking = Outcome()
        self._sent: float | None = None
        self._landing = None  # (status seen when a seek landed, the time it landed at)
        self.shown = 0.0  # the time the scrub bar shows, s

    def draw(self, bottom: float, width: float) -> None:
        """Draw the timeline with its lower edge ``bottom`` px from the window's top."""
        pb = self.ui.link.playback
        if pb is None:
            return
        imgui.set_next_window_pos(imgui.ImVec2(0.0, bottom), imgui.Cond_.always,
                                  imgui.ImVec2(0.0, 1.0))
        imgui.set_next_window_size(imgui.ImVec2(width, 0.0))
        flags = _BAR & ~imgui.WindowFlags_.always_auto_resize
        imgui.begin("##timeline", None, flags)
        if self.ui.button("Pause" if pb.playing else "Play", "timeline.play"):
            self.toggle()
        for label, n in (("<", -1), (">", 1)):
            imgui.same_line()
            if self.ui.button(f"{label}##timeline", f"timeline.step{n:+d}"):
                self.ui.send(Request("step", params=(n,), service="/playback"), self.outcome,
                             "stepped back" if n < 0 else "stepped")
        imgui.same_line()
        self.speed = self.ui.field("##timeline.speed", "timeline.speed", self.speed, 50.0)
        imgui.same_line()
        if self.ui.button("Set speed", "timeline.set_speed"):
            self.ui.submit(lambda: _playback_speed(self.speed), self.outcome,
                           f"speed {self.speed.strip()}x")
        imgui.same_line()
        self._scrub(pb)
        self.outcome.show()
        imgui.end()

    def toggle(self) -> None:
        """Pause a playing replay, play a paused one."""
        pb = self.ui.link.playback
        if pb is not None:
            self.ui.send(Request("pause" if pb.playing else "play", service="/playback"),
                         self.outcome, "paused" if pb.playing else "playing")

    def _scrub(self, pb) -> None:
        self._seeking.poll()
        end = max(pb.end, pb.start + 1e-6)
        shown = self.wanted if self.wanted is not None else self._position(pb)
        imgui.set_next_item_width(-1.0)
        changed, value = imgui.slider_float("##timeline.scrub", float(shown), pb.start, end,
                                            f"%.2f s of {pb.start:.2f}-{pb.end:.2f} s")
        self.ui.mark("timeline.scrub")
        if changed:
            self.wanted = min(max(value, pb.start), end)
        if self.wanted is not None and self._seeking.pending is None:
            if self.wanted != self._sent:
                self._seek(self.wanted)
            elif not imgui.is_item_active():
                self.wanted = None  # the drag is over and its last seek answered
                self._landing = (pb, self._sent)
        self.shown = self.wanted if self.wanted is not None else self._position(pb)

    def _position(self, pb) -> float:
        """Where the replay is: the seek just answered until a status newer than it arrives (the
        status in hand was polled before the seek and would jump the bar back)."""
        if self._landing is not None and self._landing[0] is pb:
            return self._landing[1]
        self._landing = None
        return pb.position

    def _seek(self, t: float) -> None:
        self._sent = t
        self.ui.send(Request("seek", data=(t,), service="/playback"), self._seeking,
                     f"at {t:.2f} s")


def _playback_speed(text: str) -> Request:
    request = speed_request(text)
    return Request("set_speed", data=request.data, service="/playback")


def draw_status(text: str, connected: bool, notice: Outcome, width: float,
                height: float) -> None:
    """The status bar along the bottom edge, with the latest menu action's outcome."""
    imgui.set_next_window_pos(imgui.ImVec2(0.0, height), imgui.Cond_.always,
                              imgui.ImVec2(0.0, 1.0))
    imgui.set_next_window_size(imgui.ImVec2(width, 0.0))
    imgui.begin("##status", None, _BAR & ~imgui.WindowFlags_.always_auto_resize)
    imgui.text_colored(DIM_COLOR if connected else ERROR_COLOR, text)
    notice.poll()
    if notice.text:
        imgui.same_line()
        imgui.text_colored(ERROR_COLOR if notice.error else DIM_COLOR, "  | " + notice.text)
    imgui.end()


def draw_names(scene, camera, show: bool) -> None:
    """Robot names under each robot, once robots are large enough on screen to tell apart."""
    if not show or not len(scene.robot_names):
        return
    if camera.scale * float(scene.robot_radius.min()) < LABEL_MIN_RADIUS:
        return
    draw = imgui.get_background_draw_list()
    color = imgui.get_color_u32(imgui.ImVec4(0.05, 0.05, 0.05, 1.0))
    height = camera.height
    for name, (x, y), r in zip(scene.robot_names, scene.robot_xy, scene.robot_radius):
        px, py = camera.to_screen(x, y)
        size = imgui.calc_text_size(name)
        top = height - py + camera.scale * r + 2.0  # below the chassis (ImGui y goes down)
        draw.add_text(imgui.ImVec2(px - size.x / 2, top), color, name)


def draw_disconnected(link, width: float, height: float) -> None:
    """A large notice across the window while the simulation does not answer."""
    if link.connected:
        return
    draw = imgui.get_foreground_draw_list()
    text = "disconnected"
    sub = f"waiting for {link.nameserver}"
    draw.add_rect_filled(imgui.ImVec2(0, height / 2 - 40), imgui.ImVec2(width, height / 2 + 40),
                         imgui.get_color_u32(imgui.ImVec4(0.0, 0.0, 0.0, 0.6)))
    for line, scale, dy, color in ((text, 2.5, -34, ERROR_COLOR), (sub, 1.0, 12, DIM_COLOR)):
        size = imgui.calc_text_size(line)
        draw.add_text(imgui.get_font(), imgui.get_font_size() * scale,
                      imgui.ImVec2((width - size.x * scale) / 2, height / 2 + dy),
                      imgui.get_color_u32(color), line)

