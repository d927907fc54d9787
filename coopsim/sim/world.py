"""The physical world: one pymunk Space holding the floor, objects, targets and robots.

Only the stepper thread calls into a World. Frames: x/y on the floor, z up, metres, yaw in radians
counter-clockwise from +x; the floor is centred on the origin (see :mod:`coopsim.model.specs`).

Movable objects slide with floor friction the way ARGoS models it on Chipmunk: a pivot joint and a
gear joint to a static ground body, ``max_bias`` 0 and force/torque capped at mu * m * g, so
friction opposes sliding and spinning without pinning the object in place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pymunk

from ..model.errors import SimulationError, UnknownNameError
from ..model.registry import ROBOT_TYPES
from ..plugins.robots import BAR_LENGTH, BAR_WIDTH, Robot, apply_params, validate_robot_spec
from ..model.specs import FloorSpec, ObjectSpec, RobotSpec, ScenarioSpec, TargetSpec

GRAVITY = 9.81  # m/s^2
FLOOR_FRICTION = 0.5  # Coulomb coefficient between movable objects and the floor
WALL_THICKNESS = 1.0  # m, the invisible boundary walls just outside the floor


@dataclass(eq=False)
class WorldObject:
    """An object in the space: its spec (as last inserted or updated) and its pymunk parts."""

    spec: ObjectSpec
    body: pymunk.Body
    shape: pymunk.Shape
    joints: tuple[pymunk.Constraint, ...] = ()


def _make_shape(spec: ObjectSpec, body: pymunk.Body) -> pymunk.Shape:
    if spec.shape == "box":
        shape = pymunk.Poly.create_box(body, (spec.size[0], spec.size[1]))
    else:
        shape = pymunk.Circle(body, spec.radius)
    shape.friction, shape.elasticity = 0.6, 0.0
    return shape


def _make_object(spec: ObjectSpec, ground: pymunk.Body) -> WorldObject:
    if spec.static:
        body = pymunk.Body(body_type=pymunk.Body.STATIC)
    else:
        if spec.shape == "box":
            moment = pymunk.moment_for_box(spec.mass, (spec.size[0], spec.size[1]))
        else:
            moment = pymunk.moment_for_circle(spec.mass, 0, spec.radius)
        body = pymunk.Body(spec.mass, moment)
    body.position, body.angle = spec.position[:2], spec.yaw
    shape = _make_shape(spec, body)
    if spec.static:
        return WorldObject(spec, body, shape)
    friction = FLOOR_FRICTION * spec.mass * GRAVITY
    pivot = pymunk.PivotJoint(ground, body, (0, 0), (0, 0))
    pivot.max_bias, pivot.max_force = 0.0, friction
    gear = pymunk.GearJoint(ground, body, 0.0, 1.0)
    gear.max_bias, gear.max_force = 0.0, friction * max(spec.size[0], spec.size[1]) / 2
    return WorldObject(spec, body, shape, (pivot, gear))


def _boundary(floor: FloorSpec) -> list[pymunk.Shape]:
    """Static boxes just outside the floor's four edges; their inner faces are the edges."""
    body = pymunk.Body(body_type=pymunk.Body.STATIC)
    hl, hw, t = floor.length / 2, floor.width / 2, WALL_THICKNESS
    boxes = [
        (-hl - t, -hw - t, hl + t, -hw), (-hl - t, hw, hl + t, hw + t),
        (-hl - t, -hw, -hl, hw), (hl, -hw, hl + t, hw),
    ]
    shapes = [pymunk.Poly(body, [(l, b), (r, b), (r, t_), (l, t_)]) for l, b, r, t_ in boxes]
    for shape in shapes:
        shape.friction = 0.6
    return [body, *shapes]


