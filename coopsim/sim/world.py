"""The world: what is in the simulation (floor, objects, targets, robots, parts) over an engine.

The :class:`World` keeps the names, specs, module parameters and the layout version; the bodies
themselves live in a physics engine (:mod:`coopsim.physics`) chosen by label, reached only
through handles. Only the stepper thread calls into a World. Frames: x/y on the floor, z up,
metres, yaw in radians counter-clockwise from +x; the floor is centred on the origin.
"""

from __future__ import annotations

import gc
import math
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np

from ..model.errors import ParameterError, SimulationError, UnknownNameError
from ..model.limits import too_many_objects
from ..model.module import RobotInfo
from ..model.params import ParamValues
from ..model.placement import assembly_rows, object_rows
from ..model.plugins import DRIVERS, ENGINES, MODULES, ROBOT_TYPES, default_engine
from ..model.robot_type import ShapeSpec
from ..model.specs import MapSpec, ObjectSpec, RobotSpec, ScenarioSpec, TargetSpec
from ..model.validate import check_robot_spec, module_values, own_check
from .placing import Placements


@dataclass(eq=False)
class Robot:
    """One networked robot (one set of module servers).

    Attributes:
        name: Network name (``robot1`` serves ``/robot1/motors``...).
        type: Label of the robot type that built it; section: its ``[ROBOT_n]`` name.
        color: (R, G, B) 0-255.
        group: Collision and sensing group shared with its own assembly.
        modules: Module label -> its parameter values.
        radius, axle, drive: From the type's member declaration (m, m, drive kind).
        handle: The engine's handle for the robot; refs: role -> engine handle (bodies and
            joints its modules use); points: name -> (body handle, (x, y) in the body's frame).
        controller: Command line launched to drive it, or None.
        driver: (label, parameter values) of the in-process driver hosting it, or None.
        info: What modules may know of it when they check commands (name, type, limits).
    """

    name: str
    type: str
    section: str
    color: tuple[int, int, int]
    group: int
    modules: dict[str, ParamValues]
    radius: float
    axle: float
    drive: str
    handle: object
    refs: dict = field(default_factory=dict)
    points: dict = field(default_factory=dict)
    controller: str | None = None
    driver: tuple | None = None
    info: RobotInfo | None = None


@dataclass(eq=False)
class Part:
    """A tracked body that is not a robot (a carried bar, an arm's link)."""

    name: str
    section: str
    handle: object
    shapes: tuple[ShapeSpec, ...]
    color: tuple[int, int, int]


@dataclass(eq=False)
class Section:
    """One ``[ROBOT_n]`` section as built: its spec and the engine's handles."""

    spec: RobotSpec
    handles: object
    members: tuple[str, ...]


