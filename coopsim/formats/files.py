"""The ``.world`` and ``.scenario`` formats (normative spec: ``docs/files.md``).

The grammar is :mod:`coopsim.formats.sections` and each format's table of sections and keys
:mod:`coopsim.formats.keys`; this module builds the frozen specs from them and checks what
needs the whole file. The parsers are pure, so a bad file loads nothing: the problem
on the earliest line raises :class:`~coopsim.model.errors.FileFormatError` (``path:line:
reason``), whatever pass found it.
"""

from __future__ import annotations

import os
from dataclasses import replace

from ..model.errors import CoopsimError, FileFormatError, NotAllowedError, ScenarioError
from ..model import limits
from ..model.plugins import METRICS, ROBOT_TYPES, RULES, blame
from ..model.specs import (FloorSpec, ObjectSpec, RobotSpec, RuleSetting, ScenarioSpec, Settings,
                           TargetSpec, WorldSpec, yaw_from_degrees)
from ..model.validate import check_events, check_monitors, check_rates, check_robot_spec
from . import games, maps, scenery
from .description import described_robot
from .enginecheck import check_engine
from .events import build_events, build_monitors
from .keys import SCENARIO_RULES, WORLD_RULES
from .sections import PathLike, Section, read_text, split_sections
from .task import build_task, check_task


# --- building specs -------------------------------------------------------------------------------

class _FirstError:
    """Collects the errors of checks that do not run in line order (a file is checked in passes:
    each section on its own, then what needs the whole file) and raises the one on the earliest
    line, so a file with several problems is reported at its first."""

    def __init__(self) -> None:
        self._found: list[tuple[int, FileFormatError]] = []

    def attempt(self, check, *args, at: int | None = None):
        """``check(*args)``, or None after noting its FileFormatError (ordered at line ``at``
        when given: an error inside another file counts at the line that names that file)."""
        try:
            return check(*args)
        except FileFormatError as exc:
            self._found.append((exc.line if at is None else at, exc))
            return None

    def raise_first(self) -> None:
        """Raise the error on the earliest line (the first noted among equals), if any."""
        if self._found:
            raise min(self._found, key=lambda found: found[0])[1]


def _floor_text(floor: FloorSpec) -> str:
    return f"the {floor.length:g} x {floor.width:g} m floor"


def _object(section: Section, floor: FloorSpec, path: PathLike) -> ObjectSpec:
    """Build the ObjectSpec of a [WALL_n] or [OBJECT_n] section; its centre must be on the floor."""
    shape, size, pos = section.get("type"), section.get("size"), section.get("position")
    errors = []
    if shape != "box" and (size[1] != size[0] or (shape == "sphere" and size[2] != size[0])):
        n = 3 if shape == "sphere" else 2
        dims = "length, width and height" if n == 3 else "length and width"
        errors.append(FileFormatError(path, section.line_of("size"), f"a {shape}'s {dims} must "
                      f"be equal (its diameter), got {' '.join(f'{v:g}' for v in size[:n])}"))
    if not floor.contains(pos[0], pos[1]):
        errors.append(FileFormatError(path, section.line_of("position"), f"centre ({pos[0]:g}, "
                      f"{pos[1]:g}) of [{section.name}] is off {_floor_text(floor)}"))
    if errors:
        raise min(errors, key=lambda exc: exc.line)
    extra = {"color": section.get("color")} if section.get("color") else {}
    return ObjectSpec(name=section.name, shape=shape, size=size, position=pos,
                      yaw=yaw_from_degrees(section.get("orientation", (0.0, 0.0, 0.0))[2]),
                      mass=section.get("mass", 0.0), line=section.line,
                      start=section.get("start", True), **extra)


def _targets(section: Section, floor: FloorSpec, path: PathLike) -> list:
    """Build the TargetSpecs of a [TARGET] section; each must lie on the floor."""
    targets = []
    for color, pos, lineno in section.entries:
        if not floor.contains(pos[0], pos[1]):
            raise FileFormatError(path, lineno, f"{color} target at ({pos[0]:g}, {pos[1]:g}) "
                                                f"is off {_floor_text(floor)}")
        targets.append(TargetSpec(color, pos, lineno))
    return targets


