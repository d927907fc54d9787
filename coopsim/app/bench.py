"""Benchmarks of the simulation core (``coopsim bench step``, ``coopsim bench realtime``).

Step time against robot count: N robots of the reference type (``RobotType.reference``: the
built-in ``single``, 11 sonars) spread over a square arena with static obstacles, every robot
driving and its sonars cast every step, dt = 0.02 s (SwarmSimX's setting). Robots drive through
their motion module as a learner's action would (``Learnable.from_action``). The world is the
benchmark suite's (``benchmarks/suite``: ``step.Step`` and every case on ``common.swarm`` build
it with :func:`swarm_stepper`); these two commands are the suite's step case for an installed
coopsim. Figures are per step (commands, actuators, physics, sensors, rules), after a warm-up,
the compiled kernels loaded: wall time, and beside it the process's CPU time (every thread),
which another process on the machine inflates far less; :func:`plot_steps` draws the wall times
as SwarmSimX's study 1 did: box plots of the step time against the number of robots, with the
step's deadline.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from dataclasses import dataclass, field

import click
import numpy as np

from ..model.capabilities import Learnable, capability
from ..model.errors import CoopsimError
from ..model.plugins import (MODULES, default_engine, engine_with, motion_module,
                             reference_type)
from ..model.specs import (FloorSpec, ObjectSpec, RobotSpec, ScenarioSpec, Settings, TargetSpec,
                           WorldSpec)
from ..raycast import JitRayCaster
from ..sim.simulation import Simulation
from ..sim.stepper import Stepper

SPACING = 1.5  # m between robot start positions


PHASES = ("actuators", "physics", "sensors")  # commands go with actuators, rules with sensors


@dataclass(frozen=True)
class StepRow:
    """One line of the step-time table (times in ms).

    Attributes:
        robots: N. median, p95: of the whole step, wall time. phase_ms: phase -> median.
        engine: Physics engine label. caster: ``jit`` (the sonar's caster).
        samples: ``step`` and each phase -> every timed step's time, ms.
        rss_mb: The process's resident memory after the run, MiB (0 where /proc is missing).
        cpu_median: The median step's CPU time, ms (the process's, every thread).
    """

    robots: int
    median: float
    p95: float
    phase_ms: dict
    engine: str = ""
    caster: str = "jit"
    samples: dict = field(default_factory=dict)
    rss_mb: float = 0.0
    cpu_median: float = 0.0

    @property
    def realtime_factor(self) -> float:
        """Sim seconds per wall second at the median step time, dt = 0.02 s."""
        return 20.0 / self.median


def swarm_scenario(n: int, seed: int = 0, dt: float = 0.02,
                   robot_type: str | None = None) -> ScenarioSpec:
    """N robots of ``robot_type`` (default: the reference type) on a grid with jitter, in an
    arena with one obstacle per 25 robots."""
    robot_type = robot_type or reference_type()
    rng = np.random.default_rng(seed)
    side = math.ceil(math.sqrt(n))
    size = side * SPACING + 2.0
    half = size / 2
    obstacles = []
    for k in range(max(1, n // 25)):
        x, y = rng.uniform(-half + 1, half - 1, 2)
        # obstacles sit between grid points so no robot starts inside one
        gx = (math.floor((x + half - 1) / SPACING) + 1.0) * SPACING - half + 1
        gy = (math.floor((y + half - 1) / SPACING) + 1.0) * SPACING - half + 1
        shape = "box" if k % 2 else "cylinder"
        obstacles.append(ObjectSpec(f"OBS_{k}", shape, (0.5, 0.5, 0.5),
                                    (min(gx, half - 0.5), min(gy, half - 0.5), 0.25)))
    robots = []
    for i in range(n):
        x = -half + 1.0 + (i % side) * SPACING + rng.uniform(-0.2, 0.2)
        y = -half + 1.0 + (i // side) * SPACING + rng.uniform(-0.2, 0.2)
        robots.append(RobotSpec(robot_type, f"r{i}", (x, y, 0.0),
                                rng.uniform(-math.pi, math.pi)))
    world = WorldSpec(FloorSpec(size, size), tuple(obstacles))
    return ScenarioSpec(world, targets=(TargetSpec("red", (0.0, 0.0, 0.0)),),
                        robots=tuple(robots), settings=Settings(dt=dt, mode="lockstep", seed=seed),
                        name=f"swarm{n}")


def motion_plan(stepper: Stepper) -> list[tuple]:
    """(robot, motion module label, it as a Learnable, the robot's values of its parameters) of
    every robot of the run that has a motion module (``Learnable.action_fields``), in snapshot
    order: how the benchmarks drive a robot, as a learner's action does
    (``Learnable.from_action``)."""
    robots = {r.name: r for r in stepper.sim.world.robots}
    out = []
    for name in stepper.snapshot.robots:
        modules = robots[name].modules
        label = motion_module(modules)
        if label is not None:
            out.append((name, label, capability(MODULES.get(label), Learnable, default=True),
                        modules[label]))
    return out


def cases(engines: str, casters_: str, counts: str) -> list[tuple[str, str, int]]:
    """(engine, caster, robot count) of every run a bench's comma-separated ``--engine``,
    ``--caster`` and ``--robots`` ask for, engine by engine.

    Raises:
        CoopsimError: a count that is not an integer.
    """
    try:
        numbers = [int(c) for c in counts.split(",")]
    except ValueError:
        raise CoopsimError(f"--robots takes comma-separated counts, not {counts!r}") from None
    return [(e, k, n) for e in engines.split(",") for k in casters_.split(",") for n in numbers]


def make_caster(kind: str):
    """The sonar's caster for a benchmark: ``jit``, the one caster (a column of the tables).

    Raises:
        CoopsimError: any other kind.
    """
    if kind != "jit":
        raise CoopsimError(f"caster must be jit, not {kind!r}")
    return JitRayCaster()


def kernels_ready() -> None:
    """Load every registered compiled kernel (from numba's cache, or compiled) before anything
    is timed."""
    from ..model.compiled import load_pending

    load_pending()


def swarm_stepper(n: int, engine: str | None = None, caster: str = "jit",
                  robot_type: str | None = None, mode: str = "lockstep", seed: int = 0,
                  params: tuple = (), obstacles: bool = True) -> Stepper:
    """A stepper over the benchmarks' world: ``n`` driving robots of ``robot_type`` (default the
    reference type, 11-ray sonar) in :func:`swarm_scenario`'s arena, dt 0.02 s, the compiled
    kernels loaded (:func:`kernels_ready`), no tick taken yet.

    Args:
        engine: Engine label (None: the default). caster: ``jit`` or ``numpy``.
        mode: The stepper's mode (``lockstep``, or ``realtime`` to pace it).
        params: (module, parameter, value) set on every robot, e.g. ``("lidar", "rate", 5.0)``.
        obstacles: False: the arena without its static objects (the mujoco engine's 3D start
            check finds robots of the grid's jitter inside the cylinders the 2D engines pass).
    """
    from dataclasses import replace

    from ..model.specs import ParamSetting

    spec = swarm_scenario(n, seed, robot_type=robot_type)
    if not obstacles:
        spec = replace(spec, world=replace(spec.world, objects=()))
    if params:
        spec = replace(spec, robots=tuple(
            replace(r, params=tuple(ParamSetting(*p) for p in params)) for r in spec.robots))
    stepper = driving(Simulation(spec, engine=engine, caster=make_caster(caster)), mode, seed)
    kernels_ready()
    return stepper


def bench_steps(n: int, steps: int = 100, warmup: int = 10, seed: int = 0,
                engine: str | None = None, caster: str = "jit",
                robot_type: str | None = None) -> StepRow:
    """Median and p95 step time for ``n`` robots (of ``robot_type``, default the reference
    type), with a per-phase breakdown (median ms), every sample and the median step's CPU."""
    stepper = swarm_stepper(n, engine, caster, robot_type, seed=seed)
    sim = stepper.sim
    for _ in range(warmup):
        stepper.tick()
    samples = {"step": [], **{k: [] for k in PHASES}}
    cpu = []
    for _ in range(steps):
        c0, t0 = time.process_time(), time.perf_counter()
        sim.command(stepper.slots.take())
        sim.actuate()
        t1 = time.perf_counter()
        sim.physics()
        t2 = time.perf_counter()
        sim.sense()
        sim.apply_rules()
        t3, c3 = time.perf_counter(), time.process_time()
        samples["step"].append((t3 - t0) * 1e3)
        cpu.append((c3 - c0) * 1e3)
        for key, a, b in zip(PHASES, (t0, t1, t2), (t1, t2, t3)):
            samples[key].append((b - a) * 1e3)
    ms = sorted(samples["step"])
    return StepRow(n, statistics.median(ms), ms[min(len(ms) - 1, int(0.95 * len(ms)))],
                   {k: statistics.median(samples[k]) for k in PHASES},
                   sim.world.engine.label, caster, samples, rss_mib(), statistics.median(cpu))


def driving(sim: Simulation, mode: str, seed: int) -> Stepper:
    """A stepper of ``sim`` whose robots all hold a random action, each value uniform in
    0.1..0.5 (wheel speeds, m/s, for the reference robot)."""
    stepper = Stepper(sim, mode=mode)
    rng = np.random.default_rng(seed)
    motions = motion_plan(stepper)
    width = len(motions[0][2].action_fields) if motions else 0
    for (name, label, module, params), action in zip(motions, rng.uniform(
            0.1, 0.5, (len(motions), width))):
        stepper.slots.put(name, label, module.from_action(action, params), attach=False)
    return stepper


@dataclass(frozen=True)
class RealtimeRow:
    """One realtime run of the step benchmark's world (``coopsim bench realtime``).

    Attributes:
        robots, engine, caster: As :class:`StepRow`. seconds: Sim time run, s.
        steps: Steps taken. missed: Of them, those that started after their deadline.
        rtf: Sim seconds per wall second over the whole run (1 = real time).
        step_ms: The step's own time (p50, p95, p99), ms. rss_mb: Resident memory after, MiB.
        cpu_ms: The CPU time the stepper's thread spent in a step (p50, p95), ms: the step's
            cost without the time other processes took the core from it.
    """

    robots: int
    engine: str
    caster: str
    seconds: float
    steps: int
    missed: int
    rtf: float
    step_ms: tuple[float, float, float]
    rss_mb: float
    cpu_ms: tuple[float, float] = (0.0, 0.0)

    @property
    def missed_share(self) -> float:
        """Share of the steps that missed their deadline."""
        return self.missed / self.steps if self.steps else 0.0


def bench_realtime(n: int, seconds: float = 20.0, engine: str | None = None,
                   caster: str = "jit", seed: int = 0, warmup: int = 5,
                   robot_type: str | None = None) -> RealtimeRow:
    """Run ``n`` driving robots with sonar (the step benchmark's world, dt 0.02 s) in real time
    for ``seconds`` of sim time, paced by the stepper's own realtime loop, after ``warmup``
    unpaced steps (the first builds the static grids); every paced step counts. Robots of
    ``robot_type`` (default: the reference type)."""
    stepper = swarm_stepper(n, engine, caster, robot_type, mode="realtime", seed=seed)
    sim = stepper.sim
    for _ in range(warmup):
        stepper.tick()
    times, cpu, tick = [], [], stepper.tick

    def timed_tick():
        t0, c0 = time.perf_counter(), time.thread_time()
        snapshot = tick()
        times.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.thread_time() - c0) * 1e3)
        return snapshot

    stepper.tick = timed_tick  # the loop's _guarded_tick calls self.tick()
    start_step, start_time, t0 = sim.snapshot.step, sim.snapshot.time, time.perf_counter()
    stepper.run(duration=start_time + seconds)
    wall, snap = time.perf_counter() - t0, stepper.snapshot
    p = np.percentile(times, (50, 95, 99)) if times else (0.0, 0.0, 0.0)
    c = np.percentile(cpu, (50, 95)) if cpu else (0.0, 0.0)
    return RealtimeRow(n, sim.world.engine.label, caster, snap.time - start_time,
                       snap.step - start_step, stepper.missed, (snap.time - start_time) / wall,
                       tuple(float(v) for v in p), rss_mib(), tuple(float(v) for v in c))


