"""Checks of a robot section against the registries and the limits: the one place files, ``/sim``
inserts and the world validate a :class:`~coopsim.model.specs.RobotSpec`, so all give the same
messages (names and numeric ranges come from :mod:`coopsim.model.limits`); and the checks of
timed events and monitors against their scenario (files and rules share them)."""

from __future__ import annotations

import importlib
import weakref

from .errors import (CoopsimError, ParameterError, RegistryError, ScenarioError,
                     SimulationError)
from .limits import check_robot_fields, name_problem
from .capabilities import ValueChecker, capability
from .module import RobotInfo
from .params import ParamValues
from .plugins import DRIVERS, METRICS, MODULES, ROBOT_TYPES
from .robot_type import Assembly
from .specs import RobotSpec


def check_robot_spec(spec: RobotSpec, together: bool = True) -> Assembly:
    """Build the section's assembly and check its name, pose, colour, params and drivers;
    return the assembly. ``together``: also each module's values together (a
    :class:`~coopsim.model.capabilities.ValueChecker`'s ``check_values``; a refusal's
    ParameterError carries the module's label as ``module``).

    Raises:
        RegistryError: unknown robot type or driver; the type carries a module that did not
            load (the line says why).
        ParameterError: a bad or reserved name (the section's or one the type derives from it);
            a position, yaw or colour outside its range (coopsim.model.limits); unknown module
            or parameter, wrong type, or value out of range.
        SimulationError: the type built an inconsistent assembly, or a driver names no member.
    """
    check_robot_fields(spec)
    rtype = ROBOT_TYPES.get(spec.type)
    assembly = rtype.build(spec)
    _check_member_names(spec, [m.name for m in assembly.members])
    try:
        assembly.validate()
    except ValueError as exc:
        raise SimulationError(f"robot type {spec.type!r} built an invalid assembly: {exc}") \
            from None
    carried = {label for m in assembly.members for label in m.modules}
    for label in sorted(carried):
        if label not in MODULES:
            why = MODULES.failure(label) or "no installed package registers it"
            raise RegistryError(f"robot type {spec.type!r} carries module {label!r}, which is "
                                f"not loaded: {why}")
    for setting in spec.params:
        if setting.module not in carried:
            raise ParameterError(f"robot type {spec.type!r} has no module {setting.module!r} "
                                 f"(it has: {', '.join(sorted(carried))})")
        ParamValues(MODULES.get(setting.module).params).set(setting.name, setting.value)
    for member in assembly.members if together else ():
        _check_together(spec, member, assembly.body(member.body).mass)
    _check_drivers(spec, [m.name for m in assembly.members])
    return assembly


_TOGETHER: dict = {}  # (type, params, member's modules, mass) -> its modules' values are fine


def _check_together(spec: RobotSpec, member, mass: float) -> None:
    """Each :class:`~coopsim.model.capabilities.ValueChecker` module's ``check_values`` of the
    member's values (defaults, the type's, the section's ``param`` lines); a swarm of one type
    asks once.

    Raises:
        ParameterError: ``name.module: why``.
    """
    key = (spec.type, spec.params, member.modules, mass)
    if key in _TOGETHER:
        return
    labels = [label for label in member.modules if own_check(MODULES.get(label))]
    if labels:
        info = RobotInfo(member.name, spec.type, mass=float(mass))
        for label, values in module_values(spec, labels).items():
            why = own_check(MODULES.get(label)).check_values(values.as_dict(), info)
            if why:
                exc = ParameterError(f"{member.name}.{label}: {why}")
                exc.module = label
                raise exc
    if len(_TOGETHER) < 4096:
        _TOGETHER[key] = True


def own_check(module):
    """The module as a :class:`~coopsim.model.capabilities.ValueChecker` (it checks its
    values together), or None."""
    return capability(module, ValueChecker)


def module_values(spec: RobotSpec, modules) -> dict[str, ParamValues]:
    """The parameter values one member of the section ``spec`` carries for its ``modules``
    (labels): each module's defaults, then its robot type's, then the section's ``param``
    lines (values already checked by :func:`check_robot_spec`)."""
    out = {label: ParamValues(MODULES.get(label).params) for label in modules}
    for label, values in ROBOT_TYPES.get(spec.type).defaults.items():
        for name, value in values.items():
            if label in out:
                out[label].set(name, value)
    for setting in spec.params:
        if setting.module in out:
            out[setting.module].set(setting.name, setting.value)
    return out