def _robot(section: Section, floor: FloorSpec, path: PathLike, folders=None,
           taken: dict | None = None) -> RobotSpec:
    """Build and validate the RobotSpec of a [ROBOT_n] section; it must fit on the floor.
    A robot from a description file gets its type here
    (:func:`~coopsim.formats.description.described_robot`; ``taken``: the described types
    earlier sections made)."""
    rtype, dspec = described_robot(section, path, folders, taken)
    if rtype is None:
        raise FileFormatError(path, section.line, f"[{section.name}] is missing the required "
                                                  "key 'type' (or 'description')")
    params = tuple(replace(p, line=n) for k, p, n in section.entries if k == "param")
    drivers = tuple(replace(d, line=n) for k, d, n in section.entries if k == "driver")
    extra = {"color": section.get("color")} if section.get("color") else {}
    if section.get("external") is not None:  # a robot whose pose comes from outside
        extra["external"] = section.get("external")
    spec = RobotSpec(type=rtype, name=section.get("name"), description=dspec,
                     position=section.get("position"),
                     yaw=yaw_from_degrees(section.get("orientation", (0.0, 0.0, 0.0))[2]),
                     controller=section.get("controller"), params=params, drivers=drivers,
                     line=section.line, **extra)
    first = _FirstError()
    first.attempt(_validate, spec, section.line_of("type"), section.line, path)
    if spec.type in ROBOT_TYPES:  # an unknown type has no footprint to fit
        first.attempt(_fits, spec, floor, section.line_of("position"), path)
    first.raise_first()
    return spec


def _fits(spec: RobotSpec, floor: FloorSpec, line: int, path: PathLike) -> None:
    """Raise FileFormatError at ``line`` when the robot's footprint is not all on the floor."""
    radius = ROBOT_TYPES.get(spec.type).footprint
    x, y, _ = spec.position
    if not floor.contains(x, y, radius):
        raise FileFormatError(path, line, f"robot {spec.name} ({spec.type}, radius {radius:g} m) "
                              f"at ({x:g}, {y:g}) does not fit on {_floor_text(floor)}")


def _validate(spec: RobotSpec, type_line: int, line: int, path: PathLike) -> None:
    """Run check_robot_spec on the type alone, then on each param and driver at its own line.

    With params or drivers, the whole spec is validated last and a remaining error reported at
    ``line``; one about a module's values together (an airframe's thrust-to-weight) at the
    last ``param`` line of that module, where the combination was completed.
    """
    parts = [(replace(spec, params=(p,), drivers=()), p.line) for p in spec.params]
    parts += [(replace(spec, params=(), drivers=(d,)), d.line) for d in spec.drivers]
    parts.sort(key=lambda part: part[1])  # param and driver lines may interleave
    parts.insert(0, (replace(spec, params=(), drivers=()), type_line))  # the rest needs the type
    parts += [(spec, line)] if spec.params or spec.drivers else []
    for part, at in parts:
        whole = len(part.params) != 1 or part is spec  # one param line: its own range only
        try:
            check_robot_spec(part, together=whole)
        except CoopsimError as exc:
            module = getattr(exc, "module", None)
            lines = [p.line for p in spec.params if p.module == module]
            raise FileFormatError(path, max(lines) if module and lines and part is spec
                                  else at, str(exc)) from None


def _rule(section: Section, path: PathLike) -> RuleSetting:
    """Build the RuleSetting of a [RULE_n] section, checking the label and each value."""
    label = section.get("type")
    try:
        cls = RULES.get(label)
    except CoopsimError as exc:
        raise FileFormatError(path, section.line_of("type"), str(exc)) from None
    settings = []
    for key, pair, lineno in section.entries:
        if key == "param":
            try:
                cls.values(dict([pair]))
            except CoopsimError as exc:
                raise FileFormatError(path, lineno, str(exc)) from None
            settings.append(pair)
    return RuleSetting(label, tuple(settings), section.line)


def _world_of(section: Section, path: PathLike, folders=None) -> WorldSpec:
    """Load the world a [WORLD] section names, relative to the scenario file's folder (inside
    ``folders``, a :class:`~coopsim.formats.folders.DataFolders`, when given)."""
    name, line = section.get("file"), section.line_of("file")
    where = os.path.normpath(os.path.join(os.path.dirname(os.fspath(path)), name))
    if folders is not None:
        try:
            where = folders.readable(where, (".world",))
        except NotAllowedError as exc:
            raise NotAllowedError(f"{path}:{line}: world file {name!r}: {exc}") from None
    if not os.path.exists(where):
        raise FileFormatError(path, line, f"world file {name!r} not found (looked for {where})")
    if os.path.isdir(where):
        raise FileFormatError(path, line, f"world file {name!r} is a directory")
    return load_world(where, folders)


