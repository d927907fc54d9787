"""The heads-up parts: run controls, the status bar, the replay timeline, robot names and the
"disconnected" notice.

Controls talk to ``/sim`` (live runs); the timeline talks to ``/playback`` (replays). Which one
shows depends only on whether the name server has ``/playback``.
"""

from __future__ import annotations

import os

from imgui_bundle import imgui

from ..model.plugins import timed_events
from ..model.snapshot import realtime_broken, realtime_words
from .connection import LOAD_TIMEOUT
from .flight import AIRBORNE, altitude_text
from .forms import Request, speed_request
from .game import game_parts
from .ui import DIM_COLOR, ERROR_COLOR, Outcome, Ui

_BAR = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.no_move
        | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.always_auto_resize
        | imgui.WindowFlags_.no_focus_on_appearing)
MODES = ("realtime", "lockstep")
LABEL_MIN_RADIUS = 6.0  # px: names show once a robot is at least this large on screen
STATE_COLOR = imgui.ImVec4(1.0, 0.76, 0.3, 1.0)  # amber: the run is not simply running
REC_COLOR = imgui.ImVec4(1.0, 0.45, 0.45, 1.0)
_COLORS = {"plain": DIM_COLOR, "state": STATE_COLOR, "rec": REC_COLOR, "error": ERROR_COLOR}
_GAP = "   "
_NAMES_SHOWN = 3  # robots named in "waiting for ..." before "and N more"
_GRAB = 6.0  # px: half the scrub bar's grab, where its ends' values sit


def status_parts(link) -> list[tuple[str, str]]:
    """The status bar's pieces, (text, kind) with kind ``plain``, ``state``, ``rec`` or
    ``error``: the time, then what state the run is in (see :func:`run_badges`), then the
    real-time factor, misses, mode, speed, controllers and the name server followed."""
    if not link.connected:
        return [(f"disconnected from {link.nameserver}: {link.error}; retrying", "error")]
    run = getattr(link, "run", None) or {}
    # the latest state frame, else the state document's figures: a stalled or finished run
    # publishes no frame, and a window that connects then still shows where it stands
    frame = link.frame if link.frame is not None else _Figures.of(run)
    if frame is None:
        return [(f"connected to {link.nameserver}; waiting for the state stream", "plain")]
    figures = (f"rtf {frame.rtf:.2f} (whole run){_GAP}missed {frame.missed}{_GAP}{frame.mode}{_GAP}"
               f"speed {_speed(frame.speed)}{_GAP}{_controllers(frame, run)}{_GAP}"
               f"{link.nameserver}")
    late = getattr(frame, "late", 0.0)  # the state document's figures have none
    # over the last second of stepping (docs/protocol.md): a paused or finished run is not
    # stepping, and its last figures would say a broken real time long after the run stopped
    stepping = not frame.paused and not run.get("finished")
    rtf = getattr(frame, "recent_rtf", 0.0)
    words = realtime_words(late, rtf, frame.speed)  # the CLI's, its head in capitals
    broken = ([(words.replace("real time broken", "REAL TIME BROKEN", 1), "error")]
              if realtime_broken(late, rtf, frame.speed) and stepping else [])
    return [(f"t = {frame.time:.2f} s", "plain"), *run_badges(run, frame.paused), *broken,
            *game_parts(run), (figures, "plain")]


def _controllers(frame, run: dict) -> str:
    """How many robots controllers drive (they own them: any mode), and in lockstep how many
    controllers the steps wait for (attached); a realtime run attaches none."""
    driven = run.get("driven")
    if driven is None:  # an older server: the attached count only
        return f"attached controllers {frame.attached}"
    text = f"controllers drive {driven} robot(s)"
    return text + (f", {frame.attached} attached (lockstep)" if frame.mode == "lockstep" else "")


class _Figures:
    """A state frame's figures from the state document (see
    :func:`coopsim.viewer.connection.run_state`)."""

    def __init__(self, run: dict) -> None:
        self.time, self.rtf, self.speed = run["time"], run["rtf"], run["speed"]
        self.missed, self.mode, self.paused = run["missed"], run["mode"], run["paused"]
        self.attached = run.get("attached", 0)

    @classmethod
    def of(cls, run: dict) -> "_Figures | None":
        needed = ("time", "rtf", "speed", "missed", "mode", "paused")
        return cls(run) if all(k in run for k in needed) else None


