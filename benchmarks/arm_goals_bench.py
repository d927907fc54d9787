"""Issue 34's performance goals for arms (docs/performance.md).

1. ``many``: ``--arms`` irb120 arms on the ``mujoco`` engine, physics at 500 Hz (dt 0.002 s),
   each with a cube to move, all hosted by the batch ``arm_pick`` driver (pick and place
   forever), run in real time for ``--seconds``: the share of late steps, the real-time factor
   and the step's p50/p95/p99 (goal: real time, < 5 % late). Same run, as the baseline: the same
   arms and cubes with no driver (the arms hold still: the physics and sensing alone).
2. ``lockstep``: one network controller process in lockstep on one irb120 arm (each step:
   ``tool.read``, ``joints.wait``), against the ground-robot loop measured in the same run (one
   ``single`` robot on its default engine, each step ``sonar.read``, ``motors.set_speeds``: the
   loop docs/performance.md's lockstep figures are of): steps per second of each and their ratio
   (goal >= 0.5).
3. ``one``: one irb120 at 1 kHz (dt 0.001) with arm_pick, unpaced: the real-time factor (goal >=
   10), and the steps from a joint command to the first step whose joint rate shows it (goal:
   the step that takes the command).

Usage: python benchmarks/arm_goals_bench.py [--only many|lockstep|one] [--arms 100]
       [--seconds 10] [--steps 2000]
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

from coopsim.model.specs import (COLORS, DriverSetting, FloorSpec, ObjectSpec,  # noqa: E402
                                 RobotSpec, ScenarioSpec, Settings, WorldSpec)
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402

SPACING = 1.5  # m between arms
CUBE = 0.04  # m


def arms(n: int, driven: bool, dt: float = 0.002, mode: str = "realtime") -> ScenarioSpec:
    """``n`` irb120 arms on the floor ``SPACING`` m apart, each with one cube 0.3 m ahead and
    0.12 m to its left (arm_pick moves it to 0.12 m right and back)."""
    side = math.ceil(math.sqrt(n))
    size = side * SPACING + 2.0
    drivers = (DriverSetting("arm_pick", (("speed", 1.0),)),) if driven else ()
    robots, cubes = [], []
    for k in range(n):
        x, y = (k % side - side / 2) * SPACING, (k // side - side / 2) * SPACING
        robots.append(RobotSpec("irb120", f"arm{k}", (x, y, 0.0), drivers=drivers))
        cubes.append(ObjectSpec(f"CUBE_{k}", "box", (CUBE, CUBE, CUBE),
                                (x + 0.3, y + 0.12, CUBE / 2), mass=0.1, color=COLORS["red"]))
    return ScenarioSpec(WorldSpec(FloorSpec(size, size)), robots=tuple(robots),
                        objects=tuple(cubes),
                        settings=Settings(dt=dt, mode=mode, seed=1, engine="mujoco"))


def many(n: int, seconds: float, driven: bool) -> str:
    """One realtime run of ``n`` arms; a table row."""
    sim = Simulation(arms(n, driven))
    stepper = Stepper(sim, mode="realtime")
    for _ in range(10):
        stepper.tick()  # warm-up, unpaced
    times, tick = [], stepper.tick

    def timed():
        t0 = time.perf_counter()
        snap = tick()
        times.append((time.perf_counter() - t0) * 1e3)
        return snap

    stepper.tick = timed
    t0, c0, start = time.perf_counter(), time.process_time(), sim.snapshot.time
    steps0 = sim.snapshot.step
    stepper.run(duration=start + seconds)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    steps = sim.snapshot.step - steps0
    moved = _moved(sim)
    p = np.percentile(times, (50, 95, 99))
    return (f"| {n} | {'arm_pick (batch)' if driven else 'none (baseline)'} | {steps} | "
            f"{stepper.missed} | {100 * stepper.missed / max(steps, 1):.2f} | "
            f"{(sim.snapshot.time - start) / wall:.3f} | {(sim.snapshot.time - start) / cpu:.3f} | "
            f"{p[0]:.2f} | {p[1]:.2f} | {p[2]:.2f} | {moved} |")


def _moved(sim) -> int:
    """How many objects the arms have put down so far (the arm_pick driver's count)."""
    return int(sim.snapshot.extra.get("arm_pick_placed", 0))


def one(steps: int, driven: bool = True) -> str:
    """One arm at 1 kHz (with arm_pick, or holding still: the baseline), unpaced: real-time
    factor by the wall and by this process's CPU time, and the command's delay in steps."""
    sim = Simulation(arms(1, driven, dt=0.001, mode="lockstep"))
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(20):
        stepper.tick()  # warm-up: the first ticks build and compile
    delay, sent = None, None
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        before = sim.commands["joints"][0].copy()
        snap = stepper.tick()
        if sent is None and (sim.commands["joints"][0] != before).any():
            sent = snap.step  # the driver stored a new command in this step's commands phase
        rates = snap.readings["joints"][0, 8:15]
        if sent is not None and delay is None and np.abs(rates).max() > 1e-3:
            delay = snap.step - sent
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    said = (f"; a joint command moves the joints {delay} step(s) after the step that took it "
            f"(0: that same step)") if driven else ""
    return (f"one irb120 at 1 kHz, {'arm_pick' if driven else 'no driver (baseline)'}: "
            f"{steps} steps, {steps * 0.001 / wall:.2f}x real time by the wall, "
            f"{steps * 0.001 / cpu:.2f}x by CPU time (goal >= 10){said}")


def lockstep_rate(scenario: str, robot: str, loop: str, steps: int) -> float:
    """Steps per second of one network controller in lockstep (client in its own process)."""
    folder = Path(tempfile.mkdtemp(prefix="armgoals-"))
    (folder / "s.scenario").write_text(scenario)
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run", str(folder / "s.scenario"),
                             "--headless", "--port", "0", "--no-controllers"], cwd=ROOT,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in proc.stderr:
        found = re.search(r"name server: (\S+)", line)
        if found:
            break
    code = (f"import time\nfrom coopsim.client import Client\n"
            f"with Client({found.group(1)!r}) as c:\n"
            f"    bot = c.robot({robot!r})\n"
            f"    for i in range({steps} + 200):\n"
            f"        if i == 200: t0 = time.perf_counter()\n"
            f"        {loop}\n"
            f"    print({steps} / (time.perf_counter() - t0))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=3600)
    proc.terminate()
    proc.communicate(timeout=60)
    return float(out.stdout.strip().splitlines()[-1])


GROUND = ("[WORLD]\nfile {root}/worlds/empty.world\n[ROBOT_1]\ntype single\nname robot1\n"
          "position 0 0 0\n[SETTINGS]\nmode lockstep\nseed 1\n")
ARM = ("[WORLD]\nfile {root}/worlds/empty.world\n[ROBOT_1]\ntype irb120\nname arm\n"
       "position 0 0 0\n[SETTINGS]\nengine mujoco\ndt 0.002\nmode lockstep\nseed 1\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--arms", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    print(f"load average {', '.join(f'{v:.2f}' for v in os.getloadavg())}, "
          f"{os.cpu_count()} CPUs", flush=True)
    if args.only in ("", "one"):
        print(one(args.steps), flush=True)
        print(one(args.steps, driven=False), flush=True)
    if args.only in ("", "lockstep"):
        ground = lockstep_rate(GROUND.format(root=ROOT), "robot1",
                               "bot.sonar.read(); bot.motors.set_speeds(0.1, 0.1)", args.steps)
        arm = lockstep_rate(ARM.format(root=ROOT), "arm", "bot.tool.read(); bot.joints.wait()",
                            args.steps)
        print(f"lockstep steps/s: ground robot (sonar.read, motors.set_speeds) {ground:.0f}, "
              f"arm (tool.read, joints.wait) {arm:.0f}, ratio {arm / ground:.3f} "
              f"(goal >= 0.5)", flush=True)
    if args.only in ("", "many"):
        print("| arms | driver | steps | late | late % | x real time | x real time by CPU | p50 ms "
              "| p95 ms | p99 ms | cubes placed |\n|---:|---|---:|---:|---:|---:|---:|---:|---:"
              "|---:|---:|", flush=True)
        for driven in (True, False):
            print(many(args.arms, args.seconds, driven), flush=True)


if __name__ == "__main__":
    main()
