"""Benchmark of the showcases (docs/usecases.md): wall time of each, in lockstep, headless, and
what the controllers and the rule cost on top of the physics and sensing.

    python benchmarks/usecases_bench.py [--repeat 3]

For each of scenarios/transport.scenario and scenarios/formation.scenario, in this process:

1. the showcase as written (in-process drivers and its rule) run to its rule's end: wall time
   (goal: under 60 s each) and steps;
2. the same world and robots for the same number of steps without drivers or rules (the
   baseline: stepping, physics and sensors only), in the same run; the ratio showcase/baseline
   says what the controllers and referee cost.

Medians of ``--repeat`` runs, alternating showcase and baseline.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

from coopsim.formats.files import load
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

ROOT = Path(__file__).resolve().parents[1]
SHOWCASES = ("transport", "formation")


def showcase(name: str) -> tuple[float, int]:
    """Wall time (s) and steps of the showcase run to its rule's end."""
    spec = load(str(ROOT / "scenarios" / f"{name}.scenario"))
    step = Stepper(Simulation(spec), mode="lockstep")
    start = time.perf_counter()
    while not step.sim.rules.ended:
        step.tick()
    return time.perf_counter() - start, step.snapshot.step


def baseline(name: str, steps: int) -> float:
    """Wall time (s) of ``steps`` steps of the same scenario without drivers or rules."""
    spec = load(str(ROOT / "scenarios" / f"{name}.scenario"))
    bare = dataclasses.replace(spec, rules=(), robots=tuple(
        dataclasses.replace(r, drivers=()) for r in spec.robots))
    step = Stepper(Simulation(bare), mode="lockstep")
    start = time.perf_counter()
    for _ in range(steps):
        step.tick()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| showcase | steps | wall time, s | baseline, s | ratio |")
    print("|---|---|---|---|---|")
    for name in SHOWCASES:
        walls, bases, steps = [], [], 0
        for _ in range(args.repeat):
            wall, steps = showcase(name)
            walls.append(wall)
            bases.append(baseline(name, steps))
        wall, base = statistics.median(walls), statistics.median(bases)
        print(f"| {name} | {steps} | {wall:.2f} | {base:.2f} | {wall / base:.2f} |")


if __name__ == "__main__":
    main()
