"""Drivers and rules: the in-process plugin kinds (SwarmSimX's Drivers, ARGoS's loop functions).

A :class:`Driver` is a controller written once against the robot API a network client has
(``bot.sonar.read()``, ``bot.motors.set_speeds(l, r)``). The simulation can host it in-process,
called every N steps inside the stepper with no sockets (``driver LABEL`` in a ``[ROBOT_n]``
section), and :func:`coopsim.client.run_controller` hosts the very same class as a network
controller: one source, two hosts.

A :class:`Rule` is called before and after every step with the simulation and the snapshot; it
can end the run and adds fields to ``/sim state`` and the recording (games, monitors, event
schedules).

Both declare typed parameters like modules do, and are built with their current values.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .params import ParamSpec, ParamValues

if TYPE_CHECKING:  # the network host imports this module without numpy at run time
    import numpy as np

EVERY = ParamSpec("every", "int", "call the driver every N steps", 1, 1, 100000, "steps")


SEED_VARIABLE = "COOPSIM_SEED"  # the run's seed, in a launched controller's environment
ROBOT_SEED_VARIABLE = "COOPSIM_ROBOT_SEED"  # its robot's own stream: robot_seed(seed, robot)


def robot_seed(seed: int, robot: str) -> int:
    """The seed of one robot's random stream in a run of ``seed``: the CRC-32 (zlib's, as
    every language has it) of the text ``"<seed>/<robot>"``, 0..2**32-1. A launched controller
    finds it in ``$COOPSIM_ROBOT_SEED`` (docs/protocol.md, *Launched controllers*)."""
    return zlib.crc32(f"{int(seed)}/{robot}".encode())


class Reading(list):
    """A module's reading as returned by ``bot.<module>.read()`` on either host: a list of
    floats (units in the module's description) that also carries the reply's ``text`` and the
    ``step`` it was measured at.

    A one-value reading (``compass``: the heading, rad) is still a list of one float, so that
    ``reading[0]`` and ``(yaw,) = reading`` work alike for every module; ``reading.value`` and
    ``float(reading)`` give that float itself.
    """

    def __init__(self, values=(), text: str = "", step: int = 0) -> None:
        super().__init__(values)
        self.text = text
        self.step = step

    @property
    def value(self) -> float:
        """The one value of a one-value reading.

        Raises:
            ValueError: the reading has no value or more than one (use indexing).
        """
        if len(self) != 1:
            raise ValueError(f"this reading has {len(self)} values, not one: index it "
                             f"(reading[0] ... reading[{max(len(self) - 1, 0)}])")
        return float(self[0])

    def __float__(self) -> float:
        return self.value


@dataclass(frozen=True)
class StepInfo:
    """What a motion command returns: the step that used it (lockstep; the latest step
    otherwise), the sim time after it, s, and a note (``lockstep``, ``realtime``,
    ``driver``)."""

    step: int
    time: float
    note: str = ""

    @property
    def lockstep(self) -> bool:
        """True when the reply came after the step that used the command (one loop iteration
        is one step)."""
        return self.note.startswith("lockstep") or self.note == "driver"


class Driver:
    """Base of drivers (in-process controllers).

    Class attributes:
        label: Registered name (``driver wander``).
        description: One line for ``coopsim list``.
        params: Typed parameters; ``every`` (call period in steps) is added to every driver.
        batch: True for drivers that act on all robots hosting them at once with arrays
            (:meth:`step_batch`), instead of one :meth:`step` call per robot.

    Args:
        params: Current parameter values (validated; ``self.p[name]`` reads one).
        rng: This driver's random generator (seeded from the run's seed and the robot's name
            in-process, so the same scenario and seed give the same run).
    """

    label: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[tuple[ParamSpec, ...]] = ()
    batch: ClassVar[bool] = False

    def __init__(self, params: ParamValues, rng: np.random.Generator) -> None:
        self.p = params
        self.rng = rng

    @classmethod
    def param_specs(cls) -> tuple[ParamSpec, ...]:
        """The declared parameters plus ``every``."""
        return (*cls.params, EVERY) if "every" not in {p.name for p in cls.params} \
            else cls.params

    @classmethod
    def values(cls, settings: dict | None = None) -> ParamValues:
        """Parameter values with ``settings`` (name -> value) applied, validated.

        Raises:
            ParameterError: unknown name or bad value.
        """
        values = ParamValues(cls.param_specs())
        for name, value in (settings or {}).items():
            values.set(name, value)
        return values

    def setup(self, bot) -> None:
        """Called once before the first :meth:`step` (optional)."""

    def step(self, bot) -> None:
        """One control step: read modules of ``bot``, command its actuators."""
        raise NotImplementedError

    def step_batch(self, bots) -> None:
        """One control step for every robot hosting this driver (``batch = True`` drivers).

        Args:
            bots: A :class:`coopsim.sim.drivers.Batch`: readings as (N, width) arrays by module
                label, ``set(module, command, values)`` with an (N, k) array.
        """
        raise NotImplementedError

    @classmethod
    def validate(cls) -> None:
        """Check the declaration (called when the driver registers)."""
        if not cls.label.isidentifier():
            raise ValueError(f"driver label {cls.label!r} is not an identifier")
        if len({p.name for p in cls.param_specs()}) != len(cls.param_specs()):
            raise ValueError(f"driver {cls.label}: parameter names repeat")


class Rule:
    """Base of rules (ARGoS's loop functions).

    Class attributes:
        label: Registered name (``[RULE_n] type LABEL``).
        description: One line for ``coopsim list``.
        params: Typed parameters (``param NAME VALUE`` lines of the section).
        section: The :class:`~coopsim.model.specs.ScenarioSpec` attribute (a scenario file
            section, e.g. ``monitors`` for ``[MONITORS]``) whose presence brings this rule
            into a run without a ``[RULE_n]``; "" for none.
        overlay: What the viewer draws from this rule's fields, or "" for nothing: ``teams``
            (the bases, flags, score and clock, and right-click orders on a flag), from the
            fields ``teams``: name ->
            ``{base: [x, y], flag: [x, y], carrier, score, robots}``,
            plus ``base_radius``, ``flag_radius`` m, ``clock``, ``time_limit`` s and
            ``result``: a game of one's own reporting these fields gets the same overlay. The
            rule's fields carry it as ``overlay``.
        timeline: The name of the field in which this rule reports its timed events, or "" for
            none: a list of ``{name, at, done, step, time}`` (``at``: when due, s; ``done``:
            whether it happened; ``step``, ``time``: when it did, s; null before). The
            viewer's replay bar marks them and the Foxglove bridge and export log each as it
            happens (:func:`coopsim.model.plugins.timed_events` finds them).

    Args:
        params: Current parameter values.

    Attributes:
        ended: Why the rule ended the run ("" while it goes on); set it with :meth:`end`.
    """

    label: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[tuple[ParamSpec, ...]] = ()
    section: ClassVar[str] = ""
    overlay: ClassVar[str] = ""
    timeline: ClassVar[str] = ""

    def __init__(self, params: ParamValues) -> None:
        self.p = params
        self.ended = ""

    @classmethod
    def values(cls, settings: dict | None = None) -> ParamValues:
        """Parameter values with ``settings`` applied, validated."""
        values = ParamValues(cls.params)
        for name, value in (settings or {}).items():
            values.set(name, value)
        return values

    def check(self, scenario) -> None:
        """Refuse a scenario this rule cannot work with (raise SimulationError); optional."""

    def before_step(self, sim) -> None:
        """Called on the stepper thread before each step's commands phase."""

    def after_step(self, sim, snap) -> None:
        """Called on the stepper thread after each step's sensors phase."""

    def end(self, reason: str) -> None:
        """End the run after this step, saying why (shown in the CLI and ``/sim state``)."""
        if not self.ended:
            self.ended = reason

    def fields(self) -> dict[str, Any]:
        """JSON-ready values shown in ``/sim state`` and written to the recording."""
        return {}

    @classmethod
    def validate(cls) -> None:
        """Check the declaration (called when the rule registers)."""
        if not cls.label.isidentifier():
            raise ValueError(f"rule label {cls.label!r} is not an identifier")
