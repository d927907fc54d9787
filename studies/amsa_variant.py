"""One model variant of the AMSA scenario 2 (docs/experiments/amsa.md, "Where ours differs"):
the leader's speed, which the paper does not give, against the paper's Fig. 6 levels.

    python studies/amsa_variant.py [--speeds 0.05,0.025] [--seeds 10]

For each leader speed, scenarios/amsa_scenario2.scenario with that speed is run in-process in
lockstep for each seed, and each gain's segment (Kv 0.35 for 0-100 s, Kv 0.05 for 100-200 s,
from 20 s after its start) gives its mean and largest leader-follower distance, m, and the
share of the samples above the segment's mean + 0.1 m and back (how often it swings). Prints a
Markdown table. About 2 s of one core per run.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from coopsim.formats.files import load_scenario
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

ROOT = Path(__file__).resolve().parents[1]
SETTLE = 20.0  # s left out after the start and the reset, as amsa.py does
BOUNDS = ((0.0, 100.0, 0.35), (100.0, 200.0, 0.05))  # (start, end, Kv) of scenario 2


def _with_speed(spec, speed: float):
    robots = []
    for robot in spec.robots:
        drivers = tuple(dataclasses.replace(d, settings=tuple(
            (k, speed if k == "speed" else v) for k, v in d.settings))
            if d.label == "amsa_leader" else d for d in robot.drivers)
        robots.append(dataclasses.replace(robot, drivers=drivers))
    return dataclasses.replace(spec, robots=tuple(robots))


def run(speed: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sim times (s) and distances (m) of scenario 2 with the leader at ``speed`` m/s."""
    spec = _with_speed(load_scenario(ROOT / "scenarios" / "amsa_scenario2.scenario"), speed)
    stepper = Stepper(Simulation(spec, seed=seed), mode="lockstep", speed=0)
    times, gaps = [], []
    while stepper.snapshot.time < spec.settings.duration - 1e-9:
        snap = stepper.tick()
        times.append(snap.time)
        gaps.append(snap.rules["monitors"]["metrics"]["distance"])
    return np.array(times), np.array(gaps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--speeds", default="0.05,0.025", help="leader speeds, m/s")
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    print("| leader speed, m/s | Kv | mean distance, m | largest, m (mean over seeds) | "
          "largest, m (all seeds) | crossings of mean +/- 0.1 m per 100 s |")
    print("|---|---|---|---|---|---|")
    for speed in (float(s) for s in args.speeds.split(",")):
        per = {kv: [] for _, _, kv in BOUNDS}
        for seed in range(args.seeds):
            times, gaps = run(speed, seed)
            for start, end, kv in BOUNDS:
                seg = gaps[(times > start + SETTLE) & (times <= end + 1e-9)]
                band = np.sign(np.where(np.abs(seg - seg.mean()) > 0.1, seg - seg.mean(), 0))
                swings = np.count_nonzero(np.diff(band[band != 0])) if band.any() else 0
                per[kv].append((seg.mean(), seg.max(), swings * 100 / (end - start - SETTLE)))
        for kv, rows in per.items():
            a = np.array(rows)
            print(f"| {speed:g} | {kv} | {a[:, 0].mean():.2f} | {a[:, 1].mean():.2f} | "
                  f"{a[:, 1].max():.2f} | {a[:, 2].mean():.1f} |")


if __name__ == "__main__":
    main()
