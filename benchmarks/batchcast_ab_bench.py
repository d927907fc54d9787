"""Benchmark: the batch's copy caster of another checkout against this one's, in one process
(docs/performance.md, "Batched worlds, round 5").

One lean batch (``scenarios/learn_avoid.scenario``: K copies x 4 robots in the maze, sonar
observed, kinematic engine) is built with this checkout's coopsim; the ``coopsim/env/
batchcast.py`` of the checkout ``--source`` is loaded beside it, and the two ``CopyCaster``\\ s
are swapped into the same batch block by block. Everything but the caster is the same code,
and both see the machine's load alike: on a shared machine the difference between blocks is far
larger than that between two processes' changes. Prints the median agent-steps/s (wall clock
and per CPU-second of this process) of each, and the ratios. Set ``COOPSIM_JIT=wait``.

Usage: python benchmarks/batchcast_ab_bench.py --source DIR [--copies 256] [--steps 100]
       [--blocks 8]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0

AVOID = str(Path(__file__).resolve().parent.parent / "scenarios" / "learn_avoid.scenario")


def _other(source: str):
    """The ``batchcast`` module of the checkout ``source``, loaded under this coopsim."""
    path = Path(source) / "coopsim" / "env" / "batchcast.py"
    spec = importlib.util.spec_from_file_location("coopsim.env._batchcast_other", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.wait_ready(600)
    return module


def _task(snap, rows):
    return np.zeros(rows.shape), np.zeros(rows.shape[0], bool)


def run(source: str, copies: int, steps: int, blocks: int) -> dict:
    """{"base": (wall, cpu), "branch": (wall, cpu)} median agent-steps/s."""
    import gymnasium

    other = _other(source)
    vec = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=copies, scenario=AVOID,
                             robot=["r1", "r2", "r3", "r4"], observe=["sonar"], task=_task,
                             lean=True, backend="world")
    vec.reset(seed=0)
    actions = np.tile([0.3, 0.28], (copies, 4, 1))
    for _ in range(5):
        vec.step(actions)
    auto = vec.batch.caster
    base = other.CopyCaster(auto.offsets, auto.half)
    base.set_static(*auto._static)
    base.set_copies(auto.members)
    casters = {"base": base, "branch": auto.jit}
    rates = {k: ([], []) for k in casters}
    for block in range(blocks + 1):  # block 0 warms both
        for name, caster in casters.items():
            auto.jit = caster
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(steps):
                vec.step(actions)
            if block:
                rates[name][0].append(steps * copies * 4 / (time.perf_counter() - wall))
                rates[name][1].append(steps * copies * 4 / (time.process_time() - cpu))
    auto.jit = casters["branch"]
    return {k: (statistics.median(w), statistics.median(c)) for k, (w, c) in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="the other checkout (the base)")
    parser.add_argument("--copies", type=int, default=256)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=8)
    args = parser.parse_args()
    r = run(args.source, args.copies, args.steps, args.blocks)
    print(f"load {os.getloadavg()[0]:.1f}, NUMBA_NUM_THREADS="
          f"{os.environ.get('NUMBA_NUM_THREADS', 'default')}")
    for name, (wall, cpu) in r.items():
        print(f"{name:7s} agent-steps/s {wall:,.0f} wall, {cpu:,.0f} per CPU-second")
    print(f"branch / base: wall {r['branch'][0] / r['base'][0]:.3f}, "
          f"CPU {r['branch'][1] / r['base'][1]:.3f}")


if __name__ == "__main__":
    main()
