"""The names of the state stream's per-robot columns, followed across layouts (protocol 8).

A world's stream carries the columns of the modules some robot of that world carries, so the
columns change with the layout: a subscriber keeps the state document's ``columns`` with the
``layout_version`` they came from, and reads a frame's columns by those names only when the
frame's ``layout_version`` is theirs; a frame of another layout makes it ask ``/sim`` (command
23) again (docs/protocol.md section 5, *When the layout changes*).
"""

from __future__ import annotations

import dataclasses
import json
import time

from ..model.errors import ProtocolError

#: Seconds before a layout version asked for once (the document answered another) is asked
#: for again.
ASK_AGAIN = 1.0
_KEEP = 8  # layouts whose names are kept (a replay seeks back and forth between a few)


class ColumnNames:
    """Column names by layout version, asked of ``/sim`` state when a frame's are unknown.

    Args:
        state: Callable answering ``/sim``'s state document as text (command 23).
    """

    def __init__(self, state) -> None:
        self._state = state
        self._known: dict[int, tuple[str, ...]] = {}
        self._asked: dict[int, float] = {}  # layout version -> when it was last asked for

    def named(self, frame):
        """``frame`` (a StateFrame) with its ``column_names``, when they can be known: those
        of the state document of the frame's layout, and only when their count is the
        frame's (else the frame as it is, its names None)."""
        version, width = frame.layout_version, frame.columns.shape[1]
        names = self._known.get(version)
        if names is None or len(names) != width:
            names = self._ask(version)
        if names is None or len(names) != width:
            return frame
        return dataclasses.replace(frame, column_names=names)

    def _ask(self, version: int) -> tuple[str, ...] | None:
        now = time.monotonic()
        if now - self._asked.get(version, -ASK_AGAIN) < ASK_AGAIN:
            return None  # asked a moment ago: the document was another layout's
        self._asked[version] = now
        try:
            doc = json.loads(self._state())
            found, names = int(doc["layout_version"]), tuple(doc["columns"])
        except (ProtocolError, ValueError, KeyError, TypeError):
            return None  # no /sim (a bare stream), or no document: the names stay unknown
        self._known[found] = names
        while len(self._known) > _KEEP:
            del self._known[next(iter(self._known))]
        return self._known.get(version)
