"""What the ``copies`` batch backend computes around its compiled per-copy step
(:mod:`coopsim.env.copies`): the layout's module kinds on the copies' rows, and the task's
metric terms.

Kinds: the batch runs each kind's OWN kernels (:class:`~coopsim.model.capabilities.
ModuleKernel`), composed for the copies' layout as the simulation composes a world's
(:mod:`coopsim.sim.compose`: one generated compiled ``act`` and one ``sense``, made once per
layout and kept on disk): the copy axis is flattened into rows (copy c's robot r is row
c A + r, the world backend's copy-major order), each copy in its own frame. Before the
per-copy step, ``act`` runs the acting kind's ``kernel_actuate`` over every row and the
engine's own ``drive`` takes its ``drive`` columns; after it, ``sense`` runs the observed kinds'
``kernel_sense`` (and those of the contact kinds a ``collisions`` term reads) on the copies'
arrays, the fan kind's ``ranges`` being the per-copy step's cast of its ``kernel_beams``. The
noise is drawn as the composed step draws it: one key a step from the run's generator, each
kind's block at its place in the world backend's layout over the copies' rows
(:func:`_noise_layout`, counter-based), so both backends read the same noise.

Task terms: the ``[MONITORS]`` Python metrics of :data:`TERMS` and the metric kinds declaring a
``copy_term`` (:class:`~coopsim.model.metric_kind.MetricKind`), vectorised over the copies with
the metric functions' own operations; any other metric is its kind's own function of the
batch's snapshot, called once per copy (as the world backend's monitors call it).

Frames and units: each copy's own frame (the template scenario's world frame), m, rad, s.
"""

from __future__ import annotations

import math

import numpy as np

from ..model import armviews
from ..model.capabilities import Learnable, capability, kernel_of, reading_fields
from ..model.kernel import UNREAD, KindState, drive_width, param_matrix, read_only, zone_view
from ..model.plugins import METRICS, MODULES
from ..model.validate import python_function
from . import metrics
from .copystage import CopyStage
from .mapping import Unsupported

#: the Python metrics it computes per copy: function -> its term's kind
TERMS = {metrics.forward_speed: "forward", metrics.collisions: "collisions",
         metrics.target_distance: "target_distance", metrics.spread: "spread"}
#: The views a composed call makes that the copies (a 2D engine's, no clock, no engine to ask
#: for arms) do not; ``held`` they make: nothing is ever held (only a world grasps, at a
#: command acting on the simulation, which no batch stores)
UNMADE = ("state3d", "full_state", "clock", "below",
          *(name for name in armviews.NAMES if name != "held"))


def _kernels(label: str) -> tuple:
    """(``kernel_sense``, ``kernel_actuate``, ``kernel_drive``, ``kernel_views``,
    ``kernel_beams``) of module ``label`` (Nones and () for a kind of Python code)."""
    view = kernel_of(MODULES.get(label))
    if view is None:
        return None, None, (), (), ()
    return (view.kernel_sense, view.kernel_actuate, tuple(view.kernel_drive),
            tuple(view.kernel_views), tuple(view.kernel_beams))


def drive_kernel(label: str, engine_kernels: dict):
    """The engine's compiled kernel of the drive role module ``label``'s kernel hands over
    (``kernel_drive``: ``("drive", 2)`` forward speed and yaw rate, ``motors``;
    ``("set_velocity", (3,))`` world velocity, ``velocity``) among ``engine_kernels`` (its
    fused side's), or None: what the copies backend drives with."""
    _, actuate, role, _, _ = _kernels(label)
    return engine_kernels.get(role[0]) if actuate is not None and role else None


def fan_beams(label: str) -> tuple:
    """Module ``label``'s ``kernel_beams`` when its kernel reads the ``ranges`` view, else ()."""
    _, _, _, views, beams = _kernels(label)
    return beams if "ranges" in views else ()


