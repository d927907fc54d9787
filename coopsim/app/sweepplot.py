"""``coopsim sweep --plot``: every kept metric against every axis, as PNG files (matplotlib,
drawn off-screen).

One figure per (metric, axis): a panel per statistic (max, mean, final, max_after), a box of
the values at each axis value (the spread over the seeds and the other axes) and the medians
joined by a line.
"""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path

from ..model.metrics import STATS


def plot_sweep(spec, rows: list[dict], folder: Path) -> list[Path]:
    """Write ``<metric>-vs-<axis>.png`` files into ``folder``; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    ok = [r for r in rows if r.get("status") == "ok"]
    written = []
    for metric in spec.metrics:
        for axis in spec.axes:
            fig, panels = plt.subplots(1, len(STATS), figsize=(4 * len(STATS), 3.6),
                                       squeeze=False)
            for panel, stat in zip(panels[0], STATS):
                _panel(panel, ok, axis, f"{metric}.{stat}", stat)
            fig.suptitle(f"{metric} against {axis.name} ({len(ok)} runs, "
                         f"{len(spec.seeds)} seeds)")
            fig.tight_layout()
            path = folder / f"{_safe(metric)}-vs-{_safe(axis.name)}.png"
            fig.savefig(path, dpi=90)
            plt.close(fig)
            written.append(path)
    return written


def _panel(ax, rows: list[dict], axis, column: str, stat: str) -> None:
    groups = []
    for value in axis.values:
        got = [r.get(column) for r in rows if r.get(axis.name) == value]
        groups.append([v for v in got if v is not None and not math.isnan(v)])
    labels = [f"{v:g}" if isinstance(v, float) else str(v) for v in axis.values]
    places = list(range(1, len(groups) + 1))
    ax.boxplot([g or [math.nan] for g in groups], positions=places, widths=0.5)
    medians = [statistics.median(g) if g else math.nan for g in groups]
    ax.plot(places, medians, "-o", color="tab:blue", markersize=3)
    ax.set_xticks(places, labels, rotation=45 if len(labels) > 6 else 0)
    ax.set_xlabel(axis.name)
    ax.set_title(stat)
    ax.grid(alpha=0.3)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)
