"""``cmd_vel`` to a robot's motion module: a geometry_msgs/Twist (base frame: linear.x forward,
linear.y left, m/s; angular.z yaw rate, rad/s) becomes the command a network client would send,
checked by the module's own rules.

=========== ============================================= ===================================
module      command                                       from the Twist
=========== ============================================= ===================================
motors      set_speeds (left, right wheel speed, m/s)     v -+ w * axle / 2 (saturate at
                                                          ``motors.max_speed``)
velocity    set_velocity (vx, vy world frame, yaw rate)   (x, y) turned by the robot's yaw
=========== ============================================= ===================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..model.errors import CoopsimError
from ..model.plugins import MODULES

MOTION = ("motors", "velocity")  # modules a Twist drives, in the order a robot's is chosen


class TwistRefused(CoopsimError):
    """A Twist the motion module refuses (not finite, beyond its sanity limits)."""


@dataclass(frozen=True)
class Drive:
    """How one robot is driven by Twists: its motion module, its axle (m), its params."""

    robot: str
    module: str
    axle: float
    params: dict

    def command(self, linear, angular, yaw: float) -> tuple[float, ...]:
        """The module's stored command for a Twist, the robot heading ``yaw`` rad (world).

        Raises:
            TwistRefused: a component is not finite, or the module refuses the values.
        """
        values = (*linear, *angular)
        if not all(math.isfinite(v) for v in values):
            raise TwistRefused("a cmd_vel component is not finite")
        cls = MODULES.get(self.module)
        if self.module == "motors":
            half = angular[2] * self.axle / 2.0
            name, data = "set_speeds", (linear[0] - half, linear[0] + half)
        else:
            c, s = math.cos(yaw), math.sin(yaw)
            name = "set_velocity"
            data = (linear[0] * c - linear[1] * s, linear[0] * s + linear[1] * c, angular[2])
        command = next(c for c in cls.commands if c.name == name)
        try:
            return tuple(cls.command_row(command, data, self.params, None))
        except CoopsimError as exc:
            raise TwistRefused(str(exc)) from None


def drive_of(robot, params: dict) -> Drive | None:
    """The :class:`Drive` of a World robot (None when it has no module a Twist drives)."""
    for label in MOTION:
        if label in robot.modules:
            return Drive(robot.name, label, float(robot.axle or 0.0), dict(params[label]))
    return None
