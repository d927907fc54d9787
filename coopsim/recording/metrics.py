"""The rules' per-step metrics of a recording as CSV (``coopsim export --metrics-csv``).

One row per recorded step: ``time`` (recording time, s), ``step``, ``sim_time`` (s), then one
column per metric, ``<rule label>.<name>`` (every number in a rule's ``metrics`` field: the
``monitors`` rule's and any plugin rule's; SI units, empty where the value was null or the rule
reported nothing that step), in the order they first appear.
"""

from __future__ import annotations

import csv
import math
from typing import IO

from ..model.snapshot import rule_metrics
from .reader import Recording


def metric_names(recording: Recording) -> list[str]:
    """The metric names the recording's rules report ([] when none does). The first and the
    last recorded steps are looked at (rules report the same names every step)."""
    if not recording.frame_count:
        return []
    ends = {0, recording.frame_count - 1}
    names = [n for i in sorted(ends) for n, _ in rule_metrics(recording.frame(i).rules)]
    return list(dict.fromkeys(names))


def export_metrics_csv(recording: Recording, out: IO[str]) -> int:
    """Write one row per recorded step; return the rows written (0 and nothing written when
    the recording has no metrics)."""
    names = metric_names(recording)
    if not names:
        return 0
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("time", "step", "sim_time", *names))
    rows = 0
    for frame in recording.iter_frames():
        values = dict(rule_metrics(frame.rules))
        cells = [_cell(values.get(name)) for name in names]
        writer.writerow((f"{frame.position:.6f}", frame.step, f"{frame.time:.6f}", *cells))
        rows += 1
    return rows


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(float(value))
