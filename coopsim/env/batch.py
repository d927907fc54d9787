"""K isolated copies of a scenario in one world, stepped as one batch with arrays
(docs/learning.md, "Batched worlds"). No Gymnasium here: :mod:`coopsim.env.vector` wraps it.

The copies are laid out on a grid in one big floor, each walled at its own floor's edges and
``gap`` metres (more than any sensor reaches) from its neighbours, so nothing one copy does is
seen or felt in another. One tick of the one simulation then runs the physics and the compiled
sensing over every robot of every copy at once: K copies cost one world of K times the robots,
not K worlds. Each copy has its own episode: a copy that ends is put back to its initial layout
(its robots moved back, their commands and remembered readings zeroed) while the others go on.
That reset moves the robots through the engine's public
:meth:`~coopsim.physics.engine.Engine.reset_rows`; the batch runs on the ``kinematic`` engine.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..formats.enginecheck import check_engine
from ..model.errors import FileFormatError
from ..model.plugins import engine_with
from ..model.snapshot import metric_values
from ..model.specs import MetricSpec, MonitorsSpec, ObjectSpec, ScenarioSpec
from ..model.task import TaskSpec
from ..model.validate import members, module_values, python_function
from . import memory
from .episode import load, resolve_task, undriven
from .lean import lean as lean_scenario
from .mapping import ActionError, LearningError, agent_map, plain_actions

WALL = 0.1  # m: thickness of the walls around each copy's floor


def sensed_reach(scenario: ScenarioSpec) -> float:
    """The farthest any robot's module senses or reaches, m: its ``max_range`` and ``range``
    parameters as the robot carries them (defaults, its type's, its ``param`` lines); 2 m at
    least."""
    reach = 2.0  # sonar default
    for spec, member in members(scenario).values():
        for values in module_values(spec, member.modules).values():
            for name, value in values.as_dict().items():
                if name in ("max_range", "range") and isinstance(value, (int, float)):
                    reach = max(reach, float(value))
    return reach


def copy_gap(scenario: ScenarioSpec, gap: float | None = None) -> float:
    """The distance between copies laid out on a grid, m: ``gap`` (:func:`checked_gap`), else
    twice the farthest :func:`sensed_reach` plus 1 m (no ray or contact of one copy reaches
    another)."""
    return 2 * sensed_reach(scenario) + 1.0 if gap is None else checked_gap(gap)


def checked_gap(gap) -> float:
    """``gap`` as a distance between copies, m.

    Raises:
        LearningError: not a finite number of metres, or less than the walls around two
            copies' floors (2 :data:`WALL`).
    """
    try:
        value = float(gap)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value >= 2 * WALL) or isinstance(gap, bool):
        raise LearningError(f"gap must be a distance between copies of {2 * WALL:g} m or more "
                            f"(the walls around their floors), got {gap!r}")
    return value


def replicate(scenario: ScenarioSpec, copies: int, gap: float | None = None,
              monitors: bool = True):
    """One scenario holding ``copies`` copies of ``scenario`` on a grid.

    Args:
        monitors: Copy the ``[MONITORS]`` metrics (``NAME__cK`` for copy K); without them the
            batch has no rule at all.

    Returns:
        (scenario, offsets (K, 2) m, names: per copy, original robot name -> its name there).

    Raises:
        LearningError: the scenario has rules, events or zones (they are not copied; its
            squads, which only network clients order, are dropped).
    """
    for what in ("rules", "events", "zones"):
        if getattr(scenario, what):
            raise LearningError(f"batched worlds copy robots, objects, targets and monitors; "
                                f"scenario {scenario.name} has {what}")
    floor = scenario.world.floor
    gap = copy_gap(scenario, gap)
    offsets, size = grid_offsets(floor, copies, gap)
    objects, robots, targets, metrics, names = [], [], [], [], []
    originals = members(scenario)
    for k, (dx, dy) in enumerate(offsets):
        rename = {n: f"c{k}_{n}" for n in originals}
        names.append(rename)
        things = {**{o.name: f"c{k}_{o.name}" for o in scenario.world.objects
                     + scenario.objects}, **rename}  # what a metric names, as copy k has it
        moved = lambda p: (p[0] + dx, p[1] + dy, p[2])  # noqa: E731
        objects += [replace(o, name=f"c{k}_{o.name}", position=moved(o.position))
                    for o in scenario.world.objects + scenario.objects]
        objects += _walls(k, dx, dy, floor)
        robots += [replace(r, name=f"c{k}_{r.name}", position=moved(r.position),
                           drivers=tuple(replace(d, settings=tuple(
                               (n, copy_named(v, things)) for n, v in d.settings))
                               for d in r.drivers))
                   for r in scenario.robots]
        targets += [replace(t, position=moved(t.position)) for t in scenario.targets]
        if scenario.monitors is not None and monitors:
            metrics += [MetricSpec(f"{m.name}__c{k}", m.kind,
                                   tuple(copy_named(a, things) for a in m.args), m.line)
                        for m in scenario.monitors.metrics]
    world = replace(scenario.world, floor=replace(floor, length=float(size[0]),
                                                  width=float(size[1])),
                    objects=tuple(o for o in objects if o.start))
    monitors = None if scenario.monitors is None or not monitors else MonitorsSpec(
        tuple(metrics), scenario.monitors.after, scenario.monitors.line)
    out = replace(scenario, world=world, robots=tuple(robots), targets=tuple(targets),
                  objects=tuple(o for o in objects if not o.start), squads=(),
                  monitors=monitors,
                  settings=replace(scenario.settings, engine=engine_with("batch")))
    return out, offsets, names


def grid_offsets(floor, copies: int, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """(offsets (K, 2), size (2,)), m: where each of ``copies`` copies of a ``floor`` lies on
    one big floor of ``size``, on a grid of near-square cells ``gap`` m apart, centred."""
    cols = math.ceil(math.sqrt(copies))
    rows = math.ceil(copies / cols)
    cell = np.array([floor.length + gap, floor.width + gap])
    size = cell * (cols, rows)
    offsets = np.array([((k % cols + 0.5) * cell[0] - size[0] / 2,
                         (k // cols + 0.5) * cell[1] - size[1] / 2) for k in range(copies)])
    return offsets, size


def copy_named(value, names: dict):
    """A metric's argument or a driver's setting as copy k has it: the name of one of the
    template's robots or objects becomes its name in the copy (``names``: ``c{k}_NAME``), so
    ``follow_leader``'s ``leader`` is copy k's leader; any other value is itself."""
    return names.get(value, value) if isinstance(value, str) else value


def _caster(base: ScenarioSpec, offsets: np.ndarray, gap: float | None):
    """The batch's :class:`~coopsim.env.batchcast.CopyCaster` (its copies' extent: the
    floor, its walls and a quarter of the gap)."""
    from .batchcast import CopyCaster

    floor = base.world.floor
    gap = copy_gap(base, gap)
    half = (floor.length / 2 + WALL + gap / 4, floor.width / 2 + WALL + gap / 4)
    return CopyCaster(offsets, half)


def _walls(k: int, dx: float, dy: float, floor) -> list[ObjectSpec]:
    """Four static boxes just outside copy ``k``'s floor edges."""
    hx, hy, t = floor.length / 2, floor.width / 2, WALL
    boxes = ((0, hy + t / 2, floor.length + 2 * t, t), (0, -hy - t / 2, floor.length + 2 * t, t),
             (hx + t / 2, 0, t, floor.width), (-hx - t / 2, 0, t, floor.width))
    return [ObjectSpec(f"c{k}_EDGE_{i}", "box", (sx, sy, 0.5), (dx + x, dy + y, 0.25),
                       color=(90, 90, 90)) for i, (x, y, sx, sy) in enumerate(boxes)]


