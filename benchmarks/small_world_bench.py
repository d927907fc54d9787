"""Benchmark: the cost of one step in a small world (``Stepper.tick``, one ``single`` robot).

One robot of the built-in ``single`` type (7 modules: motors, sonar, target, odometry, gps,
compass, bumper) in ``coopsim bench step``'s arena, driving, its 11 sonar rays cast every step,
dt = 0.02 s. Times whole ticks (commands, actuators, physics, sensors, rules, publish) in
blocks that alternate between the compiled caster and the numpy one (same run, same world), and
reports the median of the block medians and the best block, in microseconds, with a per-phase
breakdown of the compiled path. Goal (issue 25): <= 20 us a step.

With ``--source DIR`` (e.g. ``git archive`` of the commit before a change, unpacked), the tick
of this checkout and of DIR's are timed instead, each in its own worker process, in blocks that
alternate between the two (same run, same world, the compiled caster): load from elsewhere on
the machine spoils single blocks, not the comparison.

With ``--env`` (and ``--source``), the Gymnasium environment over
``scenarios/learn_goal.scenario`` (one ``single`` robot, sonar noise on, its task's monitors)
is timed instead: env steps per second (a block of ``--ticks`` steps, reset at truncation) and
reset time (``--resets`` resets with new seeds, median), the two checkouts alternating.

Usage: python benchmarks/small_world_bench.py [--robots 1] [--engine pymunk] [--blocks 20]
       [--source DIR [--env]]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from coopsim.app.bench import swarm_scenario
from coopsim.raycast import auto as casters
from coopsim.raycast.jitcast import JitRayCaster
from coopsim.raycast.numpycast import RayCaster
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper


def stepper(n: int, engine: str, caster) -> Stepper:
    """A lockstep stepper over ``n`` driving robots, warmed up."""
    sim = Simulation(swarm_scenario(n), engine=engine, caster=caster)
    st = Stepper(sim, mode="lockstep")
    for name in sim.snapshot.robots:
        st.slots.put(name, "motors", (0.3, 0.25), attach=False)
    for _ in range(50):
        st.tick()
    return st


WARM_UP = 0.1  # s of untimed steps before each block (see warm_up)


def warm_up(step) -> None:
    """Call ``step`` for :data:`WARM_UP` s untimed. On this machine's virtual CPUs a process
    that has just slept (the other worker's turn) runs 1.5-1.8x slower for some 10 ms: numba's
    calls and numpy's alike (docs/performance.md, *Small worlds*); a block timed at once would
    measure that instead of the step."""
    end = time.perf_counter() + WARM_UP
    while time.perf_counter() < end:
        step()


def block(st: Stepper, ticks: int) -> float:
    """Median tick time of ``ticks`` ticks (after :func:`warm_up`), us."""
    warm_up(st.tick)
    out = []
    for _ in range(ticks):
        t0 = time.perf_counter()
        st.tick()
        out.append(time.perf_counter() - t0)
    return statistics.median(out) * 1e6


def phases(st: Stepper, ticks: int) -> dict:
    """Median time of each phase, us."""
    sim, out = st.sim, {k: [] for k in ("commands", "actuators", "physics", "sensors",
                                         "rules+publish")}
    for _ in range(ticks):
        t = [time.perf_counter()]
        sim.command(st.slots.take())
        t.append(time.perf_counter())
        sim.actuate()
        t.append(time.perf_counter())
        sim.physics()
        t.append(time.perf_counter())
        sim.sense()
        t.append(time.perf_counter())
        st._publish(sim.apply_rules())
        t.append(time.perf_counter())
        for k, a, b in zip(out, t, t[1:]):
            out[k].append(b - a)
    return {k: statistics.median(v) * 1e6 for k, v in out.items()}


def env_block(args):
    """A Gymnasium environment over learn_goal; returns a function timing one block:
    (median env step, median reset), us."""
    import gymnasium

    import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0

    goal = str(Path(__file__).resolve().parents[1] / "scenarios" / "learn_goal.scenario")
    env = gymnasium.make("coopsim/Scenario-v0", scenario=goal, engine=args.engine).unwrapped
    env.reset(seed=0)
    action = np.array([0.3, 0.28])
    seeds = iter(range(1, 10**9))

    def timed() -> tuple[float, float]:
        steps, resets = [], []
        warm_up(lambda: env.step(action)[3] and env.reset())
        for _ in range(args.ticks):
            t0 = time.perf_counter()
            if env.step(action)[3]:  # truncated after 20 s: keep going from the start
                env.reset()
            steps.append(time.perf_counter() - t0)
        for _ in range(args.resets):
            t0 = time.perf_counter()
            env.reset(seed=next(seeds))
            resets.append(time.perf_counter() - t0)
        return statistics.median(steps) * 1e6, statistics.median(resets) * 1e6
    timed()
    return timed


def worker(args) -> None:
    """Serve ``--worker``: a line on stdin -> one block: the median tick, us (``--env``: the
    median env step and reset, us)."""
    if not casters.wait_ready(600):
        raise SystemExit("the compiled caster did not load (numba missing?)")
    if args.env:
        timed = env_block(args)
    else:
        st = stepper(args.robots, args.engine, JitRayCaster())
        timed = lambda: (block(st, args.ticks),)  # noqa: E731
    casters.wait_ready(600)  # kernels of plugins imported by the load (their warm-up) too
    print("ready", flush=True)
    for _ in sys.stdin:
        print(" ".join(f"{v:.3f}" for v in timed()), flush=True)


def ab(args) -> None:
    """This checkout's tick against ``--source``'s, alternating blocks (see the module)."""
    here = Path(__file__).resolve()
    sides = {"this checkout": here.parents[1], "--source": args.source.resolve()}
    procs = {}
    for name, root in sides.items():
        env = dict(os.environ, PYTHONPATH=str(root), COOPSIM_JIT="wait")
        procs[name] = subprocess.Popen(
            [sys.executable, str(here), "--worker", "--robots", str(args.robots), "--engine",
             args.engine, "--ticks", str(args.ticks), "--resets", str(args.resets),
             *(["--env"] if args.env else [])], cwd=root, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for proc in procs.values():
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit("a worker did not start")
    blocks = {name: [] for name in procs}
    for _ in range(args.blocks):
        for name, proc in procs.items():
            proc.stdin.write("go\n")
            proc.stdin.flush()
            blocks[name].append([float(v) for v in proc.stdout.readline().split()])
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()
    what = "env steps (learn_goal)" if args.env else f"{args.robots} robot(s)"
    print(f"{what}, {args.engine}, {args.blocks} blocks of {args.ticks} steps, "
          f"--source {args.source}")
    print("| checkout | median of blocks, us | best block, us | steps/s |"
          + (" reset, ms (median) |" if args.env else ""))
    print("|---|---:|---:|---:|" + ("---:|" if args.env else ""))
    med = {}
    for name, b in blocks.items():
        med[name] = [statistics.median(col) for col in zip(*b)]
        best = min(row[0] for row in b)
        reset = f" {med[name][1] / 1e3:.2f} |" if args.env else ""
        print(f"| {name} | {med[name][0]:.1f} | {best:.1f} | {1e6 / med[name][0]:,.0f} |{reset}")
    print(f"\n--source / this checkout: {med['--source'][0] / med['this checkout'][0]:.2f}x"
          + (f" (steps), {med['--source'][1] / med['this checkout'][1]:.2f}x (reset)"
             if args.env else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=1)
    parser.add_argument("--engine", default="pymunk")
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--ticks", type=int, default=500, help="ticks per block")
    parser.add_argument("--source", type=Path, help="the other checkout (A/B mode)")
    parser.add_argument("--env", action="store_true",
                        help="with --source: the Gymnasium environment's steps and resets")
    parser.add_argument("--resets", type=int, default=20, help="resets per block (--env)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if args.source is not None:
        return ab(args)
    if not casters.wait_ready(600):
        raise SystemExit("the compiled caster did not load (numba missing?)")
    runs = {"compiled": stepper(args.robots, args.engine, JitRayCaster()),
            "numpy caster": stepper(args.robots, args.engine, RayCaster())}
    casters.wait_ready(600)  # kernels of plugins imported by the load (their warm-up) too
    medians = {k: [] for k in runs}
    for _ in range(args.blocks):
        for name, st in runs.items():
            medians[name].append(block(st, args.ticks))
    print(f"{args.robots} robot(s), {args.engine}, {args.blocks} blocks of {args.ticks} ticks")
    print("| caster | median of blocks, us | best block, us | steps/s |")
    print("|---|---:|---:|---:|")
    for name, m in medians.items():
        med = statistics.median(m)
        print(f"| {name} | {med:.1f} | {min(m):.1f} | {1e6 / med:,.0f} |")
    ratio = statistics.median(medians["numpy caster"]) / statistics.median(medians["compiled"])
    print(f"\nnumpy caster / compiled: {ratio:.2f}x")
    print("phases (compiled), us: " + ", ".join(
        f"{k} {v:.1f}" for k, v in phases(runs["compiled"], 2000).items()))
    np.set_printoptions()


if __name__ == "__main__":
    main()
