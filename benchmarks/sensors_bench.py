"""Benchmark: the sensing goals of issue 24 (docs/performance.md, *Sensors*), each with a
baseline measured in the same run, in alternating blocks (load from elsewhere on the machine
spoils a block, not a ratio). Short runs; lockstep steps timed (a step over dt would be a
missed deadline in real time).

1. lidar: 100 ``turtlebot3`` robots, 360-beam lidars at 5 Hz, dt 0.02, pymunk: step times
   (p50, p99, max / median, the share over dt) against the same robots scanning every step.
2. proximity and cameras: 1,000 ``epuck`` robots, 8 IR sensors every step, forward cameras at
   10 Hz (staggered), LEDs lit, dt 0.02, pymunk: step times, and the sensing phase against the
   same robots with the cameras every step.
3. maps: a 4,000 x 4,000-pixel PGM map's load time (goal <= 2 s); the sensing phase of 1,000
   ``single`` robots (11-ray sonar) in the map's world against the same robots on the same
   floor without the map (goal <= 1.5x).
4. sonar: the sensing phase of 10,000 ``single`` robots (kinematic) with this checkout against
   the code before issue 24 (``--base DIR``: a checkout of it; the two alternate in
   subprocesses). Goal: no slower.
5. rates: 100,000 ``single`` robots on the kinematic engine, sonar at 10 Hz (staggered) and,
   as the baseline, every step; dt 0.02. Goal: p95 step <= 20 ms.

Step times are wall-clock (what real time sees) and, for goals 1, 2 and 5, also CPU time
(``time.thread_time``: the work alone, without the waits for a core on a shared machine).

Usage: COOPSIM_JIT=wait python benchmarks/sensors_bench.py [--only 1,2,3,4,5] [--steps 60]
       [--base /tmp/base] [--skip-100k]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from coopsim.app.bench import swarm_scenario
from coopsim.formats.maps import load_map
from coopsim.model.specs import (FloorSpec, ParamSetting, RobotSpec, ScenarioSpec, Settings,
                                 WorldSpec)
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper


def grid(kind: str, n: int, spacing: float, params=(), dt=0.02, world=None) -> ScenarioSpec:
    """``n`` robots of type ``kind`` on a square grid, jittered, random headings."""
    rng = np.random.default_rng(0)
    side = math.ceil(math.sqrt(n))
    size = side * spacing + 2.0
    robots = []
    for i in range(n):
        x = -size / 2 + 1.0 + (i % side) * spacing + rng.uniform(-0.1, 0.1) * spacing
        y = -size / 2 + 1.0 + (i // side) * spacing + rng.uniform(-0.1, 0.1) * spacing
        robots.append(RobotSpec(kind, f"r{i}", (x, y, 0.0), rng.uniform(-math.pi, math.pi),
                                params=tuple(ParamSetting(*p) for p in params)))
    world = world or WorldSpec(FloorSpec(size, size))
    return ScenarioSpec(world, robots=tuple(robots), settings=Settings(dt=dt, mode="lockstep"),
                        name=f"{kind}{n}")


def driving(spec: ScenarioSpec, engine: str | None = None) -> Stepper:
    sim = Simulation(spec, engine=engine) if engine else Simulation(spec)
    st = Stepper(sim, mode="lockstep")
    rng = np.random.default_rng(1)
    top = 0.1 if spec.robots[0].type != "single" else 0.4
    for name in sim.snapshot.robots:
        st.slots.put(name, "motors", tuple(rng.uniform(0.2, 1.0, 2) * top), attach=False)
    for _ in range(3):
        st.tick()
    return st


def step_ms(st: Stepper, count: int, cpu: list | None = None) -> list[float]:
    """Wall time of ``count`` steps, ms; their CPU time (this thread's) appended to ``cpu``:
    on a shared machine a step's wall time includes the times the process waits for a core,
    its CPU time only the work (numba's threads are not used below 3 threads)."""
    out = []
    for _ in range(count):
        t0, c0 = time.perf_counter(), time.thread_time()
        st.tick()
        out.append((time.perf_counter() - t0) * 1e3)
        if cpu is not None:
            cpu.append((time.thread_time() - c0) * 1e3)
    return out


def sense_ms(st: Stepper, count: int) -> list[float]:
    sim, out = st.sim, []
    for _ in range(count):
        sim.command(st.slots.take())
        sim.actuate()
        sim.physics()
        t0 = time.perf_counter()
        sim.sense()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def summary(ms: list[float], dt_ms: float = 20.0) -> str:
    a = np.array(ms)
    med = float(np.median(a))
    return (f"p50 {med:.2f} ms, p95 {np.percentile(a, 95):.2f}, p99 {np.percentile(a, 99):.2f}, "
            f"max/median {a.max() / med:.2f}, over dt {100.0 * (a > dt_ms).mean():.1f} %")


def alternate(a: Stepper, b: Stepper, fn, blocks: int, per: int) -> tuple[list, list]:
    ra, rb = [], []
    for _ in range(blocks):
        ra += fn(a, per)
        rb += fn(b, per)
    return ra, rb


def lidar_goal(steps: int) -> None:
    params = [("lidar", "rate", 5.0)]
    held = driving(grid("turtlebot3", 100, 1.0, params))
    every = driving(grid("turtlebot3", 100, 1.0))
    cpu: list = []
    a, b = alternate(held, every, step_ms, 4, steps // 4)
    a += step_ms(held, steps, cpu)
    print(f"1. 100 turtlebot3, 360-beam lidar at 5 Hz (staggered): {summary(a)}")
    print(f"   the same, CPU time of the last {steps} steps:         {summary(cpu)}")
    print(f"   baseline, the same scanning every step:            {summary(b)}")
    print(f"   p50 ratio 5 Hz / every step: {np.median(a) / np.median(b):.2f}")


def proximity_goal(steps: int) -> None:
    st = driving(grid("epuck", 1000, 0.25, [("camera", "rate", 10.0)]))
    every = driving(grid("epuck", 1000, 0.25))
    for s in (st, every):
        s.sim.commands["leds"][:] = 255 * 65536  # every LED red: the cameras have blobs
    cpu: list = []
    ms = step_ms(st, steps, cpu)
    a, b = alternate(st, every, sense_ms, 2, max(2, steps // 4))
    print(f"2. 1,000 epuck, IR every step, cameras at 10 Hz, pymunk: {summary(ms)}")
    print(f"   the same steps' CPU time:                            {summary(cpu)}")
    print(f"   sensing phase p50 {np.median(a):.2f} ms; with cameras every step "
          f"{np.median(b):.2f} ms")


def big_map(folder: str) -> str:
    """A 4,000 x 4,000 PGM office-like map at 0.02 m (80 x 80 m): walls every 4 m with doors."""
    occ = np.zeros((4000, 4000), dtype=bool)
    occ[:10, :] = occ[-10:, :] = occ[:, :10] = occ[:, -10:] = True
    for k in range(200, 4000, 200):
        occ[k:k + 8, :] = True
        occ[:, k:k + 8] = True
        for j in range(100, 4000, 200):
            occ[k:k + 8, j - 25:j + 25] = False
            occ[j - 25:j + 25, k:k + 8] = False
    pgm = os.path.join(folder, "big.pgm")
    with open(pgm, "wb") as fh:
        fh.write(b"P5\n4000 4000\n255\n" + np.where(occ, 0, 254).astype(np.uint8).tobytes())
    path = os.path.join(folder, "big.yaml")
    with open(path, "w") as fh:
        fh.write("image: big.pgm\nresolution: 0.02\norigin: [-40.0, -40.0, 0.0]\n")
    return path


def map_goal(steps: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = big_map(folder)
        floor = FloorSpec(80.0, 80.0)
        took = []
        for _ in range(3):
            t0 = time.perf_counter()
            walls = load_map(path, floor)
            took.append(time.perf_counter() - t0)
    print(f"3. 4,000 x 4,000-pixel map: loads in {min(took):.2f} s (best of 3; "
          f"{max(took):.2f} worst) into {len(walls)} rectangles")
    empty = grid("single", 1000, 2.4, world=WorldSpec(floor))
    # robots on free cells: the map's rooms are 4 m; robots 2.4 m apart avoid the walls mostly
    mapped = dataclasses.replace(empty, world=WorldSpec(floor, walls))
    in_map, in_empty = driving(mapped, "kinematic"), driving(empty, "kinematic")
    a, b = alternate(in_map, in_empty, sense_ms, 4, steps // 4)
    print(f"   sensing 1,000 robots (kinematic, sonar): map {np.median(a):.2f} ms, empty "
          f"{np.median(b):.2f} ms (p50); ratio {np.median(a) / np.median(b):.2f}")


_SONAR = """
import sys, time, numpy as np
from coopsim.app.bench import swarm_scenario
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
sim = Simulation(swarm_scenario(10000), engine="kinematic")
st = Stepper(sim, mode="lockstep")
for _ in range(3): st.tick()
out = []
for _ in range(int(sys.argv[1])):
    sim.command(st.slots.take()); sim.actuate(); sim.physics()
    t0 = time.perf_counter(); sim.sense(); out.append((time.perf_counter() - t0) * 1e3)
print(float(np.median(out)))
"""


def sonar_goal(steps: int, base: str | None) -> None:
    if not base:
        print("4. sonar at 10,000 robots: skipped (give --base DIR, a checkout before issue 24)")
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs = {"this": [], "before": []}
    for _ in range(3):
        for label, root in (("this", here), ("before", base)):
            env = {**os.environ, "PYTHONPATH": root, "COOPSIM_JIT": "wait"}
            done = subprocess.run([sys.executable, "-c", _SONAR, str(steps)], env=env,
                                  capture_output=True, text=True, cwd=root, check=True)
            runs[label].append(float(done.stdout.split()[-1]))
    a, b = min(runs["this"]), min(runs["before"])
    print(f"4. sonar sensing phase, 10,000 robots, kinematic: this {a:.2f} ms, before "
          f"{b:.2f} ms (best p50 of 3 alternating runs each); ratio {a / b:.2f} "
          f"(all: {json.dumps(runs)})")


def rates_goal(steps: int, n: int) -> None:
    spec = swarm_scenario(n)
    held = dataclasses.replace(spec, robots=tuple(
        dataclasses.replace(r, params=(ParamSetting("sonar", "rate", 10.0),))
        for r in spec.robots))
    a_st, b_st = driving(held, "kinematic"), driving(spec, "kinematic")
    cpu: list = []
    a, b = alternate(a_st, b_st, step_ms, 3, max(3, steps // 3))
    step_ms(a_st, max(3, steps // 3), cpu)
    print(f"5. {n:,} robots, kinematic, sonar at 10 Hz (staggered): {summary(a)}")
    print(f"   the same, CPU time of {max(3, steps // 3)} more steps:          {summary(cpu)}")
    print(f"   baseline, sonar every step:                      {summary(b)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="1,2,3,4,5")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--base", default=None)
    ap.add_argument("--skip-100k", action="store_true")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if "1" in only:
        lidar_goal(args.steps)
    if "2" in only:
        proximity_goal(args.steps)
    if "3" in only:
        map_goal(args.steps)
    if "4" in only:
        sonar_goal(args.steps, args.base)
    if "5" in only:
        rates_goal(args.steps, 10_000 if args.skip_100k else 100_000)


if __name__ == "__main__":
    main()