def run_badges(run: dict, paused: bool) -> list[tuple[str, str]]:
    """What the run is doing besides stepping, from the state document's fields (see
    :func:`coopsim.viewer.connection.run_state`) and the stream's paused flag: FINISHED and
    why, PAUSED (with the failing step's reason when it paused itself), STALLED and whom it
    waits for, REC and the file, RECORDER ERROR."""
    out = []
    if run.get("finished"):
        out.append((f"FINISHED: {run['finished']}", "state"))
    elif run.get("error"):
        out.append((f"PAUSED: {run['error']}", "error"))
    elif paused:
        out.append(("PAUSED", "state"))
    elif run.get("waiting_for"):
        out.append((f"STALLED: waiting for {_names(run['waiting_for'])}", "state"))
    if run.get("stale"):  # external robots without poses for their timeout
        out.append((f"STALE: {_names(run['stale'])}", "error"))
    if run.get("recording"):
        out.append((f"REC {os.path.basename(run['recording'])}", "rec"))
    if run.get("recorder_error"):
        out.append((f"RECORDER ERROR: {run['recorder_error']}", "error"))
    return out


def status_text(parts: list[tuple[str, str]]) -> str:
    """The status bar's pieces as one string (what :func:`draw_status` shows in colours)."""
    return _GAP.join(text for text, _ in parts)


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def _speed(speed: float) -> str:
    return "max" if speed == 0 else f"{speed:g}x"


class SpeedField:
    """The text of a speed field, following the run's speed (``--speed 2``, another client's
    ``set_speed``) unless the user has typed something else and not set it yet."""

    def __init__(self) -> None:
        self.text = "1"
        self._synced = "1"  # the run's speed as last shown

    def follow(self, speed: float | None) -> None:
        """Show the run's ``speed`` (a factor, 0 = as fast as possible) when it changed."""
        if speed is None:
            return
        shown = f"{speed:g}"
        if shown != self._synced and self.text.strip() == self._synced:
            self.text = shown
        self._synced = shown


class Controls:
    """Play/pause, single step, reset, realtime/lockstep and the speed factor (``/sim``)."""

    def __init__(self, ui: Ui) -> None:
        self.ui = ui
        self._speed = SpeedField()
        self.outcome = Outcome()

    @property
    def speed(self) -> str:
        """The speed field's text."""
        return self._speed.text

    @speed.setter
    def speed(self, text: str) -> None:
        self._speed.text = text

    def draw(self, top: float) -> None:
        """Draw the bar just below the menu bar (``top`` px from the window's top). On a
        finished run Pause and Step cannot act: they are disabled, and Reset reads "Start
        over"."""
        frame = self._figures()
        imgui.set_next_window_pos(imgui.ImVec2(6.0, top + 4.0))
        imgui.begin("##controls", None, _BAR)
        paused = frame.paused if frame is not None else False
        finished = self.finished()
        play = "Finished" if finished else "Resume" if paused else "Pause"
        if self.ui.button(f"{play}###controls.play", "controls.play", enabled=not finished):
            self.toggle()
        self._why_disabled(finished)
        imgui.same_line()
        if self.ui.button("Step###controls.step", "controls.step", enabled=not finished):
            self.step()
        self._why_disabled(finished)
        imgui.same_line()
        reset = "Start over" if finished else "Reset"
        if self.ui.button(f"{reset}###controls.reset", "controls.reset"):
            self.ui.send(Request("reset"), self.outcome, "reset to the scenario and its seed",
                         timeout=LOAD_TIMEOUT)
        imgui.same_line()
        self._mode(frame.mode if frame is not None else "")
        imgui.same_line()
        self._speed.follow(frame.speed if frame is not None else None)
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

    def _figures(self):
        """The latest state frame, else the state document's figures (no frame comes while a
        run is stalled or finished)."""
        link = self.ui.link
        return link.frame if link.frame is not None else _Figures.of(
            getattr(link, "run", None) or {})

    def finished(self) -> str:
        """Why the run finished ("" while it goes on), as the state document says."""
        return (getattr(self.ui.link, "run", None) or {}).get("finished", "")

    def _why_disabled(self, finished: str) -> None:
        if finished and imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
            imgui.set_tooltip(f"the run has finished ({finished}); Start over resets it")

    def toggle(self) -> None:
        """Pause a running simulation, resume a paused one (a finished one: say so)."""
        if self._refuse_finished():
            return
        frame = self._figures()
        paused = frame.paused if frame is not None else False
        self.ui.send(Request("resume" if paused else "pause"), self.outcome,
                     "resumed" if paused else "paused")

    def step(self) -> None:
        """One step; a running simulation is paused first (/sim step takes steps of a paused
        run); a finished run: say so."""
        if self._refuse_finished():
            return
        frame = self.ui.link.frame
        one = Request("step", params=(1,))
        if frame is not None and frame.paused:
            self.ui.send(one, self.outcome, "stepped")
            return
        self.ui.send(Request("pause"), self.outcome, "paused",
                     then=lambda _reply: self.ui.send(one, self.outcome, "stepped"))

    def _refuse_finished(self) -> bool:
        why = self.finished()
        if why:
            self.outcome.fail(f"the run has finished ({why}); Start over (Reset) resets it")
        return bool(why)