class World:
    """The pymunk Space and everything in it, built from a scenario.

    Args:
        scenario: What to build. Robots' ``param`` lines are applied.

    Attributes:
        space: The pymunk Space (gravity 0: the floor plane is horizontal).
        floor: Floor extent.
        objects: Name -> object, in insertion order.
        robots: Robots in insertion order; a robot's index here is its row in every array.
        targets: Target markers (they do not collide).
        layout_version: Bumped on every insertion, update or removal.
    """

    def __init__(self, scenario: ScenarioSpec) -> None:
        self.space = pymunk.Space()
        self.space.iterations = 10
        self.ground = pymunk.Body(body_type=pymunk.Body.STATIC)
        self.floor = scenario.world.floor
        self.space.add(*_boundary(self.floor))
        self.objects: dict[str, WorldObject] = {}
        self.robots: list[Robot] = []
        self.robot_specs: dict[str, RobotSpec] = {}
        self.bars: dict[str, tuple[pymunk.Body, pymunk.Shape]] = {}
        self.targets: list[TargetSpec] = list(scenario.targets)
        self.layout_version = 0
        self.param_epoch = 0
        self._next_group = 1
        for spec in scenario.world.objects + scenario.objects:
            self.add_object(spec)
        for rspec in scenario.robots:
            self.add_robot(rspec)

    # -- objects -----------------------------------------------------------------------------

    def add_object(self, spec: ObjectSpec) -> WorldObject:
        """Insert an object; its name must be new.

        Raises:
            SimulationError: the name is taken or the object is not on the floor.
        """
        if spec.name in self.objects:
            raise SimulationError(f"an object named {spec.name!r} exists already")
        self._check_on_floor(spec.position, 0.0, f"object {spec.name!r}")
        obj = _make_object(spec, self.ground)
        self.space.add(obj.body, obj.shape, *obj.joints)
        self.objects[spec.name] = obj
        self.layout_version += 1
        return obj

    def remove_object(self, name: str) -> ObjectSpec:
        """Remove an object by name and return its spec."""
        obj = self._object(name)
        self.space.remove(obj.body, obj.shape, *obj.joints)
        del self.objects[name]
        self.layout_version += 1
        return obj.spec

    def update_object(self, spec: ObjectSpec) -> None:
        """Replace the object named ``spec.name`` by one built from ``spec`` (all at once)."""
        old = self._object(spec.name)
        self._check_on_floor(spec.position, 0.0, f"object {spec.name!r}")
        self.remove_object(spec.name)
        try:
            self.add_object(spec)
        except SimulationError:
            self.add_object(old.spec)
            raise

    def object_spec(self, name: str) -> ObjectSpec:
        """The object's spec with its current pose."""
        obj = self._object(name)
        x, y = obj.body.position
        return replace(obj.spec, position=(x, y, obj.spec.position[2]), yaw=obj.body.angle)

    def _object(self, name: str) -> WorldObject:
        try:
            return self.objects[name]
        except KeyError:
            raise UnknownNameError(f"no object named {name!r}") from None

    # -- targets -----------------------------------------------------------------------------

    def add_target(self, target: TargetSpec) -> int:
        """Append a target; return its index (the order the ``target`` module reports in)."""
        self._check_on_floor(target.position, 0.0, f"target {target.color!r}")
        self.targets.append(target)
        self.layout_version += 1
        return len(self.targets) - 1

    def update_target(self, index: int, target: TargetSpec) -> None:
        """Replace target ``index``."""
        self._target_index(index)
        self._check_on_floor(target.position, 0.0, f"target {target.color!r}")
        self.targets[index] = target
        self.layout_version += 1

    def remove_target(self, index: int) -> TargetSpec:
        """Remove target ``index``; later targets move up one place."""
        self._target_index(index)
        self.layout_version += 1
        return self.targets.pop(index)

    def _target_index(self, index: int) -> None:
        if not 0 <= index < len(self.targets):
            raise UnknownNameError(f"no target {index} (there are {len(self.targets)})")

    # -- robots ------------------------------------------------------------------------------

    def add_robot(self, spec: RobotSpec) -> list[Robot]:
        """Build and insert the robot(s) of one ``[ROBOT_n]`` section.

        Raises:
            SimulationError: a name is taken, the robot is off the floor, or a param is invalid.
        """
        rtype = ROBOT_TYPES.get(spec.type)
        taken = {r.name for r in self.robots} | set(self.robot_specs)
        clash = [n for n in (spec.name, *rtype.member_names(spec.name)) if n in taken]
        if clash:
            raise SimulationError(f"a robot named {clash[0]!r} exists already")
        self._check_on_floor(spec.position, rtype.footprint, f"robot {spec.name!r}")
        validate_robot_spec(spec)
        build = rtype.build(spec, self.ground, self._next_group)
        self._next_group += 1
        apply_params(build.robots, spec)
        self.space.add(*build.items)
        for team, bar, shape in build.bars:
            self.bars[team] = (bar, shape)
        self.robots.extend(build.robots)
        self.robot_specs[spec.name] = spec
        self.layout_version += 1
        return build.robots

    def remove_robot(self, name: str) -> RobotSpec:
        """Remove the robot(s) built from the section named ``name`` (a team goes whole)."""
        if name not in self.robot_specs:
            raise UnknownNameError(f"no robot named {name!r}")
        spec = self.robot_specs.pop(name)
        members = set(ROBOT_TYPES.get(spec.type).member_names(name))
        items: dict = {}  # no repeats: a team's supports are constraints of a robot and the bar
        for robot in [r for r in self.robots if r.name in members]:
            items.update(dict.fromkeys((robot.body, *robot.body.shapes, robot.control,
                                        *robot.body.constraints)))
        if name in self.bars:
            bar, shape = self.bars.pop(name)
            items.update(dict.fromkeys((bar, shape, *bar.constraints)))
        self.space.remove(*items)
        self.robots = [r for r in self.robots if r.name not in members]
        self.layout_version += 1
        return spec

    def robot(self, name: str) -> Robot:
        """The robot with network name ``name``."""
        for robot in self.robots:
            if robot.name == name:
                return robot
        raise UnknownNameError(f"no robot named {name!r}")

    def set_param(self, robot: str, module: str, name: str, value: object):
        """Validate and set a module parameter of one robot; return the stored value.

        Raises:
            SimulationError: no such robot or module. ParameterError: bad name or value.
        """
        values = self.robot(robot).modules.get(module)
        if values is None:
            raise UnknownNameError(f"robot {robot!r} has no module {module!r}")
        stored = values.set(name, value)
        self.param_epoch += 1
        return stored

    def _check_on_floor(self, position, margin: float, what: str) -> None:
        x, y = position[0], position[1]
        if not (math.isfinite(x) and math.isfinite(y)) or not self.floor.contains(x, y, margin):
            raise SimulationError(
                f"{what} at ({x:g}, {y:g}) is not on the {self.floor.length:g} x "
                f"{self.floor.width:g} m floor")

    def describe(self) -> dict:
        """Everything a viewer needs to draw the world, as plain JSON-ready data (SI, radians)."""
        objects = []
        for name, obj in self.objects.items():
            spec = self.object_spec(name)
            objects.append({"name": name, "shape": spec.shape, "size": list(spec.size),
                            "x": spec.position[0], "y": spec.position[1], "z": spec.position[2],
                            "yaw": spec.yaw, "mass": spec.mass, "color": list(spec.color)})
        robots = [{"name": r.name, "type": r.type, "team": r.team, "color": list(r.color),
                   "radius": r.radius, "x": r.body.position.x, "y": r.body.position.y,
                   "yaw": r.body.angle, "modules": list(r.modules),
                   "controller": r.controller} for r in self.robots]
        bars = [{"name": team, "length": BAR_LENGTH, "width": BAR_WIDTH, "x": bar.position.x,
                 "y": bar.position.y, "yaw": bar.angle} for team, (bar, _) in self.bars.items()]
        targets = [{"index": i, "color": t.color, "rgb": list(t.rgb), "x": t.position[0],
                    "y": t.position[1], "z": t.position[2]} for i, t in enumerate(self.targets)]
        sections = [{"name": n, "type": s.type} for n, s in self.robot_specs.items()]
        return {"floor": {"length": self.floor.length, "width": self.floor.width},
                "objects": objects, "robots": robots, "bars": bars, "targets": targets,
                "sections": sections, "layout_version": self.layout_version}

    # -- geometry for sensing ----------------------------------------------------------------

    def static_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Static shapes as ray-cast input: circles (C,3), their groups, segments (S,4), groups."""
        circles, segments = [], []
        for shape in self.space.shapes:
            if shape.body.body_type == pymunk.Body.STATIC:
                _shape_geometry(shape, circles, segments)
        return _as_geometry(circles, segments)

    def moving_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Movable objects and bars as ray-cast input (robots are added by the caller)."""
        circles, segments = [], []
        for obj in self.objects.values():
            if not obj.spec.static:
                _shape_geometry(obj.shape, circles, segments)
        for bar, shape in self.bars.values():
            _shape_geometry(shape, circles, segments)
        return _as_geometry(circles, segments)


def _shape_geometry(shape: pymunk.Shape, circles: list, segments: list) -> None:
    group = shape.filter.group
    if isinstance(shape, pymunk.Circle):
        x, y = shape.body.local_to_world(shape.offset)
        circles.append((x, y, shape.radius, group))
        return
    pts = [shape.body.local_to_world(v) for v in shape.get_vertices()]
    for a, b in zip(pts, pts[1:] + pts[:1]):
        segments.append((a[0], a[1], b[0], b[1], group))


def _as_geometry(circles: list, segments: list):
    c = np.array(circles, dtype=float).reshape(-1, 4)
    s = np.array(segments, dtype=float).reshape(-1, 5)
    return c[:, :3], c[:, 3].astype(np.int64), s[:, :4], s[:, 4].astype(np.int64)
