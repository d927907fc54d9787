"""Text listings of what is registered (``coopsim list``)."""

from __future__ import annotations

from ..plugins import modules as _modules  # noqa: F401 -- registers the modules
from ..plugins import robots as _robots  # noqa: F401 -- registers the robot types
from ..model.registry import MODULES, ROBOT_TYPES


def describe_registries() -> str:
    """Robot types with their modules, then every module with its parameters and fields."""
    lines = ["Robot types:"]
    for label, rtype in ROBOT_TYPES.items():
        lines.append(f"  {label:<8} {rtype.description}")
        lines.append(f"  {'':<8} modules: {', '.join(rtype.modules)}")
    lines += ["", "Modules (parameters: name type default [min, max] unit - description):"]
    for label, module in MODULES.items():
        lines.append(f"  {label:<9} {module.description}")
        for spec in module.params:
            lines.append(f"      {spec.name:<11} {spec.type:<5} {spec.default:<6} "
                         f"[{spec.min:g}, {spec.max:g}] {spec.unit:<4} - {spec.description}")
    return "\n".join(lines)