class Timeline:
    """A replay's play/pause, step, speed and scrub bar (``/playback``)."""

    speed = Controls.speed

    def __init__(self, ui: Ui) -> None:
        self.ui = ui
        self._speed = SpeedField()
        self.outcome = Outcome()
        self.wanted: float | None = None  # where the user is dragging to
        self._seeking = Outcome()
        self._sent: float | None = None
        self._landing = None  # (status seen when a seek landed, the time it landed at)
        self.shown = 0.0  # the time the scrub bar shows, s
        self.ticks: list[float] = []  # x (px) of the event ticks drawn last

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
        self._speed.follow(pb.speed)
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
        """The position, the scrub bar, and the recording's span: the times are labels beside
        the bar, not text inside it, which its handle would cover as it moves."""
        self._seeking.poll()
        end = max(pb.end, pb.start + 1e-6)
        shown = self.wanted if self.wanted is not None else self._position(pb)
        here = imgui.get_cursor_pos_x()  # the position label keeps the width of the longest
        imgui.text(f"{shown:.2f} s")
        self.ui.mark("timeline.position")
        imgui.same_line(here + imgui.calc_text_size(f"{max(abs(pb.start), pb.end):.2f} s-").x)
        span = f"{pb.start:.2f}-{pb.end:.2f} s"
        gap = imgui.get_style().item_spacing.x
        imgui.set_next_item_width(-(imgui.calc_text_size(span).x + gap))
        changed, value = imgui.slider_float("##timeline.scrub", float(shown), pb.start, end, "")
        dragging = imgui.is_item_active()  # asked now: the next item is the span's text
        self.ui.mark("timeline.scrub")
        self._event_ticks(pb.start, end)
        imgui.same_line()
        imgui.text(span)
        self.ui.mark("timeline.end")
        if changed:
            self.wanted = min(max(value, pb.start), end)
        if self.wanted is not None and self._seeking.pending is None:
            if self.wanted != self._sent:
                self._seek(self.wanted)
            elif not dragging:
                self.wanted = None  # the drag is over and its last seek answered
                self._landing = (pb, self._sent)
        self.shown = self.wanted if self.wanted is not None else self._position(pb)

    def _event_ticks(self, start: float, end: float) -> None:
        """Small ticks under the scrub bar at the timed events' times (the scenario's
        [EVENT_n], from the state document's ``rules``)."""
        low, high = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        xs = tick_positions(event_times(self.ui.link.layout), start, end, low.x + _GRAB,
                            high.x - _GRAB)
        self.ticks = xs
        draw = imgui.get_window_draw_list()
        color = imgui.get_color_u32(imgui.ImVec4(1.0, 0.75, 0.2, 1.0))
        for x in xs:
            draw.add_line(imgui.ImVec2(x, high.y - 5.0), imgui.ImVec2(x, high.y), color, 2.0)

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


def event_times(layout) -> list[float]:
    """The timed events' times, s, from a ``/sim state`` document (``[]`` without events):
    the fields of the rules that declare a timeline (``Rule.timeline``)."""
    return [float(e["at"]) for e in timed_events((layout or {}).get("rules"))
            if e.get("at") is not None]


def tick_positions(times, start: float, end: float, left: float, right: float) -> list[float]:
    """x (px) of each time in [start, end] s on a bar from ``left`` to ``right`` px (the
    replay's position is the sim time when it starts at step 0, as a run's recording does)."""
    span = max(end - start, 1e-9)
    return [left + (t - start) / span * (right - left) for t in times if start <= t <= end]


