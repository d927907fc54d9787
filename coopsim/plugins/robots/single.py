"""``single``: one cylindrical robot with two driven wheels (after the CoopDynSim platforms).

Sized like a lab robot: chassis 0.40 m across, 10 kg, wheels 0.34 m apart, 0.6 m/s top speed;
the drive's traction is capped at 150 N and 40 N m, so it pushes light objects and stalls
against walls and heavy ones.
"""

from __future__ import annotations

from ...model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec
from ...model.specs import RobotSpec

CHASSIS_RADIUS = 0.20  # m
CHASSIS_MASS = 10.0  # kg
AXLE = 0.34  # m, distance between the driven wheels
DRIVE_FORCE = 150.0  # N, cap of the drive's pivot joint: the wheels' largest traction force
DRIVE_TORQUE = 40.0  # N m, cap of the drive's gear joint
MODULES = ("motors", "sonar", "target", "odometry", "gps", "compass", "bumper")


def chassis(name: str, key: str, x: float, y: float, yaw: float,
            modules: tuple[str, ...] = MODULES, refs=None) -> tuple[BodySpec, MemberSpec]:
    """The body and member of one differential-drive chassis at (x, y, yaw), world frame.

    Other types (``team2``) build their robots from it.
    """
    body = BodySpec(key, "dynamic", CHASSIS_MASS, (ShapeSpec("circle", radius=CHASSIS_RADIUS),),
                    (x, y), yaw)
    member = MemberSpec(name, key, modules, CHASSIS_RADIUS, AXLE, "differential", DRIVE_FORCE,
                        DRIVE_TORQUE, refs=refs or {})
    return body, member


class Single(RobotType):
    """One cylindrical robot, differential drive, 11 sonars and a target finder.

    A lab robot after the CoopDynSim platforms:

    - chassis: a circle 0.40 m across (radius 0.20 m), 10 kg;
    - wheels: two driven wheels 0.34 m apart (differential drive), top speed 0.6 m/s
      (``motors.max_speed``);
    - drive: a kinematic control body tied to the chassis by a pivot joint (force cap 150 N)
      and a gear joint (torque cap 40 N·m), both with ``max_bias`` 0; the wheel speeds set the
      control body's velocity and yaw rate.

    Because the joints are capped and only correct velocity, a robot pushes light objects,
    stalls against walls and heavy objects (its bumper reports the contact) and never passes
    through them.
    """

    label = "single"
    description = "cylindrical robot, 0.40 m across, differential drive, 11 sonars"
    modules = MODULES
    footprint = CHASSIS_RADIUS
    reference = True  # the step benchmark's robot (coopsim bench step)

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        body, member = chassis(spec.name, "chassis", spec.position[0], spec.position[1],
                               spec.yaw, cls.modules)
        return Assembly((member,), (body,))


class SwarmBot(Single):
    """``single``'s chassis with a radio and front floor sensors: a robot for squads and games
    (the swarm-gaming robots talked over a radio and saw water and borders on the floor)."""

    label = "swarmbot"
    description = "single's 0.40 m robot plus radio and line (floor) sensors, for squads"
    modules = MODULES + ("radio", "line")


class GripperBot(Single):
    """``single``'s chassis with a gripper: it grabs the movable object it touches and carries
    it.

    ``grab`` holds the nearest object with mass whose outline is within ``gripper.reach`` m
    (default 0.05) of the chassis edge, ``release`` lets go where it is, ``read`` says what is
    held (``[held, mass kg]``, text its name). It holds through the engine's run-time
    constraints (``Engine.attach``): on ``pymunk`` a pivot joint at the contact point plus, for a
    weld (``gripper.weld`` 1, the default), a gear joint keeping the relative angle (the held
    object still collides and drags on the floor, and a heavy one slows the robot down); on
    ``kinematic`` a rigid hold, the object colliding with nothing while carried.
    """

    label = "gripperbot"
    description = "single's 0.40 m robot plus a gripper that holds the movable object it touches"
    modules = MODULES + ("gripper",)