class CopyKinds:
    """The layout's kinds on the copies' rows (see the module).

    Args:
        sim: The template Simulation (one copy). copies: K. motion: The acting kind's label.
        measured: The labels whose readings the batch reads (observed, and the contact kinds
            of its ``collisions`` terms). gap: The stage's distance between copies
            (:class:`~coopsim.env.copystage.CopyStage`).

    A kind with a ``rate`` measures the robots due this step alone (:class:`coopsim.sim.
    rates.Rates`, staggered over the copies' rows as over the world backend's robots), each
    step's noise laid out for them as the world backend's (:func:`_noise_layout`). The kinds
    of Python code (no ``kernel_sense``; acting kinds with no ``kernel_actuate``, ``motion``
    among them: a plugin's drive of Python code) and the acting kinds besides ``motion``
    that drive nothing (``leds``: acted and measured there, on the stage's state) are the
    :class:`~coopsim.env.copystage.CopyStage`'s, around the composed calls.

    Raises:
        Unsupported: a measured kind reading a view a composed call does not make, two fans,
            a second kind driving by a compiled kernel, a ``motion`` kernel whose drive
            role the engine's compiled step does not take.
    """

    def __init__(self, sim, copies: int, motion: str, measured, gap: float | None = None
                 ) -> None:
        from ..sim.compose import ComposedPass, noise_scratch  # sim/: when a batch is made
        from ..sim.sensing import idle
        from ..sim.tables import ParamArrays

        width = len(sim.robots.names)
        self.n = n = copies * width
        params = sim.params
        acting, sensing, fans, timing, python, acts = [], [], [], [], [], []
        self.states = {}
        side = sim.world.engine.fused()
        engine_kernels = side.kernels if side is not None else {}
        for label, module in params.modules:
            rows, values = params.rows[label], params.values[label]
            if not len(rows):
                continue
            every = (np.arange(copies)[:, None] * width + rows).ravel()
            tiled = ParamArrays({k: np.tile(v, (copies,) + (1,) * (np.ndim(v) - 1))
                                 for k, v in values.items()})
            if "rate" in values and "rate" not in values.zero and not idle(module, values):
                timing.append((label, every, tiled))  # due by its rate, measured or not
            actuate = _kernels(label)[1]
            if module.command_fields and (label != motion or actuate is None):
                if actuate is not None and _kernels(label)[2]:
                    raise Unsupported(f"module {label!r} drives by a compiled kernel besides "
                                      f"{motion}: the batch drives one kind")
                acts.append(label)  # its actuate a stage before the call (copystage)
            elif label == motion and drive_kernel(label, engine_kernels) is None:
                raise Unsupported(f"module {label!r} acts by a compiled kernel whose drive "
                                  f"{_kernels(label)[2]!r} the engine's compiled step does "
                                  "not take")
            if label != motion and label not in measured:
                continue
            if label in measured:
                sense, _, _, views, _ = _kernels(label)
                if sense is None or label in acts:  # a stage after the call (copystage; a
                    python.append(label)  # kind the stage acts for: its state the stage's)
                    continue
                if "ranges" in views:
                    fans.append(label)
            if module.state_fields:
                self.states[label] = KindState(module.state_fields, n)
            if label == motion and actuate is not None:
                acting.append((label, module, every, tiled, len(every) == n))
            if label in measured:
                sensing.append((label, module, every, tiled, False, False, len(every) == n,
                                0, False))
        for label, module, *_ in (*acting, *sensing):
            made = sorted(set(_kernels(label)[3]) & set(UNMADE))
            if made:
                raise Unsupported(f"{label} reads {', '.join(made)}, which the copies do not "
                                  "make")
        if len(fans) > 1:
            raise Unsupported(f"two fans measured ({', '.join(fans)}): the per-copy step "
                              "casts one")
        self.fan = fans[0] if fans else ""
        found, why = ComposedPass.build(tuple(acting), tuple(sensing), sim.world.engine, False)
        if found is None:
            raise Unsupported(why)
        self.module, self.labels = found.module, tuple(e[0] for e in sensing)
        self.pick_act, self.pick_sense = found.pick_act, found.pick_sense
        self.composed = found  # whether its calls take the threads, and on how many
        self.drive = drive_kernel(motion, engine_kernels)  # None: the motion kind a stage
        self.acting = tuple((rows, param_matrix(m, p), self._kept(label),
                             np.empty((len(rows), drive_width(_kernels(label)[2]))))
                            for label, m, rows, p, _ in acting)
        self.act_out = tuple(np.empty((len(e[2]), len(e[1].command_fields))) for e in acting)
        self.rows = tuple(e[2] for e in sensing)
        self.every = tuple(e[6] for e in sensing)
        self.sensing = tuple((e[2], param_matrix(e[1], e[3]), self._kept(e[0]))
                             for e in sensing)
        self.widths = {label: module_width(label, len(sim.world.targets))
                       for label in (*self.labels, *python)}
        self.stage = CopyStage(sim, copies, tuple(python), tuple(acts), motion, gap) \
            if python or acts else None
        self.beams = found.beams.get(self.fan)
        #: the no-go zones (each copy's, in its own frame), where a kind reads them
        self.zones = zone_view(sim.world.map_spec()) if "zones" in found.needs else UNREAD
        #: the arm views of the sensing call: ``held`` alone, every robot holding nothing
        self.arms = UNREAD if not found.arms else (
            armviews.NO_ARM, armviews.NO_CHAIN, armviews.NO_WRENCH, read_only(np.zeros((n, 2))))
        self.targets = np.array([t.position[:2] for t in sim.world.targets],
                                dtype=float).reshape(-1, 2)
        self.colors = tuple(t.color for t in sim.world.targets)
        self.dt = np.full(1, float(sim.dt))
        self.drawing = _drawing(sim, copies)
        layout = self.layout = _noise_layout(self.drawing, {})
        self.draws = bool(layout[2])
        self.noise = noise_scratch(layout, self.labels)
        self.timing, self.rates = tuple(timing), None
        self.keys = np.zeros(1, np.uint64)
        self.readings = {}
        self.handed = False  # a snapshot holds the readings: zero copies of them
        self.rng = np.random.Generator(np.random.PCG64(0))  # restart seeds it

    def _kept(self, label: str) -> tuple:
        """Kind ``label``'s state table as its kernels take it (arrays, then ``seen``), or ()."""
        found = self.states.get(label)
        return found.kernel_args if found is not None else ()

    def restart(self, seed: int) -> np.random.Generator:
        """Every reading and kind state back to the start and the run's generator seeded (a
        whole batch's reset, as the simulation's); returns the generator the first readings
        draw from (its own)."""
        from ..sim.rates import Rates
        from ..sim.simulation import make_rng

        self.readings = {label: np.zeros((self.n, w)) for label, w in self.widths.items()}
        for table in self.states.values():
            table.reset_rows(slice(None))
        if self.timing:  # nobody has measured yet: every robot is due at once
            self.rates = Rates()
            self.rates.remap(tuple(range(self.n)))
        if self.stage is not None:
            self.stage.restart()
        self.rng = make_rng(seed)
        return make_rng(seed)

    def zero(self, rows: np.ndarray) -> None:
        """Zero the remembered readings of robots ``rows`` (their copies start over; copies
        of the readings when a snapshot handed them out: it keeps what the step made) and
        put their kinds' state back to the defaults, as if never seen."""
        if self.handed:
            self.readings = {label: arr.copy() for label, arr in self.readings.items()}
            self.handed = False
        for arr in self.readings.values():
            arr[rows] = 0.0
        for table in self.states.values():
            table.reset_rows(rows)

    def base(self, batch, arms=UNREAD) -> tuple:
        """The arrays a composed call takes first (coopsim.sim.compose.BASE) of ``batch``
        (``arms``: the sensing call's arm views, :attr:`arms`)."""
        s = batch._shared
        return (batch.state, s["radius"], s["axle"], s["group"], UNREAD, UNREAD, UNREAD,
                batch.contact, self.dt, self.targets, self.zones, arms)

    def act(self, batch) -> None:
        """The acting kind's ``kernel_actuate`` over the copies' rows (its commands: the
        batch's actions), then the engine's ``drive`` of its columns: the copies' engine
        commands (``batch.cmd``, ``batch.mode``)."""
        if self.stage is not None:  # the acting kinds of Python code, as a world's stages
            self.stage.act(batch)  # before its composed call
        self._call("act", (*self.pick_act(self.base(batch)), self.acting, (batch.act_view,),
                           self.act_out), batch.threads)
        for rows, _, _, drive in self.acting:
            self.drive((batch.cmd, batch.mode, batch._shared["driven"], ()), rows, drive)

    def _call(self, name: str, args: tuple, threads: int | None) -> None:
        """The composed module's call ``name`` on ``args``: its parallel version (the rowwise
        kinds' rows in chunks, the same bits) on ``threads`` of numba's threads (None: the
        thread policy's count) where the copies' rows are :data:`~coopsim.model.threads.
        ROWS_MIN` or more."""
        if self.composed.threaded(threads):
            self.composed.on_threads(getattr(self.module, name + "_par"), args, threads)
        else:
            getattr(self.module, name)(*args)

    def measure(self, batch, rng) -> dict:
        """Every measured kind's reading (N, width) at step ``batch.step`` for the robots
        due (every robot but where a ``rate`` holds the last reading), its noise drawn from
        ``rng`` (one key, as the composed step takes it); remembered for the next."""
        from ..sim.compose import cast_given, noise_scratch
        from ..sim.noiseplan import noise_key

        draws, noise, sensing = self.draws, self.noise, self.sensing
        rows_now, every_now, due, layout = self.rows, self.every, None, self.layout
        if self.timing:  # who is due changes step by step, and the draw's layout with it
            due, counts = self._due(batch.step, batch.time)
            layout = _noise_layout(self.drawing, counts)
            draws, noise = bool(layout[2]), noise_scratch(layout, self.labels)
            picks = tuple(due.get(label) for label in self.labels)
            rows_now = tuple(r if p is None else _picked(r, p) for r, p in zip(self.rows, picks))
            every_now = tuple(e and p is None for e, p in zip(self.every, picks))
            sensing = tuple(s if p is None else (_picked(s[0], p), _picked(s[1], p), s[2])
                            for s, p in zip(sensing, picks))
        if draws:
            self.keys[0] = noise_key(rng)
        prev = self.readings
        prevs = tuple(prev[label] if every else prev[label][rows]
                      for label, rows, every in zip(self.labels, rows_now, every_now))
        outs = tuple(np.empty(p.shape) for p in prevs)
        casts = ()
        if self.fan:
            k = self.labels.index(self.fan)
            ranges = batch.ranges if every_now[k] else batch.ranges[rows_now[k]]
            casts = (cast_given(self.beams[1], batch._shared["reach"], ranges),)
        self._call("sense", (*self.pick_sense(self.base(batch, self.arms)), self.keys, noise,
                             sensing, prevs, outs, casts, ()), batch.threads)  # (no scene)
        out = {}
        for label, rows, every, made in zip(self.labels, rows_now, every_now, outs):
            if not every:
                full = prev[label].copy()
                full[rows] = made
                made = full
            out[label] = made
        if self.stage is not None:  # the kinds of Python code, over every copy at once
            self.stage.measure(batch, rng, prev, out, due,
                               (int(self.keys[0]), layout) if draws else None)
        self.readings = out
        return out

    def _due(self, step: int, time: float) -> tuple[dict, dict]:
        """(label -> which of its carriers measure at ``step`` (a mask or a slice of its
        rows; None: all), label -> how many), for every kind with a ``rate``, marked as
        measured then (the world backend's :meth:`coopsim.sim.rates.Rates.due` over the same
        rows)."""
        due, counts = {}, {}
        for label, rows, values in self.timing:
            pick = self.rates.due(label, values, rows, step, float(self.dt[0]))
            now = rows if pick is None else rows[pick]
            self.rates.mark(label, now, step, time)
            due[label], counts[label] = pick, len(now)
        return due, counts