def _playback_speed(text: str) -> Request:
    request = speed_request(text)
    return Request("set_speed", data=request.data, service="/playback")


def draw_status(parts: list[tuple[str, str]], notice: Outcome, width: float,
                height: float, ui: Ui | None = None) -> float:
    """The status bar along the bottom edge (``parts`` from :func:`status_parts`, each in its
    kind's colour, on more lines when they do not fit on one; marked ``status.<n>`` in
    ``ui``), with the latest menu action's outcome. Returns its height, px."""
    imgui.set_next_window_pos(imgui.ImVec2(0.0, height), imgui.Cond_.always,
                              imgui.ImVec2(0.0, 1.0))
    imgui.set_next_window_size(imgui.ImVec2(width, 0.0))
    imgui.begin("##status", None, _BAR & ~imgui.WindowFlags_.always_auto_resize)
    notice.poll()
    if notice.text:  # the latest menu action's outcome, after the figures
        parts = [*parts, ("| " + notice.text, "error" if notice.error else "plain")]
    right = imgui.get_cursor_screen_pos().x + imgui.get_content_region_avail().x
    gap = imgui.calc_text_size(_GAP).x
    for i, (text, kind) in enumerate(parts):
        if i and imgui.get_item_rect_max().x + gap + imgui.calc_text_size(text).x <= right:
            imgui.same_line(0.0, gap)  # else a new line: long badges push the figures down
        imgui.text_colored(_COLORS[kind], text)
        if ui is not None:
            ui.mark(f"status.{i}")
    bar = imgui.get_window_height()
    imgui.end()
    return bar


def draw_names(scene, camera, show: bool) -> None:
    """Robot names under each robot, once robots are large enough on screen to tell apart;
    in a 3D world each flying robot's label adds its altitude (``cf1 1.00 m``) and sits by
    its body where it is drawn (lifted, viewer/flight.py)."""
    if not show or not len(scene.robot_names) or len(scene.drawn_xy) != len(scene.robot_names):
        return
    radius = scene.robot_radius * scene.drawn_grow
    if camera.scale * float(radius.min()) < LABEL_MIN_RADIUS:
        return
    draw = imgui.get_background_draw_list()
    color = imgui.get_color_u32(imgui.ImVec4(0.05, 0.05, 0.05, 1.0))
    height = camera.height
    texts = label_texts(scene)
    labels = []
    for text, (x, y), r in zip(texts, scene.drawn_xy, radius):
        px, py = camera.to_screen(x, y)
        size = imgui.calc_text_size(text)
        labels.append(((px, height - py), camera.scale * r, (size.x, size.y)))  # ImGui y down
    for text, (left, top) in zip(texts, place_labels(labels)):
        draw.add_text(imgui.ImVec2(left, top), color, text)


def label_texts(scene, rows=None) -> list[str]:
    """Each robot's label (or those of the robots at indices ``rows``): its name, and in a
    3D world its altitude when it flies."""
    rows = range(len(scene.robot_names)) if rows is None else rows
    names = scene.robot_names
    if scene.altitude is None:
        return [names[i] for i in rows]
    return [f"{names[i]} {altitude_text(scene.altitude[i])}" if scene.altitude[i] > AIRBORNE
            else names[i] for i in rows]


def place_labels(labels) -> list[tuple[float, float]]:
    """Where each robot's name goes: below its chassis, else above, right or left of it,
    whichever first overlaps no name placed before (close robots' names do not print over
    each other); below when every place is taken.

    Args:
        labels: ((x, y) the robot's centre, its radius, (width, height) of its name), px, y
            down.

    Returns:
        The top-left corner of each name, px, y down.
    """
    placed: list[tuple[float, float, float, float]] = []
    out = []
    for (x, y), r, (w, h) in labels:
        spots = [(x - w / 2, y + r + 2.0), (x - w / 2, y - r - 2.0 - h),
                 (x + r + 3.0, y - h / 2), (x - r - 3.0 - w, y - h / 2)]
        free = [s for s in spots if not any(s[0] < b[2] and b[0] < s[0] + w and
                                            s[1] < b[3] and b[1] < s[1] + h for b in placed)]
        left, top = (free or spots)[0]
        placed.append((left, top, left + w, top + h))
        out.append((left, top))
    return out


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

