"""``tracking``: fly a circle or a figure-eight with the ``velocity`` module's ``track`` command.

SwarmSimX's fidelity study had quadrotors track eight-shaped trajectories and compared the
cumulative distribution of the tracking error. This driver sends, each step, the reference
position and its velocity (feed-forward) for the time ``lead`` seconds after the latest reading
(the step's dt: the command acts until then); the module's position loop does the rest. The
trajectory starts where the robot is when the driver first runs:

* ``circle``: p(s) = p0 + r (cos ws - 1, sin ws), r = ``size``;
* ``eight`` (a lemniscate of Gerono, lying): p(s) = p0 + (a sin ws, a/2 sin 2ws), a = ``size``;

with w = 2 pi / ``period`` and s the time since the start. The velocity module stores the
reference with the command, so a recording holds it (``coopsim analyze tracking``). Batch
capable (in-process, all robots in a few numpy calls); over the network one robot per process,
with the standard library only.
"""

from __future__ import annotations

import math

from ...model.driver import Driver
from ...model.params import ParamSpec

SHAPES = ("circle", "eight")


def reference(shape: str, size: float, period: float, s, sin=math.sin, cos=math.cos):
    """(dx, dy, vx, vy) of the reference ``s`` seconds after the start, relative to the start
    position (m, m/s, world frame). ``sin``/``cos`` may be numpy's for arrays of ``s``."""
    w = 2.0 * math.pi / period
    if shape == "circle":
        return (size * (cos(w * s) - 1.0), size * sin(w * s), -size * w * sin(w * s),
                size * w * cos(w * s))
    return (size * sin(w * s), 0.5 * size * sin(2.0 * w * s), size * w * cos(w * s),
            size * w * cos(2.0 * w * s))


class Tracking(Driver):
    """Track a circle or a figure-eight from the robot's start position (needs velocity, gps)."""

    label = "tracking"
    description = "fly a circle or figure-eight reference (needs velocity, gps); batch capable"
    batch = True
    params = (
        ParamSpec("shape", "str", "circle or eight", "eight"),
        ParamSpec("size", "float", "circle radius, or the eight's half length, m", 1.5, 0.01,
                  1000.0, "m"),
        ParamSpec("period", "float", "time of one lap, s", 12.0, 0.1, 1e6, "s"),
        ParamSpec("lead", "float", "the reference is for this long after the latest reading "
                  "(the step), s", 0.02, 0.0, 10.0, "s"),
    )

    def _shape(self) -> str:
        shape = self.p["shape"]
        if shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}, not {shape!r}")
        return shape

    # -- one robot (in-process or over the network) -----------------------------------------

    def setup(self, bot) -> None:
        x, y = bot.gps.read()[:2]
        self.start, self.t0 = (x, y), bot.time

    def step(self, bot) -> None:
        s = bot.time + self.p["lead"] - self.t0
        dx, dy, vx, vy = reference(self._shape(), self.p["size"], self.p["period"], s)
        bot.velocity.track(self.start[0] + dx, self.start[1] + dy, vx, vy)

    # -- every robot hosting it, with arrays --------------------------------------------------

    def step_batch(self, bots) -> None:
        import numpy as np  # the network host runs without numpy; only batches need it

        starts = getattr(self, "_starts", {})
        poses = bots.poses()
        for name, pose in zip(bots.names, poses.tolist()):
            starts.setdefault(name, (pose[0], pose[1], bots.time))
        self._starts = starts
        origin = np.array([starts[n] for n in bots.names]).reshape(-1, 3)
        s = bots.time + self.p["lead"] - origin[:, 2]
        dx, dy, vx, vy = reference(self._shape(), self.p["size"], self.p["period"], s,
                                   np.sin, np.cos)
        values = np.column_stack((vx, vy, np.zeros(len(s)), origin[:, 0] + dx,
                                  origin[:, 1] + dy, np.ones(len(s))))
        bots.set("velocity", values)
