"""The in-process host of drivers: the robot API of the network client, without sockets.

A driver (:class:`~coopsim.model.driver.Driver`) sees a :class:`LocalRobot` whose attributes are
its modules (``bot.sonar.read()``, ``bot.motors.set_speeds(l, r)``): reads come from the last
snapshot, motion commands go straight into the robot's stored command, all checked by the same
module code the robot endpoints use, so a driver behaves the same in-process and over the network.
Drivers run in the commands phase on the stepper thread, every ``every`` steps; one that raises
stops the step with an error naming the driver and the robot (the stepper pauses the run).
"""

from __future__ import annotations

import zlib
from types import SimpleNamespace

import numpy as np

from ..model.errors import CoopsimError, SimulationError, UnknownNameError
from ..model.capabilities import Answerer, capability
from ..model.driver import Reading, StepInfo
from ..model.plugins import DRIVERS, MODULES
from ..model.snapshot import wrapped_poses


class DriverError(SimulationError):
    """A driver raised; the message names the driver and the robot."""


class LocalModule:
    """One module of one robot, in-process: every declared command is a method. As on the
    network (:class:`coopsim.client.robot.ModuleProxy`), numbers are the data and a string
    argument, or ``text=``, the text field."""

    def __init__(self, bot: "LocalRobot", label: str) -> None:
        self._bot, self._module = bot, MODULES.get(label)
        self._commands = {c.name: c for c in self._module.commands}

    def __getattr__(self, name: str):
        command = self.__dict__.get("_commands", {}).get(name)
        if command is None:
            raise AttributeError(f"module {self._module.label} has no command {name!r}")
        bot, module = self._bot, self._module

        def call(*args, text=""):
            for a in args:
                if isinstance(a, str):  # a word among the numbers: the text field
                    data = tuple(a for a in args if not isinstance(a, str))
                    return bot.call(module, command, data, a)
            return bot.call(module, command, args, text)
        setattr(self, name, call)  # made once: a driver calls it every step
        return call

    def __dir__(self):
        return [*super().__dir__(), *self._commands]


class LocalRobot:
    """A robot as a driver sees it (same API as :class:`coopsim.client.Robot`).

    Args:
        sim: The simulation. name: The robot's network name.
        control: False for :meth:`peer` handles (reads only).
    """

    def __init__(self, sim, name: str, control: bool = True) -> None:
        self._sim, self.name, self._control = sim, name, control
        for label in sim.world.robot(name).modules:
            setattr(self, label, LocalModule(self, label))

    @property
    def time(self) -> float:
        """Sim time of the latest completed step, s."""
        return self._sim.snapshot.time

    @property
    def step(self) -> int:
        """The latest completed step."""
        return self._sim.snapshot.step

    def modules(self) -> list[str]:
        """Labels of the robot's modules."""
        return list(self._sim.world.robot(self.name).modules)

    def peer(self, name: str) -> "LocalRobot":
        """Another robot, for reading its modules (a controller may read any robot's)."""
        self._sim.world.robot(name)
        return LocalRobot(self._sim, name, control=False)

    def get_param(self, module: str, name: str):
        """Current value of a module (or ``driver``) parameter."""
        return self._values(module)[name]

    def set_param(self, module: str, name: str, value):
        """Set a module (or ``driver``) parameter; returns the stored value."""
        return self._sim.set_param(self.name, module, name, value)

    def params(self, module: str) -> dict:
        """Every parameter of a module (or ``driver``) and its value."""
        return self._values(module).as_dict()

    def _values(self, module: str):
        robot = self._sim.world.robot(self.name)
        if module == "driver" and robot.driver is not None:
            return robot.driver[1]
        if module not in robot.modules:
            raise UnknownNameError(f"robot {self.name!r} has no module {module!r}")
        return robot.modules[module]

    def call(self, module, command, data: tuple, text: str):
        """Run one command of ``module`` for this robot (what the module attributes call)."""
        command.check(SimpleNamespace(params=(), data=data, text=text))
        sim, snap = self._sim, self._sim.snapshot
        if command.kind == "read" and hasattr(module, "read_local"):  # camera3d: the image
            return module.read_local(command, sim, self.name, self._values(module.label), text)
        if command.kind == "read":
            row = snap.reading(self.name, module.label)
            reply_text, values = capability(module, Answerer, default=True).answer_robot(
                command, self.name, row, text, snap)
            return Reading(values, reply_text, snap.step)
        if not self._control:
            raise SimulationError(f"{self.name} is a peer: read its modules, command your own")
        if command.kind == "motion":
            robot = sim.world.robot(self.name)
            values = module.command_row(command, tuple(float(d) for d in data),
                                        robot.modules[module.label], robot.info)
            sim.set_command(sim.robots.index[self.name], module.label, values)
            return StepInfo(snap.step + 1, snap.time + sim.dt, "driver")
        return module.act(command, sim, self.name, SimpleNamespace(text=text, data=data))


