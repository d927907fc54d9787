"""Reading recordings: open and check a file, seek to any time or step, info and CSV export.

:class:`Recording` keeps only the index (one small entry per chunk) and a few decoded chunks in
memory, so a recording of any length opens at once and replays in bounded memory. A seek finds
the chunk by its time range and decodes it (every chunk starts with a keyframe). Files whose
writer was killed have no summary: their index is rebuilt by a scan of the record headers (see
:mod:`coopsim.recording.index`) and they read up to the last chunk that reached the disk.

The format itself is described in :mod:`coopsim.recording.format`.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from typing import IO, Iterator

import numpy as np
from mcap.records import Message as McapMessage

from . import format as rf
from ..model.errors import RecordingError
from ..model.metrics import format_summary, rule_summaries
from .csvexport import REQUIRED_COLUMNS
from .damage import Damage, check_blocks, summary
from .index import read_attachment, read_chunk, read_index

CACHE_BYTES = 64 << 20  # decoded chunks kept beyond the last one (large swarms keep fewer)


@dataclass(frozen=True)
class RecordingInfo:
    """What ``coopsim info`` shows. Times in s, size in bytes.

    Attributes:
        complete: False when the recorder did not finish (crash): the index was rebuilt.
        frames: Recorded steps; dropped: steps the recorder had to drop (None if unknown).
        robots: Robot names at the start; robots_end: at the end.
        metrics: Every rule's metrics at the last recorded step, ``rule.name`` -> {max,
            mean, final, max_after} (a rule's own summary, else only ``final``; empty when no
            rule reports metrics); metrics_after: the summaries' ``after``, s.
        damaged: Every damaged chunk (:meth:`Damage.to_dict`: offset, start, end, reason);
            the other facts then describe the readable part (the steps before the first).
    """

    path: str
    size: int
    complete: bool
    scenario: str
    scenario_path: str
    started: str
    seed: int
    dt: float
    record_every: int
    start: float
    end: float
    duration: float
    frames: int
    chunks: int
    layouts: int
    robots: tuple[str, ...]
    robots_end: tuple[str, ...]
    dropped: int | None
    metrics: dict = field(default_factory=dict)
    metrics_after: float = 0.0
    damaged: tuple = ()

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


@dataclass
class _Decoded:
    frames: list[rf.Frame]
    layouts: list[dict]
    times: list[int]  # the frames' recording times, ns
    nbytes: int  # size of the decoded arrays


class Recording:
    """An open recording; use as a context manager. Thread-safe.

    Args:
        path: The ``.mcap`` file.
        cache: Number of decoded chunks kept in memory (fewer when they pass
            :data:`CACHE_BYTES`).

    Raises:
        RecordingError: missing, empty, not MCAP, not a coopsim recording, or no complete step.
    """

    def __init__(self, path: str | os.PathLike, cache: int = 4) -> None:
        self.path = os.fspath(path)
        self._lock = threading.RLock()
        self._cache: OrderedDict[int, _Decoded] = OrderedDict()
        self._masks: dict[int, np.ndarray] = {}  # layout ordinal -> robots lacking a column
        self._cache_size = max(1, cache)
        try:
            self._stream: IO[bytes] = open(self.path, "rb")
        except FileNotFoundError:
            raise RecordingError(f"{self.path}: no such file") from None
        except IsADirectoryError:
            raise RecordingError(f"{self.path}: is a folder, not a recording") from None
        try:
            self._load()
        except RecordingError as exc:
            self._stream.close()
            raise self._located(exc) from None

    def __enter__(self) -> "Recording":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the file."""
        self._stream.close()

    # -- opening ------------------------------------------------------------------------------

    def _load(self) -> None:
        self.size = os.fstat(self._stream.fileno()).st_size
        if self.size == 0:
            raise RecordingError("empty file, not a recording")
        index = read_index(self._stream, self.size)
        if index.header.profile != rf.PROFILE:
            raise RecordingError(f"not a coopsim recording (MCAP profile "
                                 f"{index.header.profile!r}, expected {rf.PROFILE!r})")
        self.meta = index.metadata.get(rf.META_START)
        if self.meta is None:
            raise RecordingError("not a coopsim recording (no 'coopsim' metadata)")
        self._check_format()
        self.complete = index.complete
        self.end_meta = index.metadata.get(rf.META_END)
        self._attachments = index.attachments
        topics = {c.topic: cid for cid, c in index.channels.items()}
        self._frames_id = topics.get(rf.FRAMES_TOPIC)
        self._layout_id = topics.get(rf.LAYOUT_TOPIC)
        self._chunks = index.chunks
        self._count_messages()
        if self.frame_count == 0:
            raise RecordingError("holds no recorded step (cut off before its first chunk "
                                 "reached the disk?)")

    def _check_format(self) -> None:
        try:
            version = int(self.meta.get("format", "0"))
        except ValueError:
            version = 0
        if version < 1:
            raise RecordingError("not a coopsim recording (no format version)")
        if version > rf.FORMAT_VERSION:
            raise RecordingError(f"recording format {version} is newer than this coopsim reads "
                                 f"({rf.FORMAT_VERSION}); update coopsim")
        self.robot_columns = rf.columns_from_json(self.meta.get("robot_columns", ""))
        self.body_columns = rf.columns_from_json(self.meta.get("body_columns", ""))
        names = {c.name for c in self.robot_columns}
        if not set(REQUIRED_COLUMNS) <= names or len(names) != len(self.robot_columns) \
                or [c.name for c in self.body_columns] != ["x", "y", "yaw"]:
            raise RecordingError("bad column table in the recording's metadata")

    def _count_messages(self) -> None:
        """Which chunks hold steps, layouts per chunk, and the number of steps.

        Message counts come from the index (a chunk is decoded only when its index is missing);
        a /frames message holds several steps, so the step count is read from the last chunk.
        """
        if self._frames_id is None:
            raise RecordingError("holds no recorded step (no /frames channel)")
        layouts = []
        self._with_frames = []
        self._damage: dict[int, Damage] = {}  # chunk -> its damage, as far as read
        for i, ref in enumerate(self._chunks):
            counts = ref.counts if ref.counts is not None else self._count_chunk(i)
            if counts.get(self._frames_id, 0):
                self._with_frames.append(i)
            layouts.append(counts.get(self._layout_id, 0))
        self._first_layout = _cumulative(layouts)
        self.layout_count = self._first_layout[-1]
        self._starts = [self._chunks[i].start for i in self._with_frames]
        self._first_index: dict[int, int] = {}  # chunk -> index of its first step
        self.frame_count, self._end = 0, 0.0
        self._checked = False
        self._end_at(self._with_frames)

    def _end_at(self, chunks: list[int]) -> None:
        """End the recording at the last step of the last readable chunk of ``chunks``."""
        for i in reversed(chunks):
            decoded = self._try_decode(i)
            if decoded is not None and decoded.frames:
                last = decoded.frames[-1]
                self.frame_count, self._end = last.index + 1, last.position
                return
        if self._damage:
            raise RecordingError(f"holds no readable step: {summary(self.damage())}")

    def _count_chunk(self, i: int) -> dict[int, int]:
        """Messages per channel in chunk ``i`` ({} when it is damaged: then noted)."""
        ref, counts = self._chunks[i], {}
        try:
            records = read_chunk(self._stream, ref)
        except RecordingError as exc:
            self._note(i, exc)
            return counts
        for record in records:
            if isinstance(record, McapMessage):
                counts[record.channel_id] = counts.get(record.channel_id, 0) + 1
        return counts

    # -- time line ----------------------------------------------------------------------------

    @property
    def start(self) -> float:
        """Recording time of the first frame, s."""
        return self._chunks[self._with_frames[0]].start / 1e9

    @property
    def end(self) -> float:
        """Recording time of the last frame, s."""
        return self._end

    @property
    def seed(self) -> int:
        """The run's random seed."""
        return _number(self.meta.get("seed"), int)

    @property
    def dt(self) -> float:
        """The run's physics step, s (0 when the metadata does not say)."""
        return _number(self.meta.get("dt"), float)

    def frame(self, index: int) -> rf.Frame:
        """Step number ``index`` (clamped to 0 .. frame_count - 1)."""
        index = min(max(int(index), 0), self.frame_count - 1)
        with self._lock:
            lo, hi = 0, len(self._with_frames) - 1  # the last chunk whose first step <= index
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self._chunk_first(self._with_frames[mid]) <= index:
                    lo = mid
                else:
                    hi = mid - 1
            frames = self._decode(self._with_frames[lo]).frames
            return frames[index - frames[0].index]

    def frame_at(self, position: float) -> rf.Frame:
        """The last frame at or before ``position`` s (clamped to the first and last frame)."""
        if not math.isfinite(position) or position <= self.start:
            return self.frame(0)
        ns = round(position * 1e9)
        with self._lock:
            k = max(bisect.bisect_right(self._starts, ns) - 1, 0)
            decoded = self._decode(self._with_frames[k])
            return decoded.frames[max(bisect.bisect_right(decoded.times, ns) - 1, 0)]

    def layout(self, ordinal: int) -> dict:
        """Layout number ``ordinal`` (``World.describe()`` plus ordinal, step, time)."""
        ordinal = min(max(int(ordinal), 0), self.layout_count - 1)
        with self._lock:
            chunk = bisect.bisect_right(self._first_layout, ordinal) - 1
            layouts = self._decode(chunk).layouts
            if not 0 <= ordinal - self._first_layout[chunk] < len(layouts):
                raise self._located(RecordingError(f"layout {ordinal} is missing (damaged "
                                                   "index?)"))
            return layouts[ordinal - self._first_layout[chunk]]

    def robot_values(self, frame: rf.Frame) -> np.ndarray:
        """(N, C) values of ``frame``'s robots with NaN where a robot does not carry the
        column's module (a recording stores 0 there)."""
        mask = self._masks.get(frame.layout)
        if mask is None:
            robots = self.layout(frame.layout).get("robots", ())
            mask = np.array([[bool(c.module) and c.module not in r.get("modules", ())
                              for c in self.robot_columns] for r in robots],
                            dtype=bool).reshape(-1, len(self.robot_columns))
            self._masks[frame.layout] = mask
        if not mask.any() or mask.shape != frame.robots.shape:
            return frame.robots
        return np.where(mask, np.nan, frame.robots)

    def iter_frames(self) -> Iterator[rf.Frame]:
        """Every frame in order, one chunk in memory at a time."""
        for chunk in self._with_frames:
            with self._lock:
                frames = self._decode(chunk).frames
            yield from frames

    def attachment(self, key: str) -> str:
        """Text of the attachment the metadata names under ``key`` ("" when absent)."""
        name = self.meta.get(key, "")
        if name not in self._attachments:
            return ""
        with self._lock:
            return read_attachment(self._stream, self._attachments[name], self.size).data.decode(
                "utf-8", "replace")

    def _located(self, exc: RecordingError) -> RecordingError:
        """``exc`` with this file's path in front (once)."""
        text = str(exc)
        return RecordingError(text if text.startswith(self.path) else f"{self.path}: {text}")

    def _chunk_first(self, i: int) -> int:
        """Index of the first step in chunk ``i`` (reads only its first block's header)."""
        try:
            if i not in self._first_index:
                self._first_index[i] = next(
                    rf.first_index(record.data) for record in read_chunk(self._stream,
                                                                         self._chunks[i])
                    if isinstance(record, McapMessage) and record.channel_id == self._frames_id)
        except RecordingError as exc:
            raise self._located(exc) from None
        except StopIteration:
            raise self._located(RecordingError(f"chunk {i} holds no steps")) from None
        return self._first_index[i]

    def _decode(self, i: int) -> _Decoded:
        """Chunk ``i`` decoded (from the cache when it is there)."""
        try:
            return self._decode_chunk(i)
        except RecordingError as exc:
            raise self._located(exc) from None

    def _try_decode(self, i: int) -> _Decoded | None:
        """Chunk ``i`` decoded, or None when it is damaged (then noted in the damage found)."""
        try:
            return self._decode_chunk(i)
        except RecordingError as exc:
            self._note(i, exc)
            return None

    def _note(self, i: int, exc: RecordingError) -> None:
        ref = self._chunks[i]
        self._damage[i] = Damage.of(ref.offset, ref.start, ref.end, str(exc))

    # -- damage (docs/recording-format.md, *Damaged recordings*) ------------------------------

    def check(self) -> tuple[Damage, ...]:
        """Read every chunk (CRC, decompression, records, blocks' structure: a tenth of a
        decode's cost, one chunk in memory at a time); return the damaged ones in file order
        (empty for a sound file). The first call reads the whole file."""
        with self._lock:
            if not self._checked:
                for i in range(len(self._chunks)):
                    if i not in self._damage and i not in self._cache:
                        try:
                            self._check_chunk(i)
                        except RecordingError as exc:
                            self._note(i, exc)
                self._checked = True
            return self.damage()

    def _check_chunk(self, i: int) -> None:
        frames = []
        for record in read_chunk(self._stream, self._chunks[i]):
            if isinstance(record, McapMessage):
                if record.channel_id == self._frames_id:
                    frames.append(record.data)
                elif record.channel_id == self._layout_id:
                    rf.decode_layout(record.data)
        check_blocks(frames, self.robot_columns, self.body_columns)

    def require_sound(self) -> None:
        """Check every chunk (:meth:`check`); raise a RecordingError naming the first damaged
        one, before a reader that needs the whole file (export, analyze, plot) writes."""
        damage = self.check()
        if damage:
            raise self._located(RecordingError(
                f"{summary(damage)}; nothing was written ('coopsim info {self.path}' lists the "
                "damage, 'coopsim replay' plays the steps before it)"))

    def damage(self) -> tuple[Damage, ...]:
        """The damaged chunks found so far, in file order (:meth:`check` looks at them all)."""
        return tuple(self._damage[i] for i in sorted(self._damage))

    def keep_readable(self) -> tuple[Damage, ...]:
        """Check the file and confine this recording to its readable part: the steps before
        its first damaged chunk (start, end, frame_count and seeks stay inside it). Return the
        damage (empty: nothing changed).

        Raises:
            RecordingError: no step comes before the first damaged chunk.
        """
        damage = self.check()
        if damage:
            first = min(self._damage)
            with self._lock:
                self._with_frames = [i for i in self._with_frames if i < first]
                self._starts = [self._chunks[i].start for i in self._with_frames]
                self.layout_count = max(1, self._first_layout[first])
                try:
                    self._end_at(self._with_frames)
                except RecordingError as exc:
                    raise self._located(exc) from None
        return damage

    def _decode_chunk(self, i: int) -> _Decoded:
        hit = self._cache.get(i)
        if hit is not None:
            self._cache.move_to_end(i)
            return hit
        decoded = self._read_chunk(i)
        self._cache[i] = decoded
        while len(self._cache) > 1 and (len(self._cache) > self._cache_size or sum(
                d.nbytes for d in self._cache.values()) > CACHE_BYTES):
            self._cache.popitem(last=False)
        return decoded

    def _read_chunk(self, i: int) -> _Decoded:
        """Chunk ``i`` read and decoded (not cached)."""
        payloads, layouts = [], []
        for record in read_chunk(self._stream, self._chunks[i]):
            if isinstance(record, McapMessage):
                if record.channel_id == self._frames_id:
                    payloads.append(record.data)
                elif record.channel_id == self._layout_id:
                    layouts.append(rf.decode_layout(record.data))
        frames = rf.decode_frames(payloads, self.robot_columns, self.body_columns)
        if frames:
            self._first_index[i] = frames[0].index
        return _Decoded(frames, layouts, [round(f.position * 1e9) for f in frames],
                        sum(f.robots.nbytes + f.bodies.nbytes for f in frames))

    # -- summaries ----------------------------------------------------------------------------

    def info(self) -> RecordingInfo:
        """The facts ``coopsim info`` prints (every chunk is read: :meth:`keep_readable`)."""
        damaged = tuple(d.to_dict() for d in self.keep_readable())
        names = lambda layout: tuple(r["name"] for r in layout.get("robots", ()))  # noqa: E731
        dropped = self.end_meta.get("dropped") if self.end_meta else None
        last = self.frame(self.frame_count - 1).rules if self.frame_count else {}
        metrics, after = rule_summaries(last)
        return RecordingInfo(
            path=self.path, size=self.size, complete=self.complete,
            scenario=self.meta.get("scenario", ""), scenario_path=self.meta.get(
                "scenario_path", ""), started=self.meta.get("started", ""),
            seed=self.seed, dt=self.dt,
            record_every=_number(self.meta.get("record_every"), int), start=self.start,
            end=self.end, duration=self.end - self.start, frames=self.frame_count,
            chunks=len(self._chunks), layouts=self.layout_count,
            robots=names(self.layout(0)), robots_end=names(self.layout(self.layout_count - 1)),
            dropped=None if dropped is None else _number(dropped, int), metrics=metrics,
            metrics_after=after, damaged=damaged)