def _map_path(section: Section, path: PathLike, folders=None) -> str:
    """The map file the [WORLD] section names, relative to the scenario file's folder (inside
    ``folders`` when given)."""
    name, line = section.get("map"), section.line_of("map")
    where = os.path.normpath(os.path.join(os.path.dirname(os.fspath(path)), name))
    if folders is not None:
        try:
            where = folders.readable(where, maps.SUFFIXES)
        except NotAllowedError as exc:
            raise NotAllowedError(f"{path}:{line}: map file {name!r}: {exc}") from None
    return where


def _map_world(section: Section, path: PathLike, folders=None) -> WorldSpec:
    """The world of a [WORLD] with a map and no world file: the map's floor (its walls are
    added as for any map)."""
    if section.get("map") is None:
        raise FileFormatError(path, section.line, "[WORLD] is missing the required key 'file' "
                                                  "(a .world file; or 'map' naming a ROS "
                                                  "map_server .yaml, whose extent is the floor)")
    try:
        floor = maps.floor_of(_map_path(section, path, folders), confine=folders is not None)
    except maps.MapError as exc:
        raise FileFormatError(path, section.line_of("map"), str(exc)) from None
    return WorldSpec(floor=floor)


def _with_map(world: WorldSpec, section: Section, path: PathLike, folders=None) -> WorldSpec:
    """``world`` with the static walls of the map the [WORLD] section names (coopsim.formats.maps),
    relative to the scenario file's folder (inside ``folders`` when given)."""
    line = section.line_of("map")
    where = _map_path(section, path, folders)
    try:
        walls = maps.load_map(where, world.floor, confine=folders is not None)
    except maps.MapError as exc:
        raise FileFormatError(path, line, str(exc)) from None
    return replace(world, objects=world.objects + walls)


def _stem(path: PathLike) -> str:
    return os.path.splitext(os.path.basename(os.fspath(path)))[0]


# --- public API -----------------------------------------------------------------------------------

def parse_world(text: str, path: PathLike = "", folders=None) -> WorldSpec:
    """Parse the text of a ``.world`` file.

    Args:
        text: The whole file.
        path: Where it came from, for messages and ``WorldSpec.path``; the folder its mesh
            and image files are relative to.
        folders: The data folders its mesh and image files must be in (a request named it),
            or None.

    Returns:
        The world: its floor, its ``[WALL_n]`` objects in file order, its ``[MESH_n]`` and
        ``[TERRAIN]`` (:mod:`coopsim.formats.scenery`).

    Raises:
        FileFormatError: At the first problem, as ``path:line: reason``.
        NotAllowedError: a mesh or image file outside ``folders``.
    """
    sections = split_sections(text, path, WORLD_RULES, ".world")
    floors = [s for s in sections if s.kind == "FLOOR"]
    if not floors:
        raise FileFormatError(path, 0, "no [FLOOR] section; a world needs one")
    if sections[0] is not floors[0]:
        raise FileFormatError(path, floors[0].line, "[FLOOR] must be the first section, "
                                                    f"before [{sections[0].name}]")
    floor = FloorSpec(*floors[0].get("size"))
    first = _FirstError()
    objects = [first.attempt(_object, s, floor, path) for s in sections if s.kind == "WALL"]
    meshes = [first.attempt(scenery.mesh, s, path, folders) for s in sections
              if s.kind == "MESH"]
    terrain = [first.attempt(scenery.terrain, s, path, folders) for s in sections
               if s.kind == "TERRAIN"]
    first.attempt(scenery.check_count, meshes, path)
    first.raise_first()
    if limits.too_many_objects(len(objects)):
        raise FileFormatError(path, objects[limits.MAX_OBJECTS].line,
                              limits.too_many_objects(len(objects)))
    return WorldSpec(floor=floor, objects=tuple(objects), path=os.fspath(path), text=text,
                     meshes=tuple(meshes), terrain=(terrain or [None])[0])


