"""The recorder: a stepper hook that hands snapshots to a writer thread, which writes the MCAP file.

The hook runs on the stepper thread after each step and only appends a few array references to
a bounded queue, so the stepper never waits for the disk: when the queue is full the step is
dropped and counted. The writer thread wakes every 0.2 s (sooner when the queue is half full),
encodes what is queued in blocks of steps (see :mod:`coopsim.recording.format`), and finishes a chunk
and flushes the file every ``keyframe_every`` steps and at least every :data:`FLUSH_INTERVAL` s
of wall time, so after a crash the file holds everything up to the last second.

A write that fails (disk full, file size limit, file gone) stops the recording at once and is
said at once (one error line in the log, :attr:`Recorder.error_text` for ``/sim state``); the run
goes on. The counts stay exact: steps *written* (in chunks that reached the file), *dropped*
(the queue was full: the disk fell behind) and *lost* (queued or taken after the failure).
"""

from __future__ import annotations

import collections
import datetime
import json
import logging
import os
import re
import threading
import time
from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
from mcap.data_stream import RecordBuilder
from mcap.writer import CompressionType, IndexType, Writer

from . import format as rf
from .encoding import FrameEncoder
from ..model.errors import RecordingError
from ..model.capabilities import Recordable, capability, supplies
from ..model.plugins import MODULES, module_columns
from ..model.snapshot import Snapshot, column_values
from ..model.specs import ScenarioSpec, Settings

log = logging.getLogger(__name__)

# s of wall time between flushes at most; with the writer's 0.2 s polling, a step reaches the
# file within 1 s of being taken
FLUSH_INTERVAL = 0.75
KEYFRAME_EVERY = 100  # recorded steps per chunk at most (each chunk starts with a keyframe)
QUEUE_BYTES = 64 << 20  # snapshot data that may wait for the writer before steps are dropped
_POLL = 0.2  # s: how often the writer thread drains the queue
_CHUNK_BYTES = 8 << 20  # finish a chunk before its uncompressed size passes this
_NEVER = 1 << 62  # chunk size handed to mcap's Writer: chunks are finished here, not there


