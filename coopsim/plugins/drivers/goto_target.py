"""``goto_target``: steer to the target of a colour, avoid obstacles, stop when there.

Needs ``target``, ``sonar`` and ``motors``.
"""

from __future__ import annotations

import math

from ...model.driver import Driver
from ...model.params import ParamSpec


def goto_speeds(distance: float, angle: float, sonar, arrived: float) -> tuple[float, float]:
    """Wheel speeds (m/s) towards a target at ``distance`` m, ``angle`` rad (+ = left)."""
    if distance < arrived:
        return 0.0, 0.0
    ahead = min(sonar[3:8])
    forward = 0.4 * min(1.0, distance) * max(0.0, math.cos(angle))
    if ahead < 0.4:
        forward = 0.0
        angle = angle + (0.8 if min(sonar[0:5]) < min(sonar[6:11]) else -0.8)
    turn = max(-0.3, min(0.3, 0.6 * angle))
    return forward - turn, forward + turn


class GotoTarget(Driver):
    """Head for the first target of ``color``; stop within ``arrived`` of it."""

    label = "goto_target"
    description = "drive to the target of a colour, around obstacles (needs target, sonar, motors)"
    params = (
        ParamSpec("color", "str", "colour of the target to reach", "red"),
        ParamSpec("arrived", "float", "stop this near the target's centre, m", 0.45, 0.05, 5.0,
                  "m"),
    )

    def step(self, bot) -> None:
        distance, angle = bot.target.read_color(text=self.p["color"])
        bot.motors.set_speeds(*goto_speeds(distance, angle, bot.sonar.read(), self.p["arrived"]))