class Batch:
    """All robots hosting one batch driver, as arrays (``Driver.batch = True``).

    Attributes:
        names: The robots' names; rows: their rows in the snapshot (read-only).
        snapshot: The latest snapshot (``readings[label][rows]`` are theirs).
        time: Sim time, s.

    Args:
        rows: The robots' rows, when the caller has them (:class:`DriverHost` works them out
            once per layout, not once per robot per call); None: looked up by name.
    """

    def __init__(self, sim, names: list[str], rows: np.ndarray | None = None,
                 _at=None) -> None:
        self._sim = sim
        self.names = names
        self.rows = rows if rows is not None else batch_rows(sim, names)
        self._at = _span(self.rows) if _at is None else _at
        self.snapshot = sim.snapshot
        self.time = sim.snapshot.time

    def read(self, module: str) -> np.ndarray:
        """(n, width) readings of ``module`` for these robots (a copy, the caller's)."""
        at = self._at
        table = self.snapshot.readings[module]
        return table[at].copy() if at.__class__ is slice else table[at]

    def poses(self) -> np.ndarray:
        """(n, 3) x, y (m), yaw (rad, wrapped to (-pi, pi]), world frame."""
        return wrapped_poses(self.snapshot.poses[self.rows])

    def robot(self, name: str) -> LocalRobot:
        """The full robot API of one of these robots (actions and per-robot reads such as the
        radio's, which arrays do not carry)."""
        if name not in self.names:
            raise UnknownNameError(f"{name!r} is not one of this driver's robots")
        return LocalRobot(self._sim, name)

    def post(self, key: str, value) -> None:
        """Put ``value`` (immutable: snapshots share it) on the run's board under ``key``
        (a word not starting with ``_``): readers find it in ``Snapshot.extra`` from the next
        snapshot on (the ``squad`` driver's ``squad_blocked``, read by ``/sim state``)."""
        self._sim.extra[key] = value

    def set(self, module: str, values: np.ndarray) -> None:
        """Store (n, width) commands of ``module`` for these robots (already in its stored
        form, e.g. wheel speeds in m/s; clipped by the module's actuator as any command)."""
        values = np.asarray(values, dtype=float)
        if values.shape != (len(self.rows), self._sim.commands[module].shape[1]) \
                or not np.isfinite(values).all():
            raise SimulationError(f"{module} commands must be a finite ({len(self.rows)}, "
                                  f"{self._sim.commands[module].shape[1]}) array")
        self._sim.commands[module][self._at] = values


    def set_some(self, module: str, which: np.ndarray, values: np.ndarray) -> None:
        """Store (k, width) commands of ``module`` for the robots ``which`` (indices into
        :attr:`names`) only: a batch of robots of several kinds (the ``shared`` driver's
        quadrotors and ground robots) commands each kind through its own module."""
        values = np.asarray(values, dtype=float)
        table = self._sim.commands[module]
        if values.shape != (len(which), table.shape[1]) or not np.isfinite(values).all():
            raise SimulationError(f"{module} commands must be a finite ({len(which)}, "
                                  f"{table.shape[1]}) array")
        table[self.rows[which]] = values

    def axles(self) -> np.ndarray:
        """(n,) each robot's wheel axle (the distance between its wheels), m, from its type."""
        return np.array([self._sim.world.robot(n).axle for n in self.names], dtype=float)


