"""A Simulation: one scenario, one seed, its World, the run's random generator and its time.

It offers the phases the stepper runs in order (actuate, physics, sense) and the operations the
network asks for between steps (insert, remove, parameters, reset). Only the stepper thread calls
it. Same scenario + same seed + same commands at the same steps -> the same run, bit for bit.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .bodies import BodyTable, ParamTable
from ..model.errors import SimulationError
from ..model.registry import MODULES
from ..plugins.robots import drive
from .sensing import Sensors
from ..model.snapshot import Snapshot, frozen
from ..model.specs import ScenarioSpec
from .world import World


def make_rng(seed: int) -> np.random.Generator:
    """The run's random generator for ``seed`` (PCG64, stable across numpy versions)."""
    return np.random.Generator(np.random.PCG64(seed))


class Simulation:
    """A loaded scenario in motion.

    Args:
        scenario: What to simulate.
        seed: Seed for noise and lost data; defaults to the scenario's ``[SETTINGS] seed``.
        dt: Physics step, s; defaults to the scenario's.
    """

    def __init__(self, scenario: ScenarioSpec, seed: int | None = None,
                 dt: float | None = None) -> None:
        self.scenario = scenario
        self.seed = scenario.settings.seed if seed is None else seed
        self.dt = scenario.settings.dt if dt is None else dt
        if not 0.0005 <= self.dt <= 0.1:
            raise SimulationError(f"dt must be between 0.0005 and 0.1 s, not {self.dt}")
        self.reset()

    def reset(self, scenario: ScenarioSpec | None = None) -> None:
        """Rebuild from the scenario (or a new one) and re-seed: the run starts over."""
        if scenario is not None:
            World(scenario)  # validate fully before dropping the current run
            self.scenario = scenario
        self.world = World(self.scenario)
        self.rng = make_rng(self.seed)
        self.step = 0
        self.time = 0.0
        self.table, self.params, self.sensors = BodyTable(), ParamTable(), Sensors()
        self._names: tuple[str, ...] = ()
        self._index: dict[str, int] = {}
        self.wheel_cmd = np.zeros((0, 2))
        self._sync_layout()
        self.snapshot = self._snapshot(self.table.read(self.world.space), self._zero_readings())

    # -- the phases, in the order the stepper runs them ---------------------------------------

    def command(self, commands: Mapping[str, tuple[float, float]]) -> None:
        """Commands phase: store new wheel-speed commands (m/s) by robot name; others persist."""
        self._sync_layout()
        for name, (left, right) in commands.items():
            i = self._index.get(name)
            if i is not None:
                self.wheel_cmd[i] = (left, right)

    def actuate(self) -> np.ndarray:
        """Actuators phase: set the control bodies' velocities; return wheel speeds driven."""
        space = self.world.space
        state = self.table.read(space)
        velocities, wheels = drive(state, self.table, self.wheel_cmd,
                                   self.params.values["motors"])
        self.table.write_velocities(space, velocities)
        return wheels

    def physics(self) -> None:
        """Physics phase: advance the space by dt."""
        self.world.space.step(self.dt)
        self.step += 1
        self.time = self.step * self.dt

    def sense(self, wheels: np.ndarray) -> Snapshot:
        """Sensors phase: measure every module and freeze the result as the new snapshot."""
        state = self.table.read(self.world.space)
        readings = self.sensors.sense(self.world, self.table, self.params, state, wheels,
                                      self.dt, self.rng)
        self.snapshot = self._snapshot(state, readings)
        return self.snapshot

    # -- between steps ------------------------------------------------------------------------

    def set_param(self, robot: str, module: str, name: str, value: object):
        """Set a module parameter (validated); return the stored value."""
        stored = self.world.set_param(robot, module, name, value)
        self.params.refresh(self.world)
        return stored

    def zero_reading(self, robot: str, module: str) -> None:
        """Set one robot's last reading of ``module`` to zeros (odometry reset)."""
        self.sensors.zero(module, self.snapshot.robot_index(robot))

    def relayout(self) -> None:
        """Call after inserting or removing anything: the snapshot then shows the new layout
        (readings carried over, nothing measured, no random draw) before the next step."""
        self._sync_layout()
        self.snapshot = self._snapshot(self.table.read(self.world.space),
                                       self.sensors.carried(self.world))

    def _sync_layout(self) -> None:
        self.table.refresh(self.world)
        self.params.refresh(self.world)
        names = tuple(r.name for r in self.world.robots)
        if names != self._names:
            old = {n: self.wheel_cmd[i] for i, n in enumerate(self._names)}
            self.wheel_cmd = np.array([old.get(n, (0.0, 0.0)) for n in names],
                                      dtype=float).reshape(-1, 2)
            self._names = names
            self._index = {n: i for i, n in enumerate(names)}

    def _zero_readings(self) -> dict[str, np.ndarray]:
        return self.sensors.sense(self.world, self.table, self.params,
                                  self.table.read(self.world.space),
                                  np.zeros((len(self._names), 2)), self.dt, make_rng(self.seed))

    def _snapshot(self, state: np.ndarray, readings: dict[str, np.ndarray]) -> Snapshot:
        world = self.world
        chassis = state[self.table.chassis]
        objects = tuple(world.objects)
        obj_poses = [(o.body.position.x, o.body.position.y, o.body.angle)
                     for o in world.objects.values()]
        bars = tuple(world.bars)
        bar_poses = [(b.position.x, b.position.y, b.angle) for b, _ in world.bars.values()]
        n_targets = len(world.targets)
        return Snapshot(
            step=self.step, time=self.time, robots=self._names,
            poses=frozen(chassis[:, :3].copy()), velocities=frozen(chassis[:, 3:6].copy()),
            commands=frozen(self.wheel_cmd.copy()),
            readings={k: frozen(v) for k, v in readings.items()},
            fields={k: m.field_names(n_targets) for k, m in MODULES.items()},
            objects=objects, object_poses=frozen(np.array(obj_poses, float).reshape(-1, 3)),
            bars=bars, bar_poses=frozen(np.array(bar_poses, float).reshape(-1, 3)),
            targets=tuple(world.targets), layout_version=world.layout_version,
            index=self._index)
