"""The sensing phase: every module's reading for every robot, from one batched physics read.

Readings are numpy arrays, one per module label, shape (N, width) in robot order; robots without
that module have a row of NaN. The previous step's readings are kept because lost data holds the
last value and odometry integrates. Modules reach the world only through the :class:`Frame`
(:mod:`coopsim.model.module`): arrays, a ray-casting :class:`Geometry` and engine access by role.
"""

from __future__ import annotations

import functools

import numpy as np

from ..model.capabilities import reading_fields
from ..model.module import Frame, Module
from ..model.plugins import MODULES
from ..raycast import JitRayCaster, fan_directions
from ..raycast.jitcast import fan_robots_kernel, robot_shapes
from ..raycast import contiguous as _c
from .noiseplan import draw_noise, draw_some, noise_key, noise_layout, noise_plan  # noqa: F401
from .rates import Rates
from .tables import CommandTables, ParamArrays, ParamTable, RobotTable  # noqa: F401 (theirs)

_BASE_MEASURE = Module.measure.__func__  # modules that keep it: see Sensors.plan


class Geometry:
    """This step's shapes for ray casting: static ones binned once per layout in the caster,
    moving ones (objects, parts, every robot's chassis circle) given with each cast.

    Attributes:
        caster: The ray caster (static shapes set).
        circles, circle_group, segments, segment_group: Moving shapes, world frame, m.
        pose, radius, group: Every robot's pose (N, 3), chassis radius (N,) and group (N,).
        heading: (N, 2) cos, sin of every robot's yaw (fan casts turn it by each angle).
    """

    def __init__(self, caster, circles, circle_group, segments, segment_group, pose, radius,
                 group, heading: np.ndarray | None = None) -> None:
        self.caster = caster
        self.circles, self.circle_group = circles, circle_group
        self.segments, self.segment_group = segments, segment_group
        self.pose, self.radius, self.group = pose, radius, group
        if heading is None:
            heading = np.empty((len(pose), 2))  # cheaper than column_stack for a few
            np.cos(pose[:, 2], out=heading[:, 0])
            np.sin(pose[:, 2], out=heading[:, 1])
        self.heading = heading
        self._moving = None  # the moving shapes as the compiled caster takes them

    def cast(self, origins, directions, max_range, ray_group=None) -> np.ndarray:
        """Distance to the first shape each ray hits (see RayCaster.cast), m."""
        return self.caster.cast(origins, directions, max_range, self.circles, self.segments,
                                ray_group=ray_group, circle_group=self.circle_group,
                                segment_group=self.segment_group)

    def cast_fan(self, rows: np.ndarray, angles: np.ndarray, reach: np.ndarray,
                 origins: np.ndarray | None = None, edge: np.ndarray | None = None) -> np.ndarray:
        """Distances from the chassis edge along ``angles`` (rad, from each heading) for robots
        ``rows``, capped at ``reach`` (len(rows),) m; shape (len(rows), len(angles)).

        ``origins`` (len(rows), 2) world-frame points, m, cast from instead of the centres (a
        sensor mounted off-centre), and ``edge`` (len(rows),) m subtracted instead of the radius
        (0: distances from the origin, a lidar's): any number of angles, the same kernels.

        Rays start at the centre with the robot's own group, so they skip its own assembly,
        and the radius is subtracted: a ray starting on the edge would begin inside a wall the
        robot is pressed into. One compiled kernel (:meth:`JitRayCaster.fan`).
        """
        caster = self.caster
        if origins is not None or edge is not None:
            return self._cast_mounted(caster, rows, angles, reach, origins, edge)
        # The caster straight away: these arrays are the simulation's own, valid.
        if self._moving is None:
            self._moving = (_c(self.circles), _c(self.segments), _c(self.circle_group),
                            _c(self.segment_group))
        every = len(rows) == len(self.pose)
        pose, heading = (self.pose, self.heading) if every else (self.pose[rows],
                                                                 self.heading[rows])
        return caster.fan(_c(pose), _c(heading), _fan(angles), _c(np.asarray(reach, float)),
                          _c(self.radius if every else self.radius[rows]),
                          _c(self.group if every else self.group[rows]), self._moving)


    def _cast_mounted(self, caster, rows, angles, reach, origins, edge) -> np.ndarray:
        """:meth:`cast_fan` from ``origins`` (or the centres) less ``edge`` (or the radius)."""
        pose = self.pose[rows].copy()
        if origins is not None:
            pose[:, :2] = origins
        edge = self.radius[rows] if edge is None else np.asarray(edge, float)
        if self._moving is None:
            self._moving = (_c(self.circles), _c(self.segments), _c(self.circle_group),
                            _c(self.segment_group))
        return caster.fan(_c(pose), _c(self.heading[rows]), _fan(angles),
                          _c(np.asarray(reach, float)), _c(edge), _c(self.group[rows]),
                          self._moving)


