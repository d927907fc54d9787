"""The tables of the ``.world`` and ``.scenario`` formats (normative spec: ``docs/files.md``):
the value converters of their keys, and which sections hold which keys.

:mod:`coopsim.formats.sections` reads any file of sections with a table of :class:`Rule` s;
:mod:`coopsim.formats.files` builds the frozen specs from what these tables parsed and checks
what needs the whole file. ``WORLD_RULES`` and ``SCENARIO_RULES`` are the two formats.
"""

from __future__ import annotations

import re
from dataclasses import fields

from ..model.limits import FIELDS, field_problem, name_problem
from ..model.orders import FORMATION_NAMES
from ..model.specs import (COLORS, DT_RANGE, MODES, SHAPES, ZONE_KINDS, DriverSetting,
                           ExternalSpec, ParamSetting, yaw_from_degrees)
from . import games
from .description import ROBOT_KEYS as DESCRIPTION_ROBOT_KEYS
from .events import EVENT_KEYS, MONITORS_KEYS
from .scenery import MESH_KEYS, TERRAIN_KEYS
from .sections import (NUMBER, POSITION, Bad, Key, Rule, about, boolean, fixed, integer, number,
                       pick, real, rest, within)
from .sections import param_value as _value
from .task import TASK_KEYS

_PARAM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)")
_KEYWORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# --- value converters of these formats ------------------------------------------------------------

_positive = real("> 0", lambda v: v > 0)
_nonneg = real(">= 0", lambda v: v >= 0)
_dt = real(f"between {DT_RANGE[0]:g} and {DT_RANGE[1]:g} s",
           lambda v: DT_RANGE[0] <= v <= DT_RANGE[1])
_seed = integer("an integer >= 0", lambda v: 0 <= v < 2**63)


def _netname(key: str, tokens: list, rest: str) -> str:
    """``name <network name>``: the model's one rule for robot names (coopsim.model.limits)."""
    if len(tokens) != 1:
        raise Bad(f"{key} needs 1 value (network name), got {len(tokens)}")
    why = name_problem(tokens[0])
    if why:
        raise Bad(why)
    return tokens[0]


def _flat(orientation: tuple) -> None:
    if orientation[0] != 0 or orientation[1] != 0:
        raise Bad("orientation phi and psi must be 0 in 2D (only theta, the yaw, is used), "
                  f"got {orientation[0]:g} {orientation[1]:g}")
    why = field_problem("yaw", yaw_from_degrees(orientation[2]))
    if why:
        raise Bad(why)


_flat.rule = "phi = psi = 0 (2D); theta, the yaw, in degrees: " + FIELDS["yaw"].span()


def _turned(orientation: tuple) -> None:
    """A robot's orientation: phi and psi (the root link's roll and pitch, a robot from a
    description file only: coopsim.formats.description) within a half turn, theta the yaw."""
    for label, value in zip(("phi", "psi"), orientation[:2]):
        if not -180 <= value <= 180:
            raise Bad(f"orientation {label} must be between -180 and 180 degrees, got {value:g}")
    why = field_problem("yaw", yaw_from_degrees(orientation[2]))
    if why:
        raise Bad(why)


_turned.rule = ("phi, psi: -180 to 180 degrees (0 but for a robot from a description file); "
                "theta, the yaw, in degrees: " + FIELDS["yaw"].span())


_RGB = fixed(("R", "G", "B"), integer("an integer", lambda v: True), within(
    "color R", "color G", "color B"))


def _color(key: str, tokens: list, rest: str) -> tuple:
    """``color R G B`` (integers 0-255) or ``color <name>`` (a key of COLORS)."""
    if len(tokens) == 1 and not NUMBER.fullmatch(tokens[0]):
        if tokens[0] not in COLORS:
            raise Bad(f"unknown colour {tokens[0]!r} (use R G B or one of {', '.join(COLORS)})")
        return COLORS[tokens[0]]
    return _RGB(key, tokens, rest)


def _param(key: str, tokens: list, rest: str) -> ParamSetting:
    """``param <module>.<name> <value>``; the value is a number or true/false."""
    if len(tokens) != 2:
        raise Bad(f"param needs 2 values (module.name value), got {len(tokens)}")
    match = _PARAM.fullmatch(tokens[0])
    if not match:
        raise Bad(f"param name must look like module.name, got {tokens[0]!r}")
    with about("param"):
        return ParamSetting(match.group(1), match.group(2), _value(tokens[1]))


def _pairs(tokens: list, what: str) -> tuple:
    """``name value`` pairs of a driver or rule line."""
    if len(tokens) % 2:
        raise Bad(f"{what} parameters come in 'name value' pairs, got {len(tokens)} words")
    pairs = []
    for name, tok in zip(tokens[::2], tokens[1::2]):
        if not _KEYWORD.fullmatch(name):
            raise Bad(f"{what} parameter name must be an identifier, got {name!r}")
        with about(f"{what} parameter {name}:"):
            pairs.append((name, _value(tok, words=True)))
    return tuple(pairs)


