"""Damage in a recording: a complete chunk whose bytes do not check, and what readers do with it.

A chunk is *damaged* when the file holds it whole but it does not read back: its CRC or its
compressed data does not check, it declares an implausible size, or its steps do not decode (a
3D block that does not match its robots, a block out of order). A file cut short by a crash is
not damaged: its last, incomplete chunk is simply not there (``coopsim repair``).

Every reader follows one policy (docs/recording-format.md, *Damaged recordings*): ``info`` lists
each damaged chunk and exits 2; ``export`` (CSV, metrics, Foxglove, ROS 2), ``analyze`` and
``plot`` write nothing and exit 2; ``replay`` plays the steps before the first damaged chunk,
then stops there (exit status 2 with ``--exit-at-end``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from . import format as rf
from ..model.errors import RecordingError

EXIT_DAMAGED = 2  # the exit status of every command that meets a damaged chunk
_PREFIX = re.compile(r"^(?:.*: )?the chunk at byte \d+ (?:is damaged )?")


@dataclass(frozen=True)
class Damage:
    """One damaged chunk.

    Attributes:
        offset: File offset of the chunk record, bytes.
        start, end: Recording times of its first and last message, s (from the chunk's header
            or index, which may be damaged too).
        reason: What did not check.
    """

    offset: int
    start: float
    end: float
    reason: str

    @classmethod
    def of(cls, offset: int, start_ns: int, end_ns: int, error: str) -> "Damage":
        """The damage a reader's RecordingError ``error`` reported for the chunk at ``offset``
        with message times ``start_ns`` .. ``end_ns`` (ns)."""
        reason = _PREFIX.sub("", error).strip()
        if reason.startswith("(") and reason.endswith(")"):
            reason = reason[1:-1]
        return cls(offset, start_ns / 1e9, end_ns / 1e9, reason.removeprefix("bad chunk: "))

    def describe(self) -> str:
        """One line: where, when and what."""
        return (f"the chunk at byte {self.offset} ({self.start:.3f} .. {self.end:.3f} s) is "
                f"damaged: {self.reason}")

    def to_dict(self) -> dict:
        """JSON-ready dict (``coopsim info --json``'s ``damaged`` items)."""
        return {"offset": self.offset, "start": self.start, "end": self.end,
                "reason": self.reason}


def summary(damage: tuple[Damage, ...]) -> str:
    """The first damaged chunk, and how many more there are."""
    more = f" (and {len(damage) - 1} more damaged chunks)" if len(damage) > 1 else ""
    return damage[0].describe() + more


def check_blocks(payloads: Sequence[bytes], robot_columns: Sequence[rf.Column],
                 body_columns: Sequence[rf.Column] = rf.BODY_COLUMNS) -> None:
    """Check the structure of one chunk's ``/frames`` messages without decoding their values
    (a tenth of a decode's cost): the chunk starts with a keyframe, every packed array holds
    whole rows, and within a keyframe segment the robots and bodies stay as many and the 3D
    arrays (``3``, ``O``) match them. What a decode would refuse for its shape, this refuses.

    Raises:
        RecordingError: the first thing that does not check ("bad chunk: ...").
    """
    blocks = [rf._unpack_block(data) for data in payloads]
    if blocks and not blocks[0]["k"]:
        raise RecordingError("bad chunk: it does not start with a keyframe")
    shape = None  # robots, bodies, 3D robots (None: absent), 3D objects of the segment
    for block in blocks:
        frames = len(block["s"])
        now = (_rows(block["r"], frames, len(robot_columns)),
               _rows(block["b"], frames, len(body_columns)),
               _rows(block["3"], frames, len(rf.THREE_D_COLUMNS)) if "3" in block else None,
               _rows(block["O"], frames, len(rf.OBJECT_3D_COLUMNS)) if "O" in block else None)
        if not block["k"] and now != shape:
            raise RecordingError("bad chunk: the bodies or 3D values changed without a keyframe")
        if now[2] is not None and now[2] != now[0]:
            raise RecordingError("bad chunk: the 3D values do not match the robots")
        if now[3] is not None and now[3] > now[1]:
            raise RecordingError("bad chunk: the objects' 3D values do not match the bodies")
        shape = now


def _rows(item, frames: int, columns: int) -> int:
    """How many bodies a packed [widths, bytes] array of ``frames`` steps holds."""
    try:
        widths, raw = item
        per_body = sum(int(w) for w in widths) * frames
        if len(widths) != columns or set(widths) - set("1248") or len(raw) % per_body:
            raise ValueError(widths)
    except (TypeError, ValueError, ZeroDivisionError):
        raise RecordingError("bad array in a recorded block") from None
    return len(raw) // per_body
