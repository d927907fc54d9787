"""Robot types: how a scenario's ``[ROBOT_n]`` becomes pymunk bodies, joints and modules.

Differential drive follows ARGoS on Chipmunk: each chassis is tied to a kinematic *control body*
by a pivot joint and a gear joint whose ``max_bias`` is 0 (they only correct velocity, never
position) and whose force and torque are capped. The motors set the control body's velocity and
yaw rate; the joints drag the chassis along up to the caps, so a robot pushes light objects and
stalls against a wall instead of passing through it.

The ``single`` robot is sized like a lab robot (after the CoopDynSim platforms): cylindrical chassis
0.40 m across, 10 kg, wheels 0.34 m apart, 0.6 m/s top speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pymunk

from . import modules as _modules  # noqa: F401 -- fills the MODULES registry
from ..model.errors import ParameterError
from ..model.params import ParamValues
from ..model.registry import MODULES, ROBOT_TYPES
from ..model.specs import RobotSpec

CHASSIS_RADIUS = 0.20  # m
CHASSIS_MASS = 10.0  # kg
AXLE = 0.34  # m, distance between the driven wheels
DRIVE_FORCE = 150.0  # N, cap of the pivot joint: the wheels' largest traction force
DRIVE_TORQUE = 40.0  # N m, cap of the gear joint
BAR_LENGTH = 1.6  # m
BAR_WIDTH = 0.06  # m
BAR_MASS = 2.0  # kg
TEAM_SPACING = 1.2  # m between the two robots of a team2


@dataclass(eq=False)
class Robot:
    """One networked robot (one set of module servers).

    Attributes:
        name: Network name (``robot1`` serves ``/robot1/motors``...).
        type: Label of the robot type that built it.
        color: (R, G, B) 0-255.
        body: Chassis body (dynamic).
        control: Kinematic control body the drive joints pull the chassis towards.
        group: Collision and sensing group shared with its own team's parts.
        modules: Module label -> its parameter values.
        team: Name of the team2 it belongs to, or None.
        support: Pivot joint holding the team bar, or None.
        bar: The team bar's body, or None.
        controller: Command line launched to drive it, or None.
    """

    name: str
    type: str
    color: tuple[int, int, int]
    body: pymunk.Body
    control: pymunk.Body
    group: int
    modules: dict[str, ParamValues]
    radius: float = CHASSIS_RADIUS
    axle: float = AXLE
    team: str | None = None
    support: pymunk.Constraint | None = None
    bar: pymunk.Body | None = None
    controller: str | None = None


@dataclass
class Build:
    """What a robot type adds to the space: robots plus any extra parts (bars)."""

    robots: list[Robot] = field(default_factory=list)
    items: list = field(default_factory=list)  # bodies, shapes and constraints to add
    bars: list[tuple[str, pymunk.Body, pymunk.Shape]] = field(default_factory=list)


class RobotType:
    """Base of robot types. Subclasses register under a label and implement :meth:`build`."""

    label: ClassVar[str] = ""
    description: ClassVar[str] = ""
    modules: ClassVar[tuple[str, ...]] = ()
    footprint: ClassVar[float] = CHASSIS_RADIUS

    @classmethod
    def member_names(cls, name: str) -> tuple[str, ...]:
        """Network names of the robots one section of this type creates."""
        return (name,)

    @classmethod
    def build(cls, spec: RobotSpec, ground: pymunk.Body, group: int) -> Build:
        """Create the bodies for ``spec`` (not yet added to a space)."""
        raise NotImplementedError


def _chassis(name: str, spec: RobotSpec, x: float, y: float, yaw: float, group: int,
             modules: tuple[str, ...], build: Build) -> Robot:
    moment = pymunk.moment_for_circle(CHASSIS_MASS, 0, CHASSIS_RADIUS)
    body = pymunk.Body(CHASSIS_MASS, moment)
    body.position, body.angle = (x, y), yaw
    shape = pymunk.Circle(body, CHASSIS_RADIUS)
    shape.friction, shape.elasticity = 0.6, 0.0
    shape.filter = pymunk.ShapeFilter(group=group)
    control = pymunk.Body(body_type=pymunk.Body.KINEMATIC)
    control.position, control.angle = (x, y), yaw
    pivot = pymunk.PivotJoint(control, body, (0, 0), (0, 0))
    pivot.max_bias, pivot.max_force = 0.0, DRIVE_FORCE
    gear = pymunk.GearJoint(control, body, 0.0, 1.0)
    gear.max_bias, gear.max_force = 0.0, DRIVE_TORQUE
    build.items += [body, shape, control, pivot, gear]
    values = {label: ParamValues(MODULES.get(label).params) for label in modules}
    robot = Robot(name, spec.type, spec.color, body, control, group, values,
                  controller=spec.controller)
    build.robots.append(robot)
    return robot


@ROBOT_TYPES.register("single")
class Single(RobotType):
    """One cylindrical robot with two driven wheels, 11 sonars and a target finder."""

    label = "single"
    description = "cylindrical robot, 0.40 m across, differential drive, 11 sonars"
    modules = ("motors", "sonar", "target", "odometry", "gps", "compass", "bumper")
    footprint = CHASSIS_RADIUS

    @classmethod
    def build(cls, spec, ground, group):
        build = Build()
        _chassis(spec.name, spec, spec.position[0], spec.position[1], spec.yaw, group,
                 cls.modules, build)
        return build


@ROBOT_TYPES.register("team2")
class Team2(RobotType):
    """Two robots, one behind the other, carrying a bar held by a support on each.

    The section's position is the bar's centre and its orientation the bar's (and both robots')
    heading. The robots are named ``<name>_leader`` (in front) and ``<name>_helper``.
    """

    label = "team2"
    description = "leader + helper robots carrying a 1.6 m bar through supports (pivot joints)"
    modules = Single.modules + ("support",)
    footprint = TEAM_SPACING / 2 + CHASSIS_RADIUS + 0.2

    @classmethod
    def member_names(cls, name):
        return (f"{name}_leader", f"{name}_helper")

    @classmethod
    def build(cls, spec, ground, group):
        build = Build()
        x, y, yaw = spec.position[0], spec.position[1], spec.yaw
        bar = pymunk.Body(BAR_MASS, pymunk.moment_for_box(BAR_MASS, (BAR_LENGTH, BAR_WIDTH)))
        bar.position, bar.angle = (x, y), yaw
        bar_shape = pymunk.Poly.create_box(bar, (BAR_LENGTH, BAR_WIDTH))
        bar_shape.filter = pymunk.ShapeFilter(group=group)
        build.items += [bar, bar_shape]
        build.bars.append((spec.name, bar, bar_shape))
        half = TEAM_SPACING / 2
        for name, sign in zip(cls.member_names(spec.name), (1.0, -1.0)):
            px, py = x + sign * half * math.cos(yaw), y + sign * half * math.sin(yaw)
            robot = _chassis(name, spec, px, py, yaw, group, cls.modules, build)
            joint = pymunk.PivotJoint(robot.body, bar, (0, 0), (sign * half, 0))
            robot.team, robot.support, robot.bar = spec.name, joint, bar
            build.items.append(joint)
        return build


def footprint_radius(type_label: str) -> float:
    """Radius of the smallest circle, centred on the robot's position, holding the whole robot, m.

    Raises:
        RegistryError: the type is not registered.
    """
    return ROBOT_TYPES.get(type_label).footprint


def validate_robot_spec(spec: RobotSpec) -> None:
    """Check the robot type exists and every ``param`` setting names a module and value it has.

    Raises:
        RegistryError: unknown type.
        ParameterError: unknown module or parameter, wrong type, or value out of range.
    """
    rtype = ROBOT_TYPES.get(spec.type)
    for setting in spec.params:
        if setting.module not in rtype.modules:
            raise ParameterError(
                f"robot type {spec.type!r} has no module {setting.module!r} "
                f"(it has: {', '.join(rtype.modules)})")
        ParamValues(MODULES.get(setting.module).params).set(setting.name, setting.value)


def apply_params(robots: list[Robot], spec: RobotSpec) -> None:
    """Set the scenario's ``param`` lines on freshly built robots (spec already validated)."""
    for robot in robots:
        for setting in spec.params:
            robot.modules[setting.module].set(setting.name, setting.value)




