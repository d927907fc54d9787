"""The ``.sweep`` format (normative spec: docs/sweeps.md): a base scenario, axes, seeds.

Same section grammar as scenarios::

    [SWEEP]
    scenario   ../scenarios/amsa_scenario2.scenario   # relative to the sweep file
    seeds      0-9                 # integers and ranges (default: the scenario's seed)
    duration   60                  # s of sim time per run (default: the scenario's)
    mode       grid                # grid: every combination; zip: the axes' i-th values
    metrics    distance            # monitors to keep (default: every metric)

    [AXIS_1]
    param      follower.driver.kv  # ROBOT.MODULE.NAME, ROBOT.driver.NAME or: setting NAME
    values     0.05 0.1 0.35       # or: range START STOP STEP (STOP included)

Everything is checked against the base scenario at load (``path:line``): an unknown
parameter, an empty axis, a value out of the parameter's range, a base scenario that does not
load, a duration (``[SWEEP] duration`` or a ``setting duration`` value) that ends before one of
the scenario's events.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from ..model.errors import CoopsimError, FileFormatError, ParameterError
from ..model.limits import shown
from ..model.plugins import DRIVERS, ENGINES, MODULES
from ..model.specs import DT_RANGE, ScenarioSpec
from ..model.validate import driver_of, members
from .events import DOTTED
from .files import load_scenario
from .sections import (INT, Bad, Key, Rule, Section, about, fixed, number, param_value, pick,
                       read_text, real, rest, split_sections)

MODES = ("grid", "zip")
SETTINGS = ("dt", "duration", "engine")  # the [SETTINGS] keys an axis may sweep
MAX_POINTS = 1_000_000  # a sweep larger than this is a typo, not an experiment
_SEEDS = re.compile(r"(\d{1,18})(?:-(\d{1,18}))?")


@dataclass(frozen=True)
class Axis:
    """One ``[AXIS_n]``: what it sets and its values.

    Attributes:
        name: Column name in the results: ``robot.module.name`` or ``setting.NAME``.
        kind: ``param`` or ``setting``.
        robot, module, param: For ``param`` (module ``driver`` for the driver's parameters);
            param holds the setting's name for ``setting``.
        values: The values, converted to the parameter's type.
        line: Line of the section header.
    """

    name: str
    kind: str
    robot: str
    module: str
    param: str
    values: tuple
    line: int = 0


@dataclass(frozen=True)
class SweepSpec:
    """A whole ``.sweep`` file: the base scenario, axes, seeds, duration, mode, metrics."""

    path: str
    scenario: ScenarioSpec
    axes: tuple[Axis, ...]
    seeds: tuple[int, ...]
    duration: float
    mode: str
    metrics: tuple[str, ...]

    def points(self) -> list[dict]:
        """Every point as ``{axis name: value}``, in order (grid: the last axis fastest)."""
        if not self.axes:
            return [{}]
        if self.mode == "zip":
            return [dict(zip((a.name for a in self.axes), vs))
                    for vs in zip(*(a.values for a in self.axes))]
        points = [{}]
        for axis in self.axes:
            points = [{**p, axis.name: v} for p in points for v in axis.values]
        return points


def _seeds(key: str, tokens: list, rest_: str) -> tuple[int, ...]:
    if not tokens:
        raise Bad("seeds needs at least one integer or range (0-9)")
    out: list[int] = []
    for tok in tokens:
        match = _SEEDS.fullmatch(tok)
        if not match or (match.group(2) and int(match.group(2)) < int(match.group(1))):
            raise Bad(f"seeds are integers >= 0 or ranges A-B with A <= B, got {tok!r}")
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        if high - low > MAX_POINTS:
            raise Bad(f"seed range {tok} is too large")
        out += [s for s in range(low, high + 1) if s not in out]
    return tuple(out)


def _words(key: str, tokens: list, rest_: str) -> tuple:
    if not tokens:
        raise Bad(f"{key} needs at least one value")
    return tuple(tokens)


def _values(key: str, tokens: list, rest_: str) -> tuple:
    if not tokens:
        raise Bad("values needs at least one value (an empty axis sweeps nothing)")
    with about("values:"):
        return tuple(param_value(t, words=True) for t in tokens)


def _range(key: str, tokens: list, rest_: str) -> tuple:
    start, stop, step = fixed(("start", "stop", "step"), number)(key, tokens, rest_)
    if step <= 0:
        raise Bad(f"range step must be > 0, got {step:g}")
    if stop < start:
        raise Bad(f"range stop {stop:g} is below its start {start:g}: an empty axis")
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count > MAX_POINTS:
        raise Bad(f"range gives {count} values; at most {MAX_POINTS}")
    whole = all(INT.fullmatch(t) for t in tokens)
    return tuple(int(start + i * step) if whole else round(start + i * step, 12)
                 for i in range(count))


_SWEEP_KEYS = {
    "scenario": Key(rest("path to a .scenario file"), required=True,
                    doc="the base scenario, relative to the sweep file"),
    "seeds": Key(_seeds, doc="integers >= 0 and ranges A-B (0 1 2 7-9); default: the "
                 "scenario's seed"),
    "duration": Key(fixed(("s",), real("> 0", lambda v: v > 0)),
                    doc="s of sim time per run; default: the scenario's [SETTINGS] duration "
                    "(one of the two is needed)"),
    "mode": Key(pick("mode", MODES), doc="grid (default): every combination; zip: the axes' "
                "i-th values together (every axis the same length)"),
    "metrics": Key(_words, doc="names of the scenario's [MONITORS] metrics to keep; default "
                   "all"),
}
_AXIS_KEYS = {  # one of param or setting, and one of values or range
    "param": Key(fixed(("robot.module.name",), str),
                 doc="ROBOT.MODULE.NAME, a module parameter of a robot section (set at load), "
                 "or ROBOT.driver.NAME, a parameter of its in-process driver; or setting"),
    "setting": Key(pick("setting", SETTINGS), doc="a [SETTINGS] key the axis varies; or param"),
    "values": Key(_values, doc="the values: numbers, true/false or words (a driver's word "
                  "parameter, an engine); or range"),
    "range": Key(_range, doc="START STOP STEP: START, START + STEP, ... up to STOP included; "
                 "or values"),
}
#: The ``.sweep`` format's sections and keys (as keys.py's ``SCENARIO_RULES``).
SWEEP_RULES = {"SWEEP": Rule(_SWEEP_KEYS), "AXIS": Rule(_AXIS_KEYS, indexed=True)}


def load_sweep(path) -> SweepSpec:
    """Read, parse and check a ``.sweep`` file and its base scenario.

    Raises:
        FileFormatError: at the first problem (a problem inside the base scenario at the
            scenario's own path and line).
    """
    text = read_text(path)
    sections = split_sections(text, path, SWEEP_RULES, ".sweep")
    heads = [s for s in sections if s.kind == "SWEEP"]
    if not heads:
        raise FileFormatError(path, 0, "no [SWEEP] section; a sweep needs one")
    head = heads[0]
    scenario = _base(head, path)
    duration = head.get("duration", scenario.settings.duration)
    if duration is None:
        raise FileFormatError(path, head.line, "no duration: give one in [SWEEP] (duration S) "
                                               "or in the scenario's [SETTINGS]")
    if "duration" in {k for k, _, _ in head.entries}:
        _events_before(scenario, float(duration), path, head.line_of("duration"))
    axes = tuple(_axis(s, scenario, path) for s in sections if s.kind == "AXIS")
    _unique(axes, path)
    mode = head.get("mode", "grid")
    if mode == "zip" and len({len(a.values) for a in axes}) > 1:
        raise FileFormatError(path, head.line_of("mode"), "mode zip needs axes of one length, "
                              f"got {', '.join(str(len(a.values)) for a in axes)}")
    spec = SweepSpec(os.fspath(path), scenario, axes,
                     head.get("seeds", (scenario.settings.seed,)), float(duration), mode,
                     _metrics(head, scenario, path))
    sizes = [len(a.values) for a in axes]
    count = (math.prod(sizes) if mode == "grid" else min(sizes, default=1)) * len(spec.seeds)
    if count > MAX_POINTS:
        raise FileFormatError(path, head.line, f"{count} runs; at most {MAX_POINTS}")
    return spec


def _base(head: Section, path) -> ScenarioSpec:
    name, line = head.get("scenario"), head.line_of("scenario")
    where = os.path.normpath(os.path.join(os.path.dirname(os.fspath(path)), name))
    if not os.path.isfile(where):
        raise FileFormatError(path, line, f"scenario {name!r} not found (looked for {where})")
    return load_scenario(where)


def _metrics(head: Section, scenario: ScenarioSpec, path) -> tuple[str, ...]:
    known = [m.name for m in scenario.monitors.metrics] if scenario.monitors else []
    wanted = head.get("metrics")
    if wanted is None:
        return tuple(known)
    for name in wanted:
        if name not in known:
            raise FileFormatError(path, head.line_of("metrics"), f"the scenario has no metric "
                                  f"{name!r} (its [MONITORS]: {', '.join(known) or 'none'})")
    return tuple(wanted)


def _axis(section: Section, scenario: ScenarioSpec, path) -> Axis:
    keys = {k for k, _, _ in section.entries}
    if len(keys & {"param", "setting"}) != 1 or len(keys & {"values", "range"}) != 1:
        raise FileFormatError(path, section.line, f"[{section.name}] needs one of param or "
                                                  "setting, and one of values or range")
    values = section.get("values") or section.get("range")
    at = section.line_of("values" if "values" in keys else "range")
    if "setting" in keys:
        name = section.get("setting")
        checked = tuple(_setting(name, v, path, at) for v in values)
        if name == "duration":
            for value in checked:
                _events_before(scenario, value, path, at)
        return Axis(f"setting.{name}", "setting", "", "", name, checked, section.line)
    dotted, pline = section.get("param"), section.line_of("param")
    match = DOTTED.fullmatch(dotted)
    if not match:
        raise FileFormatError(path, pline, "param must look like robot.module.name (module "
                                           f"'driver' for the robot's driver), got {dotted!r}")
    robot, module, param = match.groups()
    try:
        declared = _param_spec(scenario, robot, module, param)
    except CoopsimError as exc:
        raise FileFormatError(path, pline, str(exc)) from None
    checked = []
    for value in values:
        try:
            checked.append(declared.coerce(value))
        except CoopsimError as exc:
            raise FileFormatError(path, at, f"{dotted}: {exc}") from None
    return Axis(dotted, "param", robot, module, param, tuple(checked), section.line)


def _param_spec(scenario, robot: str, module: str, param: str):
    """The ParamSpec an axis sets; raises CoopsimError naming what is unknown."""
    robots = members(scenario)
    if robot not in robots:
        raise CoopsimError(f"no robot named {robot!r} (robots: {', '.join(robots) or 'none'})")
    spec, member = robots[robot]
    if module == "driver":
        driver = driver_of(spec, member.name)
        if driver is None:
            raise CoopsimError(f"robot {robot} has no driver")
        declared = DRIVERS.get(driver.label).param_specs()
    elif spec.name != robot:
        raise CoopsimError(f"{robot} is a member of [{spec.name}]'s robot {spec.name}: module "
                           f"parameters are set per section; use {spec.name}.{module}.{param}")
    elif module not in member.modules:
        raise CoopsimError(f"robot {robot} has no module {module!r} (it has: "
                           f"{', '.join(member.modules)})")
    else:
        declared = MODULES.get(module).params
    found = {p.name: p for p in declared}
    if param not in found:
        raise CoopsimError(f"{robot}.{module}: unknown parameter {param!r} (known: "
                           f"{', '.join(found)})")
    return found[param]


def _setting(name: str, value, path, line):
    try:
        if name == "engine":
            ENGINES.get(str(value))
            return str(value)
        if isinstance(value, (bool, str)):
            raise ParameterError(f"setting {name} takes a number, not {value!r}")
        value = float(value)
        low, high = DT_RANGE if name == "dt" else (0.0, math.inf)
        if not (low <= value <= high) or (name == "duration" and value <= 0):
            raise ParameterError(f"setting {name} = {shown(value, low, high)} is out of range "
                                 f"({'%g to %g s' % DT_RANGE if name == 'dt' else '> 0 s'})")
        return value
    except CoopsimError as exc:
        raise FileFormatError(path, line, str(exc)) from None


def _events_before(scenario: ScenarioSpec, duration: float, path, line: int) -> None:
    """Refuse a run ``duration`` s long that ends before one of the scenario's events: the
    event would never happen (``path:line``: the sweep line that sets the duration)."""
    late = [e for e in scenario.events if e.time >= duration]
    if late:
        event = late[0]
        raise FileFormatError(path, line, f"duration {duration:g} s ends before "
                              f"[{event.name}] at {event.time:g} s ({scenario.path}:"
                              f"{event.line}): it would never happen")


def _unique(axes, path) -> None:
    seen: dict[str, int] = {}
    for axis in axes:
        if axis.name in seen:
            raise FileFormatError(path, axis.line, f"{axis.name} is already swept by the axis at "
                                                   f"line {seen[axis.name]}")
        seen[axis.name] = axis.line
