"""The hardware-module contract: one class declares everything about one module.

A module (``motors``, ``sonar``, a plugin's ``joints``...) declares

* its **commands** (:class:`~coopsim.model.commands.Command`: id, name, arity, kind), from which the
  protocol's tables, the robot endpoints' dispatch, ``coopsim list`` and the clients are built;
* its typed **parameters** (:class:`~coopsim.model.params.ParamSpec`, after AMSA);
* the **fields** of its reading (and, as the optional capabilities of
  :mod:`coopsim.model.capabilities`, the **columns** it contributes to the state stream and the
  recording (:class:`Column`), a **drawing hint** for the viewer, a laser scan for ROS 2...);
* ``sense`` (a reading for every robot carrying it, from one batched physics frame) and/or
  ``actuate`` (turning the stored commands of every robot carrying it into engine calls).

Everything works on batches: ``rows`` are indices into the frame's robot arrays, so 10,000 robots
cost a few numpy calls, not 10,000 Python calls. Frames and units: world frame x/y on the floor,
z up, metres; yaw in radians counter-clockwise from +x; angles relative to a robot's heading are
positive to its left. Nothing here imports pymunk or zmq.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Protocol

import numpy as np

from .capabilities import LaserScan  # noqa: F401 (its old home: old imports keep working)
from .capabilities import (Drawable, Learnable, Legacy, Recordable, capability, kernels_of,
                           legacy_uses, own, reading_fields)
from .commands import OUT_OF_RANGE, Command
from .errors import ProtocolError
from . import kernel
from .kernel import KindState, StateField, normals, uniforms

from .params import ParamSpec


@dataclass(frozen=True)
class Column:
    """One per-robot quantity streamed and/or recorded.

    Attributes:
        name: Column name, unique across modules (``sonar3``, ``left_cmd``).
        unit: Quantization step in the recording, SI units (1e-3 m = 1 mm).
        order: Difference order in the recording's non-key steps: 1 or 2 (see recording format).
        field: Index of the value in the module's reading (``source`` "reading") or in its
            stored command (``source`` "command").
        source: ``reading`` or ``command``.
        stream: Also sent on the state stream every published step (the viewer draws from it).
        module: The module it belongs to (filled in by the recorder; a module leaves it "").
    """

    name: str
    unit: float
    order: int
    field: int = 0
    source: str = "reading"
    stream: bool = False
    module: str = ""


@dataclass(frozen=True)
class RobotInfo:
    """What a module may know of one robot when it checks a command (see
    :meth:`Module.command_row`).

    Attributes:
        name: Network name. type: Robot type label.
        limits: Role -> (min, max) limits of the joint the robot type gave that role, rad.
        arm: The 3D arm the robot type gave the role ``arm`` (its joints' limits and
            speeds), or None.
        mass: The mass of the robot's own body (its chassis), kg; 0 when unknown.
    """

    name: str
    type: str = ""
    limits: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    arm: Any = None
    mass: float = 0.0


class PhysicsAccess(Protocol):
    """What a module reaches of the physics engine, for one step, in robot order: the bodies
    and joints a robot type named, by robot row and part *role* (``bar``, ``joint0``, ``tip``).
    Rows without the role read NaN and are skipped by commands. Implemented by
    :class:`coopsim.sim.access.Access` over any engine; world frame, SI units.
    """

    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        """Differential drive of robots ``rows``: forward speed (m/s) and yaw rate (rad/s)."""

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        """Velocity drive of robots ``rows``: (n, 3) vx, vy (m/s, world frame), yaw rate."""

    def apply_wrench(self, rows: np.ndarray, force: np.ndarray, torque: np.ndarray) -> None:
        """Rotors drive of robots ``rows``: (n, 3) force (N) and (n, 3) torque (N m), body
        frame, held until set again (engines with the ``flight`` feature)."""

    def poses(self, rows: np.ndarray, role: str) -> np.ndarray:
        """(len(rows), 3) x, y (m) and yaw (rad) of the body each robot names ``role``."""

    def joint_state(self, rows: np.ndarray, roles: tuple[str, ...]) -> np.ndarray:
        """(len(rows), len(roles), 2) angle (rad) and rate (rad/s) of each robot's joints."""

    def joint_force(self, rows: np.ndarray, role: str) -> np.ndarray:
        """(len(rows),) force in each robot's joint ``role`` during the last step, N."""

    def set_motor_rates(self, rows: np.ndarray, roles: tuple[str, ...],
                        rates: np.ndarray) -> None:
        """Drive each robot's motor joints ``roles`` at ``rates`` (len(rows), len(roles)),
        rad/s."""

    def points(self, rows: np.ndarray, name: str) -> np.ndarray:
        """(len(rows), 3) world x, y (m) and the carrying body's yaw of each robot's point
        ``name``."""

    def arms(self, rows: np.ndarray) -> list:
        """The :class:`~coopsim.model.arm.ArmSpec` each robot names ``arm`` (None if none)."""

    def arm_state(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), MAX_JOINTS, 3) angle (rad), rate (rad/s), drive torque (N m) of each
        robot's arm joints (NaN rows: no arm)."""

    def set_arm_targets(self, rows: np.ndarray, q: np.ndarray, qd: np.ndarray) -> None:
        """Joint set points (len(rows), MAX_JOINTS) angles (rad) and rates (rad/s) of each
        robot's arm, held until set again (rows without an arm are skipped)."""

    def wrist_wrench(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), 6) force (N) and torque (N m) at each robot's wrist, tool frame (NaN
        rows: no arm)."""

    def object_poses(self, which: np.ndarray) -> np.ndarray:
        """(len(which), 3) x, y (m) and yaw (rad) now of the objects at indices ``which`` of
        the frame's ``objects``, world frame (movable ones move)."""


