"""Cooperative coverage with PettingZoo: four robots learn, with one shared policy, to spread
out over the arena (``scenarios/learn_coverage.scenario``: a shared reward, the team's spread).

Usage: python coverage_team.py [--generations 20] [--popsize 8] [--steps 200] [--out out/coverage]

The environment is coopsim's PettingZoo ``ParallelEnv`` (every robot an agent, sonar observed).
The trainer is CMA-ES from the ``cma`` package (the ``learning`` extra installs it; no torch):
each candidate is a shared :class:`neuro.Network`, scored by the team's return over one
episode. Any PettingZoo trainer works on the same environment (parameter-sharing PPO from
Stable-Baselines3 through SuperSuit, for instance): install it yourself, coopsim does not
depend on it.

Out: ``policy.json`` (run it on each robot with deploy.py), ``returns.csv``, and
``final.png``: the last frame of the champion's episode, top-down (``render_mode="rgb_array"``).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from neuro import Network  # noqa: E402

SCENARIO = HERE.parents[1] / "scenarios" / "learn_coverage.scenario"


def episode(env, net: Network, seed: int, steps: int) -> float:
    """The team's return (the shared reward summed over steps) of one episode."""
    obs, _ = env.reset(seed=seed)
    total, k = 0.0, 0
    while env.agents and k < steps:
        obs, rewards, *_ = env.step({a: net(obs[a]["sonar"]) for a in env.agents})
        total += float(np.mean(list(rewards.values())))
        k += 1
    return total


def main(argv=None) -> int:
    import cma
    from tqdm import tqdm

    from coopsim.env.parallel import parallel_env

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=str(SCENARIO))
    parser.add_argument("--generations", type=int, default=20)
    parser.add_argument("--popsize", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200, help="steps per episode, at most")
    parser.add_argument("--sigma", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="out/coverage")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = parallel_env(args.scenario, observe=["sonar"], render_mode="rgb_array")
    agent = env.possible_agents[0]
    scale = (float(env.observation_space(agent)["sonar"].high.max()),
             float(env.action_space(agent).high[0]))
    es = cma.CMAEvolutionStrategy(np.zeros(Network.size()), args.sigma,
                                  {"popsize": args.popsize, "seed": args.seed, "verbose": -9})
    rows, best = [], (-np.inf, None)
    with tqdm(total=args.generations * args.popsize, unit="episode", desc="coverage") as bar:
        for g in range(args.generations):
            xs = es.ask()
            returns = []
            for x in xs:
                returns.append(episode(env, Network(x, 0, *scale), args.seed, args.steps))
                bar.update(1)
            es.tell(xs, [-r for r in returns])
            k = int(np.argmax(returns))
            if returns[k] > best[0]:
                best = (returns[k], np.asarray(xs[k]))
            rows.append({"generation": g, "best": max(returns),
                         "mean": float(np.mean(returns))})
            bar.set_postfix(best=f"{best[0]:.2f}")
    with open(out / "returns.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    policy = Network(best[1], 0, *scale)
    policy.save(out / "policy.json", team_return=best[0], scenario=Path(args.scenario).name)
    episode(env, policy, args.seed, args.steps)
    _png(env.render(), out / "final.png")
    print(f"best team return {best[0]:.3f} -> {out / 'policy.json'}", file=sys.stderr)
    return 0


def _png(image: np.ndarray, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.imsave(path, image)


if __name__ == "__main__":
    sys.exit(main())