def _fan(angles: np.ndarray, _cache: dict = {}) -> np.ndarray:  # noqa: B006 -- the cache
    """(K, 2) cos, sin of ``angles`` (rad), kept for the few fans a world has."""
    key = angles.tobytes()
    fan = _cache.get(key)
    if fan is None:
        if len(_cache) > 64:
            _cache.clear()
        fan = _cache[key] = fan_directions(np.zeros(0), np.asarray(angles, float))[1]
    return fan


class Sensors:
    """Computes readings each step and remembers them for the next.

    Args:
        caster: The ray caster to use (default: ``previous``'s, else a new
            :class:`~coopsim.raycast.JitRayCaster`).
        previous: The sensors this one replaces (a reset, a restored layout).
        kept: (the parameter table, its key when ``previous`` planned on it) when a reset
            kept the table (``Simulation._params_kept``): ``previous``'s sensing plan, made
            at its start on fresh rates as this one's would be, is taken again.
    """

    def __init__(self, caster=None, previous: "Sensors | None" = None,
                 kept: tuple = (None, None)) -> None:
        if caster is None and previous is not None:
            caster = previous.caster
        self.caster = caster if caster is not None else JitRayCaster()
        # The static shapes binned in the caster, as bytes (see geometry): after a reset to
        # the same walls nothing is binned again. A caster serves one simulation.
        self._static: tuple = (previous._static if previous is not None
                               and previous.caster is self.caster else ())
        self.prev: dict[str, np.ndarray] = {}
        self._names: tuple[str, ...] = ()
        self._static_version = self._layout_version = -1
        self._layout_key: tuple[int, int] = (-1, -1)
        self._targets = np.zeros((0, 2))
        self._target_colors: tuple[str, ...] = ()
        self._objects: tuple = ()
        self.rates = Rates()
        self._sealed: dict | None = None  # self.prev when all its arrays are read-only
        self._plan_key: tuple = ()
        self._planned: list[tuple] = []
        self._fixed: tuple | None = None  # (due, noise layout) of a plan without rates
        self._key: int | None = None  # the noise key the composed call took this step (key)
        # with rates: (label -> (rows, values, every) due this step, the step's draw layout)
        self._now: tuple | None = None
        self._objects_kept: tuple = (None, None)  # (moving_geometry's, contiguous): fan_parts
        # (layout key, readings) of the first layout laid out from nothing: a reset to the same
        # robots takes those blank readings again (read-only, so shared) instead of making them
        self._blank: tuple = previous._blank if previous is not None else ((), {})
        params, last = kept
        if previous is not None and last is not None \
                and previous._plan_key[:2] == (id(params), last):
            self._plan_key = (id(params), params.key, *previous._plan_key[2:])
            self._planned, self._fixed = previous._planned, previous._fixed

    def frame(self, world, state: np.ndarray, table: "RobotTable", commands, actuated,
              dt: float, access, extra: dict | None = None, step: int = 0, time: float = 0.0,
              states=None, state3d: np.ndarray | None = None) -> Frame:
        """The modules' view of this step (``state``: (N, 6) robot state, read-only;
        ``extra``: the simulation's board, see ``Simulation.extra``; ``time``: s;
        ``states``: the per-kind state tables, :class:`~coopsim.sim.states.StateTables`;
        ``state3d``: (N, 13) on a 3D engine). The ray geometry and the contact flags are built
        when a module first reads them (:meth:`Frame.defer`), never in a world whose modules
        do not."""
        if self._layout_version != world.layout_version:
            self._layout(world)
        pose = state[:, :3]
        frame = Frame(dt, pose, state[:, 3:6], table.radius, table.axle, table.group,
                      commands, actuated, self._targets, None, None, access,
                      {} if extra is None else extra, step, table.names,
                      self._target_colors, self._objects, time, state3d=state3d,
                      states=states)
        frame.defer("geometry", lambda: self.geometry(world, pose, table.radius, table.group))
        frame.defer("contacts", lambda: world.engine.contacts(pose))
        return frame

    def sense(self, world, params: ParamTable, frame: Frame,
              rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Measure every module of every robot after a physics step.

        Only the modules some robot carries are visited (:meth:`plan`); the others keep their
        last reading. The robots due this step are found for every kind first, then the noise
        of them all is drawn at once (:func:`draw_noise`), then each kind measures. Every
        reading returned is read-only (snapshots share them).

        Args:
            world: The World (its layout must match ``params``).
            frame: This step's :meth:`frame`.
            rng: The run's random generator.
        """
        self._remap(world, len(world.targets))
        readings = self.prev.copy() if self.prev is self._sealed else self._seal(self.prev)
        plan = self.plan(params, world)
        if self._fixed is None:  # some kind has a rate: who is due changes step by step
            due = [self._due(entry, frame.step, frame.dt, frame.time,
                             len(readings[entry[0]])) for entry in plan]
            frame.noise = draw_noise(plan, due, rng)
        else:  # every carrier measures every step: the rows and the draw's split are kept
            due, layout = self._fixed
            frame.noise = draw_noise(plan, due, rng, layout)
        for entry, due_now in zip(plan, due):
            _measure(entry, due_now, frame, readings, rng)
        self.prev = self._sealed = readings
        taken = self.rates.published()
        if taken is not None:
            frame.extra["taken"] = taken
        return readings

    def stages(self, params: ParamTable, world, frame: Frame, readings: dict, entries: tuple,
               rng: np.random.Generator) -> None:
        """Measure the sensing plan's ``entries`` (the kinds the composed call leaves to
        stages after it) into ``readings``, on ``frame`` with their blocks of this step's draw
        (the key the call took: :meth:`key`), as :meth:`sense` measures them."""
        carried = self.carried(world)
        self.plan(params, world)
        due, layout = (None, self._fixed[1]) if self._fixed is not None else self._now
        key, self._key = self._key, None  # a pass that draws nothing took none: taken here
        labels = {entry[0] for entry in entries}
        if any(part[0] in labels for part in layout[2]):
            frame.noise = draw_some(noise_key(rng) if key is None else key, layout, labels)
        for entry in entries:
            readings[entry[0]] = carried[entry[0]]
            _measure(entry, (entry[2], entry[3], entry[6]) if due is None else due[entry[0]],
                     frame, readings, rng)

    def key(self, params: ParamTable, world, rng: np.random.Generator, clock: tuple) -> tuple:
        """(this step's noise key, or None when the step draws no noise; the draw's layout
        :func:`noise_layout`; None, or for a plan with rates label -> (rows, values, every)
        of the robots due this step, marked measured): what the composed call draws its
        blocks from inside, the same bits as :meth:`sense`'s draw. ``clock``: (step, dt s,
        time s) of the step measured (who is due at a ``rate``)."""
        plan = self.plan(params, world)
        due = None
        if self._fixed is not None:
            layout = self._fixed[1]
        else:  # some kind has a rate: who is due changes step by step, as in sense
            carried = self.carried(world)
            now = [self._due(entry, *clock, len(carried[entry[0]])) for entry in plan]
            layout = noise_layout(plan, now)
            due = {entry[0]: d for entry, d in zip(plan, now)}
            self._now = (due, layout)
        self._key = noise_key(rng) if layout[2] else None  # the stages' draw (stages)
        return self._key, layout, due

    def layout(self, params: ParamTable, world) -> tuple:
        """The draw's layout (:func:`noise_layout`) of a step where every carrier measures,
        no key taken (what :meth:`key` answers beside the key)."""
        plan = self.plan(params, world)
        if self._fixed is not None:
            return self._fixed[1]
        return noise_layout(plan, [(entry[2], entry[3], entry[6]) for entry in plan])

    def adopt(self, world, measured: dict, extra: dict) -> dict[str, np.ndarray]:
        """Take readings measured outside :meth:`sense` (a fused step's) as this step's, as
        :meth:`sense` would have kept them (read-only, the others carried over)."""
        self._remap(world, len(world.targets))
        prev = self.prev if self.prev is self._sealed else self._seal(self.prev)
        for out in measured.values():
            out.setflags(False)  # write=False, positional: half the keyword's cost
        self.prev = self._sealed = readings = {**prev, **measured}  # one C-level merge
        if self.rates.steps:  # some kind has a rate (else published() says None)
            extra["taken"] = self.rates.published()
        return readings

    def _due(self, entry: tuple, step: int, dt: float, time: float, n: int) -> tuple:
        """(rows, values, every) of one kind of the plan at ``step`` (``dt``, ``time`` s;
        ``n`` robots): the robots due at their ``rate`` (:mod:`coopsim.sim.rates`), marked as
        measured now."""
        label, _, rows, values, timed, _, every, _, _ = entry
        if timed:
            due = self.rates.due(label, values, rows, step, dt)
            if due is not None:  # some robots hold their reading (coopsim.sim.rates)
                rows, values = rows[due], ParamArrays({k: v[due] for k, v in values.items()})
                every = len(rows) == n
            self.rates.mark(label, rows, step, time)
        return rows, values, every

    def plan(self, params: ParamTable, world) -> list[tuple]:
        """The modules some robot carries, as (label, module, rows, values, timed, plain,
        every, k, lossy), rebuilt when the parameter table is: ``timed`` when a robot has a
        ``rate`` (:mod:`coopsim.sim.rates`), ``plain`` when ``measure`` is the base one and
        draws nothing (no noise, lost data or declared ``noise_draws``) (``sense`` then ``clip`` gives the same reading, with no draw),
        ``every`` when every robot carries it, ``k`` the normals it takes per measured robot
        and ``lossy`` whether it takes a uniform for lost data (:func:`noise_plan`). A small
        world skips the modules nobody carries."""
        key = (id(params), params.key, len(world.robots), len(world.targets))
        if self._plan_key == key:
            return self._planned
        plan = []
        for label, module in params.modules:
            rows, values = params.rows[label], params.values[label]
            if not len(rows) or idle(module, values):
                continue
            timed = label in self.rates.steps or ("rate" in values
                                                  and "rate" not in values.zero)
            draws = noise_plan(module, values, len(world.targets))
            # nothing drawn (no noise, lost data or slip): sense then clip is the reading
            plain = (getattr(module.measure, "__func__", None) is _BASE_MEASURE
                     and not draws[0] and not draws[1])
            plan.append((label, module, rows, values, timed, plain,
                         len(rows) == len(world.robots), *draws))
        self._plan_key, self._planned = key, plan
        self._fixed = None
        if not any(entry[4] for entry in plan):  # no rates: each step's rows are the plan's
            due = [(entry[2], entry[3], entry[6]) for entry in plan]
            self._fixed = (due, noise_layout(plan, due))
        return plan

    @staticmethod
    def _seal(readings: dict) -> dict:
        """A copy of ``readings`` with every array read-only (readings laid out or zeroed
        here, or set from outside, as the snapshots share them)."""
        for arr in readings.values():
            arr.setflags(False)  # write=False
        return dict(readings)

    def carried(self, world) -> dict[str, np.ndarray]:
        """The last readings laid out for the world's current robots and targets (no new
        measurement: inserted robots read zeros until the next step)."""
        self._remap(world, len(world.targets))
        if self.prev is not self._sealed:
            self.prev = self._sealed = self._seal(self.prev)
        return self.prev

    def zero(self, label: str, index: int) -> None:
        """Zero robot ``index``'s remembered reading of ``label`` (the next step builds on it)."""
        arr = self.prev[label].copy()
        arr[index] = 0.0
        self.prev = {**self.prev, label: arr}

    def _layout(self, world) -> None:
        """The targets, their colours and the objects' specs, taken again when the layout
        changes."""
        if self._layout_version != world.layout_version:
            self._targets = np.array([t.position[:2] for t in world.targets],
                                     dtype=float).reshape(-1, 2)
            self._target_colors = tuple(t.color for t in world.targets)
            self._objects = tuple(spec for spec, _ in world.objects.values())
            self._layout_version = world.layout_version

    def targets(self, world) -> np.ndarray:
        """(T, 2) the positions of ``world``'s targets, world frame, m (taken again when the
        layout changes, as :meth:`frame` takes them)."""
        if self._layout_version != world.layout_version:
            self._layout(world)
        return self._targets

    def geometry(self, world, pose, radius, group) -> Geometry:
        """This step's ray geometry for robots at ``pose`` (N, 3, read-only) with chassis
        ``radius`` (N,) m and ``group`` (N,): moving shapes made now, static ones binned once
        per layout (a frame's, or the composed step's: coopsim.sim.compose)."""
        self._bin_static(world)
        mc, mcg, ms, msg = world.engine.moving_geometry()
        circles = np.empty((len(pose), 3))  # every chassis, [x, y, r]
        heading = np.empty((len(pose), 2))  # one compiled call, numpy's bits
        robot_shapes(pose, radius, circles, heading)
        circle_group = group
        if len(mc):  # movable objects and parts
            circles, circle_group = np.concatenate((mc, circles)), np.concatenate((mcg, group))
        return Geometry(self.caster, circles, circle_group, ms, msg, pose, radius, group,
                        heading)

    def _bin_static(self, world) -> None:
        """The world's static shapes binned in the caster, once per layout."""
        if self._static_version != world.layout_version:
            sc, scg, ss, ssg = world.engine.static_geometry()
            static = tuple((a.dtype.str, a.shape, a.tobytes())
                           for a in map(np.asarray, (sc, scg, ss, ssg)))
            if static != self._static:  # the very same shapes: already binned, bit for bit
                self.caster.set_static(sc, ss, scg, ssg)
                self._static = static
            self._static_version = world.layout_version

    def fan_parts(self, world, n: int, k: int) -> tuple | None:
        """(the compiled caster's kernel, the static shapes, the moving objects' shapes) that
        cast a fan of ``k`` rays from each of ``n`` robots in one call by testing every pair
        (:data:`~coopsim.raycast.jitcast.fan_robots_kernel`: ``kernel(state, radius, groups,
        fan, reach, static, objects, heading, out)``, the grid's bits), for the composed call,
        which casts inside itself; None when the caster would walk its grid."""
        objects = self._objects_now(world)
        fixed = self.caster.robots_pairs(n, k, objects)
        return None if fixed is None else (fan_robots_kernel, fixed, objects)

    def _objects_now(self, world) -> tuple:
        """The static shapes binned (once per layout) and the moving objects' shapes now as
        the compiled caster takes them: (circles, segments, their int64 groups), contiguous."""
        self._bin_static(world)
        moving = world.engine.moving_geometry()
        kept = self._objects_kept
        if kept[0] is not moving:  # the engines hand the same tuple back while nothing moves
            mc, mcg, ms, msg = moving
            kept = self._objects_kept = (moving, (_c(mc), _c(ms), _c(mcg), _c(msg)))
        return kept[1]

    def _remap(self, world, n_targets: int) -> None:
        """Carry previous readings over a layout change, matched by robot name."""
        key = (world.layout_version, n_targets)
        if key == self._layout_key:
            return
        self._layout_key = key
        names = tuple(r.name for r in world.robots)
        widths = _widths(tuple(MODULES.items()), n_targets)
        same = names == self._names and all(
            k in self.prev and self.prev[k].shape[1] == w for k, w in widths.items())
        if same:
            return
        prev = self._blank_readings(world, names, widths)  # read-only: copied to carry
        old = {n: i for i, n in enumerate(self._names)}
        kept = [(i, old[name]) for i, name in enumerate(names) if name in old]
        for label, width in widths.items():
            last = self.prev.get(label)
            if kept and last is not None and last.shape[1] == width:
                arr = prev[label] = prev[label].copy()
                for i, j in kept:
                    arr[i] = last[j]
        self.prev, self._names = prev, names
        self.rates.remap(names)

    def _blank_readings(self, world, names: tuple, widths: dict) -> dict[str, np.ndarray]:
        """Readings before any measurement for robots ``names``: zeros, NaN where a robot
        does not carry the module; read-only and kept, so that the next start with the same
        robots and modules (a reset) shares them instead of making them again."""
        key = (names, tuple(tuple(r.modules) for r in world.robots), tuple(widths.items()))
        if self._blank[0] == key:
            return dict(self._blank[1])
        prev = {}
        for label, width in widths.items():
            arr = np.zeros((len(names), width))
            arr[[label not in r.modules for r in world.robots]] = np.nan
            arr.setflags(write=False)
            prev[label] = arr
        self._blank = (key, prev)
        return dict(prev)


