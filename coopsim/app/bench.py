"""Benchmarks of the simulation core (``coopsim bench step``).

Step time against robot count: N ``single`` robots spread over a square arena with static
obstacles, every robot driving and its 11 sonars cast every step, dt = 0.02 s (SwarmSimX's
setting). Figures are wall-clock per :meth:`Stepper.tick`, one core, after a warm-up.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

import numpy as np

from ..sim.simulation import Simulation
from ..model.specs import FloorSpec, ObjectSpec, RobotSpec, ScenarioSpec, Settings, TargetSpec, WorldSpec
from ..sim.stepper import Stepper

SPACING = 1.5  # m between robot start positions


@dataclass(frozen=True)
class StepRow:
    """One line of the step-time table (times in ms)."""

    robots: int
    median: float
    p95: float
    phase_ms: dict

    @property
    def realtime_factor(self) -> float:
        """Sim seconds per wall second at the median step time, dt = 0.02 s."""
        return 20.0 / self.median


def swarm_scenario(n: int, seed: int = 0, dt: float = 0.02) -> ScenarioSpec:
    """N single robots on a grid with jitter, in an arena with one obstacle per 25 robots."""
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
        robots.append(RobotSpec("single", f"r{i}", (x, y, 0.0), rng.uniform(-math.pi, math.pi)))
    world = WorldSpec(FloorSpec(size, size), tuple(obstacles))
    return ScenarioSpec(world, targets=(TargetSpec("red", (0.0, 0.0, 0.0)),),
                        robots=tuple(robots), settings=Settings(dt=dt, mode="lockstep", seed=seed),
                        name=f"swarm{n}")


def bench_steps(n: int, steps: int = 100, warmup: int = 10, seed: int = 0,
                engine: str | None = None) -> StepRow:
    """Median and p95 tick time for ``n`` robots, with a per-phase breakdown (median ms)."""
    sim = Simulation(swarm_scenario(n, seed), engine=engine)
    stepper = Stepper(sim, mode="lockstep")
    rng = np.random.default_rng(seed)
    names = sim.snapshot.robots
    for name, wheels in zip(names, rng.uniform(0.1, 0.5, (n, 2))):
        stepper.slots.put(name, "motors", tuple(wheels), attach=False)
    for _ in range(warmup):
        stepper.tick()
    ticks, phases = [], {"actuators": [], "physics": [], "sensors": []}
    for _ in range(steps):
        t0 = time.perf_counter()
        sim.command(stepper.slots.take())
        sim.actuate()
        t1 = time.perf_counter()
        sim.physics()
        t2 = time.perf_counter()
        sim.sense()
        sim.apply_rules()
        t3 = time.perf_counter()
        ticks.append(t3 - t0)
        for key, dt in zip(phases, (t1 - t0, t2 - t1, t3 - t2)):
            phases[key].append(dt)
    ms = sorted(t * 1000 for t in ticks)
    return StepRow(n, statistics.median(ms), ms[min(len(ms) - 1, int(0.95 * len(ms)))],
                   {k: statistics.median(v) * 1000 for k, v in phases.items()})


def format_table(rows: list[StepRow]) -> str:
    """Markdown table of the rows."""
    out = ["| robots | median ms | p95 ms | actuators | physics | sensors | x real time |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p = r.phase_ms
        out.append(f"| {r.robots} | {r.median:.2f} | {r.p95:.2f} | {p['actuators']:.2f} | "
                   f"{p['physics']:.2f} | {p['sensors']:.2f} | {r.realtime_factor:.1f} |")
    return "\n".join(out)