@contextmanager
def collector_held():
    """Python's cycle collector held off while a world is built (and, in the simulation, its
    tables laid out): each robot allocates dozens of objects (none in garbage cycles), and
    the collector's passes over the growing heap were about 40 % of building 20,000 robots.
    Whoever had it on gets it back."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class World:
    """Everything in one simulation, over one physics engine.

    Args:
        scenario: What to build. Robots' ``param`` lines are applied.
        engine: Engine label; default: the scenario's ``[SETTINGS] engine``, else the default
            engine (``Engine.default``).
        layout_version: Where the layout version starts (a reset or load continues counting, so
            a new world never repeats an old version number).

    Attributes:
        engine: The physics engine.
        floor: Floor extent.
        objects: Name -> (spec as inserted or updated, engine handle), in insertion order.
        robots: Robots in insertion order; a robot's index here is its row in every array.
        parts: Parts in insertion order.
        targets: Target markers (they do not collide).
        zones: No-go zones (they do not collide); squads: the scenario's squads.
        layout_version: Bumped on every insertion, update or removal.
        param_epoch: Bumped on every parameter change.
    """

    def __init__(self, scenario: ScenarioSpec, engine: str | None = None,
                 layout_version: int = 0) -> None:
        self.engine_label = engine or scenario.settings.engine or default_engine()
        self.engine = ENGINES.get(self.engine_label)(scenario.world.floor)
        if scenario.world.meshes or scenario.world.terrain is not None:
            self.engine.add_scenery(scenario.world.meshes, scenario.world.terrain)
        # the layout document's ``scenery`` (protocol 9) and the Foxglove bridge's meshes
        self.meshes, self.terrain = tuple(scenario.world.meshes), scenario.world.terrain
        self.floor = scenario.world.floor
        self.objects: dict[str, tuple[ObjectSpec, object]] = {}
        self.robots: list[Robot] = []
        self._named: tuple = (None, 0, {})  # (the robots' list, its length, name -> robot)
        self.parts: list[Part] = []
        self.sections: dict[str, Section] = {}
        self.targets: list[TargetSpec] = list(scenario.targets)
        self.zones = tuple(scenario.zones)
        self.squads = tuple(scenario.squads)
        self.layout_version = layout_version
        self.param_epoch = 0
        self._next_group = 1
        self._taken: set[str] = set()  # robot and section names
        self.held: dict[str, tuple[str, object]] = {}  # robot -> (object, engine handle)
        self._loading = True  # the engine learns the robot order once, after the scenario
        # bodies may not start inside each other on this engine: checked once all are built
        self.placements = Placements(self.engine) if self.engine.strict_placement else None
        with collector_held():
            for spec in scenario.world.objects + scenario.objects:
                if spec.start:  # the others wait for a timed event to insert them
                    self.add_object(spec)
            for rspec in scenario.robots:
                self.add_robot(rspec)
            if self.placements is not None:
                self.placements.check_loaded()
        self._loading = False
        self._changed()

    def labels(self) -> frozenset[str]:
        """The labels of what this world uses: its robots' module kinds and drivers and its
        engine (the kernels a run loads first: :func:`coopsim.model.compiled.load_pending`)."""
        used = {self.engine_label}
        for robot in self.robots:
            used.update(robot.modules)
            if robot.driver is not None:
                used.add(robot.driver[0])
        return frozenset(used)

    # -- objects ----------------------------------------------------------------------------------

    def add_object(self, spec: ObjectSpec, check: bool = True) -> None:
        """Insert an object; its name must be new (``check`` False: where it starts is not
        checked, for putting back what was there).

        Raises:
            SimulationError: the name is taken, it is off the floor, the world holds
                MAX_OBJECTS already, the engine refuses it, or (a strict engine) it would start
                inside another body or inside static geometry.
        """
        if spec.name in self.objects:
            raise SimulationError(f"an object named {spec.name!r} exists already")
        self._check_on_floor(spec.position, 0.0, f"object {spec.name!r}")
        full = too_many_objects(len(self.objects) + 1)
        if full:
            raise SimulationError(f"object {spec.name!r} is refused: {full}")
        rows = self._placeable(("object", spec.name), f"object {spec.name}",
                               lambda: object_rows(spec), check)
        self.objects[spec.name] = (spec, self.engine.add_object(spec))
        if rows is not None:
            self.placements.add_object(spec.name, rows, self.objects[spec.name][1])
        self.layout_version += 1

    def remove_object(self, name: str) -> ObjectSpec:
        """Remove an object by name and return its spec (a robot holding it lets go)."""
        spec, handle = self._object(name)
        for robot, (held, _) in list(self.held.items()):
            if held == name:
                self.detach(robot)
        self.engine.remove_object(handle)
        del self.objects[name]
        if self.placements is not None:
            self.placements.remove(("object", name))
        self.layout_version += 1
        return spec

    def update_object(self, spec: ObjectSpec) -> None:
        """Replace the object named ``spec.name`` by one built from ``spec`` (all at once)."""
        old, _ = self._object(spec.name)
        self._check_on_floor(spec.position, 0.0, f"object {spec.name!r}")
        self.engine.check_object(spec)
        self._placeable(("object", spec.name), f"object {spec.name}", lambda: object_rows(spec),
                        replacing=True)
        self.remove_object(spec.name)
        try:
            self.add_object(spec, check=False)  # checked above, among the others
        except SimulationError:
            self.add_object(old, check=False)
            raise

    def object_spec(self, name: str) -> ObjectSpec:
        """The object's spec with its current pose."""
        spec, handle = self._object(name)
        x, y, yaw = self.engine.poses([handle])[0]
        return replace(spec, position=(x, y, spec.position[2]), yaw=yaw)

    def _object(self, name: str):
        try:
            return self.objects[name]
        except KeyError:
            raise UnknownNameError(f"no object named {name!r}") from None

    # -- targets ----------------------------------------------------------------------------------

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

    # -- robots -----------------------------------------------------------------------------------

    def add_robot(self, spec: RobotSpec, check: bool = True) -> list[Robot]:
        """Build and insert the robot(s) and parts of one ``[ROBOT_n]`` section (``check``
        False: where it starts is not checked, for putting back what was there).

        Raises:
            SimulationError: a name is taken, it is off the floor, a param is invalid, the
                engine cannot run the robot type, or (a strict engine) it would start below the
                floor, inside another body or inside static geometry.
        """
        rtype = ROBOT_TYPES.get(spec.type)
        clash = [n for n in (spec.name, *rtype.member_names(spec.name)) if n in self._taken]
        if clash:
            raise SimulationError(f"a robot named {clash[0]!r} exists already")
        self._check_on_floor(spec.position, rtype.footprint, f"robot {spec.name!r}")
        # What the section is, from the model (checked, nothing built yet); then built.
        assembly = check_robot_spec(spec)
        values = {m.name: module_values(spec, m.modules) for m in assembly.members}
        shapes = [assembly.body(p.body).shapes for p in assembly.parts]
        self.engine.check_assembly(assembly)
        label = f"robot {spec.name} ({spec.type})"
        rows = self._placeable(("robot", spec.name), label, lambda: assembly_rows(assembly),
                               check)
        group, self._next_group = self._next_group, self._next_group + 1
        handles = self.engine.add_assembly(assembly, group)
        self.engine.paint(handles.items, spec.color)  # its colour in camera images
        if rows is not None:
            self.placements.add_assembly(spec.name, label, rows, assembly, handles)
        robots = [self._robot(spec, m, group, handles, assembly, values[m.name])
                  for m in assembly.members]
        self.robots.extend(robots)
        self.parts += [Part(f"{spec.name}.{p.name}", spec.name, handles.bodies[p.body], s, p.color)
                       for p, s in zip(assembly.parts, shapes)]
        self.sections[spec.name] = Section(spec, handles, tuple(r.name for r in robots))
        self._taken |= {spec.name, *(r.name for r in robots)}
        self._changed()
        return robots

    def _robot(self, spec: RobotSpec, member, group: int, handles, assembly,
               modules: dict[str, ParamValues]) -> Robot:
        refs = {role: handles.bodies.get(key, handles.joints.get(key, handles.arms.get(key)))
                for role, key in member.refs.items()}
        points = {name: (handles.bodies[key], off) for name, (key, off) in member.points.items()}
        driver = next(((d.label, DRIVERS.get(d.label).values(dict(d.settings)))
                       for d in spec.drivers if d.member in ("", member.name,
                                                             member.name[len(spec.name) + 1:])),
                      None)
        joints = {j.key: j for j in assembly.joints}
        limits = {role: joints[key].limits for role, key in member.refs.items()
                  if key in joints and joints[key].limits is not None}
        return Robot(member.name, spec.type, spec.name, spec.color, group, modules,
                     member.radius, member.axle, member.drive, handles.robots[member.name],
                     refs, points, spec.controller, driver, RobotInfo(
                         member.name, spec.type, limits,
                         assembly.arm(member.refs["arm"]) if "arm" in member.refs else None,
                         float(assembly.body(member.body).mass)))

    def remove_robot(self, name: str) -> RobotSpec:
        """Remove the robot(s) and parts built from the section named ``name``."""
        if name not in self.sections:
            raise UnknownNameError(f"no robot named {name!r}")
        for member in self.sections[name].members:
            self.detach(member)
        section = self.sections.pop(name)
        self._taken -= {name, *section.members}
        if self.placements is not None:
            self.placements.remove(("robot", name))
        self.engine.remove_assembly(section.handles)
        self.robots = [r for r in self.robots if r.section != name]
        self.parts = [p for p in self.parts if p.section != name]
        self._changed()
        return section.spec

    def robot(self, name: str) -> Robot:
        """The robot with network name ``name`` (a lookup by name, made again when the
        robots' list is replaced or grows: a driver's command asks it every step)."""
        robots, named = self.robots, self._named
        if named[0] is not robots or named[1] != len(robots):
            named = self._named = (robots, len(robots),
                                   {r.name: r for r in reversed(robots)})
        found = named[2].get(name)
        if found is None:
            raise UnknownNameError(f"no robot named {name!r}")
        return found

    def set_param(self, robot: str, module: str, name: str, value: object):
        """Validate and set a module (or ``driver``) parameter of one robot; return the value.

        Raises:
            SimulationError: no such robot or module. ParameterError: bad name or value.
        """
        who = self.robot(robot)
        values = who.modules.get(module)
        if values is None:
            raise UnknownNameError(f"robot {robot!r} has no module {module!r}")
        checker = own_check(MODULES.get(module))
        if checker is not None:  # a combination no single range can refuse (an airframe's)
            coerced = values.spec(name).coerce(value)
            why = checker.check_values({**values.as_dict(), name: coerced}, who.info)
            if why:
                raise ParameterError(f"parameter {module}.{name} = {coerced!r} is refused: "
                                     f"{why}")
        stored = values.set(name, value)
        self.param_epoch += 1
        return stored

    def restore_layout(self, scenario: ScenarioSpec) -> None:
        """Put every body back as at load, for a timed event's ``reset``: a new engine with the
        scenario's objects and targets, and each current robot section rebuilt from its spec
        (pose, velocity 0). The robots keep their parameter values and drivers (the very same
        objects, which the network serves); the layout version moves on.
        """
        specs = tuple(section.spec for section in self.sections.values())
        fresh = World(replace(scenario, robots=specs), self.engine_label)
        kept = {r.name: r for r in self.robots}
        for robot in fresh.robots:
            robot.modules, robot.driver = kept[robot.name].modules, kept[robot.name].driver
        version = self.layout_version
        self.engine, self.objects, self.robots = fresh.engine, fresh.objects, fresh.robots
        self.parts, self.sections, self.targets = fresh.parts, fresh.sections, fresh.targets
        self.placements = fresh.placements
        self.held = {}  # the new engine holds nothing
        self._next_group, self._taken = fresh._next_group, fresh._taken
        self.layout_version = version + fresh.layout_version + 1
        self.param_epoch += 1

    # -- attachments (a gripper's hold) -----------------------------------------------------------

    def attach(self, robot: str, obj: str, kind: str = "weld") -> None:
        """Constrain object ``obj`` to robot ``robot``'s chassis (``pin`` or ``weld``, see
        :meth:`coopsim.physics.engine.Engine.attach`), pivoting where the chassis edge faces
        the object's centre; a robot with a 3D arm (its ``arm`` role) holds it with the arm's
        last link instead, where the object is.

        Raises:
            SimulationError: no such robot or object, a static object, an object or a robot
                already holding or held, or an engine without run-time constraints.
        """
        who = self.robot(robot)
        spec, handle = self._object(obj)
        if spec.static:
            raise SimulationError(f"{obj} is static (mass 0): it cannot be held")
        if robot in self.held:
            raise SimulationError(f"{robot} holds {self.held[robot][0]} already")
        other = next((r for r, (o, _) in self.held.items() if o == obj), None)
        if other is not None:
            raise SimulationError(f"{obj} is held by {other}")
        x, y = self.engine.robot_state()[self.robots.index(who), :2]
        ox, oy, _ = self.engine.poses([handle])[0]
        holder = who.refs.get("arm") if who.info is not None and who.info.arm else None
        anchor = (ox, oy)  # a 3D arm holds it with its last link, where it is
        if holder is None:
            d = math.hypot(ox - x, oy - y) or 1.0
            anchor, holder = (x + (ox - x) * who.radius / d, y + (oy - y) * who.radius / d), \
                who.handle
        self.held[robot] = (obj, self.engine.attach(holder, handle, kind, anchor))
        self.layout_version += 1

    def detach(self, robot: str) -> str:
        """Let go of what ``robot`` holds; return its name ("" when it held nothing)."""
        if robot not in self.held:
            return ""
        obj, handle = self.held.pop(robot)
        self.engine.detach(handle)
        self.layout_version += 1
        return obj

    def _changed(self) -> None:
        self.layout_version += 1
        if not self._loading:  # once per change: it is O(robots)
            self.engine.set_robots([r.handle for r in self.robots],
                                   [r.drive for r in self.robots])

    def _placeable(self, key: tuple[str, str], label: str, rows, check: bool = True,
                   replacing: bool = False):
        """On a strict engine, the solids ``rows()`` of what is about to be built, checked
        (``check``) against the bodies where they are now unless the world is loading (then
        all are checked at once, at the end); None on any other engine.

        Raises:
            SimulationError: it would start below the floor or inside another body.
        """
        if self.placements is None:
            return None
        solids = rows()
        if check and not self._loading:
            self.placements.check_new(label, solids, but=key if replacing else None)
        return solids

    def _check_on_floor(self, position, margin: float, what: str) -> None:
        x, y = position[0], position[1]
        if not (math.isfinite(x) and math.isfinite(y)) or not self.floor.contains(x, y, margin):
            raise SimulationError(
                f"{what} at ({x:g}, {y:g}) is not on the {self.floor.length:g} x "
                f"{self.floor.width:g} m floor")

    # -- views ------------------------------------------------------------------------------------

    def part_poses(self) -> np.ndarray:
        """(K, 3) x, y, yaw of every part, world frame."""
        return self.engine.poses([p.handle for p in self.parts])

    def object_poses(self) -> np.ndarray:
        """(M, 3) x, y, yaw of every object, world frame."""
        return self.engine.poses([h for _, h in self.objects.values()])

    def map_spec(self) -> MapSpec:
        """What path planners need: the floor, the static objects where they stand, the zones."""
        return MapSpec(self.floor, tuple(self.object_spec(name) for name, (spec, _) in
                                         self.objects.items() if spec.static),
                       self.zones, self.layout_version)

    def describe(self) -> dict:
        """Everything a viewer needs to draw the world, as JSON-ready data (SI, radians)."""
        from .describe import describe_world  # the long JSON layout lives beside the world

        return describe_world(self)

