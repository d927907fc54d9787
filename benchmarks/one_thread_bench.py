"""One thread against a base checkout: ``coopsim bench step``'s world and phases, this checkout
and a base (a ``git archive`` of an older commit) in alternating fresh processes.

Why: on a shared machine a step's wall time swings by several times between two runs of the
same code; pairing A and B run after run and quoting the median ratio cancels most of that,
and the CPU time of the stepper's thread per step (``time.thread_time``) is what another
process's load changes least. Both checkouts run in this interpreter (the base through
``PYTHONPATH``), with ``COOPSIM_THREADS=1`` (both the base's and this checkout's thread
policy read it) and ``COOPSIM_JIT=wait`` (every kernel compiled or loaded before timing).

    git archive 5433297 | (mkdir -p /tmp/base && tar -x -C /tmp/base)
    python benchmarks/one_thread_bench.py --base /tmp/base --engine kinematic,pymunk \
        --robots 1,1000,10000 --pairs 3

Prints one row per engine and robot count: each side's median step (wall and CPU, ms) over
the pairs and the median of the pairs' ratios base / this (above 1: this checkout faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def child(n: int, engine: str, steps: int, warmup: int) -> dict:
    """Median wall and thread-CPU time (ms) of ``steps`` steps of the bench's world (the
    phases ``coopsim bench step`` times), after ``warmup`` ticks, in this process."""
    from coopsim.app.bench import _driving, make_caster, swarm_scenario
    from coopsim.sim.simulation import Simulation

    sim = Simulation(swarm_scenario(n, 0), engine=engine, caster=make_caster("jit"))
    stepper = _driving(sim, "lockstep", 0)
    for _ in range(warmup):
        stepper.tick()
    wall, cpu = [], []
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.thread_time()
        sim.command(stepper.slots.take())
        sim.actuate()
        sim.physics()
        sim.sense()
        sim.apply_rules()
        cpu.append((time.thread_time() - c0) * 1e3)
        wall.append((time.perf_counter() - t0) * 1e3)
    return {"wall": statistics.median(wall), "cpu": statistics.median(cpu)}


def run_one(root: str, n: int, engine: str, steps: int, warmup: int) -> dict:
    """:func:`child` in a fresh process importing coopsim from ``root``."""
    env = dict(os.environ, PYTHONPATH=root, COOPSIM_THREADS="1", COOPSIM_JIT="wait")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(n), engine,
                          str(steps), str(warmup)], env=env, cwd=root, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None) -> None:
    """Parse the options, run the pairs, print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", help="root of the base checkout (required)")
    p.add_argument("--engine", default="kinematic,pymunk")
    p.add_argument("--robots", default="1,1000,10000")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        n, engine, steps, warmup = a.child
        print(json.dumps(child(int(n), engine, int(steps), int(warmup))))
        return
    if not a.base:
        p.error("--base is required")
    print(f"load average before: {os.getloadavg()}", file=sys.stderr)
    print("| engine | robots | this wall / CPU ms | base wall / CPU ms | base/this wall "
          "| base/this CPU |\n|---|---:|---|---|---:|---:|")
    for engine in a.engine.split(","):
        for n in (int(v) for v in a.robots.split(",")):
            rows = {"this": [], "base": []}
            for k in range(a.pairs):
                order = (("this", ROOT), ("base", a.base))
                for side, root in order if k % 2 == 0 else order[::-1]:
                    rows[side].append(run_one(root, n, engine, a.steps, a.warmup))
            ratio = {key: statistics.median(b[key] / t[key] for b, t in
                                            zip(rows["base"], rows["this"]))
                     for key in ("wall", "cpu")}
            med = {s: {key: statistics.median(r[key] for r in rows[s]) for key in ("wall", "cpu")}
                   for s in rows}
            print(f"| {engine} | {n} | {med['this']['wall']:.3f} / {med['this']['cpu']:.3f} | "
                  f"{med['base']['wall']:.3f} / {med['base']['cpu']:.3f} | {ratio['wall']:.3f} "
                  f"| {ratio['cpu']:.3f} |", flush=True)
    print(f"load average after: {os.getloadavg()}", file=sys.stderr)


if __name__ == "__main__":
    main()
