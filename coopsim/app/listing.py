"""Text listings of what is registered (``coopsim list``): every plugin with its package."""

from __future__ import annotations

from ..model.plugins import REGISTRIES, problems


def describe_registries() -> str:
    """Every plugin by kind, with where it came from, its commands and parameters; then the
    plugins that failed to load."""
    lines: list[str] = []
    for kind, registry in REGISTRIES.items():
        lines.append(f"{kind.capitalize()}:")
        for label, item in registry.items():
            lines.append(f"  {label:<14} {item.description}  [{registry.origin(label)}]")
            lines += _details(kind, item)
        lines.append("")
    bad = problems()
    if bad:
        lines.append("Plugins that failed to load:")
        lines += [f"  {line}" for line in bad]
    return "\n".join(lines).rstrip()


def _details(kind: str, item) -> list[str]:
    pad = " " * 17
    out = []
    if kind == "robot types":
        out.append(f"{pad}modules: {', '.join(item.modules)}")
    if kind == "modules" and item.commands:
        out.append(f"{pad}commands: " + ", ".join(f"{c.id} {c.name}" for c in item.commands))
    if kind == "engines":
        out.append(f"{pad}features: {', '.join(sorted(item.features)) or 'none'}")
    specs = item.param_specs() if hasattr(item, "param_specs") else getattr(item, "params", ())
    for spec in specs:
        bounds = f"[{spec.min:g}, {spec.max:g}]" if spec.type in ("float", "int") else \
            (f"{{{', '.join(spec.choices)}}}" if spec.choices else "")
        out.append(f"{pad}{spec.name:<12} {spec.type:<5} {spec.default!s:<7} {bounds} "
                   f"{spec.unit} - {spec.description}")
    return out
