"""``wander``: drive forward, turn away from whatever the sonar sees (Braitenberg-style).

Needs ``sonar`` and ``motors``. A robot that has been blocked for a while backs off and turns
(a wall met head-on would otherwise hold it for good).
"""

from __future__ import annotations

from ...model.driver import Driver
from ...model.params import ParamSpec


def wander_speeds(distances, cruise: float, safe: float) -> tuple[float, float]:
    """Wheel speeds (left, right), m/s, from the 11 sonar distances (index 0 = right side)."""
    right_side = min(distances[0:5])
    left_side = min(distances[6:11])
    ahead = min(distances[3:8])
    if ahead < safe:
        turn = 1.0 if right_side < left_side else -1.0  # turn towards the more open side
        return -0.2 * turn, 0.2 * turn
    steer = 0.25 * (min(right_side, 2.0) - min(left_side, 2.0))  # drift away from near walls
    return cruise + steer, cruise - steer


class Wander(Driver):
    """Cruise, steer away from near obstacles, turn on the spot when blocked ahead."""

    label = "wander"
    description = "cruise and turn away from what the sonar sees (needs sonar, motors)"
    params = (
        ParamSpec("cruise", "float", "forward wheel speed, m/s", 0.35, 0.0, 5.0, "m/s"),
        ParamSpec("safe", "float", "turn when anything ahead is nearer, m", 0.6, 0.05, 10.0, "m"),
        ParamSpec("unstick", "int", "steps blocked before backing off (0 = never)", 150, 0,
                  100000, "steps"),
    )

    def setup(self, bot) -> None:
        self.blocked = 0
        self.backing = 0

    def step(self, bot) -> None:
        d = bot.sonar.read()
        if self.backing:  # back off on a slight turn, chosen by this run's seed
            self.backing -= 1
            bot.motors.set_speeds(-0.2 + self.turn, -0.2 - self.turn)
            return
        self.blocked = self.blocked + 1 if min(d[3:8]) < self.p["safe"] else 0
        if self.p["unstick"] and self.blocked > self.p["unstick"]:
            self.blocked, self.backing = 0, 60
            self.turn = 0.1 if self.rng.random() < 0.5 else -0.1
        bot.motors.set_speeds(*wander_speeds(d, self.p["cruise"], self.p["safe"]))