def drive(state: np.ndarray, table, wheel_cmd: np.ndarray,
          motor_params: dict) -> tuple[np.ndarray, np.ndarray]:
    """Turn wheel-speed commands into control-body velocities (the actuator phase).

    Args:
        state: (B, 6) every body's x, y, angle, vx, vy, w (see BodyTable.read).
        table: The BodyTable for the current layout.
        wheel_cmd: (N, 2) commanded left, right wheel speeds, m/s, robot order.
        motor_params: ``max_speed`` (m/s) and ``efficiency`` (%) arrays, robot order.

    Returns:
        (B, 3) velocities for every body (all rows unchanged but the control bodies'), ready to
        write back, and the (N, 2) wheel speeds actually driven, m/s.
    """
    limit = motor_params["max_speed"][:, None]
    wheels = np.clip(wheel_cmd, -limit, limit) * (motor_params["efficiency"][:, None] / 100.0)
    forward = wheels.mean(axis=1)
    turn = (wheels[:, 1] - wheels[:, 0]) / table.axle
    yaw = state[table.chassis, 2]
    velocities = state[:, 3:6].copy()
    velocities[table.control, 0] = forward * np.cos(yaw)
    velocities[table.control, 1] = forward * np.sin(yaw)
    velocities[table.control, 2] = turn
    return velocities, wheels