def _picked(a: np.ndarray, pick) -> np.ndarray:
    """``a[pick]`` (a mask or a slice of its rows) as the composed call took ``a``: contiguous,
    read-only where ``a`` is (one compiled version of the call)."""
    out = np.ascontiguousarray(a[pick])
    return out if a.flags.writeable else read_only(out)


def _drawing(sim, copies: int) -> tuple:
    """(label, carriers, normals a robot, lost data) of every kind of the world backend's
    plan for ``copies`` copies of ``sim``'s robots that draws noise, in the simulation's
    module order (copy-major rows), whether this backend measures the kind or not."""
    from ..sim.sensing import idle, noise_plan

    out = []
    for label, module in sim.params.modules:
        rows, values = sim.params.rows[label], sim.params.values[label]
        if not len(rows) or idle(module, values):
            continue
        k, lossy = noise_plan(module, values, len(sim.world.targets))
        if k or lossy:
            out.append((label, copies * len(rows), k, lossy))
    return tuple(out)


def _noise_layout(drawing: tuple, due: dict) -> tuple:
    """coopsim.sim.noiseplan.noise_layout of the world backend's step: the ``drawing`` kinds
    (:func:`_drawing`), each with its carriers or, for a kind with a ``rate``, ``due[label]``
    of them, so each kind's block sits where the world backend's does."""
    parts, i, j = [], 0, 0
    for label, n, k, lossy in drawing:
        n = due.get(label, n)
        a, b = n * k, n if lossy else 0
        if a or b:
            parts.append((label, n, k, i, a, j, b))
            i, j = i + a, j + b
    return i, j, tuple(parts)


