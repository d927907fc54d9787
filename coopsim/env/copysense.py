"""What the ``copies`` batch backend computes around its compiled step
(:mod:`coopsim.env.copies`): the readings of the modules, and the task's metric terms.

Readings: every module the batch measures runs its OWN ``measure`` (its ``sense``, then the
``noise`` and ``lost`` parameters, then its ``clip``) on a :class:`~coopsim.model.module.Frame`
of the K copies' arrays, each copy in its own frame: the pose and velocity the kernel left, the
axle, ``dt``, the template's targets, the wheels the kernel drove, the contact flags and the
previous reading. A ``fan`` module's ``sense`` asks the frame's geometry for its fan, and gets
the distances the kernel cast (:class:`KernelFans`). So a ``frame`` module (``motors``,
``odometry``, ``gps``, ``compass``, ``target``) reads exactly what its code computes in a world,
and the modules are measured in the simulation's order, each over every robot of every copy,
with a generator seeded as the world backend's run is: the same draws, in the same order.

Task terms: the ``[MONITORS]`` Python metrics of :data:`TERMS` and the metric kinds declaring a
``copy_term`` (:class:`~coopsim.model.metric_kind.MetricKind`), vectorised over the copies with
the metric functions' own operations.

Frames and units: each copy's own frame (the template scenario's world frame), m, rad, s.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.capabilities import CopyKernel, capability
from ..model.module import Frame, Module
from ..model.plugins import METRICS, MODULES
from ..model.validate import python_function
from . import metrics
from .mapping import LearningError

_BASE_MEASURE = Module.measure.__func__  # modules that keep it (see CopySensing)
SERVED = ("fan", "contact", "frame", "wheels")  # CopyKernel kinds whose readings it gives
#: the Python metrics it computes per copy: function -> its term's kind
TERMS = {metrics.forward_speed: "forward", metrics.collisions: "collisions",
         metrics.target_distance: "target_distance", metrics.spread: "spread"}


class Unsupported(LearningError):
    """The scenario (or the batch asked for) is outside what the copies backend runs."""


def copy_kind(label: str) -> str:
    """Module ``label``'s CopyKernel kind ("" when none)."""
    found = capability(MODULES.get(label), CopyKernel)
    return found.copy_kind if found is not None else ""


def _draws(values) -> bool:
    """Whether a module's parameters make its ``measure`` draw (noise, lost data, slip)."""
    return any(k in values and k not in values.zero for k in ("noise", "lost", "slip"))


class KernelFans:
    """A frame's ``geometry`` for the copies: the fan distances the kernel cast (N, B), m,
    handed to the fan module's ``sense`` (rays of its declared ``copy_angles``, from the
    centre, less the radius, within max_range: what :meth:`Geometry.cast_fan` gives), and
    ``heading`` (N, 2), the cos and sin of each yaw the kernel took."""

    def __init__(self, sonar: np.ndarray, heading: np.ndarray) -> None:
        self.sonar, self.heading = sonar, heading

    def cast_fan(self, rows, angles, reach, origins=None, edge=None) -> np.ndarray:
        if origins is not None or edge is not None:
            raise Unsupported("a fan cast from a mount (origins, edge) is not the kernel's")
        return self.sonar if len(rows) == len(self.sonar) else self.sonar[rows]


