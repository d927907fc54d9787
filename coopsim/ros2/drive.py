"""``cmd_vel`` to a robot's motion module: a geometry_msgs/Twist (base frame: linear.x forward,
linear.y left, m/s; angular.z yaw rate, rad/s) becomes the command a network client would send,
checked by the module's own rules. The module says how (its
:class:`~coopsim.model.capabilities.TwistDriven` ``from_twist``): ``motors``
turns it into wheel speeds, ``velocity`` into a world-frame velocity; a plugin's motion module
does the same by declaring that hook (or a user registers an adapter for it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..model.errors import CoopsimError
from ..model.capabilities import TwistDriven, capability
from ..model.plugins import MODULES


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
        if not all(math.isfinite(v) for v in (*linear, *angular)):
            raise TwistRefused("a cmd_vel component is not finite")
        try:
            return tuple(capability(MODULES.get(self.module), TwistDriven).from_twist(
                float(linear[0]), float(linear[1]), float(angular[2]), yaw, self.axle,
                self.params))
        except CoopsimError as exc:
            raise TwistRefused(str(exc)) from None


def twist_driven(label: str) -> bool:
    """True when module ``label`` takes body velocities (it is, or is adapted to, a
    :class:`~coopsim.model.capabilities.TwistDriven`)."""
    return label in MODULES and capability(MODULES.get(label), TwistDriven) is not None


def drive_of(robot, params: dict) -> Drive | None:
    """The :class:`Drive` of a World robot: its first module a Twist drives (None: none)."""
    for label in robot.modules:
        if twist_driven(label):
            return Drive(robot.name, label, float(robot.axle or 0.0), dict(params[label]))
    return None