def checked_actions(batch, actions) -> np.ndarray:
    """``actions`` as the (K, A, d) float array of ``batch`` (either backend: its ``copies``,
    ``agents``, ``maps``, ``motion``, ``action_low`` and ``action_high``).

    Raises:
        ActionError: wrong shape or a value outside its bound (names copy, agent, bound).
    """
    a = np.asarray(actions, dtype=np.float64)
    want = (batch.copies, len(batch.agents), batch.action_low.shape[1])
    if a.shape == (want[0], want[2]) and want[1] == 1:
        a = a[:, None, :]
    if a.shape != want:
        raise ActionError(f"batched actions have shape {np.shape(actions)}, the space has "
                          f"shape {want if want[1] > 1 else (want[0], want[2])}")
    if not ((a >= batch.action_low) & (a <= batch.action_high)).all():  # NaN fails too
        bad = ~((a >= batch.action_low) & (a <= batch.action_high))
        k, j, i = (int(v) for v in np.argwhere(bad)[0])
        field = batch.maps[j].action_fields[i]
        raise ActionError(f"copy {k} {batch.agents[j]}: action {field} = {float(a[k, j, i])!r}"
                          f" is outside the {batch.motion} bound [{batch.action_low[j, i]:g}, "
                          f"{batch.action_high[j, i]:g}]")
    return a


