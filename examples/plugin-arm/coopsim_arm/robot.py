"""``arm``: a three-link planar arm on a fixed base (CoopDynSim's robotic arm, lying in the floor's
plane, as a top-down simulator sees it).

The section's position is the base's centre, which is also the shoulder, and its orientation the
base's heading; the arm starts stretched straight out along it (all joint angles 0). The arm is
one networked robot named after the section, whose pose is the base's. Its links are parts named
``<name>.link0`` .. ``<name>.link2``: they collide with robots and objects but not with each other
or the base (the whole assembly shares one collision group), and other robots' sonars see them.
"""

from __future__ import annotations

import math

from coopsim.model.robot_type import (Assembly, BodySpec, JointSpec, MemberSpec, PartSpec,
                                      RobotType, ShapeSpec)
from coopsim.model.specs import RobotSpec

from .kinematics import BASE_SIZE, LENGTHS, LIMITS, MASSES, MAX_TORQUES, REACH, WIDTHS

#: Joint keys, also the roles the ``joints`` module asks the engine about.
JOINTS = ("joint0", "joint1", "joint2")
#: Link colours, darkest next to the base, so the joints show where the shades change.
LINK_COLORS = ((200, 110, 20), (235, 150, 40), (250, 190, 90))
MODULES = ("arm_joints", "effector", "gps", "compass", "target")


def _link_bodies(x: float, y: float, yaw: float) -> list[BodySpec]:
    """The three links laid straight out from the shoulder at (x, y) along ``yaw``; each body's
    origin is its link's centre (so its mass is spread along the link, not at a joint)."""
    bodies, start = [], 0.0
    c, s = math.cos(yaw), math.sin(yaw)
    for i, (length, width, mass) in enumerate(zip(LENGTHS, WIDTHS, MASSES)):
        mid = start + length / 2
        bodies.append(BodySpec(f"link{i}", "dynamic", mass,
                               (ShapeSpec("box", size=(length, width), friction=0.5),),
                               (x + mid * c, y + mid * s), yaw))
        start += length
    return bodies


def _joints() -> list[JointSpec]:
    """Revolute joints with limits and motors: base-link0 at the base's centre, then each link's
    far end to the next link's near end (anchors in each body's own frame)."""
    joints = [JointSpec(JOINTS[0], "revolute", "base", "link0", (0.0, 0.0),
                        (-LENGTHS[0] / 2, 0.0), LIMITS[0], True, MAX_TORQUES[0])]
    for i in (1, 2):
        joints.append(JointSpec(JOINTS[i], "revolute", f"link{i - 1}", f"link{i}",
                                (LENGTHS[i - 1] / 2, 0.0), (-LENGTHS[i] / 2, 0.0), LIMITS[i],
                                True, MAX_TORQUES[i]))
    return joints


class Arm(RobotType):
    """A fixed base and three motor-driven links; modules ``arm_joints`` and ``effector`` (plus the
    built-in ``gps``, ``compass`` and ``target``, which read the base)."""

    label = "arm"
    description = (f"planar 3-link arm on a fixed base, links {'/'.join(f'{v:g}' for v in LENGTHS)}"
                   f" m, reach {REACH:g} m, revolute joints with motors and limits")
    modules = MODULES
    footprint = REACH + max(WIDTHS) / 2  # m: the stretched arm turned any way stays on the floor
    draw = {"shape": "box", "size": [BASE_SIZE, BASE_SIZE], "heading": False}

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        x, y, yaw = spec.position[0], spec.position[1], spec.yaw
        base = BodySpec("base", "static", 0.0, (ShapeSpec("box", size=(BASE_SIZE, BASE_SIZE)),),
                        (x, y), yaw)
        links = _link_bodies(x, y, yaw)
        member = MemberSpec(
            spec.name, "base", MODULES, radius=BASE_SIZE / 2,
            refs={role: role for role in JOINTS},
            points={"tip": ("link2", (LENGTHS[2] / 2, 0.0))})
        parts = tuple(PartSpec(b.key, b.key, color) for b, color in zip(links, LINK_COLORS))
        return Assembly((member,), (base, *links), tuple(_joints()), parts)
