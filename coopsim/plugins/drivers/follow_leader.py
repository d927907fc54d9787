"""``follow_leader``: keep a set distance behind another robot, using gps and compass.

The follower reads its own gps and compass and the leader's gps (a controller may read any
robot's modules). Needs ``gps``, ``compass`` and ``motors``.
"""

from __future__ import annotations

import math

from ...model.driver import Driver
from ...model.params import ParamSpec


def follow_speeds(me, my_yaw: float, leader, gap: float) -> tuple[float, float]:
    """Wheel speeds (m/s) to close on ``leader`` (x, y) to ``gap`` m, from ``me``, ``my_yaw``."""
    dx, dy = leader[0] - me[0], leader[1] - me[1]
    distance = math.hypot(dx, dy)
    bearing = math.atan2(dy, dx) - my_yaw
    bearing = math.atan2(math.sin(bearing), math.cos(bearing))
    forward = max(-0.2, min(0.5, 0.8 * (distance - gap))) * max(0.0, math.cos(bearing))
    turn = max(-0.3, min(0.3, 0.8 * bearing))
    return forward - turn, forward + turn


class FollowLeader(Driver):
    """Close on ``leader`` and hold ``gap`` metres from it."""

    label = "follow_leader"
    description = "keep a distance behind another robot (needs gps, compass, motors)"
    params = (
        ParamSpec("leader", "str", "network name of the robot to follow", "robot1"),
        ParamSpec("gap", "float", "distance to keep, m", 0.8, 0.0, 20.0, "m"),
    )

    def setup(self, bot) -> None:
        self.leader = bot.peer(self.p["leader"])

    def step(self, bot) -> None:
        me, (yaw,) = bot.gps.read(), bot.compass.read()
        bot.motors.set_speeds(*follow_speeds(me, yaw, self.leader.gps.read(), self.p["gap"]))
