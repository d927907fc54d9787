"""Shared control's feedback of a recording as CSV (``coopsim export --feedback-csv``).

One row per squad under shared control per recorded step (recording format 7, a block's ``F``;
docs/recording-format.md): ``time`` (recording time, s), ``squad``, then the recorded row
(:data:`coopsim.model.steering.RECORD_FIELDS`): ``step`` (the step the feedback was computed
from), ``seq`` (the steer in force, 0: none), the steer flown (``steer_vx``, ``steer_vy``,
``steer_vz`` m/s, ``steer_yaw_rate`` rad/s, world frame), ``time`` again as ``sim_time`` (s,
when it was computed), the force ``fx``, ``fy``, ``fz`` (N, world frame), its obstacle and
neighbour parts (N), the squad's centre (m) and mean velocity (m/s).
"""

from __future__ import annotations

import csv
from typing import IO

from ..model.errors import RecordingError
from ..model.steering import RECORD_FIELDS

#: The file's columns (``sim_time`` is the recorded row's ``time``).
HEADER = ("time", "squad", *("sim_time" if f == "time" else f for f in RECORD_FIELDS))


def feedback_squads(recording) -> list[str]:
    """The squads whose feedback the recording holds ([] when none): the first and the last
    recorded steps are looked at (a squad under shared control reports every step)."""
    if not recording.frame_count:
        return []
    ends = sorted({0, recording.frame_count - 1})
    return list(dict.fromkeys(n for i in ends for n in recording.frame(i).feedback))


def export_feedback_csv(recording, out: IO[str]) -> int:
    """Write one row per squad per recorded step with feedback; return the rows written (0 and
    nothing written when the recording holds none)."""
    if not feedback_squads(recording):
        return 0
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    rows = 0
    for frame in recording.iter_frames():
        for squad, row in sorted(frame.feedback.items()):
            writer.writerow((f"{frame.position:.6f}", squad, *_cells(frame, row)))
            rows += 1
    return rows


def _cells(frame, row) -> list[str]:
    """A recorded row as CSV cells (step and seq integers, the rest as Python prints floats).

    Raises:
        RecordingError: not :data:`RECORD_FIELDS`' count of numbers.
    """
    try:
        values = [float(v) for v in row]
        if len(values) != len(RECORD_FIELDS):
            raise ValueError(len(values))
    except (TypeError, ValueError):
        raise RecordingError(f"bad recorded block: step {frame.index}'s shared-control "
                             "feedback is not rows of numbers") from None
    return [str(int(values[0])), str(int(values[1])), *map(repr, values[2:])]
