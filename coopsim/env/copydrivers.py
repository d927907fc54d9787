"""The drivers of the ``copies`` backend's robots (:mod:`coopsim.env.copies`): a scenario's
in-process controllers (``driver LABEL`` on robots that are not agents: the ``office``
walkers' ``wander``) hosted by the simulation's own :class:`~coopsim.sim.drivers.DriverHost`
over a view of the batch, so each copy's drivers run as the ``world`` backend runs them.

What a driver sees is what it sees in a world: every copy's robots named ``c{k}_NAME`` (a
per-robot driver's generator is seeded by that name, a batch driver's by its label, both with
the batch's seed: the world backend's draws), the batch as its last step left it (a copy
reset since then is read as that step left it, as the world backend's snapshot holds it), the
readings of every kind its robot carries, and its motion module's commands stored for the
next step. What a simulation has and a batch does not (another module's commands, a
module's ``act`` on the simulation, a parameter write) raises
:class:`~coopsim.model.errors.SimulationError` saying so, the step stopping with the driver's
error (:class:`~coopsim.sim.drivers.DriverError`).
"""

from __future__ import annotations

from types import SimpleNamespace

from ..model.capabilities import reading_fields
from ..model.errors import SimulationError, UnknownNameError
from ..model.plugins import MODULES
from .batch import copy_named


class _CopyRobot:
    """Copy k's robot: the template's robot under the name ``c{k}_NAME``, its driver's
    settings naming copy k's robots (``names``: template name -> copy k's)."""

    __slots__ = ("name", "_robot", "driver")

    def __init__(self, k: int, robot, names: dict) -> None:
        self.name, self._robot, self.driver = f"c{k}_{robot.name}", robot, robot.driver
        if robot.driver is not None:
            label, values = robot.driver
            moved = {n: copy_named(v, names) for n, v in values.as_dict().items()}
            if moved != values.as_dict():
                values = values.copy()
                for n, v in moved.items():
                    values.set(n, v)
                self.driver = (label, values)

    def __getattr__(self, attr: str):
        return getattr(self._robot, attr)


class _Commands(dict):
    """The stored commands a driver may write: its motion module's."""

    def __missing__(self, label: str):
        raise SimulationError(f"a batch stores the commands of {', '.join(self)} alone, not "
                              f"of {label} (the world backend, backend='world', has them)")


class _World:
    """The copies' robots as a simulation's world lists and finds them."""

    def __init__(self, robots: list) -> None:
        self.robots = robots
        self._named = {r.name: r for r in robots}

    def robot(self, name: str):
        found = self._named.get(name)
        if found is None:
            raise UnknownNameError(f"no robot named {name!r}")
        return found


def driven_kinds(sim) -> set:
    """The labels of the kinds with a reading that the robots with a driver carry (what a
    driver may read, every step measured)."""
    n = len(sim.world.targets)
    return {label for robot in sim.world.robots if robot.driver is not None
            for label in robot.modules if reading_fields(MODULES.get(label), n)}


class CopyDrivers:
    """The drivers of every copy of ``sim`` (the batch's template) for ``batch`` (a
    :class:`~coopsim.env.copies.CopyBatch`): what :class:`~coopsim.sim.drivers.DriverHost`,
    :class:`~coopsim.sim.drivers.LocalRobot` and :class:`~coopsim.sim.drivers.Batch` ask of
    a simulation, answered from the batch. ``snapshot`` is set by the batch after each step.
    """

    def __init__(self, batch, sim) -> None:
        self._batch = batch
        template, robots = sim.world.robots, []
        for c in range(batch.copies):
            names = {r.name: f"c{c}_{r.name}" for r in template}
            robots += [_CopyRobot(c, r, names) for r in template]
        self.world = _World(robots)
        self.robots = SimpleNamespace(index=batch.named())
        self.commands = _Commands({batch.motion: batch.act_rows})
        self.dt, self.extra = batch.dt, {}
        self.snapshot = None
        self.host = None

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        raise SimulationError(f"a driver on the copies backend reads modules and commands "
                              f"{self._batch.motion}; a command that acts on the simulation "
                              f"(here: its {name}) needs the world backend (backend='world')")

    @property
    def seed(self) -> int:
        """The batch's seed (the drivers' generators are seeded with it)."""
        return self._batch.seed

    @property
    def step(self) -> int:
        """The step about to run (a driver runs when it is a multiple of its ``every``)."""
        return self._batch.step

    def restart(self) -> None:
        """Every driver starts over (a whole batch's reset: new instances, ``setup`` again,
        generators seeded as at load)."""
        from ..sim.drivers import DriverHost

        self.extra = {}
        self.host = DriverHost(self)
        self.host.sync(self)

    def run(self) -> None:
        """Call the drivers whose period has come (before the step's acting kind)."""
        self.host.run(self)

    def set_command(self, index: int, module: str, values) -> None:
        """Store robot ``index``'s command of ``module`` (the motion module's)."""
        self.commands[module][index] = values

    def set_param(self, robot: str, module: str, name: str, value):
        raise SimulationError("a batch's parameters are its template's: set them in the "
                              "scenario")