def _measure(entry: tuple, due: tuple, frame: Frame, readings: dict,
             rng: np.random.Generator) -> None:
    """One kind of the sensing plan (``entry``) measured for its robots ``due`` (rows,
    values, every) into ``readings`` (read-only), the last reading kept where none is due:
    ``sense`` then ``clip`` for a kind with no noise to draw (``plain``), else ``measure``
    (a kernel's: :class:`~coopsim.model.capabilities.ModuleKernel`)."""
    label, module, plain = entry[0], entry[1], entry[5]
    rows, values, every = due
    prev = readings[label]
    if every:  # the usual case: no gather, no scatter
        out = (module.clip(module.sense(frame, rows, values, prev), values) if plain
               else module.measure(frame, rows, values, prev, rng))
    elif not len(rows):  # nobody due: the last reading stays
        return
    else:
        out = prev.copy()
        out[rows] = module.measure(frame, rows, values, prev[rows], rng)
    out.setflags(False)  # write=False
    readings[label] = out


@functools.lru_cache(maxsize=16)
def _widths(modules: tuple, n_targets: int) -> dict[str, int]:
    """Module label -> its reading's width among ``n_targets`` targets, for the registered
    ``modules`` (label, class): worked out once per registry and target count, not at every
    start. Callers do not change the dict."""
    return {label: len(reading_fields(m, n_targets)) for label, m in modules}


def idle(module, values) -> bool:
    """Whether a kind that senses only on demand is left out of the step: its ``idle_unless``
    parameter (camera3d's ``publish``) is 0 for every robot carrying it, so its readings stay
    as they were and a camera nobody reads costs no call at all."""
    name = getattr(module, "idle_unless", "")
    return bool(name) and name in values and name in getattr(values, "zero", ())