def template(scenario, copies: int, robots, observe, lean: bool):
    """(the scenario to copy, the agents' names) for a batch of ``copies``, as both backends
    check them: ``lean`` keeps only the observed and motion modules on the robots with no
    driver.

    Raises:
        LearningError: fewer than one copy, an unknown agent, lean without ``observe``, a
            scenario the batch engine cannot run (:func:`coopsim.formats.enginecheck.
            check_engine`'s sentence).
    """
    if copies < 1:
        raise LearningError(f"copies must be at least 1, got {copies}")
    base = load(scenario)
    found = members(base)
    everyone = tuple(found)
    if robots is None:  # the robots left to a learner; none: the first (refused as one env's)
        robots = tuple(n for n, (spec, _) in found.items() if not spec.drivers) or everyone[:1]
    agents = (robots,) if isinstance(robots, str) else tuple(robots)
    if not agents:
        raise LearningError("a batch needs at least one agent (robots names none)")
    for name in agents:
        if name not in everyone:
            raise LearningError(f"scenario {base.name} has no robot {name!r} "
                                f"(robots: {', '.join(everyone) or 'none'})")
    engine = engine_with("batch")
    try:
        check_engine(base, engine)
    except FileFormatError as why:  # a robot that flies, joints: its line and reason
        raise LearningError(f"batched worlds run on the {engine} engine alone, and it cannot "
                            f"run this scenario: {why}") from None
    if lean:
        if observe is None:
            raise LearningError("lean batched worlds need observe: the modules to keep")
        # a robot with a driver keeps its modules (its driver reads them), as in one env
        base = lean_scenario(base, observe, {r.name for r in base.robots if not r.drivers})
    return base, agents


def batch_motion(maps) -> str:
    """The motion module every agent's map (:class:`~coopsim.env.mapping.AgentMap`) names,
    as both backends check it.

    Raises:
        LearningError: the agents move by different modules, or by one that turns actions
            into commands of its own (``from_action``): a batch stores actions as they are.
    """
    motion = maps[0].motion
    if any(m.motion != motion for m in maps):
        raise LearningError("batched agents must share one motion module")
    if not plain_actions(motion):
        raise LearningError(f"batched worlds store actions as they are; {motion} "
                            "turns them into commands of its own (from_action)")
    return motion