def _span(rows: np.ndarray):
    """``rows`` as a slice where they are consecutive and ascending (a batch of every robot
    of a world, in order: a block copy, not a gather), else ``rows``."""
    if len(rows) and bool((np.diff(rows) == 1).all()):
        return slice(int(rows[0]), int(rows[0]) + len(rows))
    return rows


def batch_rows(sim, names: list[str]) -> np.ndarray:
    """The read-only rows of robots ``names`` in ``sim``'s tables (one lookup per robot:
    done when the layout changes, not per step)."""
    rows = np.array([sim.robots.index[n] for n in names], dtype=np.int64)
    rows.setflags(write=False)
    return rows


class DriverHost:
    """The drivers of one simulation, rebuilt (keeping state by robot) on layout changes."""

    def __init__(self, sim) -> None:
        self._hosted: dict[str, tuple] = {}  # robot -> (driver, bot, started)
        self._batches: list[tuple] = []  # (driver, names, rows, rows as Batch indexes them)
        self._seed = sim.seed

    def sync(self, sim) -> None:
        """Host the drivers the world's robots name (called after layout changes)."""
        hosted, batches = {}, {}
        for robot in sim.world.robots:
            if robot.driver is None:
                continue
            label, values = robot.driver
            cls = DRIVERS.get(label)
            if cls.batch:
                key = (label, tuple(sorted(values.as_dict().items())))
                batches.setdefault(key, (cls, values, []))[2].append(robot.name)
            elif robot.name in self._hosted and self._hosted[robot.name][0].p is values:
                hosted[robot.name] = self._hosted[robot.name]
            else:
                hosted[robot.name] = (cls(values, self._rng(robot.name)),
                                      LocalRobot(sim, robot.name), [False])
        self._hosted = hosted
        # a batch keeps its driver (and its state) while its robots and their values stay, as a
        # robot's own driver does: a grasp or an inserted object changes the layout, not them
        before = {tuple(names): driver for driver, names, _, _ in self._batches}
        self._batches = []
        for (label, _), (cls, values, names) in batches.items():
            driver = before.get(tuple(names))
            if driver is None or driver.p is not values:
                driver = cls(values, self._rng(label))
            rows = batch_rows(sim, names)
            self._batches.append((driver, names, rows, _span(rows)))

    def _rng(self, name: str) -> np.random.Generator:
        # the run's seed and a stable hash of the name: same scenario + seed -> same run
        return np.random.Generator(np.random.PCG64([self._seed, zlib.crc32(name.encode())]))

    def run(self, sim) -> None:
        """Call every driver whose period has come (commands phase)."""
        step = sim.step
        for name, (driver, bot, started) in self._hosted.items():
            if step % driver.p["every"] == 0:
                _guard(driver, name, lambda: _step_one(driver, bot, started))
        for driver, names, rows, at in self._batches:
            if step % driver.p["every"] == 0:
                _guard(driver, ",".join(names[:3]),
                       lambda: driver.step_batch(Batch(sim, names, rows, at)))

    def set_param(self, robot: str, name: str, value):
        """Set a driver parameter of ``robot`` (validated); return the stored value."""
        return self._values(robot).set(name, value)

    def _values(self, robot: str):
        for name, (driver, _, _) in self._hosted.items():
            if name == robot:
                return driver.p
        for driver, names, _, _ in self._batches:
            if robot in names:
                return driver.p
        raise UnknownNameError(f"robot {robot!r} has no driver")


def _step_one(driver, bot, started: list) -> None:
    if not started[0]:
        started[0] = True
        driver.setup(bot)
    driver.step(bot)


def _guard(driver, robot: str, call) -> None:
    try:
        call()
    except CoopsimError as exc:
        raise DriverError(f"driver {driver.label} on {robot}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 -- a plugin's bug becomes a paused run, not a crash
        raise DriverError(f"driver {driver.label} on {robot} raised "
                          f"{type(exc).__name__}: {exc}") from exc