@dataclass
class Frame:
    """What modules see of one step: every robot's state as arrays indexed by robot.

    Attributes:
        dt: Step length, s.
        pose: (N, 3) x, y (m) and yaw (rad), world frame.
        velocity: (N, 3) vx, vy (m/s) world frame and yaw rate (rad/s).
        radius: (N,) chassis radius, m.
        axle: (N,) distance between the wheels, m (0 for robots without wheels).
        group: (N,) collision/sensing group (a robot's rays ignore its own assembly).
        commands: Module label -> (N, width) stored commands (latest of each robot).
        actuated: Module label -> what its ``actuate`` returned this step (e.g. wheel speeds).
        targets: (T, 2) target positions, m.
        contacts: (N, 2) 1.0 where the chassis touches something at its front / rear half.
            Built when a module first reads it (:meth:`defer`): a world whose modules never
            read it never asks the engine.
        geometry: The sensing geometry (ray caster, moving circles and segments); see
            :class:`coopsim.sim.sensing.Geometry`. Built when a module first reads it: a world
            with no ray sensor never builds it.
        physics: Physics queries and commands by robot row and part role (drives, poses,
            joint angles and forces, points): a :class:`PhysicsAccess`
            (:class:`coopsim.sim.access.Access`). ``frame.engine`` is its old name, kept
            working (deprecated).
        extra: The simulation's board (``Simulation.extra``): ``map`` (the floor, static
            obstacles and zones), and the per-run state of modules that keep some (the
            radio's queues); changed on the stepper thread only.
        step: The number of the step being measured (the snapshot's ``step``).
        names: Every robot's network name, by row.
        target_colors: The colour name of each target, in the order of ``targets``.
        objects: Every object in the world as an :class:`~coopsim.model.specs.ObjectSpec`
            (name, ``shape`` box/cylinder/sphere, size m, ``mass`` kg with 0 = static,
            ``color`` RGB), in insertion order; its position is where it was inserted (the
            snapshot's ``object_poses`` say where it is now).
        time: The simulated time of the step being measured, s (the snapshot's ``time``).
        memo: Results modules share within this frame (a new dict each frame), by a key their
            module names: e.g. the wheel speeds two modules derive from the same motion.
        state3d: (N, 13) every robot's full state on an engine with the ``flight`` feature
            (columns :data:`coopsim.physics.engine.STATE3D`: x, y, z m; quaternion w, x, y, z
            body to world; vx, vy, vz m/s world frame; wx, wy, wz rad/s body frame), else None
            (a 2D world: ``pose`` and ``velocity`` say everything).
        states: The simulation's per-kind state tables (:meth:`state`), or None for a frame
            built outside a simulation.
        noise: Module label -> (normals, uniforms) blocks the sensing plan drew for this
            step (:meth:`normals`, :meth:`uniforms`), or None.
    """

    dt: float
    pose: np.ndarray
    velocity: np.ndarray
    radius: np.ndarray
    axle: np.ndarray
    group: np.ndarray
    commands: Mapping[str, np.ndarray]
    actuated: dict
    targets: np.ndarray
    contacts: np.ndarray
    geometry: Any
    physics: PhysicsAccess
    extra: dict
    step: int = 0
    names: tuple = ()
    target_colors: tuple = ()
    objects: tuple = ()
    time: float = 0.0
    memo: dict = field(default_factory=dict)
    state3d: np.ndarray | None = None
    states: Any = None
    noise: Mapping | None = None

    def defer(self, name: str, build) -> None:
        """Make attribute ``name`` (``geometry``, ``contacts``) be ``build()``, called when
        something first reads it (then kept). Why: most worlds' modules never cast a ray,
        and building the ray geometry was up to 42 % of a step on mujoco."""
        self.__dict__.pop(name, None)
        self.__dict__.setdefault("_deferred", {})[name] = build

    def made(self, name: str):
        """Attribute ``name`` if it is built already, else None (builds nothing): what a
        module that can do without it asks (the headings the geometry may hold)."""
        return self.__dict__.get(name)

    def state(self, label: str) -> KindState:
        """The per-robot state module ``label`` keeps between steps (its ``state_fields``):
        arrays (N, *shape) by robot row, written in place, and ``seen``
        (:class:`~coopsim.model.kernel.KindState`). A frame built outside a simulation keeps
        its tables on ``extra`` (``_kind_states``), made anew when the number of robots changes."""
        if self.states is not None:
            return self.states.get(label)
        tables = self.extra.setdefault("_kind_states", {})
        table = tables.get(label)
        if table is None or len(table) != len(self.pose):
            table = tables[label] = KindState(kernel.fields_of(label), len(self.pose))
        return table

    def normals(self, label: str) -> np.ndarray | None:
        """Module ``label``'s standard normal draws for this step: a read-only
        (len(rows), k) view of the plan's one draw (k: its ``noise_draws``), rows as the
        ``rows`` its ``measure`` was given; None when the plan drew none for it."""
        block = self.noise.get(label) if self.noise else None
        return None if block is None else block[0]

    def uniforms(self, label: str) -> np.ndarray | None:
        """Module ``label``'s uniform draws in [0, 1) for lost data this step: a read-only
        (len(rows),) view, or None when the plan drew none for it (its ``lost`` is 0)."""
        block = self.noise.get(label) if self.noise else None
        return None if block is None else block[1]

    @property
    def engine(self) -> PhysicsAccess:
        """Deprecated name of :attr:`physics` (plugins written before it still work)."""
        warnings.warn("Frame.engine is deprecated: use Frame.physics", DeprecationWarning,
                      stacklevel=2)
        return self.physics


