"""Benchmark: how long building a big world takes (issue 36, "worlds built in a blink").

Builds ``coopsim bench step``'s world (N robots of the reference type on a grid, one obstacle per
25 robots, the kinematic engine, the compiled caster) as ``Simulation(...)`` and prints the
seconds from the scenario to the first snapshot, per robot, and the process's peak memory. Run
it with ``PYTHONPATH=<another checkout>`` to compare two versions in alternating processes; each
count runs in a fresh process (``--fresh``, the default when several counts are given) so that
the interpreter's heap from one build does not slow the next.

Usage: python benchmarks/build_bench.py [--robots 10000,100000] [--engine kinematic]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time


def build(n: int, engine: str) -> tuple[float, float]:
    """(seconds to build ``n`` robots' simulation, peak RSS MiB) in this process."""
    from coopsim.app.bench import make_caster, swarm_scenario
    from coopsim.sim.simulation import Simulation

    spec = swarm_scenario(n)
    caster = make_caster("jit")
    t0 = time.perf_counter()
    Simulation(spec, engine=engine, caster=caster)
    seconds = time.perf_counter() - t0
    return seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--robots", default="10000,100000")
    ap.add_argument("--engine", default="kinematic")
    ap.add_argument("--one", action="store_true", help="build one count here (internal)")
    args = ap.parse_args()
    counts = [int(c) for c in args.robots.split(",")]
    if args.one:
        seconds, mib = build(counts[0], args.engine)
        print(f"{counts[0]:>9,} robots  {seconds:8.2f} s  {seconds / counts[0] * 1e6:7.1f} "
              f"us/robot  peak {mib:,.0f} MiB", flush=True)
        return
    print(f"load {os.getloadavg()[0]:.1f}, engine {args.engine}, "
          f"coopsim from {__import__('coopsim').__file__}")
    for n in counts:
        subprocess.run([sys.executable, __file__, "--one", "--robots", str(n),
                        "--engine", args.engine], check=True)


if __name__ == "__main__":
    main()