def module_width(label: str, n_targets: int) -> int:
    """How many values module ``label`` reads with ``n_targets`` targets."""
    return len(reading_fields(MODULES.get(label), n_targets))


# -- task terms -----------------------------------------------------------------------------------

def metric_terms(base, task, sim, copies: int) -> dict:
    """Metric name -> (kind, robot rows (tuple), args) for the task's terms; a metric it does
    not vectorise is ``("snapshot", (), (its function in each copy, the labels it may
    read))``: the metric kind's own function of the batch's snapshot, its robots named as in
    copy k (``c{k}_NAME``), as the world backend computes it.

    Raises:
        Unsupported: a term naming no ``[MONITORS]`` metric.
    """
    if callable(task):  # it reads the batch's snapshot (CopyBatch.snapshot)
        return {}
    wanted = {t.metric for t in task.rewards + task.ends if t.metric}
    specs = {m.name: m for m in (base.monitors.metrics if base.monitors else ())}
    out = {}
    for name in sorted(wanted):
        spec = specs.get(name)
        if spec is None:
            raise Unsupported(f"metric {name} is no [MONITORS] metric")
        kind, robots, args = _term(spec)
        if kind is None:
            out[name] = ("snapshot", (), (_per_copy(spec, sim, copies), _readable(sim)))
            continue
        rows = tuple(sim.robots.index.get(r, -1) for r in robots)
        if kind == "collisions" and rows[0] >= 0:  # the robot's contact kinds' readings
            robot = sim.world.robots[rows[0]]
            args = tuple(m for m in robot.modules
                         if capability(MODULES.get(m), Learnable, default=True).contact)
            kind = "collisions" if args else "nan"
        out[name] = (kind, rows, args)
    return out