class _Deferred:
    """A :class:`Frame` attribute built on first read (see :meth:`Frame.defer`): a non-data
    descriptor, so once built the instance's own attribute is read with no call."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, frame, owner=None):
        if frame is None:
            return self
        build = frame.__dict__.get("_deferred", {}).pop(self.name, None)
        if build is None:
            raise AttributeError(self.name)
        value = frame.__dict__[self.name] = build()
        return value


Frame.geometry = _Deferred("geometry")
Frame.contacts = _Deferred("contacts")


def _some(p: Mapping, name: str) -> bool:
    """Whether parameter ``name`` is declared and non-zero for some robot; the simulation's
    parameter arrays say which are all zero (``p.zero``), a plain dict is looked at."""
    if name not in p:
        return False
    zero = getattr(p, "zero", None)
    return name not in zero if zero is not None else bool(p[name].any())


class Module:
    """Base of every hardware module. Subclasses set the class attributes and override
    :meth:`sense` (sensors), :meth:`actuate` (actuators) or both; all methods are classmethods
    over batches of robots, so a module holds no per-robot state of its own.

    Class attributes:
        label: The module's name (``/robot1/<label>``), registered under it.
        description: One line for ``coopsim list``, with units.
        params: Typed parameters (noise, range, ...).
        commands: Commands it serves (ids unique across all modules; plugins pick an unused
            hundred, ``coopsim list`` shows the taken ones).
        fields: Names of its reading's values (a module with the ``PerTargetReading``
            capability names them per number of targets).
        command_fields: Names of its stored command values (modules with motion commands).
        state_fields: The per-robot state it keeps between steps
            (:class:`~coopsim.model.kernel.StateField`), reached as ``frame.state(label)``.

    What serves one front end only (a laser scan for ROS 2, bounds for a learner, a drawing
    hint, recorded columns, a read's reply...) is an optional capability: the same names on the
    subclass, asked for with :func:`coopsim.model.capabilities.capability`. The declaration is
    checked by :func:`validate_module` and described by :func:`describe_module`.
    """

    label: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[tuple[ParamSpec, ...]] = ()
    commands: ClassVar[tuple[Command, ...]] = ()
    fields: ClassVar[tuple[str, ...]] = ()
    command_fields: ClassVar[tuple[str, ...]] = ()
    state_fields: ClassVar[tuple[StateField, ...]] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # A module written when the base had the capabilities' defaults may still call them
        # (super().answer(...), cls.field_names(n)): give it them, deprecated.
        missing = legacy_uses(cls)
        if missing and Legacy not in cls.__mro__:
            warnings.warn(f"module {cls.__name__} uses {', '.join(sorted(missing))}, no longer "
                          "on the Module base: see coopsim.model.capabilities (docs/plugins.md, "
                          "Deprecated)", DeprecationWarning, stacklevel=2)
            cls.__bases__ = (*cls.__bases__, Legacy)

    # -- readings -------------------------------------------------------------------------------

    @classmethod
    def sense(cls, frame: Frame, rows: np.ndarray, p: dict[str, np.ndarray],
              prev: np.ndarray) -> np.ndarray:
        """Noiseless reading of the robots ``rows``, shape (len(rows), width).

        Args:
            frame: All robots' state this step.
            rows: Indices (into the frame), ascending, of the robots that carry this module
                (every robot: 0..N-1, which modules may use to skip gathers).
            p: Parameter values per robot, each an array aligned with ``rows``.
            prev: The previous reading of those robots (for integrating sensors).

        A kind with a compiled ``kernel_sense`` (:class:`~coopsim.model.capabilities.
        ModuleKernel`) gets it run with no noise; else zeros.
        """
        found = kernels_of(cls)[0]
        if found is not None:
            if prev is None or len(prev) != len(rows):  # the rows' previous reading
                prev = np.zeros((len(rows), len(reading_fields(
                    cls, len(getattr(frame, "targets", ()))))))
            return kernel.sense_by_kernel(cls, found, frame, rows, p, prev, None, False)
        return np.zeros((len(rows), len(reading_fields(cls, len(frame.targets)))))

    @classmethod
    def noise_draws(cls, p: Mapping[str, np.ndarray]) -> int:
        """How many standard normals :meth:`measure` needs per robot row and measured step,
        given the kind's parameter arrays ``p`` (the same count for any rows of them): the
        sensing plan draws them, with every kind's, in one generator call a step and hands
        them over as ``frame.normals(label)``. 0 (the default): a module that overrides
        :meth:`measure` draws from ``rng`` itself (the slow path); the base :meth:`measure`
        gets its reading's width of normals when its ``noise`` is non-zero, without
        declaring it."""
        return 0

    @classmethod
    def measure(cls, frame: Frame, rows: np.ndarray, p: dict[str, np.ndarray],
                prev: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The reading with the ``noise`` and ``lost`` parameters applied, if declared.

        The draws are the plan's blocks for this step (``frame.normals(label)``,
        ``frame.uniforms(label)``) where it drew them, else ``rng``'s (a frame built
        outside the sensing plan). A kind with a compiled ``kernel_sense`` gets it run with
        those draws (it applies them itself).
        """
        found = kernels_of(cls)[0]
        if found is not None:
            return kernel.sense_by_kernel(cls, found, frame, rows, p, prev, rng, True)
        out = cls.sense(frame, rows, p, prev)
        # No draws while a parameter is 0 everywhere: the stream stays the same for the same
        # parameters (determinism holds) and noiseless runs skip the generator's cost.
        if _some(p, "noise") and out.size:
            out = out + normals(frame, cls.label, rows, out.shape[1], rng) * p["noise"][:, None]
        if _some(p, "lost") and out.size:
            lost = uniforms(frame, cls.label, rows, rng) * 100.0 < p["lost"]
            out[lost] = prev[lost]
        return cls.clip(out, p)

    @classmethod
    def clip(cls, out: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
        """Keep noisy values physically possible (e.g. distances >= 0)."""
        return out

    # -- commands and actuation -----------------------------------------------------------------

    @classmethod
    def command_row(cls, command: Command, data: tuple, params: Mapping,
                    robot: RobotInfo) -> tuple[float, ...]:
        """Validate a ``motion`` command and turn it into the values stored for the robot.

        Args:
            command: Which of the module's motion commands.
            data: The request's floats (arity already checked, all finite).
            params: The robot's current parameter values of this module (read-only).
            robot: The robot's name, type and joint limits by role.

        Returns:
            len(command_fields) floats; the latest stored command of a robot is what
            :meth:`actuate` sees.

        Raises:
            ProtocolError: OUT_OF_RANGE with a sentence, for values the module refuses.
        """
        raise ProtocolError(OUT_OF_RANGE, f"{cls.label} has no motion command {command.name}")

    @classmethod
    def actuate(cls, frame: Frame, rows: np.ndarray, p: dict[str, np.ndarray],
                commands: np.ndarray) -> Any:
        """Actuator phase for the robots ``rows``: act on the engine (``frame.physics``).

        Args:
            commands: (len(rows), len(command_fields)) their stored commands, read-only.

        Returns:
            Anything :meth:`sense` wants to see as ``frame.actuated[label]`` (or None). A
            kind with a compiled ``kernel_actuate`` gets it run: its ``out``.
        """
        _, found, role = kernels_of(cls)
        if found is not None:
            return kernel.actuate_by_kernel(cls, found, role, frame, rows, p, commands)
        return None

    @classmethod
    def act(cls, command: Command, sim, robot: str, msg) -> str:
        """Carry out an ``action`` command on the stepper thread; return the reply's text."""
        raise ProtocolError(OUT_OF_RANGE, f"{cls.label} has no action {command.name}")


kernel._BASE_DRAWS[0] = Module.noise_draws.__func__  # a kernel kind's draws: declared or not


# -- declarations -----------------------------------------------------------------------------

def declaration(cls: type[Module]) -> dict:
    """The module's JSON-ready declaration: its own ``describe()`` where an old module
    overrides it (deprecated), else :func:`describe_module`."""
    return cls.describe() if own(cls, "describe") else describe_module(cls)


def check_declaration(cls: type[Module]) -> None:
    """Check the module's declaration: its own ``validate()`` where an old module overrides it
    (deprecated; ``super().validate()`` reaches :func:`validate_module`), else
    :func:`validate_module`."""
    cls.validate() if own(cls, "validate") else validate_module(cls)


def _deprecated(function):
    """``function`` as the old base's classmethod of that name (on :class:`Legacy`)."""
    name = function.__name__.removesuffix("_module")

    def call(cls, *args):
        warnings.warn(f"Module.{name}() is deprecated: use coopsim.model.module."
                      f"{function.__name__}", DeprecationWarning, stacklevel=2)
        return function(cls, *args)
    return classmethod(call)


def validate_module(cls: type[Module]) -> None:
    """Check a module's declaration, its capabilities' included (called when it registers).

    Raises:
        ValueError: a command outside the module, a column out of its fields, a repeat...
    """
    if not cls.label.isidentifier():
        raise ValueError(f"module label {cls.label!r} is not an identifier")
    for command in cls.commands:
        command.validate()
        if command.module != cls.label or not command.kind:
            raise ValueError(f"command {command.name} must name module {cls.label!r} and "
                             "a kind (read, motion or action)")
        if command.kind == "motion" and not cls.command_fields:
            raise ValueError(f"motion command {command.name} needs command_fields")
    names = [c.name for c in cls.commands]
    if len(set(names)) != len(names) or len({p.name for p in cls.params}) != len(cls.params):
        raise ValueError("command or parameter names repeat")
    learn = capability(cls, Learnable, default=True)
    if len(learn.action_fields) > len(cls.command_fields):
        raise ValueError(f"action_fields {learn.action_fields} need as many command_fields "
                         "at least (an action becomes a stored command)")
    if not (isinstance(learn.per_target, int) and learn.per_target >= 0):
        raise ValueError(f"per_target must be a count, not {learn.per_target!r}")
    for col in capability(cls, Recordable, default=True).columns:
        width = len(cls.fields if col.source == "reading" else cls.command_fields)
        if col.source not in ("reading", "command") or not 0 <= col.field < width \
                or col.order not in (1, 2) or not col.unit > 0:
            raise ValueError(f"column {col.name} does not fit the module's fields")


def describe_module(cls: type[Module]) -> dict:
    """JSON-ready declaration (the /sim state ``modules`` entry; the viewer reads ``draw``,
    the module's :class:`~coopsim.model.capabilities.Drawable` hint or None)."""
    return {"label": cls.label, "description": cls.description,
            "commands": [c.describe() for c in cls.commands],
            "fields": list(cls.fields), "draw": capability(cls, Drawable, default=True).draw}


Legacy.validate = _deprecated(validate_module)
Legacy.describe = _deprecated(describe_module)
