"""Robot types with a 3D arm (engines with the ``arms`` feature: ``mujoco``): ``irb120``,
``mh5`` and ``lwa`` stand on a pedestal, ``mobile_lwa`` carries the ``lwa`` arm on a
differential base.

CoopDynSim simulated three arms (amtec's 7-DoF LWA, ABB's IRB 120, Yaskawa Motoman's MH5); their
kinematics here follow the makers' published geometry and axis data (as ROS-Industrial's and
Schunk's robot descriptions carry them), each joint frame placed URDF-style
(:class:`~coopsim.model.arm.LinkSpec`). The last joint of every arm turns about its own z, which
is the approach direction of the tool, so the tool point (the fingertips of the parallel
gripper on the flange) is ``(0, 0, finger length)`` in the last joint's frame. docs/robots.md
gives every number with its source and marks the estimates.

A fixed arm is one robot (one member) whose chassis is the static body ``base``: a mounting
plate at the section's position, its z the section's z (an arm may stand on a table top); the
arm's base frame is on top of the plate. Its modules are ``joints``, ``tool``, ``gripper``,
``force`` and ``pose``; it has no drive. ``mobile_lwa`` is a differential-drive robot (modules
``motors`` and ``odometry`` too) whose chassis carries the arm on its top plate.
"""

from __future__ import annotations

import math
from types import MappingProxyType

import numpy as np

from ...model.arm import ArmSpec, GripperSpec, LinkSpec, frames
from ...model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec
from ...model.specs import RobotSpec

DEG = math.pi / 180.0
ARM_MODULES = ("joints", "tool", "gripper", "force", "pose")
PLATE = 0.02  # m: the mounting plate a fixed arm's base stands on (its pedestal body)
PLATE_MARGIN = 0.02  # m: the plate's rim beyond the arm's base radius
UP = (0.0, 0.0, 1.0)
Y = (0.0, 1.0, 0.0)
X = (1.0, 0.0, 0.0)
# the last joint's frame turned so that its z is the previous frame's x (the approach axis)
TOOL_Z_ALONG_X = (0.0, math.pi / 2, 0.0)

#: A Schunk PG 70-like parallel gripper (the PowerCube family's): 68 mm stroke, 200 N grip;
#: fingers and housing 0.10 m long along the tool's z (an estimate).
GRIPPER = GripperSpec(stroke=0.068, force=200.0, length=0.10)


def _j(key, origin, axis, lo, hi, speed, effort, mass, radius, rpy=(0.0, 0.0, 0.0)):
    """A joint from data-sheet units: limits in degrees, speed in degrees per second."""
    return LinkSpec(key, origin, rpy, axis, (lo * DEG, hi * DEG), speed * DEG, effort, mass,
                    radius)


#: ABB IRB 120-3/0.58: the product specification's axis ranges and speeds and its
#: 290/270/70/302/72 mm geometry (joint 1's origin 0.10 m up the 0.29 m to axis 2: the base
#: casting below it); link masses of ABB's CAD model (ROS-Industrial abb_irb120_support);
#: efforts are estimates (ABB publishes none): twice the static torque at full payload.
IRB120 = ArmSpec(
    "arm",
    (_j("joint_1", (0.0, 0.0, 0.10), UP, -165, 165, 250, 80.0, 3.067, 0.07),
     _j("joint_2", (0.0, 0.0, 0.19), Y, -110, 110, 250, 120.0, 3.909, 0.06),
     _j("joint_3", (0.0, 0.0, 0.27), Y, -110, 70, 250, 60.0, 2.944, 0.05),
     _j("joint_4", (0.0, 0.0, 0.07), X, -160, 160, 320, 20.0, 1.328, 0.045),
     _j("joint_5", (0.302, 0.0, 0.0), Y, -120, 120, 320, 20.0, 0.546, 0.04),
     _j("joint_6", (0.072, 0.0, 0.0), UP, -400, 400, 420, 10.0, 0.137, 0.03,
        TOOL_Z_ALONG_X)),
    tool=(0.0, 0.0, GRIPPER.length), base="base", mount=(0.0, 0.0, PLATE),
    home=(0.0, 0.0, 0.0, 0.0, 90 * DEG, 0.0), payload=3.0, reach=0.58, gripper=GRIPPER,
    base_mass=6.215, base_radius=0.09)

