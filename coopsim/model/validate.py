"""Checks of a robot section against the registries and the limits: the one place files, ``/sim``
inserts and the world validate a :class:`~coopsim.model.specs.RobotSpec`, so all give the same
messages. Names and numeric ranges come from :mod:`coopsim.model.limits`."""

from __future__ import annotations

from .errors import ParameterError, SimulationError
from .limits import check_robot_fields, name_problem
from .params import ParamValues
from .plugins import DRIVERS, MODULES, ROBOT_TYPES
from .robot_type import Assembly
from .specs import RobotSpec


def check_robot_spec(spec: RobotSpec) -> Assembly:
    """Build the section's assembly and check its name, pose, colour, params and drivers;
    return the assembly.

    Raises:
        RegistryError: unknown robot type or driver.
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
    for setting in spec.params:
        if setting.module not in carried:
            raise ParameterError(f"robot type {spec.type!r} has no module {setting.module!r} "
                                 f"(it has: {', '.join(sorted(carried))})")
        ParamValues(MODULES.get(setting.module).params).set(setting.name, setting.value)
    _check_drivers(spec, [m.name for m in assembly.members])
    return assembly


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
