"""Squad orders: what a player (or a squad server) tells a squad, as data and on the wire.

An order names a squad, a verb and the verb's arguments. On the wire (``/squads`` command 2 and
the ``/squads/events`` stream, docs/protocol.md section 9) it travels in the five-item message::

    text = "<squad> <verb> [<word>]"     data = the verb's numbers

The verbs, their numbers and words: :data:`VERBS` and :data:`VERB_DOES` (the generated
protocol reference, *Squad orders*).

Pure data, no I/O: the servers, the viewer, the swarm library and controllers in any layer share
it. The swarm library turns an order into a squad command (:func:`coopsim.swarm.game.command_of`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .commands import OUT_OF_RANGE, UNKNOWN_NAME, WRONG_ARITY
from .errors import ProtocolError
from .limits import shown

#: Formation names (those of :data:`coopsim.swarm.formations.FORMATIONS`).
FORMATION_NAMES = ("line", "column", "wedge", "inverse_wedge", "circle", "half_circle", "block")
#: Verb -> (least, most) numbers in data, and whether a formation word may follow.
VERBS = {"goto": ((2, 2), True), "gather": ((0, 2), True), "defend": ((2, 3), False),
         "attack": ((2, 3), False), "capture": ((2, 2), True), "hold": ((0, 0), False)}
#: What a squad does on each verb (numbers in m, world frame).
VERB_DOES = {
    "goto": "moves in formation (the squad's own, or the one named), centred on (x, y)",
    "gather": "gathers in formation where it is (at its centroid), or at (x, y)",
    "defend": "circles (x, y) at radius m (default: n × spacing)",
    "attack": "closes on (x, y) in the 270° half circle",
    "capture": "goes to the flag at (x, y) in formation; the robot ending nearest drives onto "
               "it and picks it up",
    "hold": "every robot stops where it is",
}
#: The numbers each verb's data holds, as the reference writes them.
VERB_DATA = {"goto": "`x y`", "gather": "– or `x y`", "defend": "`x y` or `x y radius`",
             "attack": "`x y` or `x y radius`", "capture": "`x y`", "hold": "–"}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
#: Largest |coordinate| or radius accepted, m (far beyond any floor; keeps numbers sane).
MAX_COORD = 1.0e6


@dataclass(frozen=True)
class SquadOrder:
    """One order to one squad.

    Attributes:
        squad: Squad name.
        verb: One of :data:`VERBS`.
        point: (x, y), m, world frame; None for ``hold`` and a ``gather`` without a point.
        formation: A formation name, "" for the squad's own.
        radius: ``defend`` / ``attack`` radius, m; None for the default.
        seq: Sequence number given by the ``/squads`` server (0 before it is sent).
    """

    squad: str
    verb: str
    point: tuple[float, float] | None = None
    formation: str = ""
    radius: float | None = None
    seq: int = 0

    @property
    def text(self) -> str:
        """The order's text field: ``"<squad> <verb> [<formation>]"``."""
        return " ".join(w for w in (self.squad, self.verb, self.formation) if w)

    @property
    def data(self) -> tuple[float, ...]:
        """The order's data field (the verb's numbers)."""
        out = tuple(self.point) if self.point is not None else ()
        return out + ((self.radius,) if self.radius is not None else ())

    def describe(self) -> dict:
        """JSON-ready form (``/sim state`` ``squads``)."""
        return {"squad": self.squad, "verb": self.verb,
                "point": list(self.point) if self.point is not None else None,
                "formation": self.formation, "radius": self.radius, "seq": self.seq}


def parse_order(text: str, data=(), seq: int = 0) -> SquadOrder:
    """The order a message's text and data say.

    Raises:
        ProtocolError: WRONG_ARITY (text words, numbers for the verb), UNKNOWN_NAME (an unknown
            verb or formation), OUT_OF_RANGE (a number that is not finite, too large, or a radius
            that is not > 0). The sentence says which.
    """
    words = text.split()
    if len(words) not in (2, 3):
        raise ProtocolError(WRONG_ARITY, "a squad order's text is '<squad> <verb> [<formation>]'"
                                         f", got {text[:80]!r}")
    squad, verb = words[0], words[1]
    if not _NAME.fullmatch(squad):
        raise ProtocolError(OUT_OF_RANGE, f"squad name must be letters, digits, '_' or '-' "
                                          f"starting with a letter, not {squad[:40]!r}")
    if verb not in VERBS:
        raise ProtocolError(UNKNOWN_NAME, f"unknown squad verb {verb[:40]!r} (known: "
                                          f"{', '.join(VERBS)})")
    (lo, hi), takes_formation = VERBS[verb]
    formation = words[2] if len(words) == 3 else ""
    if formation and not takes_formation:
        raise ProtocolError(WRONG_ARITY, f"{verb} takes no formation word")
    if formation and formation not in FORMATION_NAMES:
        raise ProtocolError(UNKNOWN_NAME, f"unknown formation {formation[:40]!r} (known: "
                                          f"{', '.join(FORMATION_NAMES)})")
    data = tuple(float(v) for v in data)
    if not lo <= len(data) <= hi or len(data) == 1:
        want = str(lo) if lo == hi else f"{lo} or {hi}" if hi - lo == 2 else f"{lo} to {hi}"
        raise ProtocolError(WRONG_ARITY, f"{verb} takes {want} numbers in data, got {len(data)}")
    if not all(math.isfinite(v) and abs(v) <= MAX_COORD for v in data):
        raise ProtocolError(OUT_OF_RANGE, f"{verb}: numbers must be finite and within "
                                          f"+-{MAX_COORD:g} m")
    radius = data[2] if len(data) == 3 else None
    if radius is not None and not radius > 0:
        raise ProtocolError(OUT_OF_RANGE, f"{verb}: radius must be > 0 m, not {shown(radius, 0.0)}")
    point = (data[0], data[1]) if len(data) >= 2 else None
    return SquadOrder(squad, verb, point, formation, radius, seq)
