"""Benchmarks of the plugin issue: step time against the pre-plugin code, drivers against network
controllers. Figures go in docs/performance.md; ratios are measured in the same run.

    python benchmarks/plugins_bench.py --baseline /path/to/old/checkout   # needs its .venv
    python benchmarks/plugins_bench.py --skip-baseline                    # drivers only

1. ``coopsim bench step`` at 1,000 and 2,000 robots (pymunk engine), this tree against a checkout
   of the commit before the plugin system, alternating runs; the ratio new/old of the median of
   the runs' medians (goal: <= 1.10).
2. One robot in lockstep, a controller that reads the sonar and sets the motors every step: as an
   in-process driver (``Stepper.tick`` loop) and as a network controller in another process
   (REQ sockets, ``coopsim.client``), steps per second and their ratio (goal: >= 10).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NETWORK_LOOP = """
import json, sys, time
from coopsim.client import Client
steps = int(sys.argv[2])
with Client(sys.argv[1]) as c:
    bot = c.robot("r1")
    for _ in range(50):
        bot.sonar.read(); bot.motors.set_speeds(0.2, 0.2)
    t0 = time.perf_counter()
    for _ in range(steps):
        d = bot.sonar.read()
        bot.motors.set_speeds(0.2, 0.2 if min(d) > 0.3 else -0.2)
    print(json.dumps(steps / (time.perf_counter() - t0)))
    bot.detach()
"""


def bench_table(python: str, counts: str, steps: int) -> dict[int, float]:
    """Median tick ms per robot count from one ``coopsim bench step`` run of ``python``."""
    out = subprocess.run([python, "-m", "coopsim", "bench", "step", "--robots", counts,
                          "--steps", str(steps)], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout
    lines = [[c.strip() for c in line.split("|")] for line in out.splitlines()
             if line.startswith("| ")]
    k = lines[0].index("robots")  # older trees print no engine and caster columns
    return {int(r[k]): float(r[k + 1]) for r in lines[1:] if r[k].isdigit()}


def regression(baseline: Path, runs: int, steps: int) -> None:
    old_py = str(baseline / ".venv" / "bin" / "python")
    new, old = [], []
    for _ in range(runs):  # alternate, so both see the same machine
        old.append(bench_table(old_py, "1000,2000", steps))
        new.append(bench_table(sys.executable, "1000,2000", steps))
    print("| robots | old median ms | new median ms | new / old |\n|---:|---:|---:|---:|")
    for n in (1000, 2000):
        o = statistics.median(r[n] for r in old)
        m = statistics.median(r[n] for r in new)
        print(f"| {n} | {o:.2f} | {m:.2f} | {m / o:.3f} |")


def driver_rate(steps: int) -> float:
    """Steps per second of an in-process driver reading sonar and setting motors."""
    from coopsim.model.driver import Driver
    from coopsim.model.plugins import DRIVERS
    from coopsim.model.specs import DriverSetting
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    class Loop(Driver):
        label = "bench_loop"

        def step(self, bot):
            d = bot.sonar.read()
            bot.motors.set_speeds(0.2, 0.2 if min(d) > 0.3 else -0.2)

    if "bench_loop" not in DRIVERS:
        DRIVERS.register("bench_loop")(Loop)
    from coopsim.raycast import auto as casters

    casters.wait_ready(600)  # the compiled sensing, as a run has it after its first second
    stepper = Stepper(Simulation(_one(DriverSetting("bench_loop"))), mode="lockstep")
    for _ in range(50):
        stepper.tick()
    t0 = time.perf_counter()
    for _ in range(steps):
        stepper.tick()
    return steps / (time.perf_counter() - t0)


def network_rate(steps: int) -> float:
    """Steps per second of a network controller process doing the same in lockstep."""
    from coopsim.app.run import Run, RunOptions

    with Run(_one(), RunOptions(port=0, controllers=False, mode="lockstep")) as run:
        run.stepper.pause()
        run.start()
        run.stepper.resume()
        out = subprocess.run([sys.executable, "-c", NETWORK_LOOP, run.network.endpoint,
                              str(steps)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _one(*drivers):
    from coopsim.model.specs import (FloorSpec, ObjectSpec, RobotSpec, ScenarioSpec, Settings,
                                     WorldSpec)

    world = WorldSpec(FloorSpec(6, 6), (ObjectSpec("W", "box", (0.5, 3, 0.5), (2, 0, 0.25)),))
    return ScenarioSpec(world, robots=(RobotSpec("single", "r1", drivers=drivers),),
                        settings=Settings(mode="lockstep"), name="bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="checkout of the pre-plugin commit")
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=50, help="timed steps per bench step run")
    parser.add_argument("--loop-steps", type=int, default=3000)
    args = parser.parse_args()
    if not args.skip_baseline:
        if args.baseline is None:
            parser.error("--baseline DIR (a checkout with its .venv) or --skip-baseline")
        regression(args.baseline, args.runs, args.steps)
    rates = [(driver_rate(args.loop_steps), network_rate(args.loop_steps))
             for _ in range(3)]
    print("\n| run | driver steps/s | network steps/s | driver / network |\n|---:|---:|---:|---:|")
    for k, (d, n) in enumerate(rates, 1):
        print(f"| {k} | {d:.0f} | {n:.0f} | {d / n:.1f} |")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