def _driver(key: str, tokens: list, rest: str) -> DriverSetting:
    """``driver LABEL [for MEMBER] [name value]...``."""
    if not tokens:
        raise Bad("driver needs a driver label (coopsim list shows them)")
    label, tokens = tokens[0], tokens[1:]
    member = ""
    if tokens[:1] == ["for"]:
        if len(tokens) < 2:
            raise Bad("driver ... for needs a member name")
        member, tokens = tokens[1], tokens[2:]
    return DriverSetting(label, _pairs(tokens, "driver"), member)


def _rule_param(key: str, tokens: list, rest: str) -> tuple:
    """``param NAME VALUE`` in a [RULE_n] section."""
    if len(tokens) != 2:
        raise Bad(f"param needs 2 values (name value), got {len(tokens)}")
    return _pairs(tokens, "rule")[0]


def _external(key: str, tokens: list, rest: str) -> ExternalSpec:
    """``external [stale S] [max_speed V] [max_jump M] [max_rate HZ]`` (every value > 0)."""
    known = {f.name for f in fields(ExternalSpec)}
    values = {}
    for name, value in _pairs(tokens, "external"):
        if name not in known:
            raise Bad(f"external has no setting {name!r} (it has: {', '.join(sorted(known))})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not 0 < value < 1e9:
            raise Bad(f"external {name} must be a number > 0, got {value!r}")
        values[name] = float(value)
    return ExternalSpec(**values)


def external_spec(words: list[str]) -> ExternalSpec:
    """The settings after ``external`` (``stale S max_rate HZ``...), as a [ROBOT_n] line
    takes them (``/sim`` insert_robot's text, protocol 11).

    Raises:
        Bad: an unknown setting or a value not > 0 (the sentence of the file's line).
    """
    return _external("external", list(words), "")


# --- the tables: which sections hold which keys ---------------------------------------------------

_OBJECT_KEYS = {
    "type": Key(pick("shape", SHAPES), required=True,
                doc="in 2D a box is length x width turned by theta; a cylinder or sphere is a "
                "circle of diameter length (width, and for a sphere height, equal to length)"),
    "size": Key(fixed(("length", "width", "height"), number,
                      within("size length", "size width", "size height")), required=True,
                doc="m, along the body's x, y and z"),
    "position": Key(POSITION, required=True,
                    doc="m; (x, y) on the floor; z: the centre's height on the 3D engines, "
                    "ignored by the 2D ones (files.md, *Frames and units*)"),
    "orientation": Key(fixed(("phi", "psi", "theta"), number, _flat),
                       doc="degrees; default 0 0 0; theta is the yaw, counter-clockwise from +x"),
    "mass": Key(fixed(("kg",), number, within("mass")),
                doc="default 0: static (never moves); > 0: robots can push it"),
    "color": Key(_color, doc="default 150 150 150"),
}
_SCENARIO_OBJECT_KEYS = {**_OBJECT_KEYS, "start": Key(fixed(("true/false",), boolean),
                                                      doc="default true; false: not in the world "
                                                      "until an [EVENT_n] inserts it")}
_ROBOT_KEYS = {  # type: required unless the robot comes from a description file (files.py)
    "type": Key(fixed(("robot type",), str),
                doc="a registered robot type (`coopsim list`); required unless `description` "
                "is given (then the imported type's name)"),
    "name": Key(_netname, required=True,
                doc="the robot's network name (its endpoint `/NAME`); unique among the robots"),
    "position": Key(POSITION, required=True, doc="m; a ground robot rides on the floor (z "
                    "ignored); a flyer starts at z; a fixed arm stands on its plate at z"),
    "orientation": Key(fixed(("phi", "psi", "theta"), number, _turned),
                       doc="degrees; default 0 0 0; theta is the yaw, counter-clockwise from +x; "
                       "phi and psi (about x, then y, fixed axes) turn the root link of a robot "
                       "from a description file (a file whose robot is not z up)"),
    "color": Key(_color, doc="default 40 90 230"),
    "controller": Key(rest("a shell command"), doc="launched by the simulator for this robot, "
                      "stopped with the run; default none"),
    "param": Key(_param, repeat=True, doc="a module parameter of the robot type, within its "
                 "range (the module kinds reference)"),
    "driver": Key(_driver, repeat=True, doc="an in-process controller (a registered driver) "
                  "for the section's robots, with its parameters (the plugins reference)"),
    "external": Key(_external,  # its pose comes from outside
                    doc="a real robot whose pose comes from outside (in-the-loop.md); defaults: "
                    "stale 0.5 s, max_speed 5 m/s, max_jump 0.5 m, max_rate 1000 Hz"),
    **DESCRIPTION_ROBOT_KEYS,  # description, base, search and the per-module keys
}
_SETTINGS_KEYS = {  # key = field name of specs.Settings
    "dt": Key(fixed(("s",), _dt), doc="the physics step; default 0.01"),
    "mode": Key(pick("mode", MODES), doc="default realtime; lockstep: each step waits for the "
                "attached controllers' commands"),
    "duration": Key(fixed(("s",), _positive), doc="s of sim time; default: run until stopped"),
    "seed": Key(fixed(("integer",), _seed), doc="default 0; seeds the noise and the launched "
                "controllers (`COOPSIM_ROBOT_SEED`)"),
    "speed": Key(fixed(("factor",), _nonneg), doc="1 = wall clock, 0 = as fast as possible; "
                 "default 1 in realtime, 0 in lockstep"),
    "record": Key(fixed(("true/false",), boolean), doc="default false; true records to "
                  "recordings/<scenario>-<UTC time>.mcap"),
    "engine": Key(fixed(("engine label",), str), doc="a registered physics engine (the "
                  "plugins reference, *Engines*); default pymunk"),
    "wait_for": Key(fixed(("controllers",), integer("an integer >= 0", lambda v: 0 <= v < 10**6)),
                    doc="lockstep's first step waits (10 s at most after the launched "
                    "controllers' last CPU activity) for N controllers; default: as many as "
                    "the run launches"),
    "threads": Key(fixed(("threads",), integer("an integer from 1 to 1024",
                                               lambda v: 1 <= v <= 1024)),
                   doc="threads the compiled kernels share a step's robots among (from a few "
                   "thousand robots on); changes the speed, never a result"),
    "crtp": Key(fixed(("true/false",), boolean), doc="default false; serve every crazyflie "
                "over CRTP/UDP to cflib on UDP 19850 + i (crazyflie.md)"),
}
_RULE_KEYS = {
    "type": Key(fixed(("rule label",), str), required=True,
                doc="a registered rule (the plugins reference, *Rules*)"),
    "param": Key(_rule_param, repeat=True, doc="a parameter of the rule; default: the rule's"),
}


def _robot_names(key: str, tokens: list, rest: str) -> tuple:
    """``robots NAME...``: one or more robot network names."""
    if not tokens:
        raise Bad("robots needs at least one robot name")
    for token in tokens:
        why = name_problem(token)
        if why:
            raise Bad(why)
    return tuple(tokens)


_ZONE_KEYS = {
    "kind": Key(pick("zone kind", ZONE_KINDS), required=True),
    "polygon": Key(games.polygon, doc="m, vertices in order (either winding), on the floor; one of "
                   "polygon or box"),
    "box": Key(games.box, doc="m and degrees; one of polygon or box"),
    "color": Key(_color, doc="default water 60 120 220, border 30 30 30, nogo 200 60 60"),
}
_SQUAD_KEYS = {
    "name": Key(_netname, required=True),
    "robots": Key(_robot_names, required=True, doc="robot names of this scenario, each in at "
                  "most one squad"),
    "formation": Key(pick("formation", FORMATION_NAMES), doc="default wedge"),
    "spacing": Key(fixed(("m",), _positive), doc="default 0.6"),
    "radius": Key(fixed(("m",), _positive), doc="circle and half_circle only; default n x "
                  "spacing; `coopsim check` says the least radius"),
    "team": Key(_netname, doc="default: the squad plays for no team"),
}
_FLOOR_SIZE = fixed(("length", "width", "height"), number,
                    within("floor length", "floor width", "floor height"))
WORLD_RULES = {
    "FLOOR": Rule({"size": Key(_FLOOR_SIZE, required=True)}),
    "WALL": Rule(_OBJECT_KEYS, indexed=True),
    "MESH": Rule({**MESH_KEYS, "color": Key(_color)}, indexed=True),  # coopsim.formats.scenery
    "TERRAIN": Rule(TERRAIN_KEYS),
}
SCENARIO_RULES = {
    "WORLD": Rule({"file": Key(rest("path to a .world file")),  # or a map .yaml alone
                   "map": Key(rest("path to a map image (.png, .pgm) or ROS map .yaml"))}),
    "TARGET": Rule({c: Key(POSITION, repeat=True) for c in COLORS},
                    word="target colour"),
    "ROBOT": Rule(_ROBOT_KEYS, indexed=True),
    "OBJECT": Rule(_SCENARIO_OBJECT_KEYS, indexed=True),
    "SETTINGS": Rule(_SETTINGS_KEYS),
    "RULE": Rule(_RULE_KEYS, indexed=True),
    "ZONE": Rule(_ZONE_KEYS, indexed=True),
    "SQUAD": Rule(_SQUAD_KEYS, indexed=True),
    "EVENT": Rule(EVENT_KEYS, indexed=True),
    "MONITORS": Rule(MONITORS_KEYS),
    "TASK": Rule(TASK_KEYS),
}
