"""Benchmark: the ``kinematic`` engine (numba kernels, numpy path) against ``pymunk``, same run.

The load is ``coopsim.app.bench.swarm_scenario(n)``: N ``single`` robots on a 1.5 m grid with
jitter, one static obstacle (box or cylinder) per 25 robots, every robot driving with its own
constant wheel speeds (0.1-0.5 m/s, as ``bench_steps``), dt = 0.02 s. Engines are built from the
scenario's specs directly (a World inserts robots one by one, O(N^2) at 100,000).

1. Physics phase: wall-clock of ``engine.step(dt)`` + ``engine.robot_state()`` per step, after a
   warm-up (JIT compilation, caches), for kinematic-numba (as shipped; with every pass forced
   onto all of numba's threads; on 1 thread), kinematic-numpy and pymunk (up to 10,000
   robots). ``engine.drive`` runs every step, untimed (it is the actuators phase).
2. Whole step at 10,000 robots on the kinematic engine: a ``Simulation`` driven as
   ``coopsim.app.bench.bench_steps`` does (commands + actuators, physics, sensors + rules), with
   the numba ray caster for the sonars.

Prints markdown tables (median and p95 ms; ratios to kinematic-numba's median).

Usage: python benchmarks/kinematic_bench.py [--robots 1000 10000 100000] [--steps 100]
       [--pymunk-max 10000] [--whole 10000] [--no-whole]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np

from coopsim.model import threads as policy
from coopsim.app.bench import swarm_scenario
from coopsim.model.plugins import ROBOT_TYPES
from coopsim.physics import kinematic_kernels as jit_kernels
from coopsim.physics.kinematic import KinematicEngine
from coopsim.physics.pymunk_engine import PymunkEngine
from coopsim.raycast.jitcast import make_caster
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

DT = 0.02  # s, bench_steps' step
AXLE = 0.34  # m, the single robot's


def build(spec, make):
    """An engine made by ``make(floor)`` holding the scenario's objects and robots."""
    engine = make(spec.world.floor)
    for obj in spec.world.objects + spec.objects:
        engine.add_object(obj)
    handles, drives = [], []
    for group, rspec in enumerate(spec.robots, start=1):
        assembly = ROBOT_TYPES.get(rspec.type).build(rspec)
        made = engine.add_assembly(assembly, group)
        handles += [made.robots[m.name] for m in assembly.members]
        drives += [m.drive for m in assembly.members]
    engine.set_robots(handles, drives)
    return engine


def stats(ms: list[float]) -> tuple[float, float]:
    """Median and p95 of a list of milliseconds."""
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(0.95 * len(ms)))]


def physics(engine, n: int, steps: int, warmup: int) -> tuple[float, float]:
    """Median and p95 ms of step + robot_state over ``steps`` steps after ``warmup``."""
    rng = np.random.default_rng(0)
    wheels = rng.uniform(0.1, 0.5, (n, 2))
    rows, forward, turn = np.arange(n), wheels.mean(axis=1), (wheels[:, 1] - wheels[:, 0]) / AXLE
    out = []
    for k in range(warmup + steps):
        engine.drive(rows, forward, turn)
        t0 = time.perf_counter()
        engine.step(DT)
        engine.robot_state()
        if k >= warmup:
            out.append((time.perf_counter() - t0) * 1000)
    return stats(out)


def kinds(n: int, pymunk_max: int) -> dict:
    """Engine label -> (factory, numba threads, kinematic_kernels.PARALLEL_MIN) for ``n``
    robots. "kinematic-numba" is the engine as shipped (threads from PARALLEL_MIN robots on);
    the "threads forced" row runs every pass on all of numba's threads."""
    threads = numba.get_num_threads()

    def jit(floor):
        return KinematicEngine(floor, "numba")

    out = {"kinematic-numba": (jit, threads, jit_kernels.PARALLEL_MIN),
           f"kinematic-numba, {threads} threads forced": (jit, threads, 0),
           "kinematic-numba, 1 thread": (jit, 1, 0),
           "kinematic-numpy": (lambda f: KinematicEngine(f, "numpy"), threads, 0)}
    if n <= pymunk_max:
        out["pymunk"] = (PymunkEngine, threads, 0)
    return out


