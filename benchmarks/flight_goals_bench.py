"""Issue 33's two performance goals for flying robots (docs/performance.md).

1. ``realtime``: 1,000 Crazyflies on the ``aerial`` engine, physics at 500 Hz (dt 0.002 s), the
   batch ``flight`` driver hovering them at 100 Hz (``every 5``), each with its imu, mocap,
   altimeter: run in real time for ``--seconds``; the share of late steps (goal < 1 %), the
   real-time factor and the step's p50/p95/p99. Same run, as the baseline: the same swarm with
   no driver (the physics and sensing alone).
2. ``lockstep``: ``--controllers`` quadrotors on the ``aerial`` engine in lockstep, each flown
   by its own network controller process (``run_controller('flight', ...)``, a hover), against
   the same world with one quadrotor and one controller: steps per second of each and their
   ratio (goal >= 0.5).

Usage: python benchmarks/flight_goals_bench.py [--only realtime|lockstep] [--robots 1000]
       [--seconds 20] [--controllers 100] [--steps 300]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from coopsim.model.specs import (DriverSetting, FloorSpec, RobotSpec, ScenarioSpec,  # noqa: E402
                                 Settings, WorldSpec)
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402

HOVER = (("shape", "hover"), ("height", 1.0), ("every", 5))


def swarm(n: int, driven: bool, dt: float = 0.002) -> ScenarioSpec:
    """``n`` Crazyflies 0.5 m apart on the aerial engine, hovering with the batch driver."""
    side = math.ceil(math.sqrt(n))
    size = side * 0.5 + 4.0
    robots = tuple(RobotSpec("crazyflie", f"cf{k}", ((k % side - side / 2) * 0.5,
                                                     (k // side - side / 2) * 0.5, 0.0),
                             drivers=(DriverSetting("flight", HOVER),) if driven else ())
                   for k in range(n))
    return ScenarioSpec(WorldSpec(FloorSpec(size, size)), robots=robots,
                        settings=Settings(dt=dt, mode="realtime", seed=1, engine="aerial"))


def realtime(n: int, seconds: float, driven: bool) -> str:
    """One realtime run; a table row."""
    sim = Simulation(swarm(n, driven))
    stepper = Stepper(sim, mode="realtime")
    for _ in range(10):
        stepper.tick()  # warm-up, unpaced: the first ticks compile and build
    times, tick = [], stepper.tick

    def timed():
        t0 = time.perf_counter()
        snap = tick()
        times.append((time.perf_counter() - t0) * 1e3)
        return snap

    stepper.tick = timed
    t0, start, steps0 = time.perf_counter(), sim.snapshot.time, sim.snapshot.step
    stepper.run(duration=start + seconds)
    wall = time.perf_counter() - t0
    steps = sim.snapshot.step - steps0
    p = np.percentile(times, (50, 95, 99))
    return (f"| {n} | {'flight every 5 (100 Hz)' if driven else 'none (baseline)'} | "
            f"{steps} | {stepper.missed} | {100 * stepper.missed / max(steps, 1):.2f} | "
            f"{(sim.snapshot.time - start) / wall:.3f} | {p[0]:.2f} | {p[1]:.2f} | {p[2]:.2f} |")


def lockstep(n: int, steps: int) -> float:
    """Steps per second of ``n`` quadrotors each flown by its own controller process."""
    folder = Path(tempfile.mkdtemp(prefix="goals-"))
    side = math.ceil(math.sqrt(n))
    (folder / "w.world").write_text(f"[FLOOR]\nsize {side * 2 + 4} {side * 2 + 4} 0.1\n")
    lines = ["[WORLD]", "file w.world", "[SETTINGS]", "engine aerial", "dt 0.01",
             "mode lockstep", f"duration {steps * 0.01}", "seed 1", f"wait_for {n}"]
    for k in range(n):
        lines += [f"[ROBOT_{k + 1}]", "type quadrotor", f"name q{k}",
                  f"position {(k % side - side / 2) * 2} {(k // side - side / 2) * 2} 0"]
    (folder / "s.scenario").write_text("\n".join(lines) + "\n")
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run", str(folder / "s.scenario"),
                             "--headless", "--port", "0", "--no-controllers"], cwd=ROOT,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in proc.stderr:
        found = re.search(r"name server: (\S+)", line)
        if found:
            break
    drones = [subprocess.Popen([sys.executable, "-c",
                                "from coopsim.client.host import run_controller; "
                                f"run_controller('flight', 'q{k}', {{'shape': 'hover'}}, "
                                f"nameserver={found.group(1)!r}, period=0.01)"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
              for k in range(n)]
    out, _ = proc.communicate(timeout=3600)
    for d in drones:
        d.wait(120)
    wall = float(re.search(r"wall time\s+([\d.]+)", out).group(1))
    done = int(re.search(r"steps\s+(\d+)", out).group(1))
    return done / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--robots", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--controllers", type=int, default=100)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    print(f"load average {', '.join(f'{v:.2f}' for v in os.getloadavg())}, "
          f"{os.cpu_count()} CPUs", flush=True)
    if args.only in ("", "realtime"):
        print("| Crazyflies | driver | steps | late | late % | x real time | p50 ms | p95 ms "
              "| p99 ms |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|", flush=True)
        for driven in (True, False):
            print(realtime(args.robots, args.seconds, driven), flush=True)
    if args.only in ("", "lockstep"):
        one = lockstep(1, args.steps)
        many = lockstep(args.controllers, args.steps)
        print(f"lockstep steps/s: 1 controller {one:.1f}, {args.controllers} controllers "
              f"{many:.1f}, ratio {many / one:.3f} (goal >= 0.5)", flush=True)


if __name__ == "__main__":
    main()
