"""CPU time of the one-robot ground tick and of the ``learn_goal`` Gymnasium step, checkouts
alternating (issue 55: the ground kinds' fused pass, docs/performance.md).

    python experiments/ground_tick.py BASE_TREE NEW_TREE [--rounds 4]

Each round runs one process per tree, in turn; each process builds
``scenarios/learn_goal.scenario`` with ``gymnasium.make`` on the kinematic engine and
``step.SmallWorld``'s world (benchmarks/suite), warms them, then times seven blocks of each
by ``time.process_time`` (1,000 env steps, 1,000 bare ticks of the same world, 2,000
SmallWorld ticks) and prints one JSON line: the medians, µs, the path the plan took, the load.
Where the env step's time goes, by differences of blocks run the same way: ``unwrapped_us``
(the env without Gymnasium's wrappers), ``tick_reset_us`` (bare ticks with the env's reset
every 20 s of sim time): wrappers = env - unwrapped, the env's own layer = unwrapped -
tick_reset, the resets = tick_reset - tick.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def measure(root: str) -> dict:
    """This process's figures for checkout ``root`` (its coopsim first on sys.path)."""
    sys.path[:0] = [root, os.path.join(root, "benchmarks")]
    import gymnasium
    import numpy as np

    import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0
    from suite.common import kernels_ready, swarm, threads

    kernels_ready()
    threads(1)
    env = gymnasium.make("coopsim/Scenario-v0", engine="kinematic",
                         scenario=os.path.join(root, "scenarios", "learn_goal.scenario"))
    env.reset(seed=0)
    action = np.array([0.3, 0.28])

    def step():
        if env.step(action)[3]:  # truncated after 20 s: go on from the start
            env.reset()
    bare, episode = env.unwrapped, env.unwrapped.episode

    def unwrapped():
        if bare.step(action)[3]:
            bare.reset()

    def tick_reset():
        if episode.stepper.tick().time >= episode.truncate_at - 1e-9:
            episode.reset()
    for _ in range(500):
        step()
    kernels_ready()
    stepper, small = episode.stepper, swarm(1, "kinematic", warm=50)
    blocks = {"env_us": [], "tick_us": [], "small_us": [], "unwrapped_us": [],
              "tick_reset_us": []}
    for _ in range(7):
        for name, call, n in (("env_us", step, 1000), ("tick_us", stepper.tick, 1000),
                              ("small_us", small.tick, 2000), ("unwrapped_us", unwrapped, 1000),
                              ("tick_reset_us", tick_reset, 1000)):
            start = time.process_time()
            for _ in range(n):
                call()
            blocks[name].append((time.process_time() - start) / n * 1e6)
    out = {k: round(statistics.median(v), 1) for k, v in blocks.items()}
    return {"root": root, "path": stepper.sim.step_path, **out,
            "load": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: one tree
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)), flush=True)
        return
    env = dict(os.environ, COOPSIM_JIT="wait")
    for _ in range(args.rounds):
        for tree in args.trees:
            subprocess.run([sys.executable, __file__, "--one", os.path.abspath(tree)],
                           env=dict(env, PYTHONPATH=os.path.abspath(tree)), check=True)


if __name__ == "__main__":
    main()
