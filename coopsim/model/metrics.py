"""Rule metrics as tables: the CLI's closing summary, ``coopsim info`` and the sweep all print
them the same way.

A rule reports metrics through two of its fields (docs/plugins.md): ``metrics`` (name -> this
step's number, null when it cannot be computed) and optionally ``summary`` (name -> ``{max,
mean, final, max_after}`` over the steps so far, with ``after``, s, the time ``max_after``
counts from). The ``monitors`` rule (``[MONITORS]``) reports both; any rule may. A metric is
named ``<rule label>.<name>`` wherever rules are mixed: the state stream, ``coopsim info``,
``export --metrics-csv``, ``plot`` and the Foxglove export.
"""

from __future__ import annotations

from typing import Any, Mapping

STATS = ("max", "mean", "final", "max_after")


def monitor_summary(rules: Mapping[str, Any], label: str) -> tuple[dict, float]:
    """Rule ``label``'s summary (metric -> {max, mean, final, max_after}, by its own names) and
    its ``after`` time, s, from a snapshot's or a recorded frame's rule fields ({} and 0 when
    the rule is not there or reports no summary). The sweep keeps the ``[MONITORS]`` metrics."""
    fields = rules.get(label) if isinstance(rules, Mapping) else None
    if not isinstance(fields, Mapping):
        return {}, 0.0
    return dict(fields.get("summary") or {}), float(fields.get("after") or 0.0)


def rule_summaries(rules: Mapping[str, Any]) -> tuple[dict, float]:
    """Every rule's metrics as ``label.name`` -> {max, mean, final, max_after}: a rule's own
    ``summary`` where it reports one, else just ``final`` (this step's value, from its
    ``metrics``); and the first ``after`` a summarising rule gives, s (0 without one)."""
    out: dict = {}
    after = None
    for label, fields in (rules.items() if isinstance(rules, Mapping) else ()):
        if not isinstance(fields, Mapping):
            continue
        summary = fields.get("summary") if isinstance(fields.get("summary"), Mapping) else {}
        values = fields.get("metrics") if isinstance(fields.get("metrics"), Mapping) else {}
        if summary and after is None:
            after = float(fields.get("after") or 0.0)
        for name in dict.fromkeys([*summary, *values]):
            stats = summary.get(name)
            if not isinstance(stats, Mapping):
                value = values.get(name)
                stats = {"final": value if isinstance(value, (int, float)) else None}
            out[f"{label}.{name}"] = {k: stats.get(k) for k in STATS}
    return out, after or 0.0


def format_metrics(rules: Mapping[str, Any]) -> str:
    """A table of the rules' metrics, one a line ("" when there are none)."""
    return format_summary(*rule_summaries(rules))


def format_summary(summary: Mapping[str, Mapping], after: float) -> str:
    """The table of :func:`format_metrics` from a :func:`rule_summaries` result."""
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
