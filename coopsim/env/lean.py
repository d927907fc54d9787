"""Lean robots for learning: a robot type derived at run time whose robots carry only the
modules a learner observes and the motion module, so the simulation senses nothing else
(docs/learning.md). The derived type is registered in this process only."""

from __future__ import annotations

from dataclasses import replace

from ..model.capabilities import Learnable, capability
from ..model.plugins import MODULES, ROBOT_TYPES
from ..model.specs import ScenarioSpec


def lean_type(label: str, keep) -> str:
    """The label of a robot type like ``label`` whose robots carry only the modules ``keep``
    (registered in this process on first use, as ``LABEL__lean__MODULES``)."""
    base = ROBOT_TYPES.get(label)
    kept = tuple(m for m in base.modules if m in keep)
    name = f"{label}__lean__{'_'.join(kept)}"
    if name in ROBOT_TYPES:
        return name

    def build(cls, spec):
        assembly = super(derived, cls).build(spec)
        return replace(assembly, members=tuple(
            replace(m, modules=tuple(x for x in m.modules if x in kept))
            for m in assembly.members))

    derived = type(base)(f"Lean{base.__name__}", (base,), {
        "label": name, "modules": kept, "build": classmethod(build),
        "description": f"{label} carrying only {', '.join(kept)} (batched learning)"})
    ROBOT_TYPES.register(name)(derived)
    return name


def lean(scenario: ScenarioSpec, observe, robots=None) -> ScenarioSpec:
    """``scenario`` with its robot sections named in ``robots`` (default: all) carrying only
    the modules in ``observe`` and the motion modules a learner can drive (parameters of
    the others dropped)."""
    keep = set(observe) | {label for label, m in MODULES.items()
                          if capability(m, Learnable, default=True).action_fields}
    out = tuple(replace(r, type=lean_type(r.type, keep),
                        params=tuple(p for p in r.params if p.module in keep))
                if robots is None or r.name in robots else r for r in scenario.robots)
    return replace(scenario, robots=out)