def format_realtime(rows: list[RealtimeRow]) -> str:
    """Markdown table of realtime runs."""
    out = ["| engine | caster | robots | sim s | steps | missed | missed % | x real time "
           "| step p50 ms | p95 | p99 | CPU p50 ms | p95 | RSS MiB |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p50, p95, p99 = r.step_ms
        out.append(f"| {r.engine} | {r.caster} | {r.robots} | {r.seconds:.1f} | {r.steps} | "
                   f"{r.missed} | {100 * r.missed_share:.2f} | {r.rtf:.3f} | {p50:.2f} | "
                   f"{p95:.2f} | {p99:.2f} | {r.cpu_ms[0]:.2f} | {r.cpu_ms[1]:.2f} | "
                   f"{r.rss_mb:.0f} |")
    return "\n".join(out)


def rss_mib() -> float:
    """Resident memory of this process now, MiB (0 without /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def format_table(rows: list[StepRow]) -> str:
    """Markdown table of the rows."""
    out = ["| engine | caster | robots | median ms | CPU median ms | p95 ms | actuators "
           "| physics | sensors | x real time | RSS MiB |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p = r.phase_ms
        out.append(f"| {r.engine} | {r.caster} | {r.robots} | {r.median:.2f} | "
                   f"{r.cpu_median:.2f} | {r.p95:.2f} | {p['actuators']:.2f} | "
                   f"{p['physics']:.2f} | {p['sensors']:.2f} | {r.realtime_factor:.1f} | "
                   f"{r.rss_mb:.0f} |")
    return "\n".join(out)


def plot_steps(rows: list[StepRow], path: str, dt_ms: float = 20.0) -> None:
    """SwarmSimX's study 1: box plots of the step time against the robot count, one panel per
    engine and caster; each phase's median as a line; the step's deadline ``dt_ms`` dashed.
    Boxes: quartiles; whiskers: the farthest samples within 1.5 interquartile ranges; crosses:
    the samples beyond. Saved at ``path`` (PNG, SVG, PDF by the suffix).

    Raises:
        CoopsimError: matplotlib is missing (``pip install 'coopsim[plot]'``).
    """
    from .analyze import pyplot

    plt = pyplot()
    panels = list(dict.fromkeys((r.engine, r.caster) for r in rows))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), dpi=110,
                             squeeze=False, sharey=True)
    for ax, (engine, kind) in zip(axes[0], panels):
        mine = sorted((r for r in rows if (r.engine, r.caster) == (engine, kind)),
                      key=lambda r: r.robots)
        pos = np.arange(1, len(mine) + 1)
        ax.boxplot([r.samples["step"] for r in mine], positions=pos, widths=0.55,
                   flierprops={"marker": "x", "markeredgecolor": "red", "markersize": 4},
                   medianprops={"color": "red"})
        for phase, style in zip(PHASES, ("s:", "^:", "o:")):
            ax.plot(pos, [r.phase_ms[phase] for r in mine], style, markersize=4, label=phase)
        ax.axhline(dt_ms, color="green", linestyle="--", label=f"dt = {dt_ms:g} ms")
        ax.set_xticks(pos, [f"{r.robots:,}" for r in mine], rotation=30)
        ax.set_yscale("log")
        ax.set_xlabel("robots")
        ax.set_title(f"{engine} engine, {kind} caster", fontsize=10)
        ax.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel("step time, ms (log)")
    axes[0][-1].legend(fontsize=8, loc="upper left")
    fig.suptitle("coopsim: time of one step against the number of robots (11-ray sonar each)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _measure_cases(engine: str, caster: str, counts: str, measure, say) -> list:
    """``measure(n, engine, caster)`` of every case, each said on stderr as ``say(row)``."""
    rows = []
    for eng, kind, n in cases(engine, caster, counts):
        rows.append(measure(n, eng, kind))
        click.echo(f"{eng}, {kind}, {n} robots: {say(rows[-1])}", err=True)
    return rows


def use_threads(n: int | None) -> int:
    """Set the kernels' thread count (None: the cores the process may use) and say it on
    stderr with the machine: a benchmark's figures mean little without them."""
    from ..model import threads

    count = threads.use(n)
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    click.echo(f"threads: {count} (cores this process may use: {threads.cores()}; "
               f"load average {load})", err=True)
    return count


def bench_step_command(counts: str, steps: int, engine: str | None, caster: str, plot,
                       robot_type: str | None = None, threads: int | None = None) -> None:
    """``coopsim bench step``: time every case, say each on stderr, print the table (``engine``
    None: the default engine)."""
    use_threads(threads)
    rows = _measure_cases(engine or default_engine(), caster, counts,
                          lambda n, eng, kind: bench_steps(n, steps, engine=eng, caster=kind,
                                                           robot_type=robot_type),
                          lambda row: f"median {row.median:.2f} ms (CPU {row.cpu_median:.2f} "
                                      f"ms), p95 {row.p95:.2f} ms")
    click.echo(format_table(rows))
    if plot:
        plot_steps(rows, plot)
        click.echo(f"figure: {plot}", err=True)


def bench_realtime_command(counts: str, seconds: float, engine: str | None, caster: str,
                           robot_type: str | None = None, threads: int | None = None) -> None:
    """``coopsim bench realtime``: run every case in real time, print the table (``engine``
    None: the first engine built for swarms, ``Engine.features`` ``swarm``)."""
    use_threads(threads)
    rows = _measure_cases(engine or engine_with("swarm"), caster, counts,
                          lambda n, eng, kind: bench_realtime(n, seconds, engine=eng,
                                                              caster=kind,
                                                              robot_type=robot_type),
                          lambda row: f"{row.missed_share:.2%} missed, {row.rtf:.3f}x real time, "
                                      f"CPU p50 {row.cpu_ms[0]:.2f} ms a step")
    click.echo(format_realtime(rows))
