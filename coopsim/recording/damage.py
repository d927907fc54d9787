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
