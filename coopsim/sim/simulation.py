"""A Simulation: one scenario, one seed, its World, its drivers and rules, and its time.

It offers the phases the stepper runs in order -- commands, actuators, physics, sensors, rules --
and the operations the network asks for between steps (insert, remove, parameters, reset). Only
the stepper thread calls it. Same scenario + same seed + same commands at the same steps -> the
same run, bit for bit.
"""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ..model.compiled import load_pending
from ..model.errors import ParameterError, SimulationError
from ..model.module import Frame
from ..model.kernel import read_only
from ..model.plugins import CARRIED, MODULES, carried_modules
from ..model.snapshot import Snapshot
from ..model.specs import ScenarioSpec, check_dt
from ..model.validate import rate_problem
from .access import Access
from .drivers import DriverHost
from .external import ExternalRobots
from .health import Health
from .rules import RuleHost
from .sensing import CommandTables, ParamTable, RobotTable, Sensors
from . import fused
from .plan import StepPlan
from .snapshots import SnapshotMaker, with_rules
from .states import StateTables
from .world import World, collector_held


log = logging.getLogger(__name__)


def make_rng(seed: int) -> np.random.Generator:
    """The run's random generator for ``seed`` (PCG64, stable across numpy versions)."""
    return np.random.Generator(np.random.PCG64(seed))


