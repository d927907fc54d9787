"""Benchmark: learning environments (docs/learning.md), each against a baseline measured in
the same run.

1. One robot with sonar (``scenarios/learn_goal.scenario``, the ``single`` type's seven
   modules), single Gymnasium environment: env steps/s against bare ``Stepper.tick`` of the
   same world (the environment's own cost is the difference), and ``reset`` time; pymunk and
   kinematic engines, and a lean robot (sonar and target observed, nothing else sensed).
2. K copies x A robots (``scenarios/learn_avoid.scenario``: 4 robots in the maze, sonar
   observed, kinematic engine), batched in one ``VectorEnv`` step: agent-steps/s against the
   same K copies as K separate environments (K ``Episode``\\ s, each one ``Stepper.tick``; the
   engine of ``make_vec(..., vectorization_mode="sync")``), stepped in a loop. Also the lean
   batch per CPU-second of this process (``time.process_time``: what the load of other
   processes on a shared machine changes least; with ``NUMBA_NUM_THREADS=1`` it is the work
   of one core, with more it counts the worker threads' time too).

Usage: python benchmarks/learning_bench.py [--copies 256] [--robots 4] [--steps 200]
       [--only single|batched]
"""

from __future__ import annotations

import argparse
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
    env = gymnasium.make("coopsim/Scenario-v0", scenario=GOAL, engine=engine, **kw).unwrapped
    env.reset(seed=0)
    action = np.array([0.3, 0.28])

    def step():
        if env.step(action)[3]:  # truncated after 20 s: keep going from the start
            env.reset()
    for _ in range(50):
        step()
    tick = env.episode.stepper.tick
    env_blocks, tick_blocks = [], []
    for _ in range(5):  # interleaved: the machine's load changes alike for both
        env_blocks.append(_rate(step, steps, 1))
        tick_blocks.append(_rate(tick, steps, 1))
    env_rate, tick_rate = statistics.median(env_blocks), statistics.median(tick_blocks)
    seeds = iter(range(10**6))
    reset_ms = 1e3 / _rate(lambda: env.reset(seed=next(seeds)), 20)
    return {"env": env_rate, "tick": tick_rate, "reset_ms": reset_ms}


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
                                 robot=agents, observe=["sonar"], task=task, lean=lean)
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
    parser.add_argument("--only", choices=("single", "batched"), help="one part only")
    args = parser.parse_args()
    if not casters.wait_ready(600):
        raise SystemExit("the compiled caster did not load (numba missing?)")
    if args.only != "batched":
        single_table(args.steps)
    if args.only != "single":
        batched_table(args.copies, args.robots, args.steps)


def single_table(steps: int) -> None:
    """Part 1's table."""
    print("| one robot with sonar | env steps/s | bare ticks/s | env / tick | reset, ms |")
    print("|---|---:|---:|---:|---:|")
    for engine, lean in (("pymunk", False), ("kinematic", False), ("pymunk", True)):
        r = single(engine, steps * 5, lean)
        name = f"{engine}, lean" if lean else engine
        print(f"| {name} | {r['env']:,.0f} | {r['tick']:,.0f} | {r['env'] / r['tick']:.2f} "
              f"| {r['reset_ms']:.2f} |")


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