def _check_member_names(spec: RobotSpec, names: list[str]) -> None:
    """The names a robot type derives (``t_leader``) follow the same rule as the section's."""
    for name in names:
        why = name_problem(name)
        if why and name != spec.name:
            raise ParameterError(f"robot type {spec.type!r} names a robot {name!r} after "
                                 f"{spec.name!r}: {why}")


def _check_drivers(spec: RobotSpec, names: list[str]) -> None:
    """Every driver is registered, its settings valid, and each member has at most one."""
    suffixes = [n[len(spec.name) + 1:] for n in names]
    driven: dict[str, str] = {}
    for driver in spec.drivers:
        DRIVERS.get(driver.label).values(dict(driver.settings))
        if driver.member and driver.member not in names + suffixes:
            raise SimulationError(f"driver {driver.label}: no member {driver.member!r} "
                                  f"(members: {', '.join(names)})")
        for name, suffix in zip(names, suffixes):
            if driver.member in ("", name, suffix):
                if name in driven:
                    raise SimulationError(f"{name} already has driver {driven[name]}; a robot "
                                          "has at most one")
                driven[name] = driver.label


# -- timed events and monitors --------------------------------------------------------------------

def members(scenario) -> dict:
    """Network name -> (its RobotSpec, its MemberSpec) for every robot the scenario creates."""
    out = {}
    for spec in scenario.robots:
        for member in check_robot_spec(spec).members:
            out[member.name] = (spec, member)
    return out


def check_events(scenario) -> None:
    """Check every timed event against the scenario: robots, modules, parameters and values,
    times within the duration, objects and targets present when inserted or removed.

    Raises:
        ScenarioError: at the line of the first problem.
    """
    robots = members(scenario)
    values: dict = {}  # (robot, module) -> its values as the events so far left them
    objects = {o.name: o for o in scenario.world.objects + scenario.objects}
    start = ({n for n, o in objects.items() if o.start}, list(scenario.targets))
    present, targets = set(start[0]), list(start[1])
    duration = scenario.settings.duration
    for event in scenario.events:
        if duration is not None and event.time >= duration:
            raise ScenarioError(event.line, f"[{event.name}] at {event.time:g} s is not before "
                                f"the end of the run (duration {duration:g} s): it would never "
                                "happen")
        if event.resets:
            present, targets = set(start[0]), list(start[1])
        for action in event.actions:
            if action.kind == "param":
                _check_param(action, robots, values)
            elif action.kind in ("insert", "remove") and action.target is None:
                _check_object(action, objects, present)
            elif action.kind == "insert":
                targets.append(action.target)
            elif action.kind == "remove":
                hits = matching_targets(targets, action.target, action.exact)
                if not hits:
                    raise ScenarioError(action.line, f"no {_target_text(action)} to remove at "
                                        f"{event.time:g} s")
                targets = [t for i, t in enumerate(targets) if i not in hits]


def matching_targets(targets, want, exact: bool) -> list[int]:
    """Indices of ``targets`` of ``want``'s colour (and, when ``exact``, within 1 mm of its
    x, y)."""
    return [i for i, t in enumerate(targets) if t.color == want.color and (
        not exact or max(abs(t.position[0] - want.position[0]),
                         abs(t.position[1] - want.position[1])) <= 1e-3)]


def _target_text(action) -> str:
    t = action.target
    where = f" at ({t.position[0]:g}, {t.position[1]:g})" if action.exact else ""
    return f"{t.color} target{where}"


def _check_param(action, robots: dict, values: dict) -> None:
    entry = robots.get(action.robot)
    if entry is None:
        raise ScenarioError(action.line, f"no robot named {action.robot!r} (robots: "
                                         f"{', '.join(robots) or 'none'})")
    spec, member = entry
    try:
        if action.module == "driver":
            driver = driver_of(spec, member.name)
            if driver is None:
                raise ScenarioError(action.line, f"robot {action.robot} has no driver")
            DRIVERS.get(driver.label).values({**dict(driver.settings), action.name: action.value})
        elif action.module not in member.modules:
            raise ScenarioError(action.line, f"robot {action.robot} has no module "
                                f"{action.module!r} (it has: {', '.join(member.modules)})")
        else:
            _check_event_value(action, spec, member, values)
    except ParameterError as exc:
        raise ScenarioError(action.line, f"{action.robot}.{action.module}: {exc}") from None


