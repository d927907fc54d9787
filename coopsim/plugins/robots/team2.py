"""``team2``: two robots, one behind the other, carrying a bar held by a support on each.

The section's position is the bar's centre and its orientation the bar's (and both robots')
heading. The robots are named ``<name>_leader`` (in front) and ``<name>_helper``; each carries
the ``single`` modules plus ``support`` (the bar's angle and the force in its support joint).
The bar is a part named ``<name>.bar``.

Each support is a hinge on a short sprung slide along the bar (a ``sprung`` joint): the force it
reports is the spring's, + when the bar pulls the robot towards the bar's middle (tension), -
when it pushes it away. Rigid supports would make that force meaningless: two speed-controlled
robots holding one rigid bar leave the force along it undetermined (the solver lets it drift).
"""

from __future__ import annotations

import math

from ...model.robot_type import Assembly, BodySpec, JointSpec, PartSpec, RobotType, ShapeSpec
from ...model.specs import RobotSpec
from .single import CHASSIS_RADIUS, MODULES, chassis

BAR_LENGTH = 1.6  # m
BAR_WIDTH = 0.06  # m
BAR_MASS = 2.0  # kg
SPACING = 1.2  # m between the two robots' centres
BAR_COLOR = (150, 110, 60)
SUPPORT_STIFFNESS = 1000.0  # N/m, the spring of each support's slide
SUPPORT_TRAVEL = 0.1  # m each way: the spring reads at most +-100 N before the slide ends


class Team2(RobotType):
    """A leader and a helper carrying a bar through pivot supports.

    Two ``single`` robots carry a 1.6 m × 0.06 m, 2 kg bar, one behind the other (1.2 m apart),
    each through a support: a hinge at its centre on a short sprung slide along the bar
    (±0.1 m, 1000 N/m), so the force along the bar is the spring's and is determinate. A
    section named ``t1`` creates ``t1_leader`` (in front) and ``t1_helper``; the section's
    position is the bar's centre and its orientation the team's heading. The team's robots and
    bar share a collision and sensing group: they do not collide with, or see, each other. Both
    robots also have a ``support`` module. The bar is a *part*: a tracked body that is not a
    robot, named ``<section>.bar`` (``t1.bar``), listed in ``/sim state`` ``parts``, recorded
    and drawn.
    """

    label = "team2"
    description = "leader + helper robots carrying a 1.6 m bar on sprung supports"
    modules = MODULES + ("support",)
    footprint = SPACING / 2 + CHASSIS_RADIUS + 0.2

    @classmethod
    def member_names(cls, name):
        return (f"{name}_leader", f"{name}_helper")

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        x, y, yaw = spec.position[0], spec.position[1], spec.yaw
        bar = BodySpec("bar", "dynamic", BAR_MASS,
                       (ShapeSpec("box", size=(BAR_LENGTH, BAR_WIDTH)),), (x, y), yaw)
        bodies, members, joints = [bar], [], []
        half = SPACING / 2
        for name, role, sign in zip(cls.member_names(spec.name), ("leader", "helper"), (1, -1)):
            px, py = x + sign * half * math.cos(yaw), y + sign * half * math.sin(yaw)
            joint = JointSpec(f"support_{role}", "sprung", role, "bar", (0.0, 0.0),
                              (sign * half, 0.0), stiffness=SUPPORT_STIFFNESS,
                              travel=SUPPORT_TRAVEL)
            body, member = chassis(name, role, px, py, yaw, cls.modules,
                                   {"support": joint.key, "bar": "bar"})
            bodies.append(body)
            members.append(member)
            joints.append(joint)
        return Assembly(tuple(members), tuple(bodies), tuple(joints),
                        (PartSpec("bar", "bar", BAR_COLOR),))
