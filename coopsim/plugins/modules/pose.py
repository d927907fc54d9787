"""``gps`` and ``compass``: position and heading in the world frame."""

from __future__ import annotations

import math

from ...model.commands import Command
from ...model.module import Module
from .common import lost, noise, rate, wrap


class Gps(Module):
    """Position in the world frame, m."""

    label = "gps"
    description = "x, y in the world frame, m"
    params = (noise("m", 10.0), lost(), rate())
    commands = (Command(500, "read", "gps", kind="read", doc="x, y, m, world frame"),)
    fields = ("x", "y")

    @classmethod
    def sense(cls, frame, rows, p, prev):
        # a gather copies already; every robot's (rows 0..N-1): one copy of the columns
        every = len(rows) == len(frame.pose)
        return frame.pose[:, :2].copy() if every else frame.pose[rows, :2]


class Compass(Module):
    """Heading in the world frame, rad."""

    label = "compass"
    description = "yaw in the world frame, rad, counter-clockwise from +x, in (-pi, pi]"
    params = (noise("rad", math.pi), lost(), rate())
    commands = (Command(600, "read", "compass", kind="read",
                        doc="yaw, rad, counter-clockwise from +x, in (-pi, pi]"),)
    fields = ("yaw",)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        # a gather copies already; every robot's (rows 0..N-1): one copy of the column
        every = len(rows) == len(frame.pose)
        return frame.pose[:, 2:3].copy() if every else frame.pose[rows, 2:3]

    @classmethod
    def clip(cls, out, p):
        return wrap(out)
