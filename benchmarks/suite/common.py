"""The suite's shared setup: sizes (and the smoke switch), world builders, timed loops, the
tracked figures, the headline cases. Every suite module takes its setup from here, never
from another module (benchmarks/README.md says how a case is written).

asv scans this module too: no name here may start with ``time``, ``track``, ``mem``,
``peakmem`` or ``timeraw``.
"""

from __future__ import annotations

import math
import os
import re
import statistics
import time
from pathlib import Path

#: ``COOPSIM_BENCH_SMOKE=1``: every case at its smoke size, its loops one call long (CI proves
#: each still runs; tests/bench/test_suite_smoke.py). Read at import: asv's parameters are too.
SMOKE = os.environ.get("COOPSIM_BENCH_SMOKE", "") not in ("", "0")

#: The ten cases ``coopsim bench compare`` runs: asv's full names, parameters as asv writes them.
HEADLINE = (
    "step.Step.track_ms('pymunk', 100)",
    "step.Step.track_ms('kinematic', 10000)",
    "step.Step.track_ms('mujoco', 100)",
    "step.SmallWorld.track_tick_us",
    "aerial.Flight.track_us_per_drone_step(1000)",
    "sensors.Raycast.track_us_per_ray('jit')",
    "arms.Ik.track_ms",
    "step.Threads.track_ms(2)",
    "build.Build.track_s(10000)",
    "build.Memory.peakmem_world(10000)",
)


def headline_regex() -> str:
    """asv's ``--bench`` regex selecting exactly :data:`HEADLINE`."""
    return "^(" + "|".join(re.escape(name) for name in HEADLINE) + ")$"


def sizes(*full, smoke=1) -> list:
    """A case's parameter values: ``full``, or ``[smoke]`` under :data:`SMOKE`."""
    return [smoke] if SMOKE else list(full)


def count(full: int, smoke: int = 1) -> int:
    """A loop's length: ``full``, or ``smoke`` under :data:`SMOKE`."""
    return smoke if SMOKE else full


class Case:
    """Defaults of every suite class (asv reads them as class attributes): a track runs in
    two processes (``rounds``), a time case repeats until 10 s are spent at most."""

    timeout = 600  # s, a whole case with its setup
    rounds = 1 if SMOKE else 2
    repeat = (1, 1, 1.0) if SMOKE else (1, 10, 10.0)
    number = 1
    warmup_time = 0.0 if SMOKE else 0.1


# ---------------------------------------------------------------------- world builders


def root() -> Path:
    """The top of the coopsim tree under test (its scenarios/ and worlds/)."""
    import coopsim
    from coopsim.model.bundled import BUNDLED

    top = Path(coopsim.__file__).resolve().parents[1]
    return top if (top / "scenarios").is_dir() else Path(BUNDLED)


def kernels_ready() -> None:
    """Load every registered kernel (from numba's cache, or compiled) before a case times
    anything (a simulation loads those of its world as it is made; this loads the rest). The
    suite runs against older commits too (``coopsim bench compare``): a tree from before the
    explicit load waits for its background warm-up instead."""
    try:
        from coopsim.model.compiled import load_pending
    except ImportError:  # an older tree: kernels loaded in the background, numpy meanwhile
        from coopsim.model.compiled import warm_all
        from coopsim.raycast import auto

        auto.wait_ready(900)
        warm_all()
        return
    load_pending()


def swarm(n: int, engine: str | None = None, caster: str = "jit", robot_type: str | None = None,
          mode: str = "lockstep", warm: int = 5, seed: int = 0, params: tuple = (),
          obstacles: bool = True):
    """A stepper over ``coopsim bench step``'s world (``coopsim.app.bench.swarm_stepper``:
    ``n`` driving robots of ``robot_type``, default the reference type, 11-ray sonar, in an
    arena with obstacles, dt 0.02 s, the kernels loaded), ``warm`` ticks already taken (the
    first builds the static grids). The arguments are ``swarm_stepper``'s.

    A tree from before ``swarm_stepper`` (an older commit under ``coopsim bench compare``) has
    its world built here from the parts it has, as ``swarm_stepper`` builds it."""
    from coopsim.app import bench

    if hasattr(bench, "swarm_stepper"):
        stepper = bench.swarm_stepper(n, engine, caster, robot_type, mode, seed, params,
                                      obstacles)
    else:
        stepper = _older_swarm(bench, n, engine, caster, robot_type, mode, seed, params,
                               obstacles)
    for _ in range(count(warm)):
        stepper.tick()
    return stepper


