"""The monitors' per-step metrics of a recording as CSV (``coopsim export --metrics-csv``).

One row per recorded step: ``time`` (recording time, s), ``step``, ``sim_time`` (s), then one
column per metric (``monitors`` fields ``metrics``, SI units, empty where the value was null),
in the order of the first recorded step that has them.
"""

from __future__ import annotations

import csv
import math
from typing import IO

from .reader import Recording


def metric_names(recording: Recording) -> list[str]:
    """The metric names the recording's monitors report ([] when it has none)."""
    fields = recording.frame(0).rules.get("monitors") if recording.frame_count else None
    return list((fields or {}).get("metrics") or {})


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
        values = (frame.rules.get("monitors") or {}).get("metrics") or {}
        cells = [_cell(values.get(name)) for name in names]
        writer.writerow((f"{frame.position:.6f}", frame.step, f"{frame.time:.6f}", *cells))
        rows += 1
    return rows


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(float(value))