class Simulation:
    """A loaded scenario in motion.

    Args:
        scenario: What to simulate.
        seed: Seed for noise, lost data and drivers; defaults to the scenario's.
        dt: Physics step, s; defaults to the scenario's.
        engine: Physics engine label; defaults to the scenario's ``[SETTINGS] engine``, else
            the default engine (``Engine.default``).
        caster: Ray caster for the sensing phase (default: :class:`~coopsim.raycast.AutoCaster`).

    Raises:
        SimulationError, ParameterError, RegistryError: the scenario cannot be built (see
            :class:`~coopsim.sim.world.World`) or ``dt`` is outside the accepted range.

    Attributes:
        engine: The label of the engine it runs on.
        step: Steps taken since load or reset. time: Simulated time, s (summed over steps, so a
            change of dt does not rewrite the past).
        extra: The run's board, emptied by a reset: per-run state of plugins that need some
            (the radio's queues), touched on the stepper thread only, and handed to modules as
            ``Frame.extra``. Each snapshot carries the entries whose names do not start with
            ``_`` (``Snapshot.extra``): those values must be immutable. The simulation keeps
            ``map`` (a :class:`~coopsim.model.specs.MapSpec`), ``squads`` (the scenario's
            SquadSpecs) and ``held`` (robot -> the object it holds, :meth:`attach`) up to date
            with the layout; ``diverged`` (robot name -> :class:`~coopsim.sim.health.Mark`)
            once a robot has diverged and been contained.
    """

    def __init__(self, scenario: ScenarioSpec, seed: int | None = None,
                 dt: float | None = None, engine: str | None = None, caster=None) -> None:
        # In two steps, each once: the world built from the scenario, then the run started
        # on it (the start a reset makes too).
        self.scenario = scenario
        self.seed = scenario.settings.seed if seed is None else seed
        self._caster = caster
        self.sensors: Sensors | None = None  # made at the start; it outlives resets
        with collector_held():
            world = World(scenario, engine)
            self._start(world, _checked_dt(scenario.settings.dt if dt is None else dt))

    def set_dt(self, dt: float) -> None:
        """Change the physics step from the next step on (the time so far is kept).

        Raises:
            SimulationError: outside :data:`~coopsim.model.specs.DT_RANGE`.
        """
        self.dt = _checked_dt(dt)
        self._t0, self._k0 = self.time, self.step
        self._access = Access(self.world, self.dt)

    def reset(self, scenario: ScenarioSpec | None = None, world: World | None = None) -> None:
        """Rebuild from the scenario (or a new one) and re-seed: the run starts over.

        Args:
            scenario: A new scenario to load (else the current one starts over).
            world: ``scenario``'s world from :meth:`build`, built beforehand on another thread
                (a large map's walls take seconds to build: a load must not stop the stepper
                for them).
        """
        if scenario is not None and world is None:
            world = self.build(scenario)  # validate fully before dropping the current run
        saved = dict(self.__dict__)  # a start that fails leaves the old run as it was
        try:
            if scenario is not None:
                self.scenario = scenario
            version = self.world.layout_version + 1
            kept = self._params_kept() if world is None else None  # the same scenario again
            with collector_held():
                if world is None:
                    world = World(self.scenario, self.engine, version)
                world.layout_version = version
                self._start(world, self.dt, kept)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _start(self, world: World, dt: float, params: ParamTable | None = None) -> None:
        """Start the run on a newly built ``world``: time 0, the seed's generator, the
        scenario's rules and drivers, the tables laid out (``params``: the last run's
        parameter table, which ``world`` lays out alike: :meth:`_params_kept`), readings
        measured afresh (with a generator of their own, so the run's draws start at the
        step) into the first snapshot. The kernels the world's modules registered are
        loaded first (compiled once, said on stderr: :mod:`coopsim.model.compiled`), so the
        run steps compiled from its first step."""
        load_pending(world.labels())
        self.world, self.engine, self.dt = world, world.engine_label, dt
        self.rng = make_rng(self.seed)
        self._access = Access(world, dt)  # stateless: one per world, engine and dt
        self.step, self.time, self._t0, self._k0 = 0, 0.0, 0.0, 0
        self.robots, self.params = RobotTable(), ParamTable() if params is None else params
        last = None if params is None else params.key  # the key the last run's plans hold
        if params is not None:  # up to date with the new world: nothing gathered again
            params.key = (world.layout_version, world.param_epoch)
        self._plan: StepPlan | None = None
        self.step_path = ""  # the last plan's path, one line (StepPlan.path)
        self._fusing = False  # this step takes the plan's composed calls (sim/fused.py)
        self._sensed: tuple | None = None  # (key, frame) of the last sensing phase
        self._moves = 0  # bodies moved between steps from outside (moved())
        self.snapshots = SnapshotMaker()  # builds this run's snapshots (sim/snapshots.py)
        # The caster (its static shapes binned) lives as long as the simulation: a reset to
        # the same walls bins nothing again.
        self.sensors = Sensors(self._caster, self.sensors, (self.params, last))
        self.commands: dict[str, np.ndarray] = CommandTables()
        self.actuated: dict = {}
        self.extra: dict = {}
        self._new_states()
        self.health = Health()  # the robots contained so far (extra["diverged"])
        self.external = ExternalRobots([s.spec for s in world.sections.values()], world.floor)
        self.rules = RuleHost(self.scenario)
        self.drivers = DriverHost(self)
        self._sync_layout()
        frame = self._remember(self._frame(world.engine.robot_state(), {}, geometry=True))
        zero = self.sensors.sense(world, self.params, frame, make_rng(self.seed))
        self.snapshot = self.snapshots.make(self, frame, zero)
        self.plan()  # its path known from the start (step_path); composed calls compile now
        self._built = self.params.key  # the world's layout and parameters as built

    def _params_kept(self) -> ParamTable | None:
        """The parameter table, when a world built again from the same scenario lays out the
        same one (a reset then gathers no module's values again): since the run
        started, nothing was inserted or removed and no parameter was set (the world's layout
        version and parameter epoch as built), and no module kind was registered."""
        params, world = self.params, self.world
        if params.key != self._built or params.key != (world.layout_version,
                                                       world.param_epoch):
            return None
        return params if params.modules == MODULES.items() else None

    def build(self, scenario: ScenarioSpec) -> World:
        """``scenario``'s world for this simulation's engine, its rules checked: what
        :meth:`reset` takes; touches nothing of the running simulation (any thread).

        Raises:
            CoopsimError: the scenario cannot be built.
        """
        world = World(scenario, self.engine)
        RuleHost(scenario)
        # the engine's model compiled here (MuJoCo's mesh decoders run now), so that nothing
        # it refuses is found only once the running world has been replaced
        world.engine.robot_state()
        # the kernels its modules registered loaded here too (compiled, on a cold cache: for
        # minutes), not on the stepper's thread as the world replaces the running one: a
        # /sim load builds on a thread of its own, and the run steps on meanwhile
        load_pending(world.labels())
        return world

    def restore_layout(self) -> None:
        """Bodies back to the scenario's initial layout while the clock goes on (a timed
        event's ``reset``; :meth:`reset` starts the whole run over instead).

        Robots, objects and targets are as at load; commands are zeroed and readings measured
        afresh (odometry restarts at 0); drivers start over (new instances with their current
        parameter values, ``setup`` again, generators seeded as at load); module and driver
        parameters keep their values; the run's generator, the rules, step and time go on.
        """
        self.world.restore_layout(self.scenario)
        self._access = Access(self.world, self.dt)  # the world has a new engine
        self.sensors = Sensors(self._caster, self.sensors)
        self.robots, self.commands, self.actuated = RobotTable(), CommandTables(), {}
        self._new_states()
        self.drivers = DriverHost(self)
        self._sync_layout()
        frame = self._remember(self._frame(self.world.engine.robot_state(), {}, geometry=True))
        readings = self.sensors.sense(self.world, self.params, frame, self.rng)
        self.snapshot = self.snapshots.make(self, frame, readings)

    # -- the phases, in the order the stepper runs them -------------------------------------------

    def command(self, taken: Mapping[tuple[str, str], tuple]) -> None:
        """Commands phase: rules' ``before_step``, the network's new commands (by robot and
        module; others persist), then the in-process drivers."""
        self._sync_layout()
        self.rules.before(self)
        for (robot, module), values in taken.items():
            i = self.robots.index.get(robot)
            if i is not None and module in self.commands:
                self.commands[module][i] = values
        self.drivers.run(self)

    def set_command(self, index: int, module: str, values) -> None:
        """Store a robot's command for a module (drivers; on the stepper thread)."""
        self.commands[module][index] = values

    def actuate(self) -> None:
        """Actuators phase: every module with commands that some robot carries acts on the
        engine (the plan's actuators, :class:`~coopsim.sim.plan.StepPlan`), from the state
        the last sensing phase read when nothing moved a body since (:meth:`moved`)."""
        plan = self.plan()
        # (the external robots' tracks read, not its __bool__: no Python call a step)
        self._fusing = plan.fused is not None and not self.external.tracks
        self.actuated = {}
        if self._fusing:  # the composed step acts inside the physics phase's call
            if plan.before:  # the acting kinds with no kernel: stages before its call
                self._act(plan.before)
            return
        self._act(plan.actuators)

    def _act(self, actuators: tuple) -> None:
        """The ``actuators`` (plan entries) act on the engine, in order."""
        frame = self._acting_frame()
        commands = self.commands
        for label, module, rows, values, every in actuators:
            table = commands[label]
            self.actuated[label] = module.actuate(frame, rows, values,
                                                  read_only(table if every else table[rows]))

    @property
    def access(self):
        """The modules' access to this world's engine (a
        :class:`~coopsim.model.module.PhysicsAccess`: ``frame.physics``)."""
        return self._access

    def plan(self) -> StepPlan:
        """This step's :class:`~coopsim.sim.plan.StepPlan`, worked out again only when the
        layout or a parameter changed."""
        key = (id(self.params), self.params.key)
        if self._plan is None or self._plan.key != key:
            self._plan = StepPlan.build(key, self.params, self.commands, len(self.robots.names),
                                        self.sensors, self.world)
            load_pending(self.world.labels())  # a robot of a kind new to the run
            prepare = getattr(self._plan.fused, "prepare", None)
            if prepare is not None:  # the composed calls compiled before the first step
                prepare(self)
            self.step_path = self._plan.path
        return self._plan

    def moved(self) -> None:
        """Say that something moved bodies between steps outside the simulation's own calls
        (``engine.reset_rows`` by a batched world): the next actuators phase reads the state
        again instead of the last sensing phase's."""
        self._moves += 1

    def _remember(self, frame: Frame) -> Frame:
        """Keep a sensing frame for the next actuators phase (see :meth:`_acting_frame`)."""
        self._sensed = ((self.step, self.world.layout_version, id(self.world.engine),
                         self._moves), frame)
        return frame

    def _acting_frame(self) -> Frame:
        """The actuators' frame: the last sensing frame's state, geometry and contacts (the
        bodies have not moved since), with this step's commands, time and an empty board of
        results; a new read when the layout, the engine or a body moved."""
        key = (self.step, self.world.layout_version, id(self.world.engine), self._moves)
        last = self._sensed
        if last is None or last[0] != key:
            return self._frame(self.world.engine.robot_state(), {}, geometry=True)
        old = last[1].__dict__
        frame = object.__new__(Frame)
        frame.__dict__.update(old)
        frame.__dict__.update(dt=self.dt, commands=self.commands, actuated={}, memo={},
                              noise=None, physics=self._access, extra=self.extra,
                              _deferred=dict(old.get("_deferred", {})))
        return frame

    def physics(self) -> None:
        """Physics phase: advance the engine by dt; a robot the engine found diverged is
        contained (:mod:`coopsim.sim.health`; the other engines' robots at :meth:`sense`)."""
        self.external.apply(self)  # external robots where their poses say
        if not self._fusing:
            self.world.engine.step(self.dt)
        self.step += 1
        self.time = self._t0 + (self.step - self._k0) * self.dt
        self.health.vouched = False  # until a fused call checks this step's state itself
        if self._fusing:  # actuators, the engine's step and the sensors in one call
            self._fusing = fused.physics(self, self._plan.fused)
        self.health.after_step(self)

    def sense(self) -> Snapshot:
        """Sensors phase: measure every module and freeze the result as the new snapshot
        (with the engine's warnings: ``extra["engine_warnings"]``, each logged once)."""
        notes = self.world.engine.warnings()
        if notes is not self.extra.get("engine_warnings", ()):
            for note in notes[len(self.extra.get("engine_warnings", ())):]:
                log.warning("%s", note)
            self.extra["engine_warnings"] = notes
        state = self.world.engine.robot_state()
        if not self.health.vouched:  # else the fused step's own call checked it: no call
            state = self.health.checked(self, state)
        self.health.vouched = False
        if self._fusing:
            engine = self.world.engine  # the full state on a 3D engine, as _frame takes it
            readings, frame = fused.sense(self, self._plan.fused, state,
                                          engine.state3d() if "flight" in engine.features
                                          else None, self._plan.after)
        else:
            frame = self._frame(state, self.actuated, geometry=True)
            self._remember(frame)
            readings = self.sensors.sense(self.world, self.params, frame, self.rng)
        self.snapshot = self.snapshots.make(self, frame, readings)
        return self.snapshot

    def apply_rules(self) -> Snapshot:
        """Rules phase: every rule's ``after_step``; their fields join the snapshot."""
        if self.rules.rules:
            self.rules.after(self, self.snapshot)
            self.snapshot = with_rules(self.snapshot, self.rules.fields())
        return self.snapshot

    @property
    def ended(self) -> str:
        """Why a rule ended the run ("" while it goes on)."""
        return self.rules.ended

    def close(self) -> None:
        """End the processes the engine runs for this world (mujoco's camera render process)
        now rather than when the simulation is dropped. The simulation stays usable: a later
        image starts them again."""
        self.world.engine.close()

    # -- between steps ----------------------------------------------------------------------------

    def set_param(self, robot: str, module: str, name: str, value: object):
        """Set a module or driver parameter (validated); return the stored value."""
        if module == "driver":
            return self.drivers.set_param(robot, name, value)
        problem = rate_problem(value, self.dt) if name == "rate" else None
        if problem:
            raise ParameterError(problem)
        stored = self.world.set_param(robot, module, name, value)
        self.params.refresh(self.world)
        return stored

    def attach(self, robot: str, obj: str, kind: str = "weld") -> None:
        """Hold object ``obj`` on robot ``robot``'s chassis from the next step on (``pin``: it
        may turn about the contact point; ``weld``: rigidly), in either engine; the snapshot
        shows it at once (``extra["held"]``). Call between steps (a module's ``act``).

        Raises:
            SimulationError: see :meth:`coopsim.sim.world.World.attach`.
        """
        self.world.attach(robot, obj, kind)
        self.relayout()

    def detach(self, robot: str) -> str:
        """Let go of what ``robot`` holds; return the object's name ("" when nothing)."""
        obj = self.world.detach(robot)
        if obj:
            self.relayout()
        return obj

    def zero_reading(self, robot: str, module: str) -> None:
        """Set one robot's last reading of ``module`` to zeros (odometry reset); the next step
        builds on it (:meth:`relayout` shows it at once)."""
        self.sensors.zero(module, self.snapshot.robot_index(robot))

    def relayout(self) -> None:
        """Call after inserting or removing anything: the snapshot then shows the new layout
        (readings carried over, nothing measured, no random draw) before the next step."""
        self._sync_layout()
        # robots inserted at run time may be external: their streams are followed from now
        self.external.follow([s.spec for s in self.world.sections.values()])
        frame = self._frame(self.world.engine.robot_state(), self.actuated, geometry=False)
        carried = self.sensors.carried(self.world)
        if "taken" in self.extra:  # laid out for the new robots too (coopsim.sim.rates)
            self.extra["taken"] = self.sensors.rates.published()
        self.snapshot = self.snapshots.make(self, frame, carried)

    def _new_states(self) -> None:
        """Fresh per-kind state tables (a start, a restored layout); also on the board as
        ``_states``, so that a contained robot's state starts over (coopsim.sim.health)."""
        self.states = self.extra["_states"] = StateTables()

    def _sync_layout(self) -> None:
        old = self.robots.index
        if self.extra.get("map") is None or self.extra["map"].version != self.world.layout_version:
            self.extra["map"] = self.world.map_spec()
            self.extra["squads"] = self.world.squads
            self.extra["held"] = MappingProxyType({r: o for r, (o, _) in self.world.held.items()})
            # the modules the state stream and /sim state carry columns of (protocol 8)
            self.extra[CARRIED] = carried_modules(r.modules for r in self.world.robots)
        if self.robots.refresh(self.world):
            names = self.robots.names
            self.commands = CommandTables({
                label: _carry(self.commands.get(label), old, names, len(m.command_fields))
                for label, m in MODULES.items() if m.command_fields})
            self.states.layout(names)
            self.drivers.sync(self)
        self.params.refresh(self.world)

    def _frame(self, state: np.ndarray, actuated: dict, geometry: bool = False) -> Frame:
        """The modules' frame over the robot ``state`` (N, 6): read-only views of it; the ray
        geometry and contacts built when first read (``geometry`` False: none, a relayout's
        frame for the snapshot)."""
        access = self._access  # made anew with each world, engine and dt (_start, set_dt...)
        state = state.view()
        state.setflags(False)  # write=False; a view: the engine's own array stays writable
        state3d = None
        if "flight" in self.world.engine.features:  # a 3D world: the full state too
            state3d = self.world.engine.state3d().view()
            state3d.setflags(False)  # write=False
        if geometry:
            return self.sensors.frame(self.world, state, self.robots, self.commands, actuated,
                                      self.dt, access, extra=self.extra, step=self.step,
                                      time=self.time, states=self.states, state3d=state3d)
        t = self.robots
        return Frame(self.dt, state[:, :3], state[:, 3:6], t.radius, t.axle, t.group,
                     self.commands, actuated, np.zeros((0, 2)), np.zeros((len(state), 2)),
                     None, access, self.extra, self.step, t.names, time=self.time,
                     state3d=state3d, states=self.states)


def _checked_dt(dt: float) -> float:
    """``dt`` (s) as a float.

    Raises:
        SimulationError: it is no acceptable physics step (DT_RANGE).
    """
    why = check_dt(dt)
    if why:
        raise SimulationError(why)
    return float(dt)


def _carry(old: np.ndarray | None, old_index: dict, names: tuple, width: int) -> np.ndarray:
    """Commands laid out for ``names``, kept by name from ``old`` (new robots: zeros)."""
    out = np.zeros((len(names), width))
    if old is not None and old.shape[1] == width:
        for i, name in enumerate(names):
            j = old_index.get(name)
            if j is not None and j < len(old):
                out[i] = old[j]
    return out