#: Yaskawa Motoman MH5 (MH5F): S/L/U/R/B/T ranges and speeds and the link geometry as in
#: ROS-Industrial motoman_mh5_support (its OPW parameters: 330/88/310/40/305/80 mm), 5 kg
#: payload, 706 mm reach; link masses and efforts are estimates (27 kg in all).
MH5 = ArmSpec(
    "arm",
    (_j("joint_s", (0.0, 0.0, 0.199), UP, -170, 170, 170, 100.0, 5.0, 0.075),
     _j("joint_l", (0.088, 0.0, 0.131), Y, -65, 150, 170, 150.0, 4.0, 0.06),
     _j("joint_u", (0.0, 0.0, 0.31), (0.0, -1.0, 0.0), -136, 255, 170, 80.0, 3.5, 0.055),
     _j("joint_r", (0.0715, 0.0, 0.0399), (-1.0, 0.0, 0.0), -190, 190, 200, 25.0, 1.5, 0.045),
     _j("joint_b", (0.2335, 0.0, 0.0), (0.0, -1.0, 0.0), -125, 125, 200, 25.0, 0.8, 0.04),
     _j("joint_t", (0.080, 0.0, 0.0), (0.0, 0.0, -1.0), -360, 360, 400, 12.0, 0.2, 0.03,
        TOOL_Z_ALONG_X)),
    tool=(0.0, 0.0, GRIPPER.length), base="base", mount=(0.0, 0.0, PLATE),
    home=(0.0, 0.0, 0.0, 0.0, -90 * DEG, 0.0), payload=5.0, reach=0.706, gripper=GRIPPER,
    base_mass=12.0, base_radius=0.10)


def _lwa(base: str, mount: tuple[float, float, float]) -> ArmSpec:
    """amtec/Schunk LWA 3: seven PowerCube modules, shoulder-elbow-wrist-flange 408, 316.5 and
    192.7 mm (Schunk's ROS description), pivots +-113 deg, rotary joints +-180 deg, the
    modules' torques (370, 370, 176, 176, 41.6, 20.1, 9.6 N m); 2 rad/s on every joint, the
    masses and the 3 kg payload are estimates. Upright: the shoulder 0.25 m above its base."""
    speed = 2.0 / DEG  # deg/s
    return ArmSpec(
        "arm",
        (_j("joint_1", (0.0, 0.0, 0.12), UP, -180, 180, speed, 370.0, 3.6, 0.06),
         _j("joint_2", (0.0, 0.0, 0.13), Y, -113, 113, speed, 370.0, 3.6, 0.06),
         _j("joint_3", (0.0, 0.0, 0.408), UP, -180, 180, speed, 176.0, 2.0, 0.05),
         _j("joint_4", (0.0, 0.0, 0.0), Y, -113, 113, speed, 176.0, 2.0, 0.05),
         _j("joint_5", (0.0, 0.0, 0.3165), UP, -180, 180, speed, 41.6, 1.2, 0.04),
         _j("joint_6", (0.0, 0.0, 0.0), Y, -113, 113, speed, 20.1, 1.2, 0.04),
         _j("joint_7", (0.0, 0.0, 0.1927), UP, -180, 180, speed, 9.6, 0.5, 0.035)),
        tool=(0.0, 0.0, GRIPPER.length), base=base, mount=mount,
        home=(0.0, 0.6, 0.0, 1.2, 0.0, math.pi - 1.8, 0.0), payload=3.0,
        reach=0.408 + 0.3165 + 0.1927, gripper=GRIPPER, base_mass=4.0, base_radius=0.07)


LWA = _lwa("base", (0.0, 0.0, PLATE))


def reach_at_start(arm: ArmSpec) -> float:
    """Horizontal distance from the arm's base axis to the farthest joint or tool point at
    its start angles, plus that link's radius, m (a fixed arm's footprint)."""
    f = frames(arm, arm.start)
    radii = [arm.base_radius] + [l.radius for l in arm.links] + [arm.links[-1].radius]
    spread = np.hypot(f[:, 0, 3] + arm.mount[0], f[:, 1, 3] + arm.mount[1])
    return float(max(s + r for s, r in zip(spread, radii)))


class _FixedArm(RobotType):
    """One arm on a static mounting plate at the section's pose: subclasses set ARM."""

    ARM: ArmSpec = IRB120
    modules = ARM_MODULES
    draw = MappingProxyType({"shape": "disc", "heading": True, "arm": True})
    defaults = MappingProxyType({"gripper": {"reach": 0.03}})

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        arm = cls.ARM
        radius = arm.base_radius + PLATE_MARGIN
        plate = BodySpec("base", "static", arm.base_mass,
                         (ShapeSpec("circle", radius=radius),),
                         (spec.position[0], spec.position[1]), spec.yaw,
                         z=spec.position[2], height=PLATE)
        member = MemberSpec(spec.name, "base", cls.modules, radius, refs={"arm": arm.key})
        return Assembly((member,), (plate,), arms=(arm,))