def measured(terms: dict) -> set:
    """The kinds the terms of :func:`metric_terms` read: the contact kinds of ``collisions``
    terms, every kind with a reading for a ``snapshot`` term."""
    return {label for kind, _, args in terms.values() if kind in ("collisions", "snapshot")
            for label in (args[1] if kind == "snapshot" else args)}


def _per_copy(spec, sim, copies: int) -> tuple:
    """Metric ``spec``'s function of a snapshot in each copy: its robot arguments renamed
    ``c{k}_NAME``, as the world backend's copies name them."""
    robots = set(sim.robots.names)
    kind = METRICS.get(spec.kind)
    return tuple(kind.build(*(f"c{k}_{a}" if a in robots else a for a in spec.args))
                 for k in range(copies))


def _readable(sim) -> tuple:
    """The labels of the kinds the template's robots carry that have a reading (what a
    metric of the snapshot may read, as a world's snapshot holds them)."""
    n = len(sim.world.targets)
    return tuple(label for label, module in sim.params.modules
                 if len(sim.params.rows[label]) and reading_fields(module, n))


def _term(spec) -> tuple:
    """(kind, robots, other args) of a ``[MONITORS]`` metric, (None, (), ()) otherwise."""
    if spec is None or not spec.args:
        return None, (), ()
    if getattr(METRICS.get(spec.kind), "copy_term", "") == "near_target":
        return "near_target", spec.args[:1], spec.args[1:]
    if not getattr(METRICS.get(spec.kind), "runs_code", False):  # not a Python metric
        return None, (), ()
    try:
        fn = python_function(spec.args[0])
    except Exception:  # noqa: BLE001 -- not importable here: not one of ours
        return None, (), ()
    kind = TERMS.get(fn)
    if kind in ("forward", "collisions") and len(spec.args) != 2:
        return None, (), ()
    if kind == "target_distance" and len(spec.args) not in (2, 3):
        return None, (), ()
    if kind == "spread":
        return kind, spec.args[1:], ()
    return kind, spec.args[1:2], spec.args[2:]


