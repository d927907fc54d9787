"""Benchmark: learning environments (docs/learning.md), each against a baseline measured in
the same run.

0. The machine: CPU model, the cores this process may use, the load average before and after
   (the figures below mean little on a loaded machine: compare ratios within one run).
1. One robot with sonar (``scenarios/learn_goal.scenario``, the ``single`` type's seven
   modules), single Gymnasium environment as users make it (``gymnasium.make``, its wrappers
   included): env steps/s against bare ``Stepper.tick`` of the same world (µs per tick: the
   small-world tick; the environment's own cost is the difference), env steps per CPU-second
   of this process (what other processes' load changes least), and ``reset`` time;
   pymunk and kinematic engines, and a lean robot (sonar and target observed, nothing else
   sensed).
2. K copies x A robots (``scenarios/learn_avoid.scenario``: 4 robots in the maze, sonar
   observed, kinematic engine), batched in one ``VectorEnv`` step: agent-steps/s against the
   same K copies as K separate environments (K ``Episode``\\ s, each one ``Stepper.tick``; the
   engine of ``make_vec(..., vectorization_mode="sync")``), stepped in a loop. Also the lean
   batch per CPU-second of this process (``time.process_time``: what the load of other
   processes on a shared machine changes least; with ``NUMBA_NUM_THREADS=1`` it is the work
   of one core, with more it counts the worker threads' time too).

3. ``--only build``: seconds to build K copies (``BatchWorld``, ``lean``: sonar and motors),
   seconds per lean batch step after 20, seconds of a ``reset`` (it rebuilds the world; the
   constructor used to build it twice: once, then again in its reset), and the process's peak
   RSS (``ru_maxrss``) after all three.
4. ``--only threads``: the lean batch of K copies stepped on 1 numba thread and on all of
   them (``numba.set_num_threads``), in interleaved blocks of one process: the speed-up.

Usage: python benchmarks/learning_bench.py [--copies 256] [--robots 4] [--steps 200]
       [--only single|batched|build]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0
from coopsim.env.episode import Episode
from coopsim import raycast as casters

ROOT = Path(__file__).resolve().parents[1]
GOAL = str(ROOT / "scenarios" / "learn_goal.scenario")
AVOID = str(ROOT / "scenarios" / "learn_avoid.scenario")


def _rate(fn, n: int, blocks: int = 5) -> float:
    """Calls of ``fn`` per second: the median of ``blocks`` blocks of ``n`` calls."""
    out = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append(n / (time.perf_counter() - t0))
    return statistics.median(out)


def single(engine: str, steps: int, lean: bool = False) -> dict:
    """Env steps/s, bare ticks/s and reset ms for one robot (``lean``: sonar, target and
    motors only)."""
    import gymnasium

    kw = {"observe": ["sonar", "target"], "lean": True} if lean else {}
    env = gymnasium.make("coopsim/Scenario-v0", scenario=GOAL, engine=engine, **kw)
    env.reset(seed=0)
    action = np.array([0.3, 0.28])

    def step():
        if env.step(action)[3]:  # truncated after 20 s: keep going from the start
            env.reset()
    for _ in range(50):
        step()
    tick = env.unwrapped.episode.stepper.tick
    env_blocks, tick_blocks, env_cpu = [], [], []
    for _ in range(5):  # interleaved: the machine's load changes alike for both
        cpu = time.process_time()
        env_blocks.append(_rate(step, steps, 1))
        env_cpu.append(steps / (time.process_time() - cpu))
        tick_blocks.append(_rate(tick, steps, 1))
    env_rate, tick_rate = statistics.median(env_blocks), statistics.median(tick_blocks)
    seeds = iter(range(10**6))
    reset_ms = 1e3 / _rate(lambda: env.reset(seed=next(seeds)), 20)
    return {"env": env_rate, "tick": tick_rate, "reset_ms": reset_ms,
            "env_cpu": statistics.median(env_cpu), "env_best": max(env_blocks),
            "tick_best": max(tick_blocks)}  # best block: the least disturbed one


def batched(copies: int, robots: int, steps: int) -> dict:
    """Agent-steps/s of K copies batched, and of K separate worlds."""
    import gymnasium

    agents = [f"r{i}" for i in range(1, robots + 1)]

    def task(snap, rows):
        return np.zeros(rows.shape), np.zeros(rows.shape[0], bool)

    actions = np.tile([0.3, 0.28], (copies, robots, 1))
    vecs = {}
    for lean in (False, True):
        vec = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=copies, scenario=AVOID,
                                 robot=agents, observe=["sonar"], task=task, lean=lean,
                                 backend="world")
        vec.reset(seed=0)
        for _ in range(20):
            vec.step(actions)
        vecs[lean] = vec
    worlds = [Episode(AVOID, agents, ["sonar"], task=lambda s, a: (0.0, False, False))
              for _ in range(copies)]

    def separate():
        for ep in worlds:
            ep.act({a: actions[0, 0] for a in agents})
            snap = ep.tick()
            for a in agents:
                ep.observation(snap, a)
    separate()
    blocks = {"batched": [], "lean": [], "separate": [], "lean_cpu": []}
    for _ in range(5):  # interleaved blocks: the machine's load changes alike for all three
        blocks["batched"].append(_rate(lambda: vecs[False].step(actions), steps, 1))
        cpu = time.process_time()
        blocks["lean"].append(_rate(lambda: vecs[True].step(actions), steps, 1))
        blocks["lean_cpu"].append(steps / (time.process_time() - cpu))
        blocks["separate"].append(_rate(separate, max(2, steps // 20), 1))
    out = {k: statistics.median(v) * copies * robots for k, v in blocks.items()}
    out["lean_best"] = max(blocks["lean"]) * copies * robots  # the least disturbed block
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=256)
    parser.add_argument("--robots", type=int, default=4)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--only", choices=("single", "batched", "build", "threads"), help="one part only")
    args = parser.parse_args()
    if not casters.wait_ready(600):
        raise SystemExit("the compiled caster did not load (numba missing?)")
    print(machine())
    if args.only == "build":
        build(args.copies, args.steps)
    if args.only == "threads":
        thread_speedup(args.copies, args.steps)
    if args.only in (None, "single"):
        single_table(args.steps)
    if args.only in (None, "batched"):
        batched_table(args.copies, args.robots, args.steps)
    print(f"\nload average after: {_load()}")


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> str:
    """One line: CPU model, the cores this process may use (of the machine's), the load."""
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next(line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count()
    return (f"machine: {model}; {usable} of {os.cpu_count()} cores usable; "
            f"load average (1, 5, 15 min) before: {_load()}; NUMBA_NUM_THREADS={threads()}")


def single_table(steps: int) -> None:
    """Part 1's table."""
    print("| one robot with sonar | env steps/s (gymnasium.make), median (best block) | "
          "per CPU-second | bare tick, µs, median (best block) | env / tick | reset, ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for engine, lean in (("pymunk", False), ("kinematic", False), ("pymunk", True),
                         ("kinematic", True)):
        r = single(engine, steps * 5, lean)
        name = f"{engine}, lean" if lean else engine
        print(f"| {name} | {r['env']:,.0f} ({r['env_best']:,.0f}) | {r['env_cpu']:,.0f} | "
              f"{1e6 / r['tick']:.1f} ({1e6 / r['tick_best']:.1f}) | "
              f"{r['env'] / r['tick']:.2f} | {r['reset_ms']:.2f} |", flush=True)
    print(f"load average after the single rows: {_load()}")


def build(copies: int, steps: int) -> None:
    """Part 3: build time, step time and peak RSS of a lean batch of ``copies``."""
    import resource

    from coopsim.env.batch import BatchWorld
    from coopsim.env.batchcast import wait_ready

    wait_ready(600)
    BatchWorld(AVOID, 1, observe=["sonar"], lean=True)  # imports and registries: not timed
    t0 = time.perf_counter()
    batch = BatchWorld(AVOID, copies, observe=["sonar"], lean=True,
                       task=lambda snap, rows: (np.zeros(rows.shape),
                                                np.zeros(rows.shape[0], bool)))
    built = time.perf_counter() - t0
    actions = np.tile([0.3, 0.28], (copies, len(batch.agents), 1))
    for _ in range(20):
        batch.act(actions)
        batch.tick()
    t0 = time.perf_counter()
    for _ in range(steps):
        batch.act(actions)
        batch.observation(batch.tick())
    step = (time.perf_counter() - t0) / steps
    t0 = time.perf_counter()
    batch.reset()  # rebuilds the world: what building cost before it stopped building twice
    rebuilt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB (Linux)
    print(f"| copies | build, s | reset (a rebuild), s | lean step, ms | agent-steps/s | "
          f"peak RSS, GiB |\n|---:|---:|---:|---:|---:|---:|\n| {copies:,} x "
          f"{len(batch.agents)} | {built:.2f} | {rebuilt:.2f} | {step * 1e3:.2f} | "
          f"{copies * len(batch.agents) / step:,.0f} | {rss:.2f} |")


def thread_speedup(copies: int, steps: int) -> None:
    """Part 4: lean batch steps/s on 1 thread and on numba's all, interleaved blocks."""
    import numba

    from coopsim.env.batch import BatchWorld
    from coopsim.env.batchcast import wait_ready

    wait_ready(600)
    most = numba.config.NUMBA_NUM_THREADS
    batch = BatchWorld(AVOID, copies, observe=["sonar"], lean=True,
                       task=lambda snap, rows: (np.zeros(rows.shape),
                                                np.zeros(rows.shape[0], bool)))
    actions = np.tile([0.3, 0.28], (copies, len(batch.agents), 1))

    def step():
        batch.act(actions)
        batch.observation(batch.tick())
    rates: dict = {1: [], most: []}
    for _ in range(5):
        for n in rates:
            numba.set_num_threads(n)
            rates[n].append(_rate(step, steps, 1) * copies * len(batch.agents))
    one, all_ = statistics.median(rates[1]), statistics.median(rates[most])
    print(f"| {copies:,} x {len(batch.agents)} lean | 1 thread | {most} threads | speed-up |\n"
          f"|---|---:|---:|---:|\n| agent-steps/s | {one:,.0f} | {all_:,.0f} | "
          f"{all_ / one:.2f}x |")


def threads() -> int:
    """numba's thread count (the compiled kernels' parallel loops)."""
    import numba
    return numba.get_num_threads()


def batched_table(copies: int, robots: int, steps: int) -> None:
    """Part 2's table."""
    r = batched(copies, robots, steps)
    print(f"\n{copies} copies x {robots} robots, kinematic, sonar observed")
    print("| how | agent-steps/s |\n|---|---:|")
    print(f"| batched (one VectorEnv step) | {r['batched']:,.0f} |")
    print(f"| batched, lean (only sonar and motors sensed) | {r['lean']:,.0f} |")
    print(f"| batched, lean, best block | {r['lean_best']:,.0f} |")
    print(f"| batched, lean, per CPU-second of this process (NUMBA_NUM_THREADS={threads()}) "
          f"| {r['lean_cpu']:,.0f} |")
    print(f"| {copies} separate worlds | {r['separate']:,.0f} |")
    print(f"\nbatched / separate: {r['batched'] / r['separate']:.1f}x; "
          f"lean / separate: {r['lean'] / r['separate']:.1f}x")


if __name__ == "__main__":
    main()