def called_task(task, snap, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rewards (K, A), terminated (K,)) of a vectorized callable ``task(snap, rows)`` (its
    reward (K, A), (K,) or (K, 1): every agent of a copy the same)."""
    shape = rows.shape
    reward, terminated = task(snap, rows)
    reward = np.asarray(reward, dtype=np.float64)
    reward = reward.copy() if reward.shape == shape else np.broadcast_to(
        reward.reshape(shape[0], -1), shape).copy()
    return reward, np.asarray(terminated, dtype=bool).reshape(shape[0])


def truncate_at(task, base: ScenarioSpec) -> float | None:
    """When a copy's episode is truncated, s since its start: ``[TASK] truncate``, else
    ``[SETTINGS] duration`` (a callable task: the duration), None for never."""
    if isinstance(task, TaskSpec) and task.truncate is not None:
        return task.truncate
    return base.settings.duration


def truncated(batch, terminated: np.ndarray) -> np.ndarray:
    """(K,) the copies of ``batch`` (either backend) whose episode reached its
    ``truncate_at`` and did not terminate."""
    if batch.truncate_at is None:
        return np.zeros(len(terminated), dtype=bool)
    return ~terminated & (batch.steps * batch.dt >= batch.truncate_at - 1e-9)


def task_reward(task: TaskSpec, agents, per: dict, shape) -> np.ndarray:
    """(K, A) rewards of a ``[TASK]``'s terms from ``per``: metric name -> (K,) values (NaN: not
    yet defined, counted 0); a term naming a robot pays only that agent."""
    reward = np.zeros(shape)
    for term in task.rewards:
        v = np.nan_to_num(per[term.metric], nan=0.0) * term.weight
        cols = [j for j, a in enumerate(agents) if term.robot in ("", a)]
        reward[:, cols] += v[:, None]
    return reward


class BatchWorld:
    """K copies of a scenario's agents, stepped together in one simulation (the ``world``
    backend; :func:`coopsim.env.copies.batch_world` picks this or the ``copies`` one).

    Args:
        scenario: A path or ScenarioSpec. copies: K.
        robots: The agents of each copy (original names; default: every robot).
        observe: Module labels observed (as for the single environment).
        task: A vectorized callable ``(snapshot, rows) -> (reward, terminated)`` (``rows``:
            (K, A) robot indices into the snapshot's arrays; reward (K, A) or (K,),
            terminated (K,) bools), or ``"module:function"``; default the scenario's
            ``[TASK]`` (its metrics computed per copy).
        gap: Distance between copies, m (default 2 x the farthest sensor reach + 1).
        seed: Default seed (None: the scenario's).
        lean: Robots without a driver carry only the observed modules and their motion
            module (nothing else is sensed: faster); needs ``observe``, and a task that reads
            nothing else.
    """

    backend, backend_reason = "world", ""

    def __init__(self, scenario, copies: int, robots=None, observe=None, task=None,
                 gap: float | None = None, seed: int | None = None,
                 lean: bool = False) -> None:
        from ..sim.simulation import Simulation
        from ..sim.stepper import Stepper

        base, self.agents = template(scenario, copies, robots, observe, lean)
        memory.check(copies, memory.world_bytes(base), "world")
        memory.check_objects(copies, base)
        self.base, self.copies = base, copies
        self.task = task if callable(task) else (python_function(task) if task else
                                                 resolve_task(base, None))
        spec, self.offsets, self.names = replicate(base, copies, gap,
                                                   monitors=isinstance(self.task, TaskSpec))
        self.caster = _caster(base, self.offsets, gap)
        self.sim = Simulation(spec, seed=seed, engine=spec.settings.engine, caster=self.caster)
        self.stepper = Stepper(self.sim, mode="lockstep", speed=0)
        world = self.sim.world
        self.n_targets = len(base.targets)  # each copy's own: its agents see only those
        self.maps = [agent_map(world, self.names[0][a], observe, self.n_targets)
                     for a in self.agents]
        undriven(self.agents, lambda a: world.robot(self.names[0][a]))
        self.motion = batch_motion(self.maps)
        self.action_low = np.stack([m.action_low for m in self.maps])
        self.action_high = np.stack([m.action_high for m in self.maps])
        self.truncate_at = truncate_at(self.task, base)
        self._start(self.stepper.snapshot)  # just built: a reset would build it all again

    # -- episodes -----------------------------------------------------------------------------

    def reset(self, seed: int | None = None):
        """Every copy starts over (``seed``: the run's generator seeded with it)."""
        if seed is not None:
            self.sim.seed = int(seed)
        return self._start(self.stepper.reset())

    def _start(self, snap):
        """The copies' rows and initial state in the simulation as built; ``snap``."""
        index = self.sim.robots.index
        self.rows = np.array([[index[self.names[k][a]] for a in self.agents]
                              for k in range(self.copies)], dtype=np.int64)
        every = [index[n] for k in range(self.copies) for n in self.names[k].values()]
        self.copy_rows = np.array(every, dtype=np.int64).reshape(self.copies, -1)
        self.caster.set_copies(self.copy_rows)
        self.initial = self.sim.world.engine.robot_state()  # poses at load, velocity 0
        self.steps = np.zeros(self.copies, dtype=np.int64)
        self._metric_keys = self._keys()
        return snap

    def _keys(self) -> dict:
        if not isinstance(self.task, TaskSpec):
            return {}
        names = {t.metric for t in self.task.rewards + self.task.ends if t.metric}
        return {m: [f"{m}__c{k}" for k in range(self.copies)] for m in names}

    def reset_copies(self, which: np.ndarray) -> None:
        """Put the copies ``which`` (a (K,) bool mask) back to their initial layout: robots at
        their initial poses, at rest, commands and remembered readings zeroed, their kinds'
        state back to the defaults."""
        rows = self.copy_rows[which].ravel()
        if not len(rows):
            return
        state = self.initial[rows].copy()
        state[:, 3:] = 0.0
        self.sim.world.engine.reset_rows(rows, state)
        self.sim.moved()  # the next actuators phase reads the bodies where they are now
        for label in self.sim.commands:
            self.sim.commands[label][rows] = 0.0
        sensors = self.sim.sensors
        prev = {}
        for label, arr in sensors.prev.items():
            arr = arr.copy()
            arr[rows] = 0.0
            prev[label] = arr
        sensors.prev = prev
        names = self.sim.robots.names
        self.sim.states.restart([names[r] for r in rows])
        self.steps[which] = 0

    # -- stepping -----------------------------------------------------------------------------

    def act(self, actions) -> None:
        """Check and store the (K, A, d) actions (``(K, d)`` when A is 1).

        Raises:
            ActionError: wrong shape or a value outside its bound (names copy, agent, bound).
        """
        a = checked_actions(self, actions)
        commands = self.sim.commands[self.motion]
        flat = self.rows.ravel()
        commands[flat, :a.shape[2]] = a.reshape(-1, a.shape[2])
        commands[flat, a.shape[2]:] = 0.0

    @property
    def dt(self) -> float:
        """The step, s."""
        return self.sim.dt

    def tick(self):
        """One step of every copy; the snapshot."""
        snap = self.stepper.tick()
        self.steps += 1
        return snap

    def observation(self, snap) -> dict:
        """Module label -> (K, A, width) readings of every copy's agents (own targets only)."""
        out = {}
        for j, label in enumerate(self.maps[0].observe):
            reading = snap.readings[label]
            w = self.maps[0].per_target[j] * self.n_targets
            if w:  # a reading per target: the copy's own targets, columns w k .. w (k+1)
                cols = w * np.arange(self.copies)[:, None] + np.arange(w)
                out[label] = reading[self.rows[:, :, None], cols[:, None, :]]
            else:
                out[label] = reading[self.rows]
        return out

    def outcome(self, snap) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rewards (K, A), terminated (K,), truncated (K,)) after the step of ``snap``."""
        shape = self.rows.shape
        if callable(self.task):
            reward, terminated = called_task(self.task, snap, self.rows)
        else:
            reward, terminated = self._task_terms(snap, shape)
        return reward, terminated, truncated(self, terminated)

    def _task_terms(self, snap, shape) -> tuple[np.ndarray, np.ndarray]:
        values = metric_values(snap.rules) if self._metric_keys else {}
        per = {m: np.array([np.nan if values.get(k) is None else values[k] for k in keys])
               for m, keys in self._metric_keys.items()}
        reward = task_reward(self.task, self.agents, per, shape)
        terminated = np.zeros(shape[0], dtype=bool)
        for end in self.task.ends:
            if end.metric:
                terminated |= np.array([end.holds(v, "") for v in per[end.metric]])
        return reward, terminated
