"""The keys of the state document (``/sim state``, command 23), declared as data.

Each part of the document declares its keys beside the code that builds it (the layout in
:mod:`coopsim.sim.describe`, the run's figures in :mod:`coopsim.net.simserver`, the squad
channel, external robots, ROS 2 and CRTP entries beside their servers), as tuples of
:class:`DocKey`. The generated reference (docs/reference/state.md, ``python -m
coopsim.app.reference``) lists them and tests/net/test_state_keys.py holds a live run's document
to them, so a key that is built is declared and a declared key is built.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DocKey:
    """One key of the state document (or of an object inside it).

    Attributes:
        name: The key as the JSON object spells it.
        value: Its JSON value and unit, e.g. ``number, m``, ``[w, x, y, z]``, ``list of
            objects``, ``name -> object`` (an object keyed by name).
        meaning: What it holds, in one or two sentences.
        since: The protocol version that added it, where the docs say (0: not said; a key
            of version 4 or older).
        present: When the key is there; "" for always (otherwise it is absent, not null).
        fields: The keys of its object, or of each entry of its list or map.
    """

    name: str
    value: str
    meaning: str
    since: int = 0
    present: str = ""
    fields: tuple["DocKey", ...] = ()


def names(keys: tuple[DocKey, ...]) -> list[str]:
    """The keys' names, in declaration order."""
    return [k.name for k in keys]


def field(keys: tuple[DocKey, ...], name: str) -> DocKey:
    """The key named ``name`` of ``keys`` (KeyError when none is)."""
    for k in keys:
        if k.name == name:
            return k
    raise KeyError(name)