def _older_swarm(bench, n, engine, caster, robot_type, mode, seed, params, obstacles):
    """``swarm_stepper`` for a tree that lacks it (see :func:`swarm`)."""
    from dataclasses import replace

    from coopsim.sim.simulation import Simulation

    driving = getattr(bench, "driving", None) or bench._driving  # its earlier name
    spec = bench.swarm_scenario(n, seed, robot_type=robot_type)
    if not obstacles:
        spec = replace(spec, world=replace(spec.world, objects=()))
    if params:
        from coopsim.model.specs import ParamSetting

        spec = replace(spec, robots=tuple(replace(r, params=tuple(ParamSetting(*p) for p in params))
                                          for r in spec.robots))
    stepper = driving(Simulation(spec, engine=engine, caster=bench.make_caster(caster)), mode,
                      seed)
    kernels_ready()
    return stepper


def scenario(name: str, warm: int = 5, **settings):
    """A lockstep stepper over ``scenarios/<name>.scenario`` of the tree under test, ``warm``
    ticks taken; ``settings`` override its ``[SETTINGS]`` (e.g. ``engine="mujoco"``)."""
    from dataclasses import replace

    from coopsim.formats.files import load_scenario
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    spec = load_scenario(str(root() / "scenarios" / f"{name}.scenario"))
    if settings:
        spec = replace(spec, settings=replace(spec.settings, **settings))
    stepper = Stepper(Simulation(spec), mode="lockstep")
    kernels_ready()
    for _ in range(count(warm)):
        stepper.tick()
    return stepper


def build(spec, mode: str = "lockstep", warm: int = 5):
    """A stepper over the scenario ``spec`` (a ``ScenarioSpec``), ``warm`` ticks taken."""
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    stepper = Stepper(Simulation(spec), mode=mode)
    kernels_ready()
    for _ in range(count(warm)):
        stepper.tick()
    return stepper