def _number(text: str | None, kind: type):
    """A number from the metadata; 0 when it is missing or damaged (it is not CRC-checked)."""
    try:
        return kind(text)
    except (TypeError, ValueError):
        return kind(0)


def _cumulative(counts: list[int]) -> list[int]:
    out = [0]
    for n in counts:
        out.append(out[-1] + n)
    return out


def format_info(info: RecordingInfo) -> str:
    """``coopsim info`` text: one fact per line."""
    robots = f"{len(info.robots)}: {', '.join(info.robots)}" if info.robots else "0"
    if info.robots_end != info.robots:
        robots += f" (at the end {len(info.robots_end)}: {', '.join(info.robots_end)})"
    state = "yes" if info.complete else "no: the recorder did not finish; read up to the last " \
                                        "chunk that reached the disk"
    dropped = "unknown" if info.dropped is None else str(info.dropped)
    rows = [("file", info.path), ("size", _size(info.size)),
            ("scenario", f"{info.scenario} ({info.scenario_path or 'built in code'})"),
            ("recorded", info.started), ("duration", f"{info.duration:.3f} s "
                                                     f"({info.start:.3f} .. {info.end:.3f})"),
            ("steps", f"{info.frames} recorded (every {info.record_every}, dt {info.dt:g} s)"),
            ("robots", robots), ("layouts", str(info.layouts)), ("seed", str(info.seed)),
            ("complete", state), ("dropped", dropped)]
    rows += [("damaged", Damage(**d).describe()) for d in info.damaged]
    width = max(len(k) for k, _ in rows)
    table = format_summary(info.metrics, info.metrics_after)
    return "\n".join([f"{k:<{width}}  {v}" for k, v in rows] + ([table] if table else []))


def info_json(info: RecordingInfo) -> str:
    """``coopsim info --json`` text."""
    return json.dumps(info.to_dict(), indent=2)


def _size(n: int) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return ""
