"""The monitors' summaries as text: the CLI's closing summary, ``coopsim info`` and the sweep
all print them the same way (see :mod:`coopsim.plugins.rules.monitors` for the values)."""

from __future__ import annotations

from typing import Any, Mapping

STATS = ("max", "mean", "final", "max_after")


def monitor_summary(rules: Mapping[str, Any]) -> tuple[dict, float]:
    """The ``monitors`` rule's summary (metric -> {max, mean, final, max_after}) and its
    ``after`` time, s, from a snapshot's or a recorded frame's rule fields ({} and 0 when the
    run had no monitors)."""
    fields = rules.get("monitors") if isinstance(rules, Mapping) else None
    if not isinstance(fields, Mapping):
        return {}, 0.0
    return dict(fields.get("summary") or {}), float(fields.get("after") or 0.0)


def format_metrics(rules: Mapping[str, Any]) -> str:
    """A table of the monitors' summary, one metric a line ("" when there are none)."""
    summary, after = monitor_summary(rules)
    if not summary:
        return ""
    width = max(len(name) for name in summary)
    head = f"{'metric':<{width}}  {'max':>10} {'mean':>10} {'final':>10} " \
           f"{f'max after {after:g} s':>16}"
    lines = [head]
    for name, stats in summary.items():
        cells = ["-" if stats.get(k) is None else f"{stats[k]:.4g}" for k in STATS]
        lines.append(f"{name:<{width}}  {cells[0]:>10} {cells[1]:>10} {cells[2]:>10} "
                     f"{cells[3]:>16}")
    return "\n".join(lines)
