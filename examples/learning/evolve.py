"""Evolve a neural obstacle-avoidance controller with CMA-ES over batched worlds, its fitness
evaluations spread as Dask tasks exactly as ``coopsim sweep`` spreads its points.

Usage: python evolve.py [--generations 30] [--popsize 16] [--steps 200] [--workers N |
                         --scheduler ADDRESS] [--out out/evolve]

Each generation CMA-ES (the ``cma`` package) proposes ``popsize`` weight vectors for
:class:`neuro.Network`. They are cut into chunks; a chunk is one Dask task (a LocalCluster of
single-threaded worker processes, or the cluster at ``--scheduler``, through the very
``coopsim.app.sweep.connect`` the sweep uses) that evaluates all its candidates at once in one
batched world: copy k of the scenario (``gymnasium.make_vec``) is driven by candidate k, every
robot of the copy by the same network. Fitness (Floreano and Mondada's): the mean over steps
and robots of ``v * (1 - sqrt(dv)) * (1 - p)`` -- v the mean wheel speed, dv the wheels'
difference (both / max_speed), p the nearest sonar proximity: fast, straight, clear of walls.

Out: ``champion.json`` (the best network seen; run it with deploy.py), ``fitness.csv`` and
``fitness.png`` (best and mean per generation). A progress bar (tqdm) counts evaluations.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from neuro import Network  # noqa: E402

SCENARIO = HERE.parents[1] / "scenarios" / "learn_avoid.scenario"


def _no_task(snap, rows):
    """Reward and ends are not used: fitness is computed from observations and actions."""
    return np.zeros(rows.shape), np.zeros(rows.shape[0], bool)


def evaluate(candidates, scenario: str, agents, steps: int, hidden: int, seed: int):
    """Fitness of each candidate (C, n weights), all in one batched world of C copies."""
    import gymnasium

    import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0
    from neuro import Network as Net

    candidates = np.atleast_2d(candidates)
    env = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=len(candidates),
                             scenario=scenario, robot=list(agents), observe=["sonar"],
                             task=_no_task, lean=True)  # only sonar and motors sensed
    high = env.single_action_space.high.reshape(-1, 2)[0]
    nets = [Net(w, hidden, float(env.single_observation_space["sonar"].high.max()), high[0])
            for w in candidates]
    obs, _ = env.reset(seed=seed)
    total = np.zeros(len(candidates))
    for _ in range(steps):
        sonar = obs["sonar"].reshape(len(candidates), len(agents), -1)
        act = np.stack([net(s) for net, s in zip(nets, sonar)])
        obs, *_ = env.step(act.reshape(env.action_space.shape))
        v = act.mean(axis=2) / high[0]
        dv = np.abs(act[..., 0] - act[..., 1]) / (2 * high[0])
        p = 1.0 - sonar.min(axis=2) / nets[0].max_range
        total += (v * (1 - np.sqrt(dv)) * (1 - p)).mean(axis=1)
    env.close()
    return total / steps


def scales(args) -> tuple[float, float]:
    """The first agent's sonar range and wheel speed limit, m and m/s (as evaluate sees)."""
    import gymnasium

    import coopsim.env  # noqa: F401

    env = gymnasium.make("coopsim/Scenario-v0", scenario=args.scenario, robot=args.robots[0],
                         observe=["sonar"], engine="kinematic").unwrapped
    return float(env.observation_space["sonar"].high.max()), float(env.action_space.high[0])


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=str(SCENARIO))
    parser.add_argument("--robots", nargs="+", default=["r1", "r2", "r3", "r4"])
    parser.add_argument("--generations", type=int, default=30)
    parser.add_argument("--popsize", type=int, default=16)
    parser.add_argument("--chunk", type=int, default=8, help="candidates per Dask task")
    parser.add_argument("--steps", type=int, default=200, help="steps per evaluation")
    parser.add_argument("--hidden", type=int, default=0, help="hidden units (0: none)")
    parser.add_argument("--sigma", type=float, default=0.5, help="CMA-ES initial step size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--scheduler", default=None, help="an existing Dask scheduler")
    parser.add_argument("--out", default="out/evolve")
    return parser.parse_args(argv)


def generation(client, es, args, bar) -> np.ndarray:
    """Ask, evaluate as Dask tasks (chunks), tell; the candidates and their fitness."""
    from distributed import as_completed

    xs = np.array(es.ask())
    chunks = [(i, xs[i:i + args.chunk]) for i in range(0, len(xs), args.chunk)]
    futures = {client.submit(evaluate, chunk, args.scenario, tuple(args.robots), args.steps,
                             args.hidden, args.seed, pure=False,
                             key=f"fitness-{i}-{time.time_ns()}"): i for i, chunk in chunks}
    fitness = np.empty(len(xs))
    for future in as_completed(list(futures), loop=client.loop):
        i = futures[future]
        values = future.result()
        fitness[i:i + len(values)] = values
        bar.update(len(values))
    es.tell(list(xs), list(-fitness))  # cma minimizes
    return xs, fitness


def plot(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    gens = [r["generation"] for r in rows]
    ax.plot(gens, [r["best"] for r in rows], label="best")
    ax.plot(gens, [r["mean"] for r in rows], label="mean")
    ax.set_xlabel("generation")
    ax.set_ylabel("fitness")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    import cma
    from tqdm import tqdm

    from coopsim.app.sweep import connect

    args = parse(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    es = cma.CMAEvolutionStrategy(np.zeros(Network.size(args.hidden)), args.sigma,
                                  {"popsize": args.popsize, "seed": args.seed, "verbose": -9})
    client = connect(args.scheduler, args.workers)
    rows, best = [], (-np.inf, None)
    try:
        client.upload_file(str(HERE / "neuro.py"))  # the workers import it, on any cluster
        with tqdm(total=args.generations * args.popsize, unit="eval", desc="evolve") as bar:
            for g in range(args.generations):
                xs, fitness = generation(client, es, args, bar)
                k = int(np.argmax(fitness))
                if fitness[k] > best[0]:
                    best = (float(fitness[k]), xs[k])
                rows.append({"generation": g, "best": float(fitness.max()),
                             "mean": float(fitness.mean()), "champion": best[0]})
                bar.set_postfix(best=f"{best[0]:.3f}")
    finally:
        cluster = client.cluster
        client.close()
        if cluster is not None:
            cluster.close()
    with open(out / "fitness.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, out / "fitness.png")
    max_range, max_speed = scales(args)
    Network(best[1], args.hidden, max_range, max_speed).save(
        out / "champion.json", fitness=best[0], scenario=Path(args.scenario).name)
    print(f"champion fitness {best[0]:.4f} -> {out / 'champion.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
