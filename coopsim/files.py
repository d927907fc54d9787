"""Read and check ``.world`` and ``.scenario`` files (the normative spec is ``docs/files.md``).

The grammar follows the CoopDynSim templates: ``[SECTION]`` header lines, each followed by
``key value…`` lines whose fields are separated by tabs or spaces. Backwards-compatible
extensions: ``#`` comments, blank lines, a key line on its header's line, extra sections and keys.

Each section kind has a table of allowed keys (one :class:`_Key` row per key, saying how to parse
its values), so adding a key is adding a row. Every problem is raised as a
:class:`~coopsim.errors.FileFormatError` (``path:line: reason``); the parsers are pure and build
new frozen specs, so a bad file loads nothing.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping, Union

from . import robots
from .errors import CoopsimError, FileFormatError
from .specs import (COLORS, MODES, SHAPES, FloorSpec, ObjectSpec, ParamSetting, RobotSpec,
                    ScenarioSpec, Settings, TargetSpec, WorldSpec, yaw_from_degrees)

PathLike = Union[str, "os.PathLike[str]"]

#: Largest file read, bytes; anything bigger is not a hand-written world or scenario.
MAX_FILE_BYTES = 8 * 1024 * 1024
#: Names the simulator serves itself (``/sim``, ``/playback``); no robot may take them.
RESERVED_NAMES = ("sim", "playback")

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_NOT_FINITE = re.compile(r"[+-]?(nan|inf|infinity)", re.IGNORECASE)
_INT = re.compile(r"[+-]?\d{1,19}", re.ASCII)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER = re.compile(r"\[([^\]]*)\](.*)")
_INDEX = re.compile(r"[1-9][0-9]{0,8}", re.ASCII)
_NETNAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_PARAM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)")
_COMMENT = re.compile(r"(^|\s)#.*")


class _Bad(Exception):
    """A value is wrong; the caller knows the file and line and adds them."""


# --- value converters: one token in, one value out, or _Bad("must ...") --------------------------

def _number(tok: str) -> float:
    if not _NUMBER.fullmatch(tok):
        finite = "finite " if _NOT_FINITE.fullmatch(tok) else ""
        raise _Bad(f"must be a {finite}number, got {tok!r}")
    if not math.isfinite(float(tok)):
        raise _Bad(f"must be a finite number, got {tok!r}")
    return float(tok)


def _real(text: str, ok: Callable[[float], bool]) -> Callable[[str], float]:
    """Converter to a float for which ``ok`` holds; ``text`` says which (``> 0``)."""
    def conv(tok: str) -> float:
        value = _number(tok)
        if not ok(value):
            raise _Bad(f"must be {text}, got {tok}")
        return value
    return conv


def _integer(text: str, ok: Callable[[int], bool]) -> Callable[[str], int]:
    """Converter to an int for which ``ok`` holds; ``text`` says which (``an integer 0-255``)."""
    def conv(tok: str) -> int:
        if not _INT.fullmatch(tok) or not ok(int(tok)):
            raise _Bad(f"must be {text}, got {tok!r}")
        return int(tok)
    return conv


_positive = _real("> 0", lambda v: v > 0)
_nonneg = _real(">= 0", lambda v: v >= 0)
_dt = _real("between 0.001 and 0.1 s", lambda v: 0.001 <= v <= 0.1)
_seed = _integer("an integer >= 0", lambda v: 0 <= v < 2**63)
_byte = _integer("an integer 0-255", lambda v: 0 <= v <= 255)


def _bool(tok: str) -> bool:
    if tok.lower() not in ("true", "false", "1", "0"):
        raise _Bad(f"must be true, false, 1 or 0, got {tok!r}")
    return tok.lower() in ("true", "1")


def _netname(tok: str) -> str:
    if not _NETNAME.fullmatch(tok):
        raise _Bad(f"must be letters, digits, '_' or '-', starting with a letter, got {tok!r}")
    if tok in RESERVED_NAMES:
        raise _Bad(f"must not be {tok!r}, a name the simulator itself uses")
    return tok


def _flat(orientation: tuple) -> None:
    if orientation[0] != 0 or orientation[1] != 0:
        raise _Bad("orientation phi and psi must be 0 in 2D (only theta, the yaw, is used), "
                   f"got {orientation[0]:g} {orientation[1]:g}")


# --- key parsers: (key, tokens, rest of line) -> value, or _Bad("whole reason") ------------------

_Parse = Callable[[str, list, str], object]


def _fixed(names: tuple, conv, check: Callable | None = None) -> _Parse:
    """Parser for a key taking exactly ``len(names)`` tokens, each run through ``conv``.

    ``conv`` is one converter for every token or a tuple of one per token; ``check`` sees the
    whole converted value. One value gives a scalar, several a tuple.
    """
    convs = conv if isinstance(conv, tuple) else (conv,) * len(names)

    def parse(key: str, tokens: list, rest: str) -> object:
        if len(tokens) != len(names):
            count = "1 value" if len(names) == 1 else f"{len(names)} values"
            raise _Bad(f"{key} needs {count} ({' '.join(names)}), got {len(tokens)}")
        values = []
        for name, tok, one in zip(names, tokens, convs):
            try:
                values.append(one(tok))
            except _Bad as exc:
                raise _Bad(f"{key if len(names) == 1 else key + ' ' + name} {exc}") from None
        value = tuple(values) if len(names) > 1 else values[0]
        if check is not None:
            check(value)
        return value
    return parse


def _pick(what: str, options: Iterable[str]) -> _Parse:
    """Parser for a key taking one word out of ``options``."""
    options = tuple(options)

    def parse(key: str, tokens: list, rest: str) -> str:
        if len(tokens) != 1:
            raise _Bad(f"{key} needs 1 value ({what}), got {len(tokens)}")
        if tokens[0] not in options:
            raise _Bad(f"unknown {what} {tokens[0]!r} (expected {', '.join(options)})")
        return tokens[0]
    return parse


def _rest(what: str) -> _Parse:
    """Parser for a key taking the rest of its line verbatim (paths, shell commands)."""
    def parse(key: str, tokens: list, rest: str) -> str:
        if not rest:
            raise _Bad(f"{key} needs a value ({what})")
        return rest
    return parse


_RGB = _fixed(("R", "G", "B"), _byte)


def _color(key: str, tokens: list, rest: str) -> tuple:
    """``color R G B`` (integers 0-255) or ``color <name>`` (a key of COLORS)."""
    if len(tokens) == 1 and not _NUMBER.fullmatch(tokens[0]):
        if tokens[0] not in COLORS:
            raise _Bad(f"unknown colour {tokens[0]!r} (use R G B or one of {', '.join(COLORS)})")
        return COLORS[tokens[0]]
    return _RGB(key, tokens, rest)


def _param(key: str, tokens: list, rest: str) -> ParamSetting:
    """``param <module>.<name> <value>``; the value is a number or true/false."""
    if len(tokens) != 2:
        raise _Bad(f"param needs 2 values (module.name value), got {len(tokens)}")
    match, tok = _PARAM.fullmatch(tokens[0]), tokens[1]
    if not match:
        raise _Bad(f"param name must look like module.name, got {tokens[0]!r}")
    if tok.lower() in ("true", "false"):
        return ParamSetting(match.group(1), match.group(2), tok.lower() == "true")
    try:
        value = int(tok) if _INT.fullmatch(tok) else _number(tok)
    except _Bad:
        raise _Bad(f"param value must be a number or true/false, got {tok!r}") from None
    return ParamSetting(match.group(1), match.group(2), value)


# --- the tables: which sections hold which keys ---------------------------------------------------

@dataclass(frozen=True)
class _Key:
    """One allowed key: how to parse it, whether it must appear, whether it may repeat."""

    parse: _Parse
    required: bool = False
    repeat: bool = False


@dataclass(frozen=True)
class _Rule:
    """One section kind and its keys; ``indexed`` kinds are written ``[KIND_n]``, n = 1, 2, …"""

    keys: Mapping[str, _Key]
    indexed: bool = False
    word: str = "key"


_XYZ = ("x", "y", "z")
_OBJECT_KEYS = {
    "type": _Key(_pick("shape", SHAPES), required=True),
    "size": _Key(_fixed(("length", "width", "height"), _positive), required=True),
    "position": _Key(_fixed(_XYZ, _number), required=True),
    "orientation": _Key(_fixed(("phi", "psi", "theta"), _number, _flat)),
    "mass": _Key(_fixed(("kg",), _nonneg)),
    "color": _Key(_color),
}
_ROBOT_KEYS = {
    "type": _Key(_fixed(("robot type",), str), required=True),
    "name": _Key(_fixed(("network name",), _netname), required=True),
    "position": _OBJECT_KEYS["position"],
    "orientation": _OBJECT_KEYS["orientation"],
    "color": _OBJECT_KEYS["color"],
    "controller": _Key(_rest("a shell command")),
    "param": _Key(_param, repeat=True),
}
_SETTINGS_KEYS = {  # key = field name of specs.Settings
    "dt": _Key(_fixed(("s",), _dt)),
    "mode": _Key(_pick("mode", MODES)),
    "duration": _Key(_fixed(("s",), _positive)),
    "seed": _Key(_fixed(("integer",), _seed)),
    "speed": _Key(_fixed(("factor",), _nonneg)),
    "record": _Key(_fixed(("true/false",), _bool)),
}
_FLOOR_SIZE = _fixed(("length", "width", "height"), (_positive, _positive, _nonneg))
_WORLD_RULES = {
    "FLOOR": _Rule({"size": _Key(_FLOOR_SIZE, required=True)}),
    "WALL": _Rule(_OBJECT_KEYS, indexed=True),
}
_SCENARIO_RULES = {
    "WORLD": _Rule({"file": _Key(_rest("path to a .world file"), required=True)}),
    "TARGET": _Rule({c: _Key(_fixed(_XYZ, _number), repeat=True) for c in COLORS},
                    word="target colour"),
    "ROBOT": _Rule(_ROBOT_KEYS, indexed=True),
    "OBJECT": _Rule(_OBJECT_KEYS, indexed=True),
    "SETTINGS": _Rule(_SETTINGS_KEYS),
}


# --- reading and splitting into sections ----------------------------------------------------------

@dataclass
class _Section:
    """One parsed section; ``entries`` holds (key, converted value, line) in file order."""

    name: str
    kind: str
    line: int
    entries: list = field(default_factory=list)

    def get(self, key: str, default: object = None) -> object:
        return next((v for k, v, _ in self.entries if k == key), default)

    def line_of(self, key: str) -> int:
        return next((n for k, _, n in self.entries if k == key), self.line)


def _read(path: PathLike) -> str:
    """Return the text of ``path``, or raise FileFormatError (missing, unreadable, binary)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise FileFormatError(path, 0, "no such file") from None
    except IsADirectoryError:
        raise FileFormatError(path, 0, "is a directory, not a file") from None
    except OSError as exc:
        raise FileFormatError(path, 0, f"cannot read file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise FileFormatError(path, 0, f"file too large (over {MAX_FILE_BYTES} bytes)")
    if b"\x00" in data:
        raise FileFormatError(path, 1, "binary file, not a text file (it holds NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data.count(b"\n", 0, exc.start) + 1
        raise FileFormatError(path, 1, "binary file, not a text file "
                                       f"(invalid UTF-8 on line {bad})") from None


def _kind_of(name: str, rules: Mapping[str, _Rule], ext: str) -> str:
    """Return the rule key for section ``name`` or raise _Bad saying why it is not allowed."""
    if name in rules and not rules[name].indexed:
        return name
    head, _, index = name.rpartition("_")
    if head in rules and rules[head].indexed:
        if _INDEX.fullmatch(index):
            return head
        raise _Bad(f"bad section name [{name}]: n in [{head}_n] must be a positive integer")
    if name in rules:
        raise _Bad(f"bad section name [{name}]: write [{name}_n] with n = 1, 2, …")
    if name != name.upper():
        try:
            _kind_of(name.upper(), rules, ext)
        except _Bad:
            pass
        else:
            raise _Bad(f"section names are upper case: write [{name.upper()}], not [{name}]")
    allowed = ", ".join(f"[{k}_n]" if r.indexed else f"[{k}]" for k, r in rules.items())
    raise _Bad(f"unknown section [{name}] in a {ext} file (allowed: {allowed})")


def _open(line: str, lineno: int, path: PathLike, rules, ext: str, seen: dict) -> tuple:
    """Start the section whose header is ``line``; return it and the text after the header."""
    match = _HEADER.fullmatch(line)
    if not match:
        raise FileFormatError(path, lineno, f"malformed section header {line[:40]!r}")
    name = match.group(1)
    try:
        kind = _kind_of(name, rules, ext)
    except _Bad as exc:
        raise FileFormatError(path, lineno, str(exc)) from None
    if name in seen:
        raise FileFormatError(path, lineno, f"duplicate section [{name}] "
                                            f"(first at line {seen[name]})")
    seen[name] = lineno
    return _Section(name, kind, lineno), match.group(2).strip()


def _add(section: _Section, line: str, lineno: int, path: PathLike, rule: _Rule) -> None:
    """Parse the ``key value…`` line ``line`` into ``section``."""
    key = line.split(maxsplit=1)[0]
    if not _KEY.fullmatch(key):
        raise FileFormatError(path, lineno, f"not a 'key value…' line: {line[:40]!r}")
    spec = rule.keys.get(key)
    if spec is None:
        raise FileFormatError(path, lineno, f"unknown {rule.word} {key!r} in [{section.name}] "
                                            f"(expected {', '.join(rule.keys)})")
    if not spec.repeat and any(k == key for k, _, _ in section.entries):
        raise FileFormatError(path, lineno, f"duplicate key {key!r} in [{section.name}] "
                                            f"(first at line {section.line_of(key)})")
    try:
        value = spec.parse(key, line.split()[1:], line[len(key):].strip())
    except _Bad as exc:
        raise FileFormatError(path, lineno, str(exc)) from None
    section.entries.append((key, value, lineno))


def _close(section: _Section | None, path: PathLike, rules: Mapping[str, _Rule]) -> None:
    """Check that a finished section holds all its required keys."""
    if section is None:
        return
    have = {k for k, _, _ in section.entries}
    for key, spec in rules[section.kind].keys.items():
        if spec.required and key not in have:
            raise FileFormatError(path, section.line,
                                  f"[{section.name}] is missing the required key {key!r}")


def _sections(text: str, path: PathLike, rules: Mapping[str, _Rule], ext: str) -> list:
    """Split ``text`` into checked sections, raising FileFormatError at the first problem."""
    if "\x00" in text:
        raise FileFormatError(path, 1, "binary file, not a text file (it holds NUL bytes)")
    if not text.strip():
        raise FileFormatError(path, 0, "empty file")
    sections: list[_Section] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = _COMMENT.sub("", raw).strip()
        if line.startswith("["):
            _close(sections[-1] if sections else None, path, rules)
            section, line = _open(line, lineno, path, rules, ext, seen)
            sections.append(section)
        if not line:
            continue
        if not sections:
            raise FileFormatError(path, lineno, "text before the first [SECTION] header")
        _add(sections[-1], line, lineno, path, rules[sections[-1].kind])
    if not sections:
        raise FileFormatError(path, 0, "empty file (only comments and blank lines)")
    _close(sections[-1], path, rules)
    return sections


# --- building specs -------------------------------------------------------------------------------

def _floor_text(floor: FloorSpec) -> str:
    return f"the {floor.length:g} x {floor.width:g} m floor"


def _object(section: _Section, floor: FloorSpec, path: PathLike) -> ObjectSpec:
    """Build the ObjectSpec of a [WALL_n] or [OBJECT_n] section; its centre must be on the floor."""
    shape, size, pos = section.get("type"), section.get("size"), section.get("position")
    if shape != "box" and (size[1] != size[0] or (shape == "sphere" and size[2] != size[0])):
        n = 3 if shape == "sphere" else 2
        dims = "length, width and height" if n == 3 else "length and width"
        raise FileFormatError(path, section.line_of("size"), f"a {shape}'s {dims} must be equal "
                              f"(its diameter), got {' '.join(f'{v:g}' for v in size[:n])}")
    if not floor.contains(pos[0], pos[1]):
        raise FileFormatError(path, section.line_of("position"), f"centre ({pos[0]:g}, "
                              f"{pos[1]:g}) of [{section.name}] is off {_floor_text(floor)}")
    extra = {"color": section.get("color")} if section.get("color") else {}
    return ObjectSpec(name=section.name, shape=shape, size=size, position=pos,
                      yaw=yaw_from_degrees(section.get("orientation", (0.0, 0.0, 0.0))[2]),
                      mass=section.get("mass", 0.0), line=section.line, **extra)


def _targets(section: _Section, floor: FloorSpec, path: PathLike) -> list:
    """Build the TargetSpecs of a [TARGET] section; each must lie on the floor."""
    targets = []
    for color, pos, lineno in section.entries:
        if not floor.contains(pos[0], pos[1]):
            raise FileFormatError(path, lineno, f"{color} target at ({pos[0]:g}, {pos[1]:g}) "
                                                f"is off {_floor_text(floor)}")
        targets.append(TargetSpec(color, pos, lineno))
    return targets


def _robot(section: _Section, floor: FloorSpec, path: PathLike) -> RobotSpec:
    """Build and validate the RobotSpec of a [ROBOT_n] section; it must fit on the floor."""
    params = tuple(replace(p, line=n) for k, p, n in section.entries if k == "param")
    extra = {"color": section.get("color")} if section.get("color") else {}
    spec = RobotSpec(type=section.get("type"), name=section.get("name"),
                     position=section.get("position"),
                     yaw=yaw_from_degrees(section.get("orientation", (0.0, 0.0, 0.0))[2]),
                     controller=section.get("controller"), params=params, line=section.line,
                     **extra)
    _validate(spec, section.line_of("type"), section.line, path)
    try:
        radius = robots.footprint_radius(spec.type)
    except CoopsimError as exc:
        raise FileFormatError(path, section.line_of("type"), str(exc)) from None
    x, y, _ = spec.position
    if not floor.contains(x, y, radius):
        raise FileFormatError(path, section.line_of("position"), f"robot {spec.name} "
                              f"({spec.type}, radius {radius:g} m) at ({x:g}, {y:g}) does not fit "
                              f"on {_floor_text(floor)}")
    return spec


def _validate(spec: RobotSpec, type_line: int, line: int, path: PathLike) -> None:
    """Run robots.validate_robot_spec on the type alone, then on each param at its own line.

    With params, the whole spec is validated last and a remaining error reported at ``line``.
    """
    parts = [(replace(spec, params=()), type_line)]
    parts += [(replace(spec, params=(p,)), p.line) for p in spec.params]
    parts += [(spec, line)] if spec.params else []
    for part, at in parts:
        try:
            robots.validate_robot_spec(part)
        except CoopsimError as exc:
            raise FileFormatError(path, at, str(exc)) from None


def _world_of(section: _Section, path: PathLike) -> WorldSpec:
    """Load the world a [WORLD] section names, relative to the scenario file's folder."""
    name, line = section.get("file"), section.line_of("file")
    where = os.path.normpath(os.path.join(os.path.dirname(os.fspath(path)), name))
    if not os.path.exists(where):
        raise FileFormatError(path, line, f"world file {name!r} not found (looked for {where})")
    if os.path.isdir(where):
        raise FileFormatError(path, line, f"world file {name!r} is a directory")
    return load_world(where)


def _stem(path: PathLike) -> str:
    return os.path.splitext(os.path.basename(os.fspath(path)))[0]


# --- public API -----------------------------------------------------------------------------------

def parse_world(text: str, path: PathLike = "") -> WorldSpec:
    """Parse the text of a ``.world`` file.

    Args:
        text: The whole file.
        path: Where it came from, for messages and ``WorldSpec.path``.

    Returns:
        The world: its floor and its ``[WALL_n]`` objects in file order.

    Raises:
        FileFormatError: At the first problem, as ``path:line: reason``.
    """
    sections = _sections(text, path, _WORLD_RULES, ".world")
    floors = [s for s in sections if s.kind == "FLOOR"]
    if not floors:
        raise FileFormatError(path, 0, "no [FLOOR] section; a world needs one")
    if sections[0] is not floors[0]:
        raise FileFormatError(path, floors[0].line, "[FLOOR] must be the first section, "
                                                    f"before [{sections[0].name}]")
    floor = FloorSpec(*floors[0].get("size"))
    objects = tuple(_object(s, floor, path) for s in sections[1:])
    return WorldSpec(floor=floor, objects=objects, path=os.fspath(path), text=text)


def parse_scenario(text: str, path: PathLike = "") -> ScenarioSpec:
    """Parse the text of a ``.scenario`` file and load the world it names.

    Args:
        text: The whole file.
        path: Where it came from: for messages, ``ScenarioSpec.path`` and ``name``, and the
            folder the ``[WORLD] file`` path is relative to.

    Returns:
        The scenario with its world loaded; targets, robots and objects in file order.

    Raises:
        FileFormatError: At the first problem; a problem inside the world file is reported at
            the world file's own path and line.
    """
    sections = _sections(text, path, _SCENARIO_RULES, ".scenario")
    worlds = [s for s in sections if s.kind == "WORLD"]
    if not worlds:
        raise FileFormatError(path, 0, "no [WORLD] section; a scenario needs one")
    world = _world_of(worlds[0], path)
    out: dict[str, list] = {"TARGET": [], "ROBOT": [], "OBJECT": []}
    names: dict[str, str] = {}
    for s in sections:
        if s.kind == "TARGET":
            out["TARGET"] += _targets(s, world.floor, path)
        elif s.kind == "OBJECT":
            out["OBJECT"].append(_object(s, world.floor, path))
        elif s.kind == "ROBOT":
            if s.get("name") in names:
                raise FileFormatError(path, s.line_of("name"), f"robot name {s.get('name')!r} "
                                      f"is already used by [{names[s.get('name')]}]")
            names[s.get("name")] = s.name
            out["ROBOT"].append(_robot(s, world.floor, path))
    settings = [Settings(**{k: v for k, v, _ in s.entries}) for s in sections
                if s.kind == "SETTINGS"]
    return ScenarioSpec(world=world, targets=tuple(out["TARGET"]), robots=tuple(out["ROBOT"]),
                        objects=tuple(out["OBJECT"]), settings=(settings or [Settings()])[0],
                        path=os.fspath(path), text=text, name=_stem(path) or "scenario")


def load_world(path: PathLike) -> WorldSpec:
    """Read and parse a ``.world`` file; raise FileFormatError on any problem."""
    return parse_world(_read(path), path)


def load_scenario(path: PathLike) -> ScenarioSpec:
    """Read and parse a ``.scenario`` file and its world; raise FileFormatError on any problem."""
    return parse_scenario(_read(path), path)


def load(path: PathLike) -> WorldSpec | ScenarioSpec:
    """Load a ``.world`` or a ``.scenario`` file, chosen by its extension.

    Raises:
        FileFormatError: For any other extension (line 0) or any problem in the file.
    """
    ext = os.path.splitext(os.fspath(path))[1]
    if ext == ".world":
        return load_world(path)
    if ext == ".scenario":
        return load_scenario(path)
    raise FileFormatError(path, 0, f"unknown file type {ext or '(no extension)'!r}: "
                                   "expected .world or .scenario")


def scenario_from_world(world: WorldSpec) -> ScenarioSpec:
    """A world run on its own: no robots, no targets, default settings, named after the file."""
    return ScenarioSpec(world=world, name=_stem(world.path) or "world")


def check(paths: Iterable[PathLike]) -> list[str]:
    """Load every file in ``paths`` and collect the problems.

    Args:
        paths: ``.world`` and ``.scenario`` files (a single path is accepted too).

    Returns:
        One ``path:line: reason`` string per bad file, in the order given; empty when all load.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    problems = []
    for path in paths:
        try:
            load(path)
        except FileFormatError as exc:
            problems.append(str(exc))
    return problems
