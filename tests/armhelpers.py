"""Arms for the tests of what shows them (state document, recordings, replay, viewer,
Foxglove, ROS 2): an IRB 120-like 6-DoF arm with a gripper on a static pedestal, registered as
a test robot type, and a mujoco scenario with it and two cubes."""

from __future__ import annotations

import dataclasses
import math

from coopsim.model.arm import ArmSpec, GripperSpec, LinkSpec
from coopsim.model.specs import ObjectSpec

from helpers import robot, scenario

TEST_TYPE = "armview_test_arm"


def six_dof() -> ArmSpec:
    """A 6-DoF arm shaped like the IRB 120 (link lengths of its data sheet, rounded)."""
    d = math.radians
    links = (
        LinkSpec("joint_1", (0.0, 0.0, 0.29), axis=(0, 0, 1), limits=(d(-165), d(165)),
                 max_speed=d(250), max_effort=40, mass=3.0, radius=0.06),
        LinkSpec("joint_2", (0.0, 0.0, 0.0), axis=(0, 1, 0), limits=(d(-110), d(110)),
                 max_speed=d(250), max_effort=40, mass=3.0, radius=0.05),
        LinkSpec("joint_3", (0.0, 0.0, 0.27), axis=(0, 1, 0), limits=(d(-110), d(70)),
                 max_speed=d(250), max_effort=20, mass=2.0, radius=0.045),
        LinkSpec("joint_4", (0.07, 0.0, 0.0), axis=(1, 0, 0), limits=(d(-160), d(160)),
                 max_speed=d(320), max_effort=8, mass=1.0, radius=0.04),
        LinkSpec("joint_5", (0.302, 0.0, 0.0), axis=(0, 1, 0), limits=(d(-120), d(120)),
                 max_speed=d(320), max_effort=8, mass=0.8, radius=0.035),
        LinkSpec("joint_6", (0.072, 0.0, 0.0), axis=(1, 0, 0), limits=(d(-400), d(400)),
                 max_speed=d(420), max_effort=4, mass=0.3, radius=0.03))
    return ArmSpec("arm", links, tool=(0.06, 0.0, 0.0), base="base",
                   home=(0.0, 0.0, 0.0, 0.0, 0.5, 0.0), payload=3.0, reach=0.58,
                   gripper=GripperSpec(0.08, 100.0, 0.06))


def arm_type(label: str = TEST_TYPE) -> str:
    """Register (once) a robot type: a static pedestal ``base`` carrying :func:`six_dof`."""
    from coopsim.model.plugins import ROBOT_TYPES
    from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec

    class TestArm(RobotType):
        modules = ()

        @classmethod
        def build(cls, spec):
            body = BodySpec("base", "static", 10.0, (ShapeSpec("circle", radius=0.08),),
                            spec.position[:2], spec.yaw, height=0.05)
            return Assembly((MemberSpec(spec.name, "base", cls.modules, 0.08,
                                        refs={"arm": "arm"}),), (body,), arms=(six_dof(),))

    TestArm.label = label
    if label not in ROBOT_TYPES:
        ROBOT_TYPES.register(label)(TestArm)
    return label


def arm_scenario(type_label: str | None = None, dt: float = 0.002):
    """A mujoco scenario: one arm at (0, 0), a cube to be lifted at 0.4 m and a cube falling
    from 0.3 m onto the floor at (1, 1) (so objects move in 3D)."""
    kind = type_label or arm_type()
    spec = scenario([robot("arm1", 0.0, 0.0, type=kind)],
                    [ObjectSpec("cube", "box", (0.05, 0.05, 0.05), (0.4, 0.0, 0.025), 0.0, 0.1),
                     ObjectSpec("drop", "box", (0.1, 0.1, 0.1), (1.0, 1.0, 0.3), 0.5, 0.5)],
                    floor=(4.0, 4.0), dt=dt)
    return dataclasses.replace(spec, settings=dataclasses.replace(spec.settings,
                                                                  engine="mujoco"))
