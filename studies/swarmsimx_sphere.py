"""SwarmSimX's real-time study in 3D (its Fig. 5): step time against the number of quadrotors.

N ``quadrotor`` robots (1.5 kg, 0.5 m, SwarmSimX class) take off from a grid on the floor and
keep a formation on the surface of a sphere (driver ``sphere_formation``: each robot's neighbour range
sensor, formation control and obstacle avoidance by artificial potentials, and its own cascaded
flight controller commanding its four propellers), dt = 0.02 s (50 Hz) as the paper. The
sphere's radius grows with N so that each robot has about ``spacing``^2 of its surface. Every
step is timed (the whole ``Stepper.tick``: driver, commands, actuators, physics, sensors,
rules; wall time, and the process's CPU time, which a loaded machine inflates less),
in-process, lockstep, on each engine asked for, in the same run; the figure is the paper's box
plot (boxes: quartiles, whiskers: 1.5 IQR, red crosses beyond, green dashed line: the 20 ms
step). It also says how well the formation sits on the sphere at the end.

Usage: python studies/swarmsimx_sphere.py [--robots 10,20,...] [--engine mujoco,aerial]
       [--steps 500] [--most mujoco=200] [--plot docs/experiments/swarmsimx_sphere.png]
       python studies/swarmsimx_sphere.py --compare-sensor 1000 --steps 100
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from coopsim.model.specs import (DriverSetting, FloorSpec, RobotSpec, ScenarioSpec,  # noqa: E402
                                 Settings, WorldSpec)
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402
from coopsim.swarm.potentials import SphereLaw, sphere_errors  # noqa: E402

DT = 0.02  # s: SwarmSimX's step
SPACING = 1.0  # m between neighbours on the sphere


def sphere_radius(n: int) -> float:
    """Radius (m) giving each of ``n`` robots about 1.1 SPACING^2 of the sphere's surface."""
    return max(1.5, SPACING * math.sqrt(1.1 * n / (4 * math.pi)))