def physics_table(counts: list[int], steps: int, pymunk_max: int) -> str:
    """Markdown table of the physics phase for every engine and robot count."""
    lines = ["| robots | engine | median ms | p95 ms | median / kinematic-numba |",
             "|---:|---|---:|---:|---:|"]
    threads, shipped = numba.get_num_threads(), jit_kernels.PARALLEL_MIN
    for n in counts:
        spec, base = swarm_scenario(n), None
        for label, (make, count, parallel_min) in kinds(n, pymunk_max).items():
            engine = build(spec, make)
            numba.set_num_threads(count)
            policy.use(count)  # what the kernels read (coopsim/model/threads.py)
            jit_kernels.PARALLEL_MIN = parallel_min
            slow = n > 10000 and "numba" not in label  # the numpy path: ~0.1 s a step
            try:
                med, p95 = physics(engine, n, max(20, steps // 5) if slow else steps, 5)
            finally:
                numba.set_num_threads(threads)
                policy.use(None)
                jit_kernels.PARALLEL_MIN = shipped
            base = base or med
            lines.append(f"| {n} | {label} | {med:.3f} | {p95:.3f} | {med / base:.2f} |")
    return "\n".join(lines)


def whole_step(n: int, steps: int = 100, warmup: int = 10) -> str:
    """Markdown table of bench_steps' loop on the kinematic engine with the numba caster."""
    t0 = time.perf_counter()
    sim = Simulation(swarm_scenario(n), engine="kinematic", caster=make_caster("auto"))
    built = time.perf_counter() - t0
    stepper = Stepper(sim, mode="lockstep")
    rng = np.random.default_rng(0)
    for name, wheels in zip(sim.snapshot.robots, rng.uniform(0.1, 0.5, (n, 2))):
        stepper.slots.put(name, "motors", tuple(wheels), attach=False)
    for _ in range(warmup):
        stepper.tick()
    ticks, phases = [], {"commands + actuators": [], "physics": [], "sensors + rules": []}
    for _ in range(steps):
        t = [time.perf_counter()]
        sim.command(stepper.slots.take())
        sim.actuate()
        t.append(time.perf_counter())
        sim.physics()
        t.append(time.perf_counter())
        sim.sense()
        sim.apply_rules()
        t.append(time.perf_counter())
        ticks.append((t[3] - t[0]) * 1000)
        for key, a, b in zip(phases, t, t[1:]):
            phases[key].append((b - a) * 1000)
    med, p95 = stats(ticks)
    cols = " | ".join(f"{stats(v)[0]:.2f}" for v in phases.values())
    return "\n".join([
        f"Whole step, {n} robots, kinematic engine, numba caster (World built in {built:.1f} s)",
        "", "| robots | median ms | p95 ms | " + " | ".join(phases) + " | x real time |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {n} | {med:.2f} | {p95:.2f} | {cols} | {DT * 1000 / med:.1f} |"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--steps", type=int, default=100, help="timed steps (fewer for the "
                        "slow engines at large counts)")
    parser.add_argument("--pymunk-max", type=int, default=10000)
    parser.add_argument("--whole", type=int, default=10000, help="robots of the whole-step run")
    parser.add_argument("--no-whole", action="store_true")
    args = parser.parse_args()
    print(f"numba {numba.__version__}, {numba.get_num_threads()} threads, dt {DT} s\n")
    print(physics_table(args.robots, args.steps, args.pymunk_max))
    if not args.no_whole:
        print()
        print(whole_step(args.whole))


if __name__ == "__main__":
    main()
