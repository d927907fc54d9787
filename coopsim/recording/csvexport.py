"""The CSV export of a recording (``coopsim export --csv``): one row per robot per recorded step.

The reader (:mod:`coopsim.recording.reader`) re-exports these names.
"""

from __future__ import annotations

import csv
import math
from typing import IO

import numpy as np

from . import format as rf
from ..model.snapshot import wrap_angle, zyx_euler

#: Robot columns every recording has (the modules' columns, sonar and wheel commands among
#: them, depend on the modules registered when it was made).
REQUIRED_COLUMNS = ("x", "y", "yaw", "vx", "vy", "omega")
_CSV_COLUMNS = REQUIRED_COLUMNS + ("left_cmd", "right_cmd")
CSV_HEADER = ("time", "robot", "x", "y", "theta", "vx", "vy", "omega", "left_cmd", "right_cmd")
#: Columns a 3D world's export adds after :data:`CSV_HEADER` (docs/recording-format.md): height
#: (m, world frame), roll and pitch (rad, ZYX Euler angles of the body's quaternion).
CSV_HEADER_3D = ("z", "roll", "pitch")


def export_csv(recording, out: IO[str]) -> int:
    """Write one row per robot per recorded step (CSV_HEADER columns) of ``recording`` (an open
    :class:`~coopsim.recording.reader.Recording`); return the rows written.

    time is the recording time (s); theta is wrapped to (-pi, pi]; the rest is SI as recorded
    (wheel commands are empty in a recording made without the motors module). A recording
    whose first step is of a 3D world (format 4) adds :data:`CSV_HEADER_3D`: z (m), roll and
    pitch (rad, ZYX Euler angles; empty in a later 2D step); a 2D recording's file is as before.
    """
    cols = [c.name for c in recording.robot_columns]
    pick = [cols.index(n) if n in cols else -1 for n in _CSV_COLUMNS]
    three = recording.frame_count > 0 and recording.frame(0).pose3d is not None
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER + (CSV_HEADER_3D if three else ()))
    rows, layout, names = 0, -1, ()
    for frame in recording.iter_frames():
        if frame.layout != layout:
            layout = frame.layout
            names = tuple(r["name"] for r in recording.layout(layout)["robots"])
        values = np.where(np.array(pick) >= 0, recording.robot_values(frame)[:, pick], np.nan)
        values[:, 2] = wrap_yaw(values[:, 2])
        # rounded as printed, + 0.0 turns -0.0 into 0.0 (no "-0.0000" in the file)
        values[:, :3] = np.round(values[:, :3], 4) + 0.0
        values[:, 3:] = np.round(values[:, 3:], 3) + 0.0
        time = f"{frame.position:.6f}"
        tails = _tails_3d(frame, len(names)) if three else [()] * len(names)
        for name, row, tail in zip(names, values.tolist(), tails):
            writer.writerow((time, name, *(f"{v:.4f}" for v in row[:3]),
                             *("" if math.isnan(v) else f"{v:.3f}" for v in row[3:]), *tail))
        rows += len(names)
    return rows


def _tails_3d(frame: rf.Frame, n: int) -> list[tuple[str, ...]]:
    """Each robot's z (m), roll and pitch (rad) as the 3D export prints them (empty when the
    step is of a 2D world)."""
    if frame.pose3d is None:
        return [("", "", "")] * n
    roll_pitch = zyx_euler(frame.pose3d[:, 3:7])[:, :2]
    values = np.round(np.column_stack((frame.pose3d[:, 2], roll_pitch)), 4) + 0.0
    return [tuple(f"{v:.4f}" for v in row) for row in values.tolist()]


def wrap_yaw(yaw: np.ndarray) -> np.ndarray:
    """Yaw wrapped to (-pi, pi], rad (recordings keep the body's unwrapped angle)."""
    return wrap_angle(yaw)
