"""A digest of a batched run (docs/learning.md, "Batched worlds"): K copies of
``scenarios/learn_avoid.scenario`` x 4 agents through ``gymnasium.make_vec``, a fixed
pseudo-random action sequence, every copy ending now and then (so copies reset while the
others go on); SHA-256 of every step's observations, rewards, ends and robot states.

The same digest before and after a change to the batch means the same results bit for bit;
tests/env/test_learning_batch.py compares it across numba thread counts in subprocesses.

Usage: python tests/env/batch_digest.py [--copies 8] [--steps 80]
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np

AGENTS = ["r1", "r2", "r3", "r4"]


def digest(copies: int, steps: int, scenario: str) -> str:
    """The run's SHA-256 (hex); the compiled kernels are loaded first when numba imports."""
    import gymnasium

    import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0
    from coopsim.env import batchcast  # noqa: F401 -- its kernels registered
    from coopsim.model.compiled import load_pending

    load_pending()
    count = [0]

    def task(snap, rows):  # copy k ends at every 13th step shifted by k
        count[0] += 1
        return np.zeros(rows.shape), (np.arange(rows.shape[0]) + count[0]) % 13 == 0

    vec = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=copies, scenario=scenario,
                             robot=AGENTS, observe=["sonar"], task=task,
                             backend="world")
    h = hashlib.sha256()
    vec.reset(seed=3)
    rng = np.random.default_rng(0)
    low, high = vec.single_action_space.low, vec.single_action_space.high
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = vec.step(
            rng.uniform(low, high, size=(copies,) + low.shape))
        for label in sorted(obs):
            h.update(np.ascontiguousarray(obs[label]).tobytes())
        for a in (reward, terminated, truncated, vec.batch.sim.world.engine.robot_state()):
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def main() -> None:
    from pathlib import Path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--steps", type=int, default=80)
    args = parser.parse_args()
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "learn_avoid.scenario"
    print(digest(args.copies, args.steps, str(scenario)))


if __name__ == "__main__":
    main()
