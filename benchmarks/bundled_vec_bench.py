"""Bench: the bundled learning scenarios through ``gymnasium.make_vec`` (default observation,
every module), the ``copies`` backend against the ``world`` one measured in the same run:
build, the first reset and a step, each backend's figure and the ratio world / copies.

Imports, plugin loading and compiled kernels are warmed first (a one-copy batch of each
backend), so the figures are the batch's own cost. Issue 45, item 13 (docs/learning.md).

Usage: python benchmarks/bundled_vec_bench.py [--copies 4096] [--steps 10] [--only NAME]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gymnasium
import numpy as np

import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
BUNDLED = ("learn_avoid", "learn_goal", "learn_coverage")


def measure(path: str, copies: int, backend: str, steps: int) -> tuple[str, float, float,
                                                                          float]:
    """(backend that served, build s, reset s, step s) of ``copies`` copies of ``path``."""
    t0 = time.perf_counter()
    env = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=copies, scenario=path,
                             backend=None if backend == "auto" else backend)
    t1 = time.perf_counter()
    env.reset(seed=0)
    t2 = time.perf_counter()
    act = np.zeros(env.action_space.shape)
    for _ in range(steps):
        env.step(act)
    t3 = time.perf_counter()
    return env.batch.backend, t1 - t0, t2 - t1, (t3 - t2) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--only", choices=BUNDLED)
    args = parser.parse_args()
    for name in (args.only,) if args.only else BUNDLED:
        path = str(SCENARIOS / f"{name}.scenario")
        for backend in ("auto", "world"):
            measure(path, 1, backend, 1)  # imports, plugins, kernels
        auto = measure(path, args.copies, "auto", args.steps)
        world = measure(path, args.copies, "world", args.steps)
        for label, (served, build, reset, step) in (("default", auto), ("world", world)):
            print(f"{name:15s} K={args.copies} {label:7s} -> {served:6s} build {build:7.2f} s  "
                  f"reset {reset:6.2f} s  step {step * 1e3:8.1f} ms")
        print(f"{name:15s} world / default: build {world[1] / auto[1]:.0f}x, reset "
              f"{world[2] / auto[2]:.0f}x, step {world[3] / auto[3]:.0f}x")


if __name__ == "__main__":
    main()