def _check_event_value(action, spec: RobotSpec, member, values: dict) -> None:
    """The event's value alone, then with the robot's other values of the module as the
    earlier events left them (the module's ``check_values``, a
    :class:`~coopsim.model.capabilities.ValueChecker`)."""
    module = MODULES.get(action.module)
    ParamValues(module.params).set(action.name, action.value)
    checker = own_check(module)
    if checker is None:
        return
    key = (action.robot, action.module)
    if key not in values:
        values[key] = module_values(spec, [action.module])[action.module]
    trial = {**values[key].as_dict(), action.name: values[key].spec(action.name).coerce(
        action.value)}
    mass = ROBOT_TYPES.get(spec.type).build(spec).body(member.body).mass
    why = checker.check_values(trial, RobotInfo(action.robot, spec.type, mass=float(mass)))
    if why:
        raise ParameterError(why)
    values[key].set(action.name, action.value)


def driver_of(spec: RobotSpec, member: str):
    """The DriverSetting of ``spec`` that drives member ``member``, or None."""
    suffix = member[len(spec.name) + 1:]
    return next((d for d in spec.drivers if d.member in ("", member, suffix)), None)


def _check_object(action, objects: dict, present: set) -> None:
    name = action.name
    if name not in objects:
        raise ScenarioError(action.line, f"no object named {name!r} (objects: "
                                         f"{', '.join(objects) or 'none'})")
    if action.kind == "insert" and name in present:
        raise ScenarioError(action.line, f"{name} is already in the world then (an object to "
                                         "insert later is marked 'start false')")
    if action.kind == "remove" and name not in present:
        raise ScenarioError(action.line, f"{name} is not in the world then")
    (present.add if action.kind == "insert" else present.discard)(name)


def check_monitors(scenario) -> None:
    """Check every metric of ``[MONITORS]`` against the scenario through its kind (registered
    under ``coopsim.metrics``): robots and objects exist, modules are carried, ``python``
    functions import.

    Raises:
        ScenarioError: at the line of the first problem.
    """
    if scenario.monitors is None or _PASSED[0]() is scenario:
        return  # a frozen spec that passed already: a reset's rules check nothing again
    robots = {name: tuple(member.modules) for name, (_, member) in members(scenario).items()}
    objects = frozenset(o.name for o in scenario.world.objects + scenario.objects)
    for metric in scenario.monitors.metrics:
        try:
            kind = METRICS.get(metric.kind)
            kind.check(metric.args, robots, objects)
        except (ValueError, CoopsimError) as exc:
            raise ScenarioError(metric.line, f"metric {metric.name}: {exc}") from None
    _PASSED[0] = weakref.ref(scenario)


#: A weak reference to the last scenario whose monitors passed (specs are frozen).
_PASSED: list = [lambda: None]


def python_function(target: str):
    """The callable ``module:function`` names (imported now).

    Raises:
        CoopsimError: it does not import or is not callable.
    """
    module, colon, name = target.partition(":")
    if not colon or not module or not name:
        raise CoopsimError(f"python metric needs module:function, got {target!r}")
    try:
        fn = getattr(importlib.import_module(module), name)
    except KeyboardInterrupt:
        raise  # Ctrl-C while the user's module imports ends the command, not the file
    except BaseException as exc:  # noqa: BLE001 -- any import failure (SystemExit included)
        # is the user's file's problem, never the end of the simulator
        raise CoopsimError(f"cannot import {target}: {type(exc).__name__}: {exc}") from None
    if not callable(fn):
        raise CoopsimError(f"{target} is not callable")
    return fn


def rate_problem(value, dt: float) -> str | None:
    """Why a sensor ``rate`` (Hz) cannot run at step ``dt`` (s), or None: a sensor cannot update
    more often than the simulation steps (coopsim.sim.rates)."""
    try:
        rate = float(value)
    except (TypeError, ValueError):
        return None  # not a number: the parameter's own check says so
    if rate > 1.0 / dt * (1 + 1e-9):
        return (f"parameter rate = {rate:g} is out of range [0, {1.0 / dt:g}] Hz: a sensor "
                f"cannot update more often than once a step (1/dt, dt = {dt:g} s)")
    return None


def check_rates(scenario) -> None:
    """Check every robot's ``param <module>.rate`` lines against the scenario's dt.

    Raises:
        ScenarioError: at the line of the first rate above 1/dt.
    """
    for spec in scenario.robots:
        for setting in spec.params:
            if setting.name == "rate":
                problem = rate_problem(setting.value, scenario.settings.dt)
                if problem:
                    raise ScenarioError(getattr(setting, "line", 0), problem)