class Irb120(_FixedArm):
    """ABB IRB 120: 6 axes, 3 kg, 0.58 m reach, on a mounting plate.

    The IRB 120-3/0.58 ([n] are the sources below; *est.* an estimate):

    - payload 3 kg (4 kg with the wrist vertical), 0.58 m to the wrist centre [12];
    - 290 mm up to axis 2, 270 mm upper arm, 70 mm + 302 mm to the wrist, 72 mm to the flange
      [12] (joint 1 placed 0.10 m up those 290 mm: the base casting below it);
    - joint ranges ±165°, ±110°, −110..+70°, ±160°, ±120°, ±400° [12];
    - top speeds 250, 250, 250, 320, 320, 420 °/s [12];
    - drive torques 80, 120, 60, 20, 20, 10 N m *est.* (about twice the static torque at full
      payload);
    - link masses 3.067, 3.909, 2.944, 1.328, 0.546, 0.137 kg, base 6.2 kg (ABB's CAD model
      [15]; 18.1 kg of the data sheet's 25 kg);
    - home (0, 0, 0, 0, 90°, 0): upper arm up, forearm forward, tool down; footprint 0.34 m.

    Sources:

    - [12] ABB, *Product specification IRB 120* (3HAC035960-001): axis working ranges and
      maximum speeds, 3 kg (4 kg vertical wrist), 0.58 m reach, 25 kg, the 290/270/70/302/72 mm
      dimensions; the same numbers in ROS-Industrial's abb_irb120_support (irb120_3_58 macro).
    - [15] ROS-Industrial abb_irb120_support: link inertials of ABB's model.
    - [16] Schunk, PG 70 (PowerCube gripper): stroke per finger 34 mm, gripping force 200 N.
    """

    label = "irb120"
    description = ("ABB IRB 120 arm: 6 axes, 3 kg payload, 0.58 m reach, parallel gripper; "
                   "joints, tool, gripper, force (engine mujoco)")
    ARM = IRB120
    footprint = reach_at_start(IRB120)


class Mh5(_FixedArm):
    """Yaskawa Motoman MH5: 6 axes, 5 kg, 0.706 m reach, on a mounting plate.

    The MH5 (MH5F) ([n] are the sources below; *est.* an estimate):

    - axes S, L, U, R, B, T; payload 5 kg, 0.706 m from the S axis to the B axis [13];
    - 330 mm up to L (joint S 0.199 m up, L 0.131 m above it, 0.088 m forward), 310 mm upper
      arm, 40 mm + 305 mm to B, 80 mm to the flange [13];
    - joint ranges S ±170°, L −65..+150°, U −136..+255°, R ±190°, B ±125°, T ±360° [13];
    - top speeds 170, 170, 170, 200, 200, 400 °/s (2.96, 3.48, 6.97 rad/s) [13];
    - drive torques 100, 150, 80, 25, 25, 12 N m *est.*;
    - link masses 5.0, 4.0, 3.5, 1.5, 0.8, 0.2 kg, base 12 kg *est.* (27 kg in all);
    - home (0, 0, 0, 0, −90°, 0); footprint 0.43 m.

    Sources:

    - [13] Yaskawa Motoman, MH5 (MH5F) data sheet: 5 kg, 706 mm, the S/L/U/R/B/T ranges; the
      link geometry and axis speeds as ROS-Industrial's motoman_mh5_support carries them (its
      URDF and OPW parameters a1 88, a2 −40, c1 330, c2 310, c3 305, c4 80 mm).
    - [16] Schunk, PG 70 (PowerCube gripper): stroke per finger 34 mm, gripping force 200 N.
    """

    label = "mh5"
    description = ("Yaskawa Motoman MH5 arm: 6 axes, 5 kg payload, 0.706 m reach, parallel "
                   "gripper; joints, tool, gripper, force (engine mujoco)")
    ARM = MH5
    footprint = reach_at_start(MH5)


