"""Thread CPU time of one tick of the suite's one-arm world (``arms.Pick``: an IRB 120 under
``arm_pick`` at 1 kHz on ``mujoco``), checkouts alternating (issue 55: >= 5x real time, i.e.
<= 200 µs a tick; docs/performance.md).

    python experiments/arm_tick.py BASE_TREE NEW_TREE [--rounds 8] [--arms 1] [--ticks 2000]

Each round runs one process per tree, in turn; each process builds ``suite.common.arms(N)``
(dt 0.001 s for one arm, 0.002 s for more, as ``arms.Pick``), takes 200 ticks, then times five
blocks of ``--ticks`` ticks by ``time.thread_time`` and prints one JSON line: the median, least
and largest block, µs a tick, the path the plan took and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def measure(root: str, n: int, ticks: int) -> dict:
    """This process's figures for checkout ``root`` (its coopsim first on sys.path)."""
    sys.path[:0] = [root, os.path.join(root, "benchmarks")]
    from suite.common import arms, build, kernels_ready, threads

    kernels_ready()
    threads(1)
    stepper = build(arms(n, dt=0.001 if n == 1 else 0.002), warm=200)
    blocks = []
    for _ in range(5):
        start = time.thread_time()
        for _ in range(ticks):
            stepper.tick()
        blocks.append((time.thread_time() - start) / ticks * 1e6)
    return {"root": root, "path": stepper.sim.step_path,
            "tick_us": round(statistics.median(blocks), 1), "least": round(min(blocks), 1),
            "most": round(max(blocks), 1), "load": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--arms", type=int, default=1)
    parser.add_argument("--ticks", type=int, default=2000)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: one tree
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.arms, args.ticks)), flush=True)
        return
    env = dict(os.environ, COOPSIM_JIT="wait")
    for _ in range(args.rounds):
        for tree in args.trees:
            subprocess.run([sys.executable, __file__, "--one", os.path.abspath(tree),
                            "--arms", str(args.arms), "--ticks", str(args.ticks)],
                           env=dict(env, PYTHONPATH=os.path.abspath(tree)), check=True)


if __name__ == "__main__":
    main()