def grid(n: int, spacing: float) -> list:
    """``n`` (x, y) points ``spacing`` m apart on a square grid centred on the origin, m."""
    side = math.ceil(math.sqrt(n))
    return [((k % side - side / 2) * spacing, (k // side - side / 2) * spacing)
            for k in range(n)]


def flyers(n: int, driven: bool = True, dt: float = 0.002, engine: str = "aerial"):
    """``n`` Crazyflies 0.5 m apart, 500 Hz, hovering at 1 m under the batch ``flight``
    driver every step when ``driven``: a ``ScenarioSpec``.

    Every step, as every shipped scenario flies it: the driver's whole cascade, rate loop
    included, runs when it is called, and at 100 Hz (``every 5``, what this world had before)
    the drones hover about 4 s, then oscillate and fall at about 5.5 s of sim
    time, on ``aerial`` and ``mujoco`` alike, so most of a longer case timed fallen drones
    (250 Hz, ``every 2``, holds). crazyflow's state control runs its position loop at 100 Hz
    and its attitude loop at 500 Hz: coopsim's side here does more work a step than the
    peer's. tests/bench/test_flyers_hover.py keeps the world in the air."""
    from coopsim.model.specs import (DriverSetting, FloorSpec, RobotSpec, ScenarioSpec,
                                     Settings, WorldSpec)

    hover = (DriverSetting("flight", (("shape", "hover"), ("height", 1.0))),)
    size = math.ceil(math.sqrt(n)) * 0.5 + 4.0
    robots = tuple(RobotSpec("crazyflie", f"cf{k}", (x, y, 0.0), drivers=hover if driven else ())
                   for k, (x, y) in enumerate(grid(n, 0.5)))
    return ScenarioSpec(WorldSpec(FloorSpec(size, size)), robots=robots,
                        settings=Settings(dt=dt, mode="lockstep", seed=1, engine=engine))


def arms(n: int, driven: bool = True, dt: float = 0.002):
    """``n`` ``irb120`` arms 1.5 m apart on the mujoco engine, each with a red 4 cm cube 0.3 m
    ahead and 0.12 m left that the ``arm_pick`` driver (when ``driven``) moves 0.24 m right and
    back: a ``ScenarioSpec``."""
    from coopsim.model.specs import (COLORS, DriverSetting, FloorSpec, ObjectSpec, RobotSpec,
                                     ScenarioSpec, Settings, WorldSpec)

    drive = (DriverSetting("arm_pick", (("speed", 1.0),)),) if driven else ()
    robots, cubes = [], []
    for k, (x, y) in enumerate(grid(n, 1.5)):
        robots.append(RobotSpec("irb120", f"arm{k}", (x, y, 0.0), drivers=drive))
        cubes.append(ObjectSpec(f"CUBE_{k}", "box", (0.04,) * 3, (x + 0.3, y + 0.12, 0.02),
                                mass=0.1, color=COLORS["red"]))
    size = math.ceil(math.sqrt(n)) * 1.5 + 2.0
    return ScenarioSpec(WorldSpec(FloorSpec(size, size)), robots=tuple(robots),
                        objects=tuple(cubes),
                        settings=Settings(dt=dt, mode="lockstep", seed=1, engine="mujoco"))


def realtime(stepper, seconds: float) -> tuple[float, float]:
    """Run ``stepper`` (built ``mode="realtime"``) paced for ``seconds`` of sim time (one
    step's worth under :data:`SMOKE`): (late %: steps that started after their deadline,
    x real time over the run)."""
    sim = stepper.sim
    seconds = sim.dt if SMOKE else seconds
    start, step0, missed0 = sim.snapshot.time, sim.snapshot.step, stepper.missed
    t0 = time.perf_counter()
    stepper.run(duration=start + seconds)
    wall = time.perf_counter() - t0
    return (late_percent(stepper.missed - missed0, sim.snapshot.step - step0),
            (sim.snapshot.time - start) / wall)


# ---------------------------------------------------------------------- timed loops


def warm_up(call, seconds: float = 0.1) -> None:
    """Call ``call`` for ``seconds`` untimed (none under :data:`SMOKE`): on a shared machine
    a process that has just slept runs 1.5-1.8x slower for some 10 ms."""
    end = time.perf_counter() + (0.0 if SMOKE else seconds)
    while time.perf_counter() < end:
        call()


def per_call_ms(call, calls: int, blocks: int = 5) -> float:
    """Median over ``blocks`` blocks of the mean time of one ``call()`` in a block of
    ``calls`` calls, ms, after :func:`warm_up` (one block of one call under :data:`SMOKE`)."""
    calls, blocks = count(calls), count(blocks)
    warm_up(call)
    means = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        means.append((time.perf_counter() - t0) / calls * 1e3)
    return statistics.median(means)


def tick_ms(stepper, ticks: int = 50, blocks: int = 5) -> float:
    """:func:`per_call_ms` of ``stepper.tick``: a whole step (commands, actuators, physics,
    sensors, rules, publish), ms."""
    return per_call_ms(stepper.tick, ticks, blocks)


# ---------------------------------------------------------------------- tracked figures
# asv lists a rise as a regression: a case compared between commits tracks a cost (ms, us per
# agent-step, late %, bytes per step); x real time and agent-steps/s are derived from it.


def unit(name: str):
    """Decorator: the unit asv shows for a ``track_`` method."""
    def mark(method):
        method.unit = name
        return method
    return mark


def x_real_time(dt_s: float, step_ms: float) -> float:
    """Sim seconds per wall second when a step of ``dt_s`` s takes ``step_ms`` ms."""
    return dt_s * 1e3 / step_ms


def agent_steps_per_s(agents: int, step_ms: float) -> float:
    """Agent-steps per wall second: ``agents`` advanced one step in ``step_ms`` ms."""
    return agents * 1e3 / step_ms


def us_per_agent_step(agents: int, step_ms: float) -> float:
    """The cost form of :func:`agent_steps_per_s`: microseconds per agent-step."""
    return step_ms * 1e3 / agents


def late_percent(missed: int, steps: int) -> float:
    """Share of ``steps`` that started after their deadline, %."""
    return 100.0 * missed / steps if steps else 0.0


def bytes_per_step(total_bytes: int, steps: int) -> float:
    """Bytes written or sent per step."""
    return total_bytes / steps if steps else 0.0


def threads(n: int | None) -> int:
    """Set the kernels' thread count (:func:`coopsim.model.threads.use`; None: every core the
    process may use); returns the count in force. Cases pin it: a figure means little without."""
    from coopsim.model import threads as policy

    return policy.use(n)


# ---------------------------------------------------------------------- same-run A/B, live runs


class CannedLink:
    """What the viewer's window reads from a link, filled from memory instead of the network
    (the viewer cases set ``frame`` themselves): ``Viewer("canned", link=CannedLink(layout))``."""

    nameserver, connected, playback, error, generation, run = "canned", True, None, "", 1, {}

    def __init__(self, layout: dict) -> None:
        self.layout, self.frame = layout, None

    def submit(self, *args, **kwargs):
        from concurrent.futures import Future

        future: Future = Future()
        future.set_result(None)
        return future

    def switch(self, nameserver: str, keys=None) -> None:
        pass

    def close(self) -> None:
        pass



def alternate(first, second, blocks: int = 5) -> tuple[float, float]:
    """Medians of ``blocks`` calls of ``first()`` and ``second()`` in turn (each returns one
    block's figure, e.g. ms per tick without and with a recorder): load from elsewhere on the
    machine spoils a block, not the ratio of the medians."""
    a, b = [], []
    for _ in range(count(blocks, 2)):
        a.append(first())
        b.append(second())
    return statistics.median(a), statistics.median(b)


def record(path: Path, robots: int, steps: int):
    """Record ``steps`` unpaced ticks of :func:`swarm`'s ``robots`` driving robots to the
    MCAP ``path``; return the closed recorder (``frames``, ``dropped``)."""
    from coopsim.recording.writer import Recorder

    stepper = swarm(robots)
    sim = stepper.sim
    rec = Recorder(path, sim.scenario, sim.scenario.settings, sim.seed, sim.dt).attach(stepper)
    for _ in range(steps):
        stepper.tick()
    rec.close()
    return rec


def live_text(robots: int, mode: str = "realtime", dt: float = 0.01) -> str:
    """The scenario :class:`LiveRun` runs: ``robots`` ``single`` robots (``robot1`` ..
    ``robotN``, ten a row from (-4, -3) m, 0.8 m apart) in the empty arena."""
    lines = ["[WORLD]", f"file {root() / 'worlds' / 'empty.world'}", "[SETTINGS]",
             f"mode {mode}", f"dt {dt}"]
    for i in range(robots):
        lines += [f"[ROBOT_{i + 1}]", "type single", f"name robot{i + 1}",
                  f"position {-4 + 0.8 * (i % 10):.1f} {-3 + 0.8 * (i // 10):.1f} 0"]
    return "\n".join(lines) + "\n"


class LiveRun:
    """``coopsim run`` of ``robots`` ``single`` robots in a process of its own (headless, no
    controllers, its name server on a free port; ``COOPSIM_JIT=wait`` for an older tree,
    which stepped on numpy until its kernels had loaded): ``with LiveRun(10) as
    run: run.nameserver, run.proc``.

    Args:
        robots: Robot count (``robot1`` .. ``robotN``). mode: ``realtime`` or ``lockstep``.
        extra: More ``coopsim run`` options (e.g. ``("--keys", DIR)``). dt: Step, s.
        text: A whole scenario's text to run instead (robots, mode and dt then unused; a
            ``[WORLD]`` ``file`` may start with ``{root}``, the top of the tree under test).
    """

    def __init__(self, robots: int, mode: str = "realtime", extra: tuple = (),
                 dt: float = 0.01, text: str | None = None) -> None:
        self.robots, self.mode, self.extra, self.dt = robots, mode, extra, dt
        self.text = text

    def __enter__(self) -> "LiveRun":
        import subprocess
        import sys
        import tempfile

        self._tmp = tempfile.TemporaryDirectory()
        path = Path(self._tmp.name) / "live.scenario"
        path.write_text(self.text.replace("{root}", str(root())) if self.text
                        else live_text(self.robots, self.mode, self.dt))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coopsim", "run", str(path), "--port", "0", "--headless",
             "--no-controllers", *self.extra], text=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=dict(os.environ, COOPSIM_JIT="wait"))
        for line in self.proc.stderr:
            found = re.search(r"name server: (\S+)", line)
            if found:
                self.nameserver = found.group(1)
                import threading  # drain the rest, so a chatty run never blocks on the pipe
                threading.Thread(target=self.proc.stderr.read, daemon=True).start()
                return self
        raise RuntimeError("coopsim run did not print its name server")

    def __exit__(self, *exc) -> None:
        import signal
        import subprocess

        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._tmp.cleanup()
