"""What a ``.world`` or ``.scenario`` file says, as small frozen dataclasses.

The parser (:mod:`coopsim.formats.files`) turns text into these; the world builder (:mod:`coopsim.sim.world`)
turns these into pymunk bodies. Nothing here touches physics, so specs can travel in messages and
recordings.

Frames and units (normative text in ``docs/files.md``):
    * SI units: metres, kilograms, seconds. Angles in files are degrees; in code, radians.
    * z is up. The floor's top surface is the plane z = 0, centred on the origin: it spans
      x in [-length/2, length/2] and y in [-width/2, width/2]; its height is its thickness below 0.
    * ``orientation phi psi theta``: rotations about x, y and z. coopsim is 2D, so only ``theta``
      (yaw, counter-clockwise seen from above, 0 = facing +x) is used; phi and psi must be 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .limits import shown
from .task import TaskSpec  # noqa: F401 -- the type of ScenarioSpec.task

Vec3 = tuple[float, float, float]
RGB = tuple[int, int, int]

SHAPES = ("box", "cylinder", "sphere")
MODES = ("realtime", "lockstep")
DT_RANGE = (0.0005, 0.1)  # s: the one place the physics step's bounds are set
#: m/s^2, along -z: the gravity of every engine, flight controller and accelerometer
GRAVITY = 9.81


def check_dt(dt: float) -> str:
    """Why ``dt`` (s) is not an acceptable physics step ("" when it is)."""
    lo, hi = DT_RANGE
    if not lo <= dt <= hi:
        return f"dt must be between {lo:g} and {hi:g} s, not {shown(dt, lo, hi)}"
    return ""

#: Named colours usable for targets (and robots, where a name is given instead of R G B).
COLORS: dict[str, RGB] = {
    "red": (230, 40, 40),
    "green": (40, 180, 60),
    "blue": (40, 90, 230),
    "yellow": (240, 210, 30),
    "magenta": (220, 40, 200),
    "cyan": (40, 200, 220),
    "orange": (250, 140, 20),
    "purple": (130, 50, 200),
    "white": (245, 245, 245),
    "black": (20, 20, 20),
    "gray": (128, 128, 128),
    "brown": (140, 90, 40),
    "pink": (250, 150, 190),
}


@dataclass(frozen=True)
class FloorSpec:
    """The floor: a rectangle centred on the origin, walled at its edges.

    Attributes:
        length: Extent along x, m (> 0).
        width: Extent along y, m (> 0).
        height: Thickness below z = 0, m (>= 0); kept for the file, unused by 2D physics.
    """

    length: float
    width: float
    height: float = 0.1

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        """True when (x, y) lies on the floor at least ``margin`` m from every edge."""
        return abs(x) <= self.length / 2 - margin and abs(y) <= self.width / 2 - margin


@dataclass(frozen=True)
class ObjectSpec:
    """One object of a world (the paper's ``[WALL_n]``) or one movable object of a scenario.

    Attributes:
        name: Section name it came from (``WALL_3``) or a name given in the scenario.
        shape: ``box`` (rectangle), ``cylinder`` or ``sphere`` (both circles in 2D).
        size: (length along the body's x, width along its y, height) in m. A cylinder's diameter is
            its length; a sphere's diameter is its length.
        position: (x, y, z) of the centre, m, world frame.
        yaw: Rotation about z, radians, counter-clockwise.
        mass: kg; 0 means static (immovable).
        color: Display colour (R, G, B), 0-255.
        line: Line of the section header in its file (0 when made in code), for messages.
        start: False for an ``[OBJECT_n]`` marked ``start false``: not in the world at load,
            inserted later by a timed event (``insert OBJECT_n``).
    """

    name: str
    shape: str
    size: Vec3
    position: Vec3
    yaw: float = 0.0
    mass: float = 0.0
    color: RGB = (150, 150, 150)
    line: int = 0
    start: bool = True

    @property
    def static(self) -> bool:
        """True when the object never moves (mass 0)."""
        return self.mass == 0.0

    @property
    def radius(self) -> float:
        """Half the length: the circle radius for cylinders and spheres, m."""
        return self.size[0] / 2


@dataclass(frozen=True)
class WorldSpec:
    """A whole ``.world`` file: a floor and its objects; its static meshes and its height
    field (:mod:`coopsim.model.scenery`'s MeshSpec and TerrainSpec, or None), if any."""

    floor: FloorSpec
    objects: tuple[ObjectSpec, ...] = ()
    path: str = ""
    text: str = ""
    meshes: tuple = ()
    terrain: object = None


@dataclass(frozen=True)
class TargetSpec:
    """A coloured marker robots can sense; it does not collide.

    Attributes:
        color: Colour name (a key of :data:`COLORS`); also what the ``target`` module reports by.
        position: (x, y, z), m, world frame.
        line: Line it was declared on.
    """

    color: str
    position: Vec3
    line: int = 0

    @property
    def rgb(self) -> RGB:
        """Display colour of the marker."""
        return COLORS[self.color]


@dataclass(frozen=True)
class ParamSetting:
    """A module parameter set from a scenario: ``param <module>.<name> <value>``."""

    module: str
    name: str
    value: float | int | bool | str
    line: int = 0


@dataclass(frozen=True)
class DriverSetting:
    """An in-process controller for a robot section: ``driver LABEL [for MEMBER] [name value]...``.

    Attributes:
        label: Registered driver label.
        settings: (parameter name, value) pairs, in file order.
        member: Which member robot of the section it drives ("" = every member); a member's
            full network name or the part after the section name and ``_`` (``leader``).
        line: Line it was declared on.
    """

    label: str
    settings: tuple[tuple[str, object], ...] = ()
    member: str = ""
    line: int = 0


@dataclass(frozen=True)
class RuleSetting:
    """A ``[RULE_n]`` section: a rule plugin and its parameter values."""

    label: str
    settings: tuple[tuple[str, object], ...] = ()
    line: int = 0


@dataclass(frozen=True)
class EventAction:
    """One line of an ``[EVENT_n]`` section.

    Attributes:
        kind: ``param``, ``reset``, ``insert`` or ``remove``.
        robot, module, name, value: ``param ROBOT.MODULE.NAME VALUE`` (module ``driver`` for
            the robot's in-process driver).
        name: For ``insert``/``remove`` of an object, the object's name (its section name).
        target: For ``insert target COLOR x y z``, the target; for ``remove target COLOR
            [x y]``, the colour and, when given, the position (z 0) to match.
        exact: For ``remove target``: True when a position was given.
        line: Line it was written on.
    """

    kind: str
    robot: str = ""
    module: str = ""
    name: str = ""
    value: float | int | bool | str | None = None
    target: TargetSpec | None = None
    exact: bool = False
    line: int = 0


@dataclass(frozen=True)
class EventSpec:
    """A timed event (``[EVENT_n]``): what happens between two steps at sim time ``time``.

    Attributes:
        name: Section name (``EVENT_2``).
        time: Sim time, s (>= 0).
        actions: Its lines in file order (a ``reset`` is carried out first whatever its place).
        line: Line of the section header.
    """

    name: str
    time: float
    actions: tuple[EventAction, ...] = ()
    line: int = 0

    @property
    def resets(self) -> bool:
        """True when the event puts the bodies back to the initial layout."""
        return any(a.kind == "reset" for a in self.actions)


@dataclass(frozen=True)
class MetricSpec:
    """One ``metric NAME KIND ARGS...`` line of ``[MONITORS]``.

    Attributes:
        name: The metric's name (an identifier, unique).
        kind: A metric kind registered under ``coopsim.metrics`` (``coopsim list``).
        args: Its arguments as written (robot or object names, numbers, ``module:function``).
        line: Line it was written on.
    """

    name: str
    kind: str
    args: tuple[str, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class MonitorsSpec:
    """The ``[MONITORS]`` section: metrics computed every step, and the time after which
    ``max_after`` counts (the paper's "apart from the beginning"), s."""

    metrics: tuple[MetricSpec, ...] = ()
    after: float = 0.0
    line: int = 0


@dataclass(frozen=True)
class ExternalSpec:
    """A robot whose pose comes from outside (``external`` in a ``[ROBOT_n]`` section): a real
    robot under motion capture or ROS 2, held in the world as a body that follows
    the poses it is sent (docs/in-the-loop.md).

    Attributes:
        stale: s of simulated time without a pose after which the robot is stale (it stays
            where it was, at rest, until poses come again).
        max_speed: m/s; a pose farther from the last than this speed allows (plus
            ``max_jump``) is refused as a teleport (error 14).
        max_jump: m; the slack every jump gets on top of ``max_speed``.
        max_rate: Hz; poses beyond this rate (a burst of a tenth of a second allowed) are
            refused as a flood (error 15).
    """

    stale: float = 0.5
    max_speed: float = 5.0
    max_jump: float = 0.5
    max_rate: float = 1000.0


@dataclass(frozen=True)
class RobotSpec:
    """One ``[ROBOT_n]`` section.

    Attributes:
        type: Robot type label (``single``, ``team2`` or a registered plugin type).
        name: Network name, unique in the scenario (``robot1`` serves ``/robot1/motors``...).
        position: (x, y, z), m, world frame, of the robot's centre.
        yaw: Heading, radians, counter-clockwise from +x.
        color: (R, G, B), 0-255.
        controller: Shell command the simulator launches for this robot, or None.
        params: Module parameters set at load time, applied in order.
        drivers: In-process controllers (see :class:`DriverSetting`).
        line: Line of the section header.
        description: The robot's description file and its keys
            (:class:`~coopsim.description.robot.DescriptionSpec`), or None for a built-in type.
        external: How its pose comes from outside (:class:`ExternalSpec`), or None for a
            simulated robot.
    """

    type: str
    name: str
    position: Vec3 = (0.0, 0.0, 0.0)
    yaw: float = 0.0
    color: RGB = (40, 90, 230)
    controller: str | None = None
    params: tuple[ParamSetting, ...] = ()
    drivers: tuple[DriverSetting, ...] = ()
    line: int = 0
    description: object | None = None
    external: ExternalSpec | None = None


#: Kinds of no-go zones (``[ZONE_n] kind``): all are kept out of planned paths and seen by the
#: ``line`` floor sensor; the kind sets the default colour and what the line sensor reports.
ZONE_KINDS = ("water", "border", "nogo")
#: Default display colour of each zone kind.
ZONE_COLORS: dict[str, RGB] = {"water": (60, 120, 220), "border": (30, 30, 30),
                               "nogo": (200, 60, 60)}


@dataclass(frozen=True)
class ZoneSpec:
    """A no-go zone of a scenario (``[ZONE_n]``): a simple polygon on the floor that does not
    collide, that path planners keep out of and that the ``line`` floor sensor detects.

    Attributes:
        name: Section name (``ZONE_1``).
        kind: One of :data:`ZONE_KINDS`.
        polygon: Its vertices ((x, y), ...), m, world frame, in file order (either winding),
            at least 3, not self-intersecting.
        color: Display colour (R, G, B) 0-255.
        line: Line of the section header.
    """

    name: str
    kind: str
    polygon: tuple[tuple[float, float], ...]
    color: RGB = (60, 120, 220)
    line: int = 0


@dataclass(frozen=True)
class SquadSpec:
    """A squad of a scenario (``[SQUAD_n]``): robots commanded as one over ``/squads``.

    Attributes:
        name: Squad name (the topic of its commands on ``/squads/events``).
        robots: Network names of its robots, in file order.
        formation: Default formation (a name of ``coopsim.model.orders.FORMATION_NAMES``).
        spacing: Distance between neighbours in the formation, m.
        team: The side it plays for in a game ("" when the scenario says none).
        line: Line of the section header.
        radius: Radius of a ``circle`` or ``half_circle`` formation, m (None: the swarm
            library's rule, n x spacing).
    """

    name: str
    robots: tuple[str, ...]
    formation: str = "wedge"
    spacing: float = 0.6
    team: str = ""
    line: int = 0
    radius: float | None = None


@dataclass(frozen=True)
class MapSpec:
    """What path planners need of a world: the floor, the static obstacles (objects of mass 0,
    at their current poses) and the no-go zones; ``version`` is the layout version it was made
    at (a planner rebuilds its grid when it changes)."""

    floor: FloorSpec
    obstacles: tuple[ObjectSpec, ...] = ()
    zones: tuple[ZoneSpec, ...] = ()
    version: int = 0


@dataclass(frozen=True)
class Settings:
    """The optional ``[SETTINGS]`` section; every field has a default.

    Attributes:
        dt: Physics step, s (see :data:`DT_RANGE`).
        mode: ``realtime`` or ``lockstep``.
        duration: Sim time to run, s; None runs until stopped.
        seed: Seed of the run's random generator (sensor noise, lost data).
        speed: Real-time speed factor (1 = wall clock; 0 = as fast as possible); None = the
            mode's own: 1 in realtime, 0 in lockstep (as fast as the controllers go).
        record: Whether the run is recorded (see the recorder).
        engine: Physics engine label (``pymunk``, ``kinematic`` or a plugin's); "" = the
            default engine, the one declaring ``Engine.default`` (found when the world is built:
            :func:`coopsim.model.plugins.default_engine`).
        wait_for: In lockstep, the first step waits for this many controllers to attach
            (None = as many as the run launches).
        threads: Threads the compiled kernels (sensing, kinematic physics, actuators) share
            a step's robots among (None = the cores the process may use; see
            :mod:`coopsim.model.threads`). Changes the speed, never a result.
        crtp: Serve every Crazyflie over CRTP/UDP for cflib (coopsim.crtp; ``--crtp``).
    """

    dt: float = 0.01
    mode: str = "realtime"
    duration: float | None = None
    seed: int = 0
    speed: float | None = None
    record: bool = False
    engine: str = ""
    wait_for: int | None = None
    threads: int | None = None
    crtp: bool = False


@dataclass(frozen=True)
class ScenarioSpec:
    """A whole ``.scenario`` file, its world already loaded.

    Attributes:
        world: The world the ``[WORLD]`` section names.
        targets: ``[TARGET]`` markers in file order.
        robots: ``[ROBOT_n]`` sections in file order.
        objects: Extra (usually movable) objects declared in ``[OBJECT_n]`` sections.
        settings: ``[SETTINGS]`` (defaults where absent).
        rules: ``[RULE_n]`` sections in file order.
        zones: ``[ZONE_n]`` no-go zones in file order.
        squads: ``[SQUAD_n]`` squads in file order.
        events: ``[EVENT_n]`` sections, in time order (file order among equal times).
        monitors: The ``[MONITORS]`` section, or None.
        task: The ``[TASK]`` section (:class:`~coopsim.model.task.TaskSpec`), or None.
        path: File it was read from ("" when built in code).
        text: The file's full text (recorded with every run).
        name: Scenario name (file stem), used for default recording names.
    """

    world: WorldSpec
    targets: tuple[TargetSpec, ...] = ()
    robots: tuple[RobotSpec, ...] = ()
    objects: tuple[ObjectSpec, ...] = ()
    settings: Settings = field(default_factory=Settings)
    rules: tuple[RuleSetting, ...] = ()
    zones: tuple[ZoneSpec, ...] = ()
    squads: tuple[SquadSpec, ...] = ()
    path: str = ""
    text: str = ""
    name: str = "scenario"
    events: tuple[EventSpec, ...] = ()
    monitors: MonitorsSpec | None = None
    task: TaskSpec | None = None


def yaw_from_degrees(theta_deg: float) -> float:
    """Convert a file's theta (degrees) to a yaw in radians."""
    return math.radians(theta_deg)