class Lwa(_FixedArm):
    """amtec/Schunk LWA 3: 7 axes (redundant), 0.92 m to the flange, on a mounting plate.

    Rotary and pivot modules alternating ([n] are the sources below; *est.* an estimate):

    - payload 3 kg *est.*; 0.917 m from the shoulder to the flange [14];
    - shoulder 0.25 m above the mount (joints 1 and 2), upper arm 0.408 m, forearm 0.3165 m,
      wrist to flange 0.1927 m [14]; mounted upright here (the Care-O-bot hangs it);
    - rotary joints (1, 3, 5, 7) ±180°, pivots (2, 4, 6) ±113° [14];
    - top speeds 2 rad/s each *est.* (the description's limit) [14];
    - drive torques 370, 370, 176, 176, 41.6, 20.1, 9.6 N m (the PowerCube modules') [14];
    - link masses 3.6, 3.6, 2.0, 2.0, 1.2, 1.2, 0.5 kg, base 4 kg *est.*;
    - home (0, 0.6, 0, 1.2, 0, π − 1.8, 0) rad: leaning forward, tool down; footprint 0.58 m.

    Sources:

    - [14] Schunk's ROS description of the LWA 3 (ipa320 schunk_modular_robotics,
      lwa.urdf.xacro): the link lengths, the ranges, the modules' efforts and its 2 rad/s
      limit.
    - [16] Schunk, PG 70 (PowerCube gripper): stroke per finger 34 mm, gripping force 200 N.
    """

    label = "lwa"
    description = ("amtec/Schunk LWA 3 lightweight arm: 7 axes, 3 kg payload, 0.92 m reach, "
                   "parallel gripper; joints, tool, gripper, force (engine mujoco)")
    ARM = LWA
    footprint = reach_at_start(LWA)


# -- the mobile manipulator ---------------------------------------------------------------------

#: A Neobotix MP-500-class differential base (the MM-500 mobile manipulator carries a Schunk
#: arm on it): 0.823 x 0.592 m, top plate 0.358 m high, 1.5 m/s; its mass, wheel track and
#: drive caps are estimates.
BASE_SIZE = (0.823, 0.592)  # m, length along x, width
BASE_HEIGHT = 0.358  # m
BASE_MASS = 90.0  # kg (estimate)
BASE_AXLE = 0.50  # m between the drive wheels (estimate)
BASE_SPEED = 1.5  # m/s
BASE_FORCE = 400.0  # N: cap of the drive's traction (about 3.5 m/s^2 at 110 kg)
BASE_TORQUE = 150.0  # N m
MOBILE_MOUNT = (0.20, 0.0, BASE_HEIGHT)  # the arm's base on the top plate, forward of centre
MOBILE_LWA = _lwa("chassis", MOBILE_MOUNT)


class MobileLwa(RobotType):
    """The LWA 3 on a differential base: drive to a shelf, pick, drive on, place.

    The base is a Neobotix MP-500-class differential platform (Neobotix's MM-500 mobile
    manipulator carries a Schunk arm on it): 0.823 × 0.592 m, top plate 0.358 m high, 1.5 m/s
    top speed (``motors.max_speed``) [17]; its mass (90 kg), wheel track (0.50 m) and drive caps
    (400 N, 150 N m) are estimates. The arm stands 0.20 m forward of the base's centre on the
    top plate, facing forward. Footprint (the base's half diagonal, or the arm at home) 0.78 m.

    Sources:

    - [14] Schunk's ROS description of the LWA 3 (ipa320 schunk_modular_robotics,
      lwa.urdf.xacro): the link lengths, the ranges, the modules' efforts and its 2 rad/s
      limit.
    - [16] Schunk, PG 70 (PowerCube gripper): stroke per finger 34 mm, gripping force 200 N.
    - [17] Neobotix, MP-500 documentation, *Mechanical properties* (dimensions, 80 kg payload,
      1.5 m/s, 2.4 m/s²).
    """

    label = "mobile_lwa"
    description = ("mobile manipulator: LWA 3 7-axis arm on a 0.82 x 0.59 m differential base "
                   "(1.5 m/s); motors, odometry, joints, tool, gripper, force (engine mujoco)")
    modules = ("motors", "odometry") + ARM_MODULES
    draw = MappingProxyType({"shape": "box", "size": BASE_SIZE, "heading": True, "arm": True})
    defaults = MappingProxyType({"motors": {"max_speed": BASE_SPEED},
                                 "gripper": {"reach": 0.03}})
    footprint = max(math.hypot(*BASE_SIZE) / 2,
                    reach_at_start(MOBILE_LWA))

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        radius = math.hypot(*BASE_SIZE) / 2
        body = BodySpec("chassis", "dynamic", BASE_MASS, (ShapeSpec("box", size=BASE_SIZE),),
                        (spec.position[0], spec.position[1]), spec.yaw, height=BASE_HEIGHT)
        member = MemberSpec(spec.name, "chassis", cls.modules, radius, BASE_AXLE,
                            "differential", BASE_FORCE, BASE_TORQUE,
                            refs={"arm": MOBILE_LWA.key})
        return Assembly((member,), (body,), arms=(MOBILE_LWA,))