def parse_scenario(text: str, path: PathLike = "", folders=None) -> ScenarioSpec:
    """Parse the text of a ``.scenario`` file and load the world it names.

    Args:
        text: The whole file.
        path: Where it came from: for messages, ``ScenarioSpec.path`` and ``name``, and the
            folder the ``[WORLD] file`` path is relative to.
        folders: The data folders the world file must be in (a
            :class:`~coopsim.formats.folders.DataFolders`), for a file a request named; None
            (a file the user named) confines nothing.

    Returns:
        The scenario with its world loaded; targets, robots and objects in file order.

    Raises:
        FileFormatError: At the first problem; a problem inside the world file is reported at
            the world file's own path and line.
        NotAllowedError: the world file is outside ``folders``, or a ``python`` metric names
            code the folders do not allow (see ``DataFolders.check_code``).
    """
    sections = split_sections(text, path, SCENARIO_RULES, ".scenario")
    worlds = [s for s in sections if s.kind == "WORLD"]
    if not worlds:
        raise FileFormatError(path, 0, "no [WORLD] section; a scenario needs one")
    first = _FirstError()
    if worlds[0].get("file") is None:  # a map_server YAML alone: its extent is the floor
        world = first.attempt(_map_world, worlds[0], path, folders, at=worlds[0].line)
    else:
        world = first.attempt(_world_of, worlds[0], path, folders, at=worlds[0].line_of("file"))
    if world is not None and worlds[0].get("map"):
        world = first.attempt(_with_map, world, worlds[0], path, folders)
    # without its world the placements cannot be checked, but everything else still is
    floor = world.floor if world is not None else FloorSpec(float("inf"), float("inf"))
    out = _scenario_sections(sections, floor, path, first, folders)
    first.attempt(games.check_squads, out["SQUAD"], [s for s in sections if s.kind == "SQUAD"],
                  [r for r in out["ROBOT"] if r is not None], path)
    settings = [Settings(**{k: v for k, v, _ in s.entries}) for s in sections
                if s.kind == "SETTINGS"]
    monitors = [first.attempt(build_monitors, s, path) for s in sections if s.kind == "MONITORS"]
    events = first.attempt(build_events, [s for s in sections if s.kind == "EVENT"])
    tasks = [first.attempt(build_task, s, path) for s in sections if s.kind == "TASK"]
    first.raise_first()
    if folders is not None:  # before check_monitors imports anything
        for metric in (monitors[0].metrics if monitors else ()):
            if metric.kind in METRICS and METRICS.get(metric.kind).runs_code:
                folders.check_code(path, metric.line, metric.args[0])
    spec = ScenarioSpec(world=world, targets=tuple(out["TARGET"]), robots=tuple(out["ROBOT"]),
                        objects=tuple(out["OBJECT"]), settings=(settings or [Settings()])[0],
                        rules=tuple(out["RULE"]), zones=tuple(out["ZONE"]),
                        squads=tuple(out["SQUAD"]), path=os.fspath(path), text=text,
                        name=_stem(path) or "scenario", events=events,
                        monitors=(monitors or [None])[0], task=(tasks or [None])[0])
    _check_scenario(spec, sections, path)
    return spec


def _scenario_sections(sections: list, floor: FloorSpec, path: PathLike,
                       first: _FirstError, folders=None) -> dict[str, list]:
    """Build every section's specs on its own, in file order, noting errors in ``first``."""
    out: dict[str, list] = {"TARGET": [], "ROBOT": [], "OBJECT": [], "RULE": [], "ZONE": [],
                            "SQUAD": []}
    names: dict[str, str] = {}
    taken: dict[str, tuple] = {}  # the described robots' type labels (description.own_label)
    for s in sections:
        if s.kind == "TARGET":
            out["TARGET"] += first.attempt(_targets, s, floor, path) or []
        elif s.kind == "OBJECT":
            out["OBJECT"].append(first.attempt(_object, s, floor, path))
        elif s.kind == "RULE":
            out["RULE"].append(first.attempt(_rule, s, path))
        elif s.kind == "ZONE":
            out["ZONE"].append(first.attempt(games.zone, s, floor, path))
        elif s.kind == "SQUAD":
            out["SQUAD"].append(games.squad(s))
        elif s.kind == "ROBOT":
            if s.get("name") in names:
                first.attempt(_raise, FileFormatError(
                    path, s.line_of("name"), f"robot name {s.get('name')!r} is already used by "
                                             f"[{names[s.get('name')]}]"))
            names.setdefault(s.get("name"), s.name)
            out["ROBOT"].append(first.attempt(_robot, s, floor, path, folders, taken))
    return out


def _raise(exc: Exception) -> None:
    raise exc


