"""The player: a playback position over a recording, moved by the wall clock times a speed.

:class:`Player` shows one recorded step at a time as the :class:`~coopsim.model.snapshot.Snapshot` a
live run would have had (the readings the recording keeps), so the servers and the state stream of
:mod:`coopsim.replay.servers` answer from it exactly as they do from a stepper. Its thread advances the
position while playing and hands the current snapshot to a publisher (about every 0.01 s while
playing, every 0.1 s while paused, as a paused live run does). Seeks decode one chunk (see
:mod:`coopsim.recording.reader`).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from types import MappingProxyType

import numpy as np

from ..net import protocol as p
from ..model.errors import ProtocolError, RecordingError
from ..model.limits import shown
from ..model.linkposes import COLUMNS as LINK_COLUMNS
from ..recording.reader import Recording
from ..model.armstate import ANGLE_COLUMNS
from ..model.capabilities import Recordable, capability
from ..model.plugins import CARRIED, MODULES, carried_modules
from ..model.snapshot import Snapshot, frozen
from ..model.specs import TargetSpec
from ..model.steering import Feedback
from ..sim.describe import posed_layout
from ..sim.stepper import Stats

log = logging.getLogger(__name__)

MODE = "playback"
MODE_INDEX = 2  # /sim status params[2]: 0 realtime, 1 lockstep, 2 playback
SPEED_LIMITS = (0.01, 1000.0)  # |speed| bounds of the playback speed factor
_PLAY_PERIOD = 0.01  # s between position updates while playing
_IDLE_PERIOD = 0.1  # s between state messages while paused (as a paused live run)


class Player:
    """The playback position over a recording, and the thread that advances it.

    Args:
        recording: The open recording.
        speed: Playback speed factor (negative plays backwards).
        paused: Start paused instead of playing.
        exit_at_end: Set :attr:`finished` when playing reaches either end, or stops at damage.

    A damaged recording plays its readable part: the steps before its first damaged chunk
    (:meth:`~coopsim.recording.reader.Recording.keep_readable`, which reads the file once);
    playing into the damage stops there with :attr:`error` saying where.

    Raises:
        RecordingError: no step comes before the first damaged chunk.
    """

    def __init__(self, recording: Recording, speed: float = 1.0, paused: bool = False,
                 exit_at_end: bool = False) -> None:
        self.recording = recording
        self.publish = lambda snap, force=False: None  # set by Replay
        self.finished = threading.Event()
        self.exit_at_end = exit_at_end
        self.error = ""  # why playing stopped by itself (a damaged chunk), as /sim state shows
        self.damage = recording.keep_readable()  # start, end and frame_count: the readable part
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="coopsim-player", daemon=True)
        self._cols = {c.name: i for i, c in enumerate(recording.robot_columns)}
        self._layout: tuple[int, dict, tuple] | None = None
        self.speed = _check_speed(speed)
        self.playing = not paused
        self.jumps = 0  # seeks, steps and restarts so far: the Foxglove bridge announces them
        self._wall = 0.0  # s of wall time spent playing, up to _wall_mark
        self._wall_mark = time.monotonic()  # when playing last started
        self._anchor = (recording.start, time.monotonic())  # (position, wall) of the last change
        self._show(recording.frame(0))

    # -- state (any thread) ---------------------------------------------------------------------

    @property
    def dt(self) -> float:
        """The physics step of the step shown, s (the recording's first dt for old files)."""
        return self.frame.dt or self.recording.dt

    @property
    def position(self) -> float:
        """Recording time of the frame shown, s."""
        return self.frame.position

    def stats(self) -> Stats:
        """Figures in the stepper's form, for the state stream and /sim status."""
        with self._lock:
            frame = self.frame
            return Stats(frame.step, frame.time, self._wall_time(), self.rtf(), 0, MODE,
                         self.speed, not self.playing, ())

    def rtf(self) -> float:
        """The playback's real-time factor: the speed while playing, else 0."""
        return self.speed if self.playing else 0.0

    def play(self) -> str:
        """Play from the current position (from the other end when already at the end)."""
        with self._lock:
            rec, text = self.recording, "playing"
            if self.speed > 0 and self.frame.index == rec.frame_count - 1:
                self._show(rec.frame(0))
                self.jumps += 1
                text = "playing from the start"
            elif self.speed < 0 and self.frame.index == 0:
                self._show(rec.frame(rec.frame_count - 1))
                self.jumps += 1
                text = "playing backwards from the end"
            if not self.playing:
                self._wall_mark = time.monotonic()
            self.playing, self.error = True, ""  # playing again: no longer stopped by itself
            self._reanchor(self.frame.position)
        self._wake.set()
        return text

    def pause(self) -> None:
        """Stop at the current frame."""
        with self._lock:
            if self.playing:
                self._wall += time.monotonic() - self._wall_mark
                self._reanchor(self.frame.position)
            self.playing = False
        self._wake.set()

    def seek(self, position: float) -> str:
        """Show the last frame at or before ``position`` s; return a sentence (says if clamped)."""
        rec = self.recording
        clamped = min(max(position, rec.start), rec.end)
        with self._lock:
            self._show(rec.frame_at(clamped))
            self._reanchor(clamped)
            self.jumps += 1
        self._wake.set()
        if clamped != position:
            return (f"{position:g} s is outside the recording ({rec.start:g} .. {rec.end:g} s); "
                    f"clamped to {clamped:g} s")
        return f"at {self.frame.position:g} s"

    def step(self, n: int) -> str:
        """Pause and move ``n`` recorded steps (negative: back); return a sentence."""
        self.pause()
        with self._lock:
            target = self.frame.index + n
            last = self.recording.frame_count - 1
            self._show(self.recording.frame(target))
            self._reanchor(self.frame.position)
            self.jumps += 1
        self._wake.set()
        if not 0 <= target <= last:
            edge = "first" if target < 0 else "last"
            return f"stepped {n:+d}: clamped at the {edge} recorded step"
        return f"stepped {n:+d}"

    def set_speed(self, speed: float) -> None:
        """Change the speed factor (negative plays backwards)."""
        speed = _check_speed(speed)
        with self._lock:
            self._reanchor(self._position_now())  # the time played so far at the old speed
            self.speed = speed
        self._wake.set()

    def status(self) -> tuple:
        """(frame shown, paused, speed, state sentence), taken together."""
        with self._lock:
            return self.frame, not self.playing, self.speed, self._state_text()

    def _state_text(self) -> str:
        if self.playing:
            return "playing" if self.speed > 0 else "playing backwards"
        if self.frame.index == self.recording.frame_count - 1:
            return "at the end"
        return "at the start" if self.frame.index == 0 else "paused"

    def layout(self) -> dict:
        """The current layout as ``/sim`` state shows it: poses of the frame shown."""
        with self._lock:
            snap, layout = self.snapshot, self._layout[1]
        return posed_layout(layout, snap)

    # -- thread ---------------------------------------------------------------------------------

    def start(self) -> "Player":
        """Start advancing and publishing."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the thread."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(2.0)

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                if self.playing:
                    try:
                        self._advance()
                    except RecordingError as exc:  # a damaged chunk: stop on the last good step
                        self._stopped(f"playback stopped: {exc}")
                snap, playing = self.snapshot, self.playing
            self.publish(snap, force=not playing)
            self._wake.wait(_PLAY_PERIOD if playing else _IDLE_PERIOD)
            self._wake.clear()

    def _advance(self) -> None:
        rec = self.recording
        position = self._position_now()
        if rec.start < position < rec.end:
            frame = rec.frame_at(position)
            if frame.index != self.frame.index:
                self._show(frame)
            return
        self._show(rec.frame(rec.frame_count - 1 if position >= rec.end else 0))
        if position >= rec.end and self.damage and self.speed > 0:
            self._stopped(f"playback stopped at {rec.end:g} s, before the damage: "
                          f"{self.damage[0].describe()}")
            return
        self.pause()
        if self.exit_at_end:
            self.finished.set()

    def _stopped(self, why: str) -> None:
        """Playing stopped by itself at damage: pause on the last good step and say why (in
        /sim state); with exit_at_end the replay ends (exit status 2)."""
        log.error("%s", why)
        self.error = why
        self.pause()
        if self.exit_at_end:
            self.finished.set()

    def _position_now(self) -> float:
        position, wall = self._anchor
        if not self.playing:
            return position
        return position + (time.monotonic() - wall) * self.speed

    def _reanchor(self, position: float) -> None:
        self._anchor = (position, time.monotonic())

    def _wall_time(self) -> float:
        return self._wall + (time.monotonic() - self._wall_mark if self.playing else 0.0)

    def _show(self, frame) -> None:
        """Make ``frame`` the current one and build its snapshot."""
        if self._layout is None or self._layout[0] != frame.layout:
            layout = self.recording.layout(frame.layout)
            self._layout = (frame.layout, layout, _names(layout))
        self.frame = frame
        values = self.recording.robot_values(frame)
        self.snapshot = _snapshot(frame, values, self._layout[2], self._cols)


def _check_speed(speed: float) -> float:
    lo, hi = SPEED_LIMITS
    if not lo <= abs(speed) <= hi:
        raise ProtocolError(p.OUT_OF_RANGE, f"playback speed must be {lo:g}..{hi:g} in size "
                                            f"(negative plays backwards), not "
                                            f"{shown(speed, lo, hi, -lo, -hi)}")
    return float(speed)


def _names(layout: dict) -> tuple:
    """(robots, objects, parts, targets, the snapshot's ``extra``) of a recorded layout; the
    extra names the modules its robots carry (the state stream's columns: protocol 8)."""
    targets = tuple(TargetSpec(t["color"], (t["x"], t["y"], t["z"]))
                    for t in layout.get("targets", ()))
    robots = layout.get("robots", ())
    # a layout naming no robot's modules streams every column, as before protocol 8
    extra = {CARRIED: carried_modules(r["modules"] for r in robots)} \
        if all("modules" in r for r in robots) else {}
    return (tuple(r["name"] for r in robots),
            tuple(o["name"] for o in layout.get("objects", ())),
            tuple(b["name"] for b in layout.get("parts", ())), targets, extra)


def _module_arrays(values: np.ndarray, cols: dict) -> tuple[dict, dict]:
    """Readings and commands of the modules whose every field the recording has, as the
    live snapshot holds them (sonar distances, wheel commands...); and the reading of the
    module recording the arm angles (:data:`~coopsim.model.armstate.ANGLE_COLUMNS`), whose
    angles alone are recorded (its other fields NaN): what draws an arm."""
    readings, commands = {}, {}
    for label, module in MODULES.items():
        recorded = capability(module, Recordable, default=True).columns
        for source, names, out in (("reading", module.fields, readings),
                                   ("command", module.command_fields, commands)):
            by_field = {c.field: c.name for c in recorded if c.source == source}
            if names and all(by_field.get(i) in cols for i in range(len(names))):
                out[label] = frozen(values[:, [cols[by_field[i]] for i in
                                               range(len(names))]].copy())
            elif source == "reading" and names and any(
                    name in cols and (name in ANGLE_COLUMNS or name in LINK_COLUMNS)
                    for name in by_field.values()):  # a described robot's links (posture)
                out[label] = _partial(values, cols, by_field, len(names))
    return readings, commands


def _partial(values: np.ndarray, cols: dict, by_field: dict, width: int) -> np.ndarray:
    """(N, width) reading with the recorded fields filled in and NaN elsewhere."""
    out = np.full((len(values), width), np.nan)
    for i, name in by_field.items():
        if i < width and name in cols:
            out[:, i] = values[:, cols[name]]
    return frozen(out)


def _snapshot(frame, values, names: tuple, cols: dict) -> Snapshot:
    """The frame as the Snapshot a live run would have had (readings: the recorded ones;
    ``values`` the frame's robot values, NaN for modules a robot lacks)."""
    robots, objects, parts, targets, extra = names
    if len(robots) != len(values) or len(objects) + len(parts) != len(frame.bodies):
        raise RecordingError(f"recorded step {frame.index} does not match its layout "
                             f"({len(values)} robots, layout {frame.layout} has {len(robots)})")
    pick = lambda *keys: frozen(values[:, [cols[k] for k in keys]].copy())  # noqa: E731
    readings, commands = _module_arrays(values, cols)
    m = len(objects)
    return Snapshot(
        step=frame.step, time=frame.time, robots=robots, poses=pick("x", "y", "yaw"),
        velocities=pick("vx", "vy", "omega"), commands=commands, readings=readings,
        fields={label: MODULES.get(label).fields for label in readings},
        objects=objects, object_poses=frozen(np.array(frame.bodies[:m])),
        parts=parts, part_poses=frozen(np.array(frame.bodies[m:])), targets=targets,
        layout_version=frame.layout, index={n: i for i, n in enumerate(robots)},
        rules=frame.rules, extra=_with_feedback(extra, frame), pose3d=frame.pose3d,
        twist3d=frame.twist3d,  # 3D
        object_pose3d=getattr(frame, "object_pose3d", None))  # format 5: objects in 3D


def _with_feedback(extra: dict, frame) -> dict:
    """``extra`` with shared control's board as the live run had it (recording format 7):
    ``feedback`` (squad -> Feedback) and ``steer`` (squad -> the Steer that step flew); as is
    when the step recorded none.

    Raises:
        RecordingError: a recorded feedback entry that is not a row of numbers.
    """
    rows = getattr(frame, "feedback", None)
    if not rows:
        return extra
    try:
        board = {str(name): Feedback.of_row(str(name), row) for name, row in rows.items()}
    except (AttributeError, TypeError, ValueError):
        raise RecordingError(f"bad recorded block: step {frame.index}'s shared-control "
                             "feedback is not rows of numbers") from None
    steers = {name: fb.steer_command() for name, fb in board.items() if fb.seq}
    return {**extra, "feedback": MappingProxyType(board), "steer": MappingProxyType(steers)}


def recorded_steps(recording: Recording):
    """Every recorded step in order as (frame, its layout document, the Snapshot a live run
    would have had), one chunk in memory at a time (the Foxglove export, plots)."""
    cols = {c.name: i for i, c in enumerate(recording.robot_columns)}
    current = None
    boards: dict = {}  # module label -> its board as the recorded steps rebuild it
    for frame in recording.iter_frames():
        if current is None or current[0] != frame.layout:
            layout = recording.layout(frame.layout)
            current = (frame.layout, layout, _names(layout))
        snap = _snapshot(frame, recording.robot_values(frame), current[2], cols)
        for label in set(frame.modules) | set(boards):
            if label in MODULES:
                recordable = capability(MODULES.get(label), Recordable, default=True)
                boards[label] = recordable.replay(frame.modules.get(label), boards.get(label),
                                                  snap.robots)
        if any(b is not None for b in boards.values()):
            snap = replace(snap, extra={**snap.extra, **{k: v for k, v in boards.items()
                                                        if v is not None}})
        yield frame, current[1], snap