def metric(batch, kind: str, rows: tuple, args: tuple, snap=None) -> np.ndarray:
    """(K,) the metric in every copy (NaN where its metric function gives NaN); ``snap``:
    the batch's snapshot, what a ``snapshot`` term reads."""
    k, width = batch.copies, batch.width
    if kind == "snapshot":
        return np.array([value(snap) for value in args[0]], dtype=float)
    if kind == "spread":
        present = [r for r in rows if r >= 0]
        if len(present) < 2:
            return np.full(k, math.nan)
        p = batch.state[(np.arange(k)[:, None] * width + present), :2]  # (K, m, 2)
        diff = p[:, :, None, :] - p[:, None, :, :]
        d = np.hypot(diff[..., 0], diff[..., 1])
        d[:, np.arange(len(present)), np.arange(len(present))] = np.inf
        return d.min(axis=2).mean(axis=1)
    row = rows[0]
    if row < 0 or kind == "nan":
        return np.full(k, math.nan)
    index = np.arange(k) * width + row
    if kind == "forward":
        return batch.forward[index]
    if kind == "collisions":  # metrics.collisions: any contact reading over 0.5
        touch = np.concatenate([batch.readings[label][index] for label in args], axis=1)
        return (touch.max(axis=1) > 0.5).astype(float)
    if kind == "target_distance":
        return _nearest(batch, index, args[0] if args else "any")
    reach = float(args[0]) if args else 0.5  # near_target: ROBOT [RADIUS] [COLOR]
    d = _nearest(batch, index, args[1] if len(args) > 1 else "any")
    return np.where(np.isnan(d), 0.0, (d <= reach).astype(float))


def _nearest(batch, index: np.ndarray, color: str) -> np.ndarray:
    """(K,) distance from each copy's robot to its nearest target of ``color``, m (NaN
    without one): :func:`coopsim.model.metric_kind.nearest_target`'s hypot and min."""
    spots = [p for p, c in zip(batch.kinds.targets, batch.kinds.colors)
             if color in ("any", c)]
    if not spots:
        return np.full(len(index), math.nan)
    x, y = batch.state[index, 0], batch.state[index, 1]
    return np.min([np.hypot(tx - x, ty - y) for tx, ty in spots], axis=0)
