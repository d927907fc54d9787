"""The ``copies`` backend of batched worlds: K copies of one template, stepped by one compiled
call, parallel over the copies, around the layout's own module kernels (docs/learning.md,
"Batched worlds").

The ``world`` backend (:class:`~coopsim.env.batch.BatchWorld`) lays K copies out in one big
simulation, so building it costs K times the per-robot Python of a world, and a step is one tick
of that world (Python phases around the kernels). Here ONE copy is built as a normal
:class:`~coopsim.sim.simulation.Simulation` (the template: the real model's parameters, the
kinematic engine's static shapes, radii, axles), its arrays are read, and the K copies are numpy
tiles of them in each copy's own frame: no big floor, no offsets, the template's static grids
shared read-only by every copy. The copy axis is a leading axis of rows (copy c's robot r is
row c A + r): the module kinds run their own kernels over those rows, composed once for the
copies' layout as a world's are (:class:`~coopsim.env.copysense.CopyKinds`): the acting kind's
``kernel_actuate`` and the engine's ``drive``, then :func:`coopsim.env.copykernels.step_copies`
(each copy's engine step, the engine's own small-world step on the copy's rows, and its fan
cast, on numba's threads), then the measured kinds' ``kernel_sense`` with their noise. Without
noise, copy c is the same bits as the template world run alone with copy c's actions.

What it runs (else :func:`batch_world` falls back to the ``world`` backend and says why):
the engine with the ``copies`` feature (the kinematic one, whose small-world step the per-copy
step calls, its arrays read through :meth:`~coopsim.physics.engine.Engine.copy_template`);
every robot a one-body robot driven by a kind whose kernel hands the engine's ``drive`` or
``set_velocity`` (``kernel_drive`` ``("drive", 2)``: ``motors``; ``("set_velocity", (3,))``:
``velocity``) or by a kind of Python code calling ``frame.physics.drive`` or ``set_velocity``
(a plugin's, a stage); observed modules whose
``kernel_sense`` reads the views the copies' arrays make (``sonar`` and any other one fan kind
by its ``kernel_beams``, ``bumper``, ``motors``, ``odometry``, ``gps``, ``compass``,
``target``, ``line``: a batch has no zones, ``gripper``: it holds nothing), with noise, lost
data and a ``rate``; kinds of Python code (``lidar``, ``light``, ``camera``, ``leds``:
:mod:`coopsim.env.copystage`, one call over every copy around the compiled ones,
``frame.physics`` answering as the kinematic engine answers, not past its calls); drivers
on robots that are not agents (:mod:`coopsim.env.copydrivers`: each copy's, hosted as a world
hosts them; every kind such a robot carries measured); no rules, events or zones (squads are
dropped, as the world backend drops them; a scenario's own objects stand, in the template's
static shapes: the engine pushes no object); the scenario's ``[TASK]`` (Python
metrics of :func:`coopsim.env.metrics.forward_speed`, :func:`~coopsim.env.metrics.collisions`,
:func:`~coopsim.env.metrics.target_distance` or :func:`~coopsim.env.metrics.spread`, and metric
kinds declaring a ``copy_term``, vectorised; any other metric computed per copy from
:meth:`CopyBatch.snapshot`), a callable task (it reads that snapshot) or no task; ``terminate
ended`` never holds (a batch runs no rules, on either backend). Frames and units: each copy's
frame, m, rad, s.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from ..model import threads as policy
from ..model.capabilities import reading_fields
from ..model.kernel import read_only
from ..model.plugins import MODULES, engine_with
from ..model.snapshot import Snapshot
from . import copysense, memory
from .batch import (BatchWorld, batch_motion, called_task, checked_actions, checked_gap,
                    replicate, task_reward, template, truncate_at, truncated)
from .copydrivers import CopyDrivers, driven_kinds
from .copysense import CopyKinds
from .episode import resolve_task, undriven
from .mapping import LearningError, Unsupported, agent_map

log = logging.getLogger(__name__)

CHUNK = 1  # blocks of copies (copykernels.BLOCK) a thread takes at a time
PARALLEL_MIN = 64  # robots from which the copies are shared among threads


def batch_world(scenario, copies: int, robots=None, observe=None, task=None,
                gap: float | None = None, seed: int | None = None, lean: bool = False,
                backend: str | None = None, threads: int | None = None):
    """A batch of ``copies`` copies: a :class:`CopyBatch` when the scenario is supported (or
    ``backend="copies"``), else a :class:`~coopsim.env.batch.BatchWorld` (``backend="world"``,
    or the reason logged and kept in its ``backend_reason``). Args as BatchWorld's; ``threads``:
    the copies backend's thread count (None: :func:`coopsim.model.threads.count`).

    Raises:
        LearningError: ``backend`` is neither None, "copies" nor "world"; ``backend="copies"``
            on a scenario it does not run (the message names what); a ``gap`` that is no
            distance (:func:`~coopsim.env.batch.checked_gap`).
    """
    if backend not in (None, "copies", "world"):
        raise LearningError(f"backend must be 'copies' or 'world', got {backend!r}")
    if gap is not None:  # refused alike, whichever backend serves
        gap = checked_gap(gap)
    reason = "asked for (backend='world')"
    if backend != "world":
        try:
            return CopyBatch(scenario, copies, robots, observe, task, seed, lean, threads, gap)
        except Unsupported as why:
            if backend == "copies":
                raise LearningError(f"the copies backend cannot run this batch: {why}") from None
            reason = str(why)
            log.info("batched worlds: the world backend serves (%s)", reason)
    batch = BatchWorld(scenario, copies, robots, observe, task, gap, seed, lean)
    batch.backend_reason = reason
    return batch


def _template(base, seed):
    """The one-copy Simulation on the batch engine (raises Unsupported when it is not the
    kinematic engine the per-copy step is)."""
    from ..sim.simulation import Simulation

    try:
        engine = engine_with("copies")
    except Exception:  # noqa: BLE001 -- no engine offers it (a trimmed install)
        raise Unsupported("no engine has the copies feature") from None
    spec = replace(base, settings=replace(base.settings, engine=engine))
    return Simulation(spec, seed=seed, engine=engine)


def _bytes_a_copy(sim, observe) -> int:
    """:func:`coopsim.env.memory.copies_bytes` of the template ``sim``: its robots, the beams
    of the fan observed, every reading value of its modules."""
    beams = max((len(copysense.fan_beams(m)) for m in observe), default=0)
    values = sum(len(sim.params.rows[label]) * copysense.module_width(label, len(
        sim.world.targets)) for label, _ in sim.params.modules)
    return memory.copies_bytes(len(sim.robots.names), beams, values)


class CopyBatch:
    """K copies of a scenario's agents stepped by one compiled call (see the module).

    The interface is :class:`~coopsim.env.batch.BatchWorld`'s (``agents``, ``maps``,
    ``act``, ``tick``, ``observation``, ``outcome``, ``reset``, ``reset_copies``, ``steps``,
    ``dt``); ``threads``: numba threads for the step (None: the thread policy's count);
    ``gap``: where the kinds of Python code see the copies (m between them; each copy's own
    readings and poses do not depend on it, as the world backend's).

    Raises:
        Unsupported: what the per-copy step or the kinds' kernels do not model (see the
            module).
        LearningError: as BatchWorld (copies < 1, unknown robot, lean without observe).
    """

    backend, backend_reason = "copies", ""

    def __init__(self, scenario, copies: int, robots=None, observe=None, task=None,
                 seed: int | None = None, lean: bool = False,
                 threads: int | None = None, gap: float | None = None) -> None:
        base, self.agents = template(scenario, copies, robots, observe, lean)
        replicate(base, 1)  # the world backend's refusals (rules, events, zones), its words
        self.base, self.copies, self.threads = base, copies, threads
        self.task = task if callable(task) else resolve_task(base, task)
        sim = _template(base, seed)
        world = sim.world
        self.n_targets = len(base.targets)
        self.maps = [agent_map(world, a, observe, self.n_targets) for a in self.agents]
        self.motion = batch_motion(self.maps)
        undriven(self.agents, sim.world.robot)
        if len(sim.robots.names) != len(base.robots):  # its acting kinds: CopyKinds checks
            raise Unsupported("a robot has several bodies")
        memory.check(copies, _bytes_a_copy(sim, self.maps[0].observe), "copies")
        self._metrics = copysense.metric_terms(base, self.task, sim, copies)
        self.kinds = CopyKinds(sim, copies, self.motion, {*self.maps[0].observe,
                                                          *copysense.measured(self._metrics),
                                                          *driven_kinds(sim)}, gap)
        self.seed = sim.seed
        self.action_low = np.stack([m.action_low for m in self.maps])
        self.action_high = np.stack([m.action_high for m in self.maps])
        self.dt = sim.dt
        self.truncate_at = truncate_at(self.task, base)
        self.offsets = read_only(np.zeros((copies, 2)))  # every copy in its own frame
        self._load(sim)
        self._snap = None  # the snapshot of the last step, made when first read
        self._still = sim.snapshot  # what never moves: objects, parts, targets
        self._names = tuple(f"c{c}_{n}" for c in range(copies) for n in sim.robots.names)
        self._index = {}  # name -> row, made when first read (named)
        self.drivers = CopyDrivers(self, sim) if any(
            r.driver for r in sim.world.robots) else None
        self._fields = {label: reading_fields(MODULES.get(label), self.n_targets)
                        for label in self.kinds.widths}
        self.reset()
        if self.kinds.stage is not None:  # a kind of Python code asking the engine: refused now
            self.kinds.stage.act(self)
            self.kinds.stage.actuated = {}
            self.cmd[...], self.mode[...] = 0.0, 0  # as the reset left them

    # -- the template and its copies -----------------------------------------------------------

    def _load(self, sim) -> None:
        """The template's arrays (shared) and the K copies' state (tiled)."""
        from ..raycast.jitcast import static_grids
        from . import copykernels as ck

        engine, k = sim.world.engine, self.copies
        tpl = engine.copy_template()
        a = self.width = len(tpl.pos)
        index = sim.robots.index
        self.agent_rows = np.array([index[n] for n in self.agents], dtype=np.int64)
        self.rows = np.arange(k)[:, None] * a + self.agent_rows  # (K, A) global rows
        # every robot an agent, in row order: actions and readings are plain reshapes
        self._whole = np.array_equal(self.agent_rows, np.arange(a))
        tile = lambda x: np.ascontiguousarray(np.tile(x, (k,) + (1,) * (np.ndim(x) - 1)))  # noqa
        if len(sim.params.rows[self.motion]) != a:
            raise Unsupported(f"not every robot drives with {self.motion}")
        fan = self.kinds.fan
        angles = np.array(copysense.fan_beams(fan) if fan else (), dtype=float)
        reach = np.full(a, 2.0)
        if fan:
            reach[sim.params.rows[fan]] = sim.params.values[fan]["max_range"]
        self._shared = dict(
            radius=tile(tpl.radius), axle=tile(np.asarray(sim.robots.axle, float)),
            driven=tile(tpl.driven), reach=tile(reach),
            group=tile(np.asarray(sim.robots.group, np.int64)))
        c, cg, s, sg = engine.static_geometry()
        self._grids = static_grids(c, s, cg, sg)
        self._static, self._half = tpl.static, np.ascontiguousarray(tpl.half, dtype=float)
        self._limits = tuple(float(v) for v in tpl.limits)  # step_small's six
        self._angles = np.ascontiguousarray(np.column_stack((np.cos(angles), np.sin(angles))))
        self._initial = (tpl.pos, tpl.yaw, tpl.heading)
        self.pos, self.yaw, self.heading = (tile(x) for x in self._initial)
        self._state(k * a, len(angles))
        self._cast = bool(fan)
        self._kernel = ck.step_copies

    def _state(self, n: int, beams: int) -> None:
        """The copies' other per-robot arrays (``n`` rows, zeros): commands, state, contacts,
        the fan's ranges, the kernel's scratch."""
        from ..physics.kinematic.small import scratch_arrays
        from . import copykernels as ck

        self.mode = np.zeros(n, np.int64)
        self.cmd, self.state = np.zeros((n, 3)), np.zeros((n, 6))
        self.act_rows = np.zeros((n, len(MODULES.get(self.motion).command_fields)))
        self.act_view = read_only(self.act_rows)  # the kernel's commands, as a world's
        self.contact = np.zeros((n, 2))
        self._scratch = dict(buf=np.zeros((n, 2)), moved=np.zeros(n, np.uint8),
                             flag=np.zeros(n, np.uint8),
                             rows=np.arange(n, dtype=np.int64),
                             steps=scratch_arrays(n),
                             gstart=np.zeros((-(-self.copies // ck.BLOCK), self.width + 65),
                                             np.int64),
                             sight=np.zeros((n, 2)), cdata=np.zeros((n, 3)),
                             dirs=np.zeros((n, 2, beams)))
        self.ranges, self.forward = np.zeros((n, beams)), np.zeros(n)
        self.steps = np.zeros(self.copies, dtype=np.int64)  # per copy, since its reset

    # -- episodes ------------------------------------------------------------------------------

    def reset(self, seed: int | None = None):
        """Every copy starts over (``seed``: the readings' generator seeded with it, else
        with the last seed, as the world backend's run); returns self (what
        :meth:`observation` reads)."""
        if seed is not None:
            self.seed = int(seed)
        rng = self.kinds.restart(self.seed)
        self.reset_copies(np.ones(self.copies, dtype=bool))
        self.step, self.time = 0, 0.0
        if self.drivers is not None:
            self.drivers.restart()
        self._run(move=False, rng=rng)
        return self

    def reset_copies(self, which: np.ndarray) -> None:
        """Put the copies ``which`` (a (K,) bool mask) back to their initial layout: at their
        initial poses, at rest, commands and readings zeroed, the kinds' state at its defaults
        (the world backend's reset, per copy)."""
        which = np.asarray(which, dtype=bool)
        if not which.any():
            return
        a = self.width
        rows = (np.flatnonzero(which)[:, None] * a + np.arange(a)).ravel()
        pos, yaw, _ = self._initial
        sel = np.tile(np.arange(a), int(which.sum()))
        self.pos[rows], self.yaw[rows] = pos[sel], yaw[sel]
        self.heading[rows, 0], self.heading[rows, 1] = np.cos(yaw[sel]), np.sin(yaw[sel])
        self.state[rows, :2], self.state[rows, 2], self.state[rows, 3:] = pos[sel], yaw[sel], 0.0
        self.cmd[rows] = 0.0
        self.act_rows[rows] = 0.0
        self.contact[rows] = 0.0  # a reset's observation touches nothing (a step recomputes)
        self.kinds.zero(rows)
        self.steps[which] = 0
        self._snap = None

    # -- stepping ------------------------------------------------------------------------------

    def act(self, actions) -> None:
        """Check and store the (K, A, d) actions (``(K, d)`` when A is 1).

        Raises:
            ActionError: as :meth:`BatchWorld.act`.
        """
        a = checked_actions(self, actions)
        d = a.shape[2]  # the first of the motion module's command values (the rest stay 0)
        if self._whole:
            self.act_rows.reshape(*a.shape[:2], -1)[..., :d] = a
        else:
            self.act_rows[self.rows.ravel(), :d] = a.reshape(-1, d)

    def tick(self):
        """One step of every copy; returns self (what :meth:`observation` and
        :meth:`outcome` read)."""
        if self.drivers is not None:  # the commands phase: the drivers' robots' commands
            self.drivers.run()
        self.steps += 1
        self.step += 1  # the step measured (and the drivers' next snapshot's)
        self.time = self.step * self.dt  # as a simulation's clock (not summed)
        self._run(move=True)
        return self

    def snapshot(self) -> Snapshot:
        """The batch after its last step as one :class:`~coopsim.model.snapshot.Snapshot` of
        every copy's robots (row c A + r, named ``c{c}_{name}``, as the world backend's), what
        a callable task reads: every copy in its own frame (``offsets`` zero), poses,
        velocities, the actions and the drivers' commands as commands of the motion module
        and the measured kinds' readings (the observed kinds', the kinds of the drivers'
        robots, and every kind with a reading when a ``[TASK]`` metric reads the snapshot);
        ``objects``, ``parts`` and ``targets`` are the template's, once for every copy; no
        ``rules``; ``extra`` holds what batch drivers ``post`` and the kinds of Python code
        publish (the lidar's scans of ``c{k}_NAME``; a world's board also has its map).
        Made once a step (a copy's reset makes it again)."""
        if self._snap is not None:
            return self._snap
        self.kinds.handed = True  # a copy's reset zeroes copies of its readings, not these
        self._snap = replace(
            self._still, step=self.step, time=self.time, robots=self._names,
            poses=read_only(self.state[:, :3].copy()),
            velocities=read_only(self.state[:, 3:].copy()),
            commands={self.motion: read_only(self.act_rows.copy())},
            readings={k: read_only(v) for k, v in self.readings.items()},
            fields=self._fields, index=self.named(), rules={},
            extra=self._posted())
        return self._snap

    def _posted(self) -> dict:
        """What the batch drivers and the kinds of Python code posted (a snapshot's ``extra``)."""
        out = {} if self.kinds.stage is None else self.kinds.stage.public()
        if self.drivers is not None:
            out.update((k, v) for k, v in self.drivers.extra.items() if not k.startswith("_"))
        return out

    def named(self) -> dict:
        """Every copy's robot name (``c{c}_{name}``) -> its row (row c A + r)."""
        if not self._index:
            self._index.update((name, k) for k, name in enumerate(self._names))
        return self._index

    @property
    def readings(self) -> dict:
        """Module label -> (N, width) the measured kinds' readings of every copy's robots."""
        return self.kinds.readings

    def _run(self, move: bool, rng=None) -> None:
        """The acting kind and the engine's drive (``move`` False: none, nothing moves), the
        per-copy step, then the measured kinds' readings (drawn from ``rng``, else the run's
        generator)."""
        self._snap = None
        if move:
            self.kinds.act(self)
        with policy.kernel_threads(len(self.pos), PARALLEL_MIN, CHUNK, self.threads):
            sc = self._scratch
            self._kernel(self.width, self.pos, sc["buf"], self.yaw, self.heading, self.cmd,
                         self.mode, self.state, self.contact, self._shared["radius"],
                         sc["moved"], sc["flag"], sc["rows"], sc["steps"], sc["gstart"],
                         self._static, self._half, self.dt,
                         self._limits, move, self._cast, self._angles, self._shared["reach"],
                         self._shared["group"], self._grids, sc["sight"], sc["cdata"],
                         sc["dirs"], self.ranges, self.forward)
        self.kinds.measure(self, self.kinds.rng if rng is None else rng)
        if self.drivers is not None:  # what they read next step, as a world's snapshot
            self.drivers.snapshot = self.snapshot()

    def observation(self, snap=None) -> dict:
        """Module label -> (K, A, width) readings of every copy's agents."""
        out = {}
        for label in self.maps[0].observe:
            reading = self.readings[label]
            out[label] = (reading.reshape(self.rows.shape + reading.shape[1:]).copy()
                          if self._whole else reading[self.rows])
        return out

    def outcome(self, snap=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rewards (K, A), terminated (K,), truncated (K,)) after the last step."""
        shape = self.rows.shape
        if callable(self.task):
            reward, terminated = called_task(self.task, self.snapshot(), self.rows)
            return reward, terminated, truncated(self, terminated)
        snap = self.snapshot() if any(t[0] == "snapshot" for t in self._metrics.values()) \
            else None
        per = {name: copysense.metric(self, *term, snap) for name, term in self._metrics.items()}
        reward = task_reward(self.task, self.agents, per, shape)
        terminated = np.zeros(shape[0], dtype=bool)
        for end in self.task.ends:
            if not end.metric:  # ``ended``: no rule runs in a batch (the world backend's too)
                continue
            v = per[end.metric]
            with np.errstate(invalid="ignore"):
                terminated |= {"<": v < end.value, "<=": v <= end.value,
                               ">": v > end.value, ">=": v >= end.value}[end.op]
        return reward, terminated, truncated(self, terminated)
