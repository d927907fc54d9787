"""CPU time of a ``learn_goal`` Gymnasium env's reset and of the steps after it, checkouts
alternating (issue 55: an episode's reset costs little, docs/performance.md).

    python experiments/env_reset.py BASE_TREE NEW_TREE [--rounds 3] [--episodes 30]

Each round runs one process per tree, in turn; each builds ``scenarios/learn_goal.scenario``
with ``gymnasium.make`` on the kinematic engine, warms it over three 400-step episodes, then
times ``episodes`` more by ``time.process_time``: the reset, its first step, the 50 steps
after the reset less 50 steady steps (the last 100 of the episode: what the reset leaves the
next steps to rebuild), and the whole episode a step. It prints one JSON line of medians, µs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def episode(env, action, seed: int) -> tuple:
    """(reset, first step, extra over the 50 steps after it, a step over 400), µs."""
    t0 = time.process_time()
    env.reset(seed=seed)
    t1 = time.process_time()
    env.step(action)
    t2 = time.process_time()
    for _ in range(49):
        env.step(action)
    t3 = time.process_time()
    for _ in range(250):
        env.step(action)
    t4 = time.process_time()
    for _ in range(100):
        env.step(action)
    t5 = time.process_time()
    steady = (t5 - t4) / 100
    return ((t1 - t0) * 1e6, (t2 - t1) * 1e6, ((t3 - t1) - 50 * steady) * 1e6,
            (t5 - t0) / 400 * 1e6)


def measure(root: str, episodes: int) -> dict:
    """This process's figures for checkout ``root`` (its coopsim first on sys.path)."""
    sys.path[:0] = [root, os.path.join(root, "benchmarks")]
    import gymnasium
    import numpy as np

    import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0
    from suite.common import kernels_ready, threads

    kernels_ready()
    threads(1)
    env = gymnasium.make("coopsim/Scenario-v0", engine="kinematic",
                         scenario=os.path.join(root, "scenarios", "learn_goal.scenario"))
    action = np.array([0.3, 0.28])
    for seed in range(3):
        episode(env, action, seed)
    rows = list(zip(*(episode(env, action, seed) for seed in range(episodes))))
    names = ("reset_us", "first_step_us", "extra_after_us", "episode_us_a_step")
    return {"root": root, **{k: round(statistics.median(v), 1) for k, v in zip(names, rows)},
            "load": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: one tree
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.episodes)), flush=True)
        return
    env = dict(os.environ, COOPSIM_JIT="wait")
    for _ in range(args.rounds):
        for tree in args.trees:
            subprocess.run([sys.executable, __file__, "--one", os.path.abspath(tree),
                            "--episodes", str(args.episodes)],
                           env=dict(env, PYTHONPATH=os.path.abspath(tree)), check=True)


if __name__ == "__main__":
    main()
