"""The ``[EVENT_n]`` and ``[MONITORS]`` sections of a scenario (docs/files.md): their key rows and
the specs built from them.

An event is ``at T`` and what happens then, one line each::

    [EVENT_2]
    at      200                       # sim seconds
    reset                             # bodies back to the initial layout, the clock goes on
    param   leader.driver.behavior 3  # ROBOT.MODULE.NAME VALUE (MODULE may be driver)
    insert  OBJECT_3                  # an [OBJECT_n] marked 'start false'
    remove  WALL_2
    insert  target red 1 2 0
    remove  target blue               # every blue target (or: remove target blue X Y)

Monitors are named metrics computed every step (``metric NAME KIND ARGS...``) and the time
after which ``max_after`` counts (``after T``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..model.errors import FileFormatError
from ..model.specs import COLORS, EventAction, EventSpec, MetricSpec, MonitorsSpec, TargetSpec
from ..model.plugins import METRICS
from .sections import Bad, Key, Section, about, fixed, number, param_value, real

#: ``ROBOT.MODULE.NAME`` of an event or a sweep axis (MODULE ``driver`` for the driver's).
DOTTED = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)")
_OBJECT = re.compile(r"[A-Z][A-Z0-9]*_[1-9][0-9]{0,8}")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_nonneg = real(">= 0", lambda v: v >= 0)


def _param(key: str, tokens: list, rest: str) -> EventAction:
    """``param ROBOT.MODULE.NAME VALUE``."""
    if len(tokens) != 2:
        raise Bad(f"param needs 2 values (robot.module.name value), got {len(tokens)}")
    match = DOTTED.fullmatch(tokens[0])
    if not match:
        raise Bad(f"param name must look like robot.module.name (module 'driver' for the "
                  f"robot's driver), got {tokens[0]!r}")
    with about("param"):
        value = param_value(tokens[1], words=True)
    return EventAction("param", *match.groups(), value=value)


def _reset(key: str, tokens: list, rest: str) -> EventAction:
    if tokens:
        raise Bad(f"reset takes no value, got {' '.join(tokens)!r}")
    return EventAction("reset")


def _change(key: str, tokens: list, rest: str) -> EventAction:
    """``insert|remove NAME``, ``insert target COLOR x y z``, ``remove target COLOR [x y]``."""
    if tokens[:1] == ["target"]:
        return _target(key, tokens[1:])
    if len(tokens) != 1:
        raise Bad(f"{key} needs an object's name ({key} OBJECT_3) or 'target COLOR ...', "
                  f"got {len(tokens)} values")
    if not _OBJECT.fullmatch(tokens[0]):
        raise Bad(f"{key} takes an object's section name such as OBJECT_3, got {tokens[0]!r}")
    return EventAction(key, name=tokens[0])


def _target(key: str, tokens: list) -> EventAction:
    sizes = (4,) if key == "insert" else (1, 3)
    if len(tokens) not in sizes:
        shape = "COLOR x y z" if key == "insert" else "COLOR [x y]"
        raise Bad(f"{key} target needs {shape}, got {len(tokens)} values")
    if tokens[0] not in COLORS:
        raise Bad(f"unknown target colour {tokens[0]!r} (expected {', '.join(COLORS)})")
    xyz = [number(t) for t in tokens[1:]] + [0.0] * (4 - len(tokens))
    return EventAction(key, target=TargetSpec(tokens[0], tuple(xyz)), exact=len(tokens) > 1)


def _metric(key: str, tokens: list, rest: str) -> MetricSpec:
    """``metric NAME KIND ARGS...``; KIND is a metric kind registered under
    ``coopsim.metrics``, which counts and parses its arguments."""
    if len(tokens) < 2:
        raise Bad(f"metric needs a name and a kind ({', '.join(METRICS.labels())}), "
                  f"got {len(tokens)} values")
    name, kind, args = tokens[0], tokens[1], tuple(tokens[2:])
    if not _IDENT.fullmatch(name):
        raise Bad(f"metric name must be an identifier, got {name!r}")
    if kind not in METRICS:
        raise Bad(f"unknown metric kind {kind!r} (expected {', '.join(METRICS.labels())})")
    declared = METRICS.get(kind)
    low, high = declared.args
    if not low <= len(args) <= high:
        count = str(low) if low == high else f"{low} to {high}"
        raise Bad(f"metric {kind} takes {count} arguments, got {len(args)}")
    try:
        declared.parse(args)
    except ValueError as exc:
        raise Bad(str(exc)) from None
    return MetricSpec(name, kind, args)


EVENT_KEYS = {
    "at": Key(fixed(("s",), _nonneg), required=True,
              doc="sim time; carried out between two steps, before the first step at or after it"),
    "param": Key(_param, repeat=True, doc="ROBOT.MODULE.NAME value (MODULE `driver`: its "
                 "in-process driver's parameter)"),
    "reset": Key(_reset, doc="the bodies go back to the layout at load; done first"),
    "insert": Key(_change, repeat=True, doc="OBJECT_n not in the world then, or target COLOR x y z"),
    "remove": Key(_change, repeat=True, doc="an object's name, or target COLOR [x y]"),
}
MONITORS_KEYS = {
    "metric": Key(_metric, repeat=True),
    "after": Key(fixed(("s",), _nonneg), doc="default 0: max_after is the largest value from "
                 "then on"),
}


def build_events(sections: list[Section]) -> tuple[EventSpec, ...]:
    """The EventSpecs of the ``[EVENT_n]`` sections, sorted by time (file order among equals)."""
    events = []
    for s in sections:
        actions = tuple(_at_line(v, n) for k, v, n in s.entries if k != "at")
        events.append(EventSpec(s.name, s.get("at"), actions, s.line))
    return tuple(sorted(events, key=lambda e: e.time))


def build_monitors(section: Section, path) -> MonitorsSpec:
    """The MonitorsSpec of a ``[MONITORS]`` section; metric names must be unique."""
    metrics, seen = [], {}
    for key, value, line in section.entries:
        if key != "metric":
            continue
        if value.name in seen:
            raise FileFormatError(path, line, f"metric {value.name!r} is already defined at "
                                              f"line {seen[value.name]}")
        seen[value.name] = line
        metrics.append(_at_line(value, line))
    return MonitorsSpec(tuple(metrics), section.get("after", 0.0), section.line)


def _at_line(spec, line: int):
    return replace(spec, line=line)