def _check_scenario(spec: ScenarioSpec, sections: list, path: PathLike) -> None:
    """Checks that need the whole scenario, once every section is right on its own: events,
    monitors, each rule's, and the engine's when one is named; the error on the earliest line is
    raised."""
    first = _FirstError()
    count = len(spec.world.objects) + len(spec.objects)
    if limits.too_many_objects(count):  # at the first object beyond the limit
        k = limits.MAX_OBJECTS - len(spec.world.objects)  # < 0: the world and its map alone
        line = spec.objects[k].line if k >= 0 else next(s.line for s in sections
                                                         if s.kind == "WORLD")
        first.attempt(_raise, FileFormatError(path, line, limits.too_many_objects(count)))
    for check in (check_events, check_monitors, check_task, check_rates):
        try:
            check(spec)
        except ScenarioError as exc:
            first.attempt(_raise, FileFormatError(path, exc.line, exc.reason), at=exc.line)
    for setting, section in zip(spec.rules, [s for s in sections if s.kind == "RULE"]):
        first.attempt(_check_rule, setting, spec, section, path)
    named = [s for s in sections if s.kind == "SETTINGS" and s.get("engine")]
    described = any(r.description is not None for r in spec.robots)
    if named or described:  # a robot from a file is built here as run builds it
        line = named[0].line_of("engine") if named else 0
        try:
            check_engine(spec)
        except FileFormatError as exc:  # in the world file: ordered at the [WORLD] line
            here = exc.path == os.fspath(path)
            at = getattr(exc, "order_line", None)  # a description's: at its robot's line
            first.attempt(_raise, FileFormatError(exc.path, exc.line or line, exc.reason),
                          at=at or ((exc.line or line) if here else _line_of_world(sections)))
    first.raise_first()


def _line_of_world(sections: list) -> int:
    return next(s.line_of("file") for s in sections if s.kind == "WORLD")


def _check_rule(setting: RuleSetting, spec: ScenarioSpec, section: Section,
                path: PathLike) -> None:
    """The rule's own check of the whole scenario; an error about its parameters is reported
    at the first ``param`` line setting one of them, any other at the section's line."""
    cls = RULES.get(setting.label)
    try:
        cls(cls.values(dict(setting.settings))).check(spec)
    except CoopsimError as exc:
        at_fault = getattr(exc, "params", ())
        lines = [n for k, pair, n in section.entries if k == "param" and pair[0] in at_fault]
        raise FileFormatError(path, min(lines, default=section.line), str(exc)) from None
    except Exception as exc:  # a plugin rule's own bug: one line naming it, not a traceback
        if not blame(exc):
            raise
        raise FileFormatError(path, section.line, blame(exc)) from None


def load_world(path: PathLike, folders=None) -> WorldSpec:
    """Read and parse a ``.world`` file; raise FileFormatError on any problem (see
    :func:`parse_world` for ``folders``)."""
    return parse_world(read_text(path), path, folders)


def load_scenario(path: PathLike, folders=None) -> ScenarioSpec:
    """Read and parse a ``.scenario`` file and its world; raise FileFormatError on any problem
    (see :func:`parse_scenario` for ``folders``)."""
    return parse_scenario(read_text(path), path, folders)


def load(path: PathLike, folders=None) -> WorldSpec | ScenarioSpec:
    """Load a ``.world`` or a ``.scenario`` file, chosen by its extension.

    Args:
        path: The file. A file the user named is read wherever it is.
        folders: For a file a network request named: the run's
            :class:`~coopsim.formats.folders.DataFolders`; the file (and a scenario's world
            file) must be inside them. Symbolic links are resolved before the check.

    Raises:
        FileFormatError: For any other extension (line 0) or any problem in the file.
        NotAllowedError: ``path`` or the world file it names is outside ``folders``.
    """
    if folders is not None:
        path = folders.readable(path)
    ext = os.path.splitext(os.fspath(path))[1]
    if ext == ".world":
        return load_world(path, folders)
    if ext == ".scenario":
        return load_scenario(path, folders)
    raise FileFormatError(path, 0, f"unknown file type {ext or '(no extension)'!r}: "
                                   "expected .world or .scenario")


def scenario_from_world(world: WorldSpec) -> ScenarioSpec:
    """A world run on its own: no robots, no targets, default settings, named after the file."""
    return ScenarioSpec(world=world, name=_stem(world.path) or "world")