class CopySensing:
    """The readings of the batch's modules (see the module).

    Args:
        sim: The template Simulation (one copy). copies: K. observe: The labels observed.
        fan: The fan module the kernel casts ("" for none).

    Raises:
        Unsupported: an observed module the backend does not serve, or a ``rate``.
    """

    def __init__(self, sim, copies: int, observe, fan: str) -> None:
        from ..sim.sensing import ParamArrays  # sim/ imported when a batch is made

        width = len(sim.robots.names)
        self.n, self.dt = copies * width, sim.dt
        self.targets = np.array([t.position[:2] for t in sim.world.targets],
                                dtype=float).reshape(-1, 2)
        self.colors = tuple(t.color for t in sim.world.targets)
        self.plan = []  # (label, module, rows, values, direct), the simulation's module order
        for label, module in sim.params.modules:
            rows, values = sim.params.rows[label], sim.params.values[label]
            kind = copy_kind(label)
            if not len(rows) or not (label in observe or _draws(values)):
                continue
            if kind not in SERVED or (kind == "fan" and label != fan):
                if label in observe:
                    raise Unsupported(f"observed module {label!r} (the copies backend serves "
                                      f"the CopyKernel kinds {', '.join(SERVED)})")
                continue  # unobserved: its draws are left out (noise stays the same noise)
            if "rate" in values and "rate" not in values.zero:
                raise Unsupported(f"{label} has a rate (held readings are not modelled)")
            every = (np.arange(copies)[:, None] * width + rows).ravel()
            tiled = ParamArrays({k: np.tile(v, copies) for k, v in values.items()})
            # a fan or contact flags without draws, whose measure is the base one: the
            # kernel's array is the reading (already within [0, max_range])
            direct = kind in ("fan", "contact") and not _draws(values) and \
                getattr(MODULES.get(label).measure, "__func__", None) is _BASE_MEASURE
            self.plan.append((label, MODULES.get(label), every, tiled, direct))
        self.widths = {label: module_width(label, len(self.targets))
                       for label, *_ in self.plan}
        self.prev = {label: np.zeros((self.n, w)) for label, w in self.widths.items()}
        self.rng = np.random.Generator(np.random.PCG64(0))  # restart seeds it
        self.layout = _noise_layout(sim, copies)

    def restart(self, seed: int) -> np.random.Generator:
        """Every reading zeroed and the run's generator seeded (a whole batch's reset, as
        the simulation's); returns the generator the first readings draw from (its own)."""
        from ..sim.simulation import make_rng

        for arr in self.prev.values():
            arr[...] = 0.0
        self.rng = make_rng(seed)
        return make_rng(seed)

    def zero(self, rows: np.ndarray) -> None:
        """Zero the remembered readings of robots ``rows`` (their copies start over)."""
        for arr in self.prev.values():
            arr[rows] = 0.0

    def measure(self, frame: Frame, rng) -> dict:
        """Every planned module's reading (N, width) this step; remembered for the next.
        The noise is the world backend's draw (one key a step, the sensing plan's layout over
        the copies' rows: coopsim.sim.sensing.draw_noise), so the two read alike."""
        if self.layout[2]:
            from ..sim.sensing import draw_noise

            frame.noise = draw_noise([], [], rng, self.layout)
        for label, module, rows, values, direct in self.plan:
            every = len(rows) == self.n
            prev = self.prev[label]
            if direct:  # the kernel's own array, which the next step overwrites: no prev is
                # read for it (no lost data), and observations are copies
                out = frame.geometry.sonar if copy_kind(label) == "fan" else frame.contacts
                if every:
                    self.prev[label] = out
                    continue
                out = out[rows]
            else:
                out = module.measure(frame, rows, values, prev if every else prev[rows], rng)
            if every:
                self.prev[label] = np.array(out, dtype=float)
            else:
                prev[rows] = out
        return self.prev


def _noise_layout(sim, copies: int) -> tuple:
    """coopsim.sim.sensing.noise_layout of the world backend's plan for ``copies`` copies of
    ``sim``'s robots (every drawing kind in the simulation's module order, copy-major rows),
    whether this backend serves the kind or not: each kind's block sits where the world
    backend's does."""
    from ..sim.sensing import idle, noise_plan

    parts, i, j = [], 0, 0
    for label, module in sim.params.modules:
        rows, values = sim.params.rows[label], sim.params.values[label]
        if not len(rows) or idle(module, values):
            continue
        k, lossy = noise_plan(module, values, len(sim.world.targets))
        n = copies * len(rows)
        a, b = n * k, n if lossy else 0
        if a or b:
            parts.append((label, n, k, i, a, j, b))
            i, j = i + a, j + b
    return i, j, tuple(parts)