def default_path(scenario: ScenarioSpec, folder: str | os.PathLike = "recordings") -> Path:
    """``recordings/<scenario>-<UTC time>.mcap``, relative to the current folder."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", scenario.name or "scenario")
    return Path(folder) / f"{name}-{stamp}.mcap"


def _coopsim_version() -> str:
    try:
        return version("coopsim")
    except PackageNotFoundError:
        return "unknown"


class Recorder:
    """Records a run to an MCAP file; attach it to a stepper before the stepper starts.

    Args:
        path: Output file. Its folder is created and an existing file replaced, unless
            ``exclusive``: then the file must be new (created with O_EXCL, never through a
            symbolic link) and its folder must exist (a path a network request named).
        scenario: The run's scenario (its text and its world's text are stored).
        settings: The effective settings of the run.
        seed: The run's seed; dt: its step, s.
        every: Record every ``every``-th step (steps that change the layout are always recorded).
        keyframe_every: Recorded steps per chunk at most.
        queue_size: Steps that may wait for the writer before steps are dropped (default:
            as many as :data:`QUEUE_BYTES` of array data hold, at least 256).

    Raises:
        RecordingError: the file cannot be created, or its start (header, scenario) cannot be
            written (disk full): then no file is left behind.
    """

    def __init__(self, path: str | os.PathLike, scenario: ScenarioSpec, settings: Settings,
                 seed: int, dt: float, every: int = 1, keyframe_every: int = KEYFRAME_EVERY,
                 queue_size: int | None = None, exclusive: bool = False) -> None:
        if every < 1 or keyframe_every < 1:
            raise RecordingError("record interval and keyframe interval must be at least 1")
        self.path = Path(path)
        self.every, self.keyframe_every, self.dt = every, keyframe_every, dt
        self.dropped = 0  # steps the full queue refused (the disk fell behind)
        self.frames = 0  # steps written, once closed
        self.error: OSError | None = None
        self._accepted = 0  # steps queued for the writer
        self._after_error = 0  # steps taken after a write failed
        self._queue: collections.deque = collections.deque()
        self._queue_size = queue_size
        self._wake = threading.Event()  # set by the hook when the queue is half full
        self._layout_version = -1
        self._last_step = -1
        self._stepper = None
        self._stop = threading.Event()
        self._module_columns = module_columns()
        self._recorders = [(label, capability(m, Recordable)) for label, m in MODULES.items()
                           if supplies(m, Recordable, "record")]
        self._recorded_step = -1  # the last step queued (modules record what came since)
        columns = rf.robot_columns(self._module_columns)
        self._file, self._created = self._open(exclusive)
        try:
            self._writer = _start_writer(self._file, scenario, settings, seed, dt, every,
                                         keyframe_every, columns)
        except OSError as exc:
            self._discard()
            raise RecordingError(f"cannot record to {self.path}: {exc.strerror or exc} "
                                 "(nothing was recorded; the file was removed)") from None
        self._state = _WriterState(self._writer, keyframe_every, dt, columns)
        self._state.module_columns = self._module_columns
        self._thread = threading.Thread(target=self._run, name="coopsim-recorder", daemon=True)

    def _open(self, exclusive: bool):
        """The open file and whether this recorder created it."""
        try:
            if exclusive:
                flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0))
                return os.fdopen(os.open(self.path, flags, 0o644), "wb"), True
            self.path.parent.mkdir(parents=True, exist_ok=True)
            created = not self.path.exists()
            return open(self.path, "wb"), created
        except OSError as exc:
            raise RecordingError(f"cannot create the recording {self.path}: "
                                 f"{exc.strerror or exc}") from None

    def _discard(self) -> None:
        """Close the file and remove it, if this recorder created it and it is a regular file."""
        try:
            self._file.close()
        except OSError:
            pass  # the same full disk: the buffered bytes are lost with the file
        if self._created and self.path.is_file() and not self.path.is_symlink():
            self.path.unlink()

    @property
    def written(self) -> int:
        """Steps in chunks that reached the file."""
        return self._state.written

    @property
    def lost(self) -> int:
        """Steps lost to a write failure: queued but not written, or taken after it."""
        if self.error is None:
            return 0
        return self._accepted - self._state.written + self._after_error

    @property
    def error_text(self) -> str:
        """Why the recording stopped, one sentence ("" while it goes on)."""
        if self.error is None:
            return ""
        return (f"recording to {self.path} failed after {self._state.written} steps written: "
                f"{self.error.strerror or self.error}; the run goes on without recording")

    # -- stepper side ---------------------------------------------------------------------------

    def attach(self, stepper) -> "Recorder":
        """Record ``stepper``'s current state, hook onto its steps and start the writer thread.

        Call before the stepper starts (or from its thread): the layout is read from its World.
        """
        self._stepper = stepper
        self._last_step = stepper.snapshot.step
        if self._queue_size is None:
            self._queue_size = _queue_size(stepper.snapshot)
        self._enqueue(stepper.snapshot, force=True)
        stepper.hooks.append(self)
        self._thread.start()
        return self

    def __call__(self, snap: Snapshot) -> None:
        """The hook: queue this step if it is recorded (never blocks, never touches the disk)."""
        reset = snap.step <= self._last_step
        self._last_step = snap.step
        if snap.step % self.every and snap.layout_version == self._layout_version and not reset:
            return
        self._enqueue(snap, force=reset)

    def _enqueue(self, snap: Snapshot, force: bool) -> None:
        if self.error is not None:
            self._after_error += 1
            return
        waiting = len(self._queue)
        if waiting >= self._queue_size:
            self.dropped += 1
            return
        if waiting * 2 >= self._queue_size:
            self._wake.set()
        layout = None
        if force or snap.layout_version != self._layout_version:
            layout = self._stepper.sim.world.describe()  # on the stepper thread: consistent
            self._layout_version = snap.layout_version
        # the modules' columns are gathered on the writer's thread (_write_run), not here
        robots = (snap.poses, snap.velocities, snap)
        bodies = (snap.object_poses, snap.part_poses)
        counts = (len(snap.robots), len(snap.objects), len(snap.parts))
        dt = self._stepper.sim.dt  # on the stepper thread: the dt this step was taken with
        extra = {}
        after = self._recorded_step if snap.step > self._recorded_step else -1  # reset: anew
        for label, module in self._recorders:  # readings at their own rate (format 2)
            value = module.record(snap, after)
            if value is not None:
                extra[label] = value
        self._recorded_step = snap.step
        three = None if snap.pose3d is None else (snap.pose3d, snap.twist3d)  # format 4
        self._queue.append((snap.step, snap.time, robots, bodies, layout, counts, snap.rules,
                            dt, extra, three, snap.object_pose3d,  # objects in 3D: format 5
                            _feedback(snap)))  # shared control: format 7
        self._accepted += 1

    def close(self) -> None:
        """Stop recording, write what is queued, the end record and the summary; close.

        Closing twice is harmless.
        """
        if self._file.closed:
            return
        if self._stepper is not None and self in self._stepper.hooks:
            self._stepper.hooks.remove(self)
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()
        elif self.error is None:
            self._drain()
        if self.error is None:
            try:
                self._writer.add_metadata(rf.META_END, {
                    "frames": str(self._state.frames), "dropped": str(self.dropped),
                    "ended": _utc_now()})
                self._writer.finish()
                self._file.flush()
                self._state.written = self._state.frames
            except OSError as exc:
                self._failed(exc)
        try:
            self._file.close()
        except OSError as exc:  # the last buffered bytes did not fit either
            if self.error is None:
                self._failed(exc)
        self.frames = self._state.written
        if self.dropped:
            log.warning("recorder: %d step(s) dropped because the disk fell behind", self.dropped)

    def summary(self) -> str:
        """One line: where the recording went, steps written, dropped and lost to a failure."""
        line = f"recording: {self.frames} steps written to {self.path}"
        if self.dropped:
            line += f"; {self.dropped} dropped (the disk fell behind)"
        if self.error is not None:
            line += f"; {self.lost} lost when writing failed: {self.error.strerror or self.error}"
            if self.frames:
                line += f" ('coopsim repair {self.path}' indexes the steps written)"
        return line

    def _failed(self, exc: OSError) -> None:
        """Stop recording on a write failure and say so at once (the run goes on)."""
        self.error = exc
        self._queue.clear()
        log.error("%s", self.error_text)

    # -- writer thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(_POLL)
            self._wake.clear()
            self._drain()
            if self.error is not None:
                return
        self._drain()

    def _drain(self) -> None:
        try:
            items = []
            while self._queue:
                items.append(self._queue.popleft())
            self._state.write(items)
            self._state.flush_if_due()
        except OSError as exc:  # disk full, file gone: stop recording, keep the run going
            self._failed(exc)


class _WriterState:
    """Encoder, chunk boundaries and recording time; used by the writer thread only."""

    def __init__(self, writer: Writer, keyframe_every: int, dt: float, columns) -> None:
        self.writer, self.keyframe_every, self.dt = writer, keyframe_every, dt
        self.encoder = FrameEncoder(columns)
        self.frames = 0  # steps handed to the MCAP writer
        self.written = 0  # steps in chunks that reached the file
        self.blocks = 0  # /frames messages written
        self.layouts = 0
        self.in_chunk = 0
        self.chunk_bytes = 0
        self.module_columns: list = []  # the modules' (label, Column)s (column_values)
        self.offset = 0.0  # recording time - sim time, s (changes at each reset)
        self.last_ns = -1
        self.last_flush = time.monotonic()
        self.chunk_indexes = _PackedChunkIndexes()
        self.frames_id = writer.register_channel(
            rf.FRAMES_TOPIC, rf.ENCODING,
            writer.register_schema("coopsim.Frame", "jsonschema", rf.FRAME_SCHEMA.encode()))
        self.layout_id = writer.register_channel(
            rf.LAYOUT_TOPIC, rf.ENCODING,
            writer.register_schema("coopsim.Layout", "jsonschema", rf.LAYOUT_SCHEMA.encode()))

    def write(self, items: list) -> None:
        """Encode and add queued steps, in runs of one layout that fit in the current chunk."""
        i = 0
        while i < len(items):
            j = i + 1
            room = self.keyframe_every - self.in_chunk
            while j < len(items) and j - i < room and _same_layout(items[i], items[j]):
                j += 1
            self._write_run(items[i:j])
            i = j
            if self.in_chunk >= self.keyframe_every or self.chunk_bytes >= _CHUNK_BYTES:
                self.flush()

    def _write_run(self, run: list) -> None:
        """Steps with the same bodies, as one block; only the first may bring a new layout."""
        step, sim_time, _, _, layout, _, _, dt, _, three, _, _ = run[0]
        stamps = [self._log_time(item[1]) for item in run]
        if layout is not None:
            data = rf.encode_layout(self.layouts, step, sim_time, layout)
            self.writer.add_message(self.layout_id, stamps[0], data, stamps[0], self.layouts)
            self.layouts += 1
            self.chunk_bytes += len(data)
        columns = self.module_columns
        robots = _columns([(p, v, column_values(snap, columns)) for p, v, snap
                           in (item[2] for item in run)])
        bodies = _columns([item[3] for item in run], 3)
        data = self.encoder.encode(self.frames, [item[0] for item in run],
                                   [item[1] for item in run], stamps, self.layouts - 1, robots,
                                   bodies, key=self.in_chunk == 0 or layout is not None,
                                   rules=[item[6] for item in run], dt=dt,
                                   modules=[item[8] for item in run],
                                   three_d=None if three is None else _three_d(run),
                                   objects_3d=_objects_3d(run),
                                   feedback=[item[11] for item in run])
        self.writer.add_message(self.frames_id, stamps[0], data, stamps[0], self.blocks)
        self.blocks += 1
        self.frames += len(run)
        self.in_chunk += len(run)
        self.chunk_bytes += len(data)

    def _log_time(self, sim_time: float) -> int:
        """Recording time in ns: 0 at the first frame, then the sim time since, shifted so it
        keeps growing across resets."""
        if self.last_ns < 0:
            self.offset = -sim_time
        ns = round((sim_time + self.offset) * 1e9)
        if ns <= self.last_ns:
            self.offset = self.last_ns / 1e9 + self.dt - sim_time
            ns = round((sim_time + self.offset) * 1e9)
        self.last_ns = max(ns, self.last_ns + 1)
        return self.last_ns

    def flush_if_due(self) -> None:
        """Finish the chunk when it has waited :data:`FLUSH_INTERVAL` s."""
        if self.in_chunk and time.monotonic() - self.last_flush >= FLUSH_INTERVAL:
            self.flush()

    def flush(self) -> None:
        """Finish the chunk and push it to the file; the next frame is a keyframe."""
        self.writer.flush()  # finishes the chunk and flushes the file: a full disk raises here
        self.written = self.frames
        self.chunk_indexes.take(self.writer)
        self.in_chunk = self.chunk_bytes = 0
        self.last_flush = time.monotonic()


class _PackedChunkIndexes:
    """The chunk index records of the summary, kept serialized.

    mcap's Writer keeps one ChunkIndex object per chunk until it writes the summary: about
    680 bytes each, some 7 bytes per recorded step for ever. After each chunk this moves the new
    index into one bytearray (about 90 bytes a chunk) and leaves itself in the Writer's list in
    its place; ``finish`` calls :meth:`write` on it like on any record. With an mcap version
    whose Writer keeps its indexes elsewhere, nothing is moved.
    """

    def __init__(self) -> None:
        self.data = bytearray()

    def take(self, writer: Writer) -> None:
        """Serialize the indexes the Writer added since the last call; keep self in the list."""
        indexes = getattr(writer, "_Writer__chunk_indices", None)
        if not isinstance(indexes, list) or not indexes:
            return
        builder = RecordBuilder()
        for index in indexes:
            if index is not self:
                index.write(builder)
        self.data += builder.end()
        indexes[:] = [self]

    def write(self, stream: RecordBuilder) -> None:
        """Write every packed chunk index record (called by the Writer's ``finish``)."""
        stream.write(bytes(self.data))


def _columns(steps: list[tuple], width: int = 0) -> np.ndarray:
    """(C, F, n) column-major array of F steps, each a tuple of (n, k) arrays put side by side
    (``width``: k of arrays that may be empty). np.array builds each (F, n, k) group in one C
    call (np.stack loops in Python); the transposes make the copy column-major."""
    groups = [np.array([step[g] for step in steps]) for g in range(len(steps[0]))]
    if width:
        groups = [g.reshape(len(steps), -1, width) for g in groups]
        return np.concatenate([g.transpose(2, 0, 1) for g in groups], axis=2)
    return np.concatenate([g.transpose(2, 0, 1) for g in groups], axis=0)


def _three_d(run: list) -> np.ndarray:
    """(9, F, n) values of :data:`~coopsim.recording.format.THREE_D_COLUMNS` of a run of 3D
    steps: z and the quaternion from pose3d, vz and the body rates from twist3d."""
    poses = np.array([item[9][0] for item in run], dtype=float)  # (F, n, 7)
    twists = np.array([item[9][1] for item in run], dtype=float)  # (F, n, 6)
    return np.concatenate([poses[..., 2:7], twists[..., 2:6]], axis=2).transpose(2, 0, 1)


def _objects_3d(run: list) -> np.ndarray | None:
    """(5, F, m) values of :data:`~coopsim.recording.format.OBJECT_3D_COLUMNS` of a run whose
    steps carry the objects' 3D poses (z and the quaternion), or None."""
    if run[0][10] is None:
        return None
    poses = np.array([item[10] for item in run], dtype=float).reshape(len(run), -1, 7)
    return poses[..., 2:7].transpose(2, 0, 1)


def _feedback(snap: Snapshot) -> dict:
    """Shared control's squads on the board at this step (format 7, a block's ``F``): squad ->
    its feedback's recorded row (:data:`coopsim.model.steering.RECORD_FIELDS`); {} without."""
    board = snap.extra.get("feedback")
    return {name: fb.row for name, fb in board.items()} if board else {}


def _queue_size(snap: Snapshot) -> int:
    """Steps that fit in :data:`QUEUE_BYTES`: the arrays the hook keeps per step, plus some
    overhead per array."""
    width = 6 + len(module_columns()) + (13 if snap.pose3d is not None else 0)
    body = 3 + (7 if snap.object_pose3d is not None else 0)
    per_step = 8 * (width * len(snap.robots) + body * len(snap.objects) + 3 * len(snap.parts)) \
        + 800
    return max(256, QUEUE_BYTES // per_step)


def _same_layout(first: tuple, item: tuple) -> bool:
    """True when ``item`` continues ``first``'s run: no new layout, same numbers of bodies,
    same dt."""
    return (item[4] is None and item[5] == first[5] and item[7] == first[7]
            and (item[9] is None) == (first[9] is None)
            and (item[10] is None) == (first[10] is None))


def _utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _start_writer(stream, scenario: ScenarioSpec, settings: Settings, seed: int, dt: float,
                  every: int, keyframe_every: int, columns) -> Writer:
    """Start the MCAP file: header, start metadata, scenario and world texts (on disk at once)."""
    writer = Writer(stream, chunk_size=_NEVER, compression=CompressionType.ZSTD,
                    index_types=IndexType.ALL)
    writer.start(profile=rf.PROFILE, library=f"coopsim {_coopsim_version()}")
    world = scenario.world
    files = {"scenario_file": (scenario.path, scenario.text, f"{scenario.name}.scenario"),
             "world_file": (world.path, world.text, "world.world")}
    meta = {"format": str(rf.FORMAT_VERSION), "coopsim": _coopsim_version(),
            "scenario": scenario.name, "scenario_path": scenario.path, "world_path": world.path,
            "seed": str(seed), "dt": repr(float(dt)), "settings": json.dumps(asdict(settings)),
            "record_every": str(every), "keyframe_every": str(keyframe_every),
            "started": _utc_now(), "robot_columns": rf.columns_to_json(columns),
            "body_columns": rf.columns_to_json(rf.BODY_COLUMNS)}
    for key, (path, text, fallback) in files.items():
        if text:
            meta[key] = os.path.basename(path) or fallback
    writer.add_metadata(rf.META_START, meta)
    now = time.time_ns()
    for key, (path, text, fallback) in files.items():
        if text:
            writer.add_attachment(now, 0, meta[key], "text/plain", text.encode("utf-8"))
    stream.flush()
    return writer
