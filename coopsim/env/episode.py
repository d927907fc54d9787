"""An episode over one scenario, in-process: the engine under the Gymnasium and PettingZoo
environments (no Gymnasium or PettingZoo imported here).

It owns a :class:`~coopsim.sim.simulation.Simulation` and a lockstep
:class:`~coopsim.sim.stepper.Stepper` that is never started: every step is ``Stepper.tick()``
on the caller's thread, exactly as ``coopsim sweep`` runs a point. Actions are written straight
into the simulation's command arrays (what a network ``set_speeds`` stores, checked against the
action space first), so a step costs one tick plus a few array reads.
"""

from __future__ import annotations

import operator
from typing import Callable, Mapping, Sequence

import numpy as np

from ..model.snapshot import metric_values
from ..model.specs import ScenarioSpec
from ..model.task import TaskSpec
from ..model.validate import members, python_function
from .lean import lean as lean_scenario
from .mapping import AgentMap, LearningError, agent_map, plain_actions

#: A task given in Python: (snapshot, agent) -> (reward, terminated, truncated).
TaskFn = Callable[[object, str], tuple]


def load(scenario) -> ScenarioSpec:
    """A ScenarioSpec from a spec or a path (a bad file raises FileFormatError); a relative
    path that is not in the current folder is looked for among the bundled files, as
    ``coopsim run`` does."""
    if isinstance(scenario, ScenarioSpec):
        return scenario
    from ..formats.files import load_scenario
    from ..model.bundled import resolve

    return load_scenario(resolve(str(scenario)))


def select_agents(scenario: ScenarioSpec, robot=None, team=None) -> tuple[str, ...]:
    """The agents' network names: ``robot`` (a name or a list), the robots of squad or team
    ``team``, or every robot of the scenario.

    Raises:
        LearningError: a robot or team the scenario does not have.
    """
    everyone = tuple(members(scenario))
    if robot is not None:
        names = (robot,) if isinstance(robot, str) else tuple(robot)
        for name in names:
            if name not in everyone:
                raise LearningError(f"scenario {scenario.name} has no robot {name!r} "
                                    f"(robots: {', '.join(everyone) or 'none'})")
        return names
    if team is not None:
        squads = [s for s in scenario.squads if team in (s.name, s.team)]
        if not squads:
            known = sorted({s.name for s in scenario.squads} | {s.team for s in scenario.squads
                                                              if s.team})
            raise LearningError(f"scenario {scenario.name} has no team or squad {team!r} "
                                f"(known: {', '.join(known) or 'none'})")
        return tuple(dict.fromkeys(r for s in squads for r in s.robots))
    return everyone


def undriven(agents, robot) -> None:
    """Refuse an agent (``robot(name)``: its robot in the environment's world) with a
    driver (every environment, one copy or a batch).

    Raises:
        LearningError: names the agent.
    """
    for a in agents:
        if robot(a).driver:
            raise LearningError(f"robot {a} has a driver in the scenario; an agent is driven "
                                "by actions only (remove its 'driver' line)")


def resolve_task(scenario: ScenarioSpec, task) -> TaskSpec | TaskFn:
    """The episode's task: ``task`` (a callable, or ``"module:function"``), else the
    scenario's ``[TASK]``, else an empty task (reward 0; ends with the run or its duration)."""
    if callable(task):
        return task
    if isinstance(task, str):
        return python_function(task)
    if task is not None:
        raise LearningError(f"task must be a callable or 'module:function', got {task!r}")
    return scenario.task if scenario.task is not None else TaskSpec()