def module_width(label: str, n_targets: int) -> int:
    """How many values module ``label`` reads with ``n_targets`` targets."""
    from ..model.capabilities import reading_fields

    return len(reading_fields(MODULES.get(label), n_targets))


def frame(batch, moved: bool) -> Frame:
    """The modules' view of the batch's copies after a step (``moved`` False: a reset's, no
    wheels driven), each copy in its own frame."""
    s = batch._shared
    motion = {batch.motion: batch.wheels} if moved else {}
    fans = KernelFans(batch.sonar, batch._scratch["sight"])
    out = Frame(batch.dt, batch.state[:, :3], batch.state[:, 3:6], s["radius"], s["axle"],
                s["group"], {}, motion, batch.sensing.targets, batch.contact, fans, None, {},
                target_colors=batch.sensing.colors)
    kept = out.state(batch.motion).arrays.get("driven")  # what the drive's own reading reads
    if kept is not None and moved:
        kept[...] = batch.wheels
    return out


# -- task terms -----------------------------------------------------------------------------------

def metric_terms(base, task, sim) -> dict:
    """Metric name -> (kind, robot rows (tuple), args) for the task's terms.

    Raises:
        Unsupported: a callable task, or a metric the backend does not compute.
    """
    if callable(task):
        raise Unsupported("a callable task reads a simulation snapshot")
    wanted = {t.metric for t in task.rewards + task.ends if t.metric}
    specs = {m.name: m for m in (base.monitors.metrics if base.monitors else ())}
    out = {}
    for name in sorted(wanted):
        kind, robots, args = _term(specs.get(name))
        if kind is None:
            raise Unsupported(f"metric {name} (the copies backend computes the Python metrics "
                              f"{', '.join(f.__name__ for f in TERMS)} and the metric kinds "
                              "declaring a copy_term)")
        rows = tuple(sim.robots.index.get(r, -1) for r in robots)
        if kind == "collisions" and rows[0] >= 0:
            kind = _contact_kind(sim.world.robots[rows[0]], robots[0])
        out[name] = (kind, rows, args)
    return out


def _contact_kind(robot, name: str) -> str:
    from ..model.capabilities import Learnable

    contact = [m for m in robot.modules
               if capability(MODULES.get(m), Learnable, default=True).contact]
    if any(copy_kind(m) != "contact" for m in contact):
        raise Unsupported(f"collisions of {name} read {contact}")
    return "collisions" if contact else "nan"


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


def metric(batch, kind: str, rows: tuple, args: tuple) -> np.ndarray:
    """(K,) the metric in every copy (NaN where its metric function gives NaN)."""
    k, width = batch.copies, batch.width
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
    if kind == "collisions":
        return (batch.contact[index].max(axis=1) > 0.5).astype(float)
    if kind == "target_distance":
        return _nearest(batch, index, args[0] if args else "any")
    reach = float(args[0]) if args else 0.5  # near_target: ROBOT [RADIUS] [COLOR]
    d = _nearest(batch, index, args[1] if len(args) > 1 else "any")
    return np.where(np.isnan(d), 0.0, (d <= reach).astype(float))


def _nearest(batch, index: np.ndarray, color: str) -> np.ndarray:
    """(K,) distance from each copy's robot to its nearest target of ``color``, m (NaN
    without one): :func:`coopsim.model.metric_kind.nearest_target`'s hypot and min."""
    spots = [p for p, c in zip(batch.sensing.targets, batch.sensing.colors)
             if color in ("any", c)]
    if not spots:
        return np.full(len(index), math.nan)
    x, y = batch.state[index, 0], batch.state[index, 1]
    return np.min([np.hypot(tx - x, ty - y) for tx, ty in spots], axis=0)
