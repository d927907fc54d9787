"""``holonomic``: a quadrotor seen from above, flying at a fixed height (SwarmSimX's robot, in 2D).

A disc 0.5 m across (rotor tips), 1.5 kg, driven by the ``velocity`` module: world-frame
velocity commands reached through a first-order lag and an acceleration limit (the module's
typed parameters ``tau``, ``max_accel``, ``max_speed``, ``max_yaw_rate``), or a position
reference tracked by the module's outer loop (``gain``). It carries the sonar (11 range rays,
as the ``single``), ``gps``, ``compass`` and ``bumper``. On the pymunk engine the drive's
joints are strong (it is flown, not pushed about), so it follows its commanded velocity within
a step unless it meets something heavy.
"""

from __future__ import annotations

from ...model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec
from ...model.specs import RobotSpec

RADIUS = 0.25  # m, rotor tips
MASS = 1.5  # kg
DRIVE_FORCE = 200.0  # N: the velocity drive's force cap (about 13 g: never the limit in flight)
DRIVE_TORQUE = 20.0  # N m
MODULES = ("velocity", "sonar", "gps", "compass", "bumper")


class Holonomic(RobotType):
    """A quadrotor seen from above: velocity commands, lag, acceleration limit.

    - frame: a circle 0.50 m across (rotor tips, radius 0.25 m), 1.5 kg;
    - drive: ``velocity``, world-frame velocity and yaw rate reached through a first-order lag
      and an acceleration limit (the module's parameters); on pymunk a control body with strong
      joints (200 N, 20 N·m), on the kinematic engine the velocity drive.

    It has no wheels (``odometry`` and ``motors`` do not apply) and no heading preference: it
    flies any direction at any yaw. ``scenarios/tracking.scenario`` flies one along a
    figure-eight.
    """

    label = "holonomic"
    description = "quadrotor seen from above, 0.50 m across, velocity drive with lag, 11 sonars"
    modules = MODULES
    footprint = RADIUS

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        body = BodySpec("frame", "dynamic", MASS, (ShapeSpec("circle", radius=RADIUS),),
                        (spec.position[0], spec.position[1]), spec.yaw)
        member = MemberSpec(spec.name, "frame", MODULES, RADIUS, 0.0, "velocity", DRIVE_FORCE,
                            DRIVE_TORQUE)
        return Assembly((member,), (body,))