def scenario(n: int, engine: str, seed: int = 1, robot_type: str = "quadrotor") -> ScenarioSpec:
    """``n`` quadrotors on a floor grid (SPACING apart) under a sphere, each with the driver."""
    radius = sphere_radius(n)
    side = math.ceil(math.sqrt(n))
    size = max(2 * radius, side * SPACING) + 6.0
    settings = (("radius", radius), ("height", radius + 1.5), ("spacing", SPACING),
                ("sense", 1.5 * SPACING), ("obstacle", 0.5))
    robots = tuple(RobotSpec(robot_type, f"q{k}", ((k % side - (side - 1) / 2) * SPACING,
                                                    (k // side - (side - 1) / 2) * SPACING, 0.0),
                             drivers=(DriverSetting("sphere_formation", settings),))
                   for k in range(n))
    return ScenarioSpec(WorldSpec(FloorSpec(size, size)), robots=robots,
                        settings=Settings(dt=DT, mode="lockstep", seed=seed, engine=engine),
                        name=f"sphere{n}")


def law_of(n: int) -> SphereLaw:
    """The formation the scenario asks for (for its errors)."""
    radius = sphere_radius(n)
    return SphereLaw(centre=(0.0, 0.0, radius + 1.5), radius=radius, spacing=SPACING)


def measure(n: int, engine: str, steps: int, warmup: int = 5) -> dict:
    """Time ``steps`` ticks of the formation of ``n`` on ``engine``; the samples (ms) and the
    formation's final errors (m)."""
    sim = Simulation(scenario(n, engine))
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(warmup):
        stepper.tick()
    samples, cpu = [], []
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        stepper.tick()
        samples.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    surface, closest = sphere_errors(stepper.snapshot.pose3d[:, :3], law_of(n))
    return {"robots": n, "engine": engine, "samples": samples, "cpu": cpu, "surface": surface,
            "closest": closest, "time": stepper.snapshot.time}


def dense_neighbours(p: np.ndarray, sense: float):
    """The range sensor as it was before the k-d tree: an N x N distance table (the same pairs
    in the same order as coopsim.swarm.potentials.neighbours)."""
    rel = p[None, :, :] - p[:, None, :]
    d2 = np.einsum("ijk,ijk->ij", rel, rel)
    np.fill_diagonal(d2, np.inf)
    i, j = np.nonzero(d2 <= sense * sense)
    return i, j, rel[i, j]


def compare_sensor(n: int, steps: int) -> str:
    """Same-run baseline of the sensor: median CPU ms of a step of ``n`` on ``aerial`` with the
    N x N table, the k-d tree, the table again."""
    import coopsim.plugins.drivers.sphere as driver

    tree, medians = driver.neighbours, []
    try:
        for sensor in (dense_neighbours, tree, dense_neighbours):
            driver.neighbours = sensor
            medians.append(statistics.median(measure(n, "aerial", steps)["cpu"]))
    finally:
        driver.neighbours = tree
    ratio = min(medians[0], medians[2]) / medians[1]
    return (f"{n} quadrotors, median CPU ms of a step: table {medians[0]:.2f}, k-d tree "
            f"{medians[1]:.2f}, table {medians[2]:.2f}: x{ratio:.2f}")


def plot(rows: list[dict], path: str) -> None:
    """The box plot of Fig. 5, one panel per engine."""
    from coopsim.app.analyze import pyplot

    plt = pyplot()
    engines = list(dict.fromkeys(r["engine"] for r in rows))
    fig, axes = plt.subplots(1, len(engines), figsize=(5.2 * len(engines), 4.2), dpi=110,
                             squeeze=False, sharey=True)
    for ax, engine in zip(axes[0], engines):
        mine = [r for r in rows if r["engine"] == engine]
        ax.boxplot([r["samples"] for r in mine], positions=range(1, len(mine) + 1),
                   flierprops={"marker": "x", "markeredgecolor": "red", "markersize": 4},
                   medianprops={"color": "red"})
        ax.plot(range(1, len(mine) + 1), [statistics.median(r["cpu"]) for r in mine], "b.:",
                label="median CPU time of a step")
        ax.axhline(DT * 1e3, color="green", linestyle="--", label="dt = 20 ms")
        # the other jobs' preemptions reach 10-20x the step: clip them, say so
        top = 1.3 * max(np.percentile(r["samples"], 99) for r in rows)
        clipped = sum(int(np.sum(np.array(r["samples"]) > top)) for r in mine)
        ax.set_ylim(0, top)
        if clipped:
            ax.text(0.02, 0.97, f"{clipped} samples above {top:.0f} ms not shown",
                    transform=ax.transAxes, fontsize=7, va="top")
        ax.set_xticks(range(1, len(mine) + 1), [f"{r['robots']:,}" for r in mine],
                      rotation=45 if len(mine) > 8 else 0, fontsize=8)
        ax.set_xlabel("quadrotors")
        ax.set_title(f"{engine} engine", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("time of one step, ms")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("quadrotors in formation on a sphere (SwarmSimX Fig. 5, in coopsim)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="10,20,30,40,50,60,70,80,90,100,150,200")
    parser.add_argument("--engine", default="mujoco,aerial")
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--plot", default="")
    parser.add_argument("--most", default="",
                        help="largest count per engine, e.g. mujoco=200 (the rest skipped)")
    parser.add_argument("--compare-sensor", type=int, default=0, metavar="N",
                        help="only time N quadrotors with the old N x N sensor and the k-d tree")
    args = parser.parse_args()
    if args.compare_sensor:
        print(compare_sensor(args.compare_sensor, args.steps))
        return
    most = {k: int(v) for k, v in (item.split("=") for item in args.most.split(",") if item)}
    rows = []
    print("| engine | quadrotors | steps | median ms | p95 ms | max ms | CPU median ms "
          "| real time by median | off the sphere m | closest pair m |\n"
          "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for engine in args.engine.split(","):
        for n in (int(v) for v in args.robots.split(",")):
            if n > most.get(engine, n):
                continue
            row = measure(n, engine, args.steps)
            rows.append(row)
            s = sorted(row["samples"])
            median = statistics.median(s)
            print(f"| {engine} | {n} | {len(s)} | {median:.2f} | {s[int(0.95 * len(s))]:.2f} | "
                  f"{s[-1]:.2f} | {statistics.median(row['cpu']):.2f} | "
                  f"{'yes' if median < DT * 1e3 else 'no'} | "
                  f"{row['surface']:.3f} | {row['closest']:.2f} |", flush=True)
    if args.plot:
        plot(rows, args.plot)
        print(f"figure: {args.plot}", file=sys.stderr)


if __name__ == "__main__":
    main()
