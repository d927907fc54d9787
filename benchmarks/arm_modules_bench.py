"""Benchmark: the arm robot types with their modules in a whole Simulation (issue 34), each
figure against a baseline measured in the same run.

Rows (each timed in blocks of ``--steps`` steps after a warm-up; median block):

* ``irb120 moving``: one ``irb120`` (modules joints, tool, gripper, force, pose) on the mujoco
  engine at dt 0.001 s (1 kHz physics), a new ``joints.set_positions`` stored every 200 steps
  (a 0.3 rad move of every joint at full speed, so the arm is always moving): every step's
  phases (commands, the joints module's set points, physics, the five modules' readings,
  snapshot). Goal: >= 10x real time.
* ``irb120 still``: the same arm holding its home (no command).
* ``single``: the baseline, the reference ground robot alone on the mujoco engine, same dt.
* ``100 irb120 moving``: 100 arms on a 10 x 10 grid, dt 0.002 s (500 Hz), every arm given a new
  set_positions every 100 steps; goal: >= 1x real time.

Real time is steps/s x dt, by wall time and by this process's CPU time (the machine's load
moves the wall clock). Usage: python benchmarks/arm_modules_bench.py [--steps 400] [--blocks 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from coopsim.model.specs import FloorSpec, RobotSpec, ScenarioSpec, Settings, WorldSpec
from coopsim.plugins.modules.joints import positions_row
from coopsim.plugins.robots.arms import IRB120
from coopsim.sim.simulation import Simulation


def world(kind: str, count: int, dt: float) -> Simulation:
    side = int(np.ceil(np.sqrt(count)))
    robots = tuple(RobotSpec(kind, f"r{i}", (1.5 * (i % side) - 7.0, 1.5 * (i // side) - 7.0,
                                             0.0), 0.0) for i in range(count))
    spec = ScenarioSpec(WorldSpec(FloorSpec(20.0, 20.0)), robots=robots,
                        settings=Settings(dt=dt, mode="lockstep", seed=1, engine="mujoco"),
                        name="bench")
    return Simulation(spec)


def one_step(sim: Simulation) -> None:
    sim.command({})
    sim.actuate()
    sim.physics()
    sim.sense()
    sim.apply_rules()


def timed(sim: Simulation, steps: int, blocks: int, every: int,
          moving: bool) -> tuple[float, float]:
    """Median real-time factors (by wall time, by this process's CPU time) over ``blocks``
    blocks of ``steps`` steps (the machine's load moves the wall clock; CPU time less)."""
    rows = np.arange(len(sim.robots.names))
    start = IRB120.start
    k = 0
    factors, cpu = [], []
    for block in range(blocks + 1):  # the first block warms up
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            if moving and k % every == 0:
                sign = 1.0 if (k // every) % 2 == 0 else 0.0
                row = positions_row(IRB120, start + 0.3 * sign, 1.0)
                for r in rows:
                    sim.set_command(int(r), "joints", row)
            one_step(sim)
            k += 1
        if block:
            factors.append(steps * sim.dt / (time.perf_counter() - t0))
            cpu.append(steps * sim.dt / (time.process_time() - c0))
    return statistics.median(factors), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--blocks", type=int, default=5)
    args = parser.parse_args()
    rows = [("single", world("single", 1, 0.001), 200, False),
            ("irb120 moving", world("irb120", 1, 0.001), 200, True),
            ("irb120 still", world("irb120", 1, 0.001), 200, False),
            ("100 irb120 moving", world("irb120", 100, 0.002), 100, True)]
    base = None
    print(f"{'row':20s} {'wall':>8s} {'CPU':>8s}  (real time; CPU vs single)")
    for name, sim, every, moving in rows:
        wall, cpu = timed(sim, args.steps, args.blocks, every, moving)
        base = cpu if name == "single" else base
        ratio = f"  {cpu / base:.2f}" if name != "single" else ""
        print(f"{name:20s} {wall:7.2f}x {cpu:7.2f}x{ratio}")


if __name__ == "__main__":
    main()