class Episode:
    """One scenario stepped by actions.

    Args:
        scenario: A ScenarioSpec or a path to a ``.scenario`` file.
        agents: Network names of the robots driven by actions.
        observe: Module labels each agent observes (None: all with readings).
        task: See :func:`resolve_task`.
        engine: Physics engine label (None: the scenario's).
        seed: Default seed (None: the scenario's).
        lean: The agents' robots carry only the observed modules and their motion module
            (nothing else is sensed for them); needs ``observe``.
    """

    def __init__(self, scenario, agents: Sequence[str], observe=None, task=None,
                 engine: str | None = None, seed: int | None = None,
                 lean: bool = False) -> None:
        from ..sim.simulation import Simulation
        from ..sim.stepper import Stepper

        self.scenario = load(scenario)
        if lean:
            if observe is None:
                raise LearningError("lean environments need observe: the modules to keep")
            sections = {spec.name for name, (spec, _) in members(self.scenario).items()
                        if name in agents}
            self.scenario = lean_scenario(self.scenario, observe, sections)
        self.task = resolve_task(self.scenario, task)
        self.sim = Simulation(self.scenario, seed=seed, engine=engine)
        self.stepper = Stepper(self.sim, mode="lockstep", speed=0)
        self.agents = tuple(agents)
        self.maps: dict[str, AgentMap] = {a: agent_map(self.sim.world, a, observe)
                                          for a in self.agents}
        undriven(self.agents, self.sim.world.robot)
        if isinstance(self.task, TaskSpec):
            self._metrics = {t.metric for t in self.task.rewards + self.task.ends if t.metric}
        self.truncate_at = self._truncate_at()
        self._values: tuple = (None, {})  # (the rules' fields, their metric values)
        # agents whose motion module stores an action as it is: written in place (act_one)
        self._plain = {a: plain_actions(m.motion) for a, m in self.maps.items()}
        self._rows = {a: _PlainRow(m) for a, m in self.maps.items() if self._plain[a]}
        self._terms = {a: self._agent_terms(a) for a in self.agents}

    def _agent_terms(self, agent: str) -> tuple:
        """``agent``'s reward terms as (weight, metric) and the task's metric endings as
        (metric, comparison, threshold) (a Python task: none), worked out once: the step only
        reads the values. ``terminate ended`` needs no term: :meth:`outcome` ends on ``ended``
        before it reads one, and a term without a metric holds only then
        (:meth:`~coopsim.model.task.EndTerm.holds`); a reward term without a metric adds 0."""
        if callable(self.task):
            return (), ()
        return (tuple((t.weight, t.metric) for t in self.task.rewards
                      if t.robot in ("", agent) and t.metric),
                tuple((t.metric, _COMPARE[t.op], t.value) for t in self.task.ends if t.metric))

    def _truncate_at(self) -> float | None:
        if isinstance(self.task, TaskSpec) and self.task.truncate is not None:
            return self.task.truncate
        return None if callable(self.task) else self.scenario.settings.duration

    # -- episode ----------------------------------------------------------------------------------

    def reset(self, seed: int | None = None):
        """Start over with ``seed`` (None: the current seed); return the first snapshot."""
        if seed is not None:
            self.sim.seed = int(seed)
        with self.stepper.world_lock:
            return self.stepper.reset()

    def act(self, actions: Mapping[str, object]) -> None:
        """Check and store every agent's action (an agent left out keeps its last command).

        Raises:
            ActionError: an action outside its agent's space or of the wrong shape.
            LearningError: an agent this episode does not drive.
        """
        rows = []
        for name, action in actions.items():
            amap = self.maps.get(name)
            if amap is None:
                raise LearningError(f"{name!r} is not an agent of this environment (agents: "
                                    f"{', '.join(self.agents)})")
            rows.append((name, amap, *self._checked(name, amap, action)))
        for name, amap, row, plain in rows:  # all checked first: a bad one stores none
            self._store(name, amap, row, plain)

    def act_one(self, name: str, action) -> None:
        """:meth:`act` for one agent (the single-agent environment's step: no dict, and an
        action a module stores as it is written into the command table in place)."""
        row = self._rows.get(name)
        if row is not None and type(action) is np.ndarray and action.dtype is _F64 \
                and action.shape == row.shape:  # the common case, checked on Python floats
            for v, low, high in zip(action.tolist(), row.lows, row.highs):
                if not low <= v <= high:  # NaN is outside too
                    row.amap.check_bounds(action)  # raises, naming the value and the bound
            table = self.sim.commands[row.motion]  # looked up each step: CommandTables notes it
            i = self.sim.robots.index[name]
            if row.width == table.shape[1]:
                table[i] = action
            else:
                self._store(name, row.amap, action, True)
            return
        amap = self.maps.get(name)
        if amap is None:
            self.act({name: action})  # raises, naming the agents
        self._store(name, amap, *self._checked(name, amap, action))

    def _checked(self, name: str, amap: AgentMap, action) -> tuple:
        """(what to store, plain): the checked float64 action itself when its module stores
        actions as they are (:func:`~.mapping.plain_actions`; plain True), else the command
        row (``AgentMap.command``)."""
        if self._plain[name] and type(action) is np.ndarray and action.dtype == np.float64 \
                and action.shape == amap.action_low.shape:
            amap.check_bounds(action)
            return action, True
        return amap.command(action), False

    def _store(self, name: str, amap: AgentMap, row, plain: bool) -> None:
        table = self.sim.commands[amap.motion]  # looked up each step: CommandTables notes it
        i = self.sim.robots.index[name]
        if plain:  # the same values as from_action's tuple, with no tuple in between
            width = row.shape[0]
            table[i, :width] = row
            if width < table.shape[1]:
                table[i, width:] = 0.0  # zero-padded, as from_action pads
        else:
            table[i] = row

    def tick(self):
        """One step of the simulation (``Stepper.tick``); its snapshot. The world lock is
        held as a started stepper's loop holds it (servers of a ``human`` view run their calls
        under it)."""
        with self.stepper.world_lock:
            return self.stepper.tick()

    # -- reading the snapshot ---------------------------------------------------------------------

    def observation(self, snap, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation: module label -> a copy of its reading (float64)."""
        i, readings = snap.index[agent], snap.readings
        return {label: readings[label][i].astype(np.float64)  # a copy, as np.array's
                for label in self.maps[agent].observe}

    def flat_observation(self, snap, agent: str) -> np.ndarray:
        """The agent's observation as one float64 vector, its modules in ``observe`` order
        (one copy made from the snapshot's rows: no dict, no copy per module)."""
        i, readings = snap.index[agent], snap.readings
        return np.concatenate([readings[label][i] for label in self.maps[agent].observe],
                              dtype=np.float64)

    def metrics(self, snap) -> dict:
        """Metric name -> value in ``snap`` (:func:`~coopsim.model.snapshot.metric_values`),
        gathered once per step: the reward, the ending and ``info`` all read them."""
        if self._values[0] is not snap.rules:
            self._values = (snap.rules, metric_values(snap.rules))
        return self._values[1]

    def outcome(self, snap, agent: str, values: Mapping | None = None
                ) -> tuple[float, bool, bool]:
        """(reward, terminated, truncated) of ``agent`` after the step that made ``snap``;
        ``values``: the step's metric values when the caller gathered them already
        (:meth:`metrics`' mapping)."""
        ended = self.sim.ended
        if callable(self.task):
            reward, terminated, truncated = self.task(snap, agent)
            return float(reward), bool(terminated) or bool(ended), bool(truncated)
        if values is None:
            values = self.metrics(snap) if self._metrics else _NO_VALUES
        rewards, ends = self._terms[agent]
        reward = 0.0
        for weight, metric in rewards:
            v = values.get(metric)
            if v is not None and (v := float(v)) == v:  # a missing or NaN metric adds 0
                reward += weight * v  # (skipping "+ 0.0" keeps the bits: reward is never -0)
        terminated = bool(ended)
        if not terminated:
            for metric, compare, threshold in ends:
                v = values.get(metric)
                if v is not None and compare(float(v), threshold):  # NaN compares false
                    terminated = True
                    break
        truncated = (not terminated and self.truncate_at is not None
                     and snap.time >= self.truncate_at - 1e-9)
        return reward, terminated, truncated


_NO_VALUES: Mapping = {}  # a task that names no metric reads none
_F64 = np.dtype(np.float64)
#: ``terminate METRIC OP VALUE``'s comparisons (:data:`~coopsim.model.task.OPERATORS`).
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


class _PlainRow:
    """What :meth:`Episode.act_one` needs to check and store an action a module stores as
    it is (:func:`~.mapping.plain_actions`), read off the agent's map once."""

    __slots__ = ("amap", "motion", "shape", "width", "lows", "highs")

    def __init__(self, amap: AgentMap) -> None:
        self.amap, self.motion = amap, amap.motion
        self.shape, self.width = amap.action_low.shape, amap.action_low.shape[0]
        self.lows, self.highs = amap.action_low.tolist(), amap.action_high.tolist()
