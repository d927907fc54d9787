"""Benchmark: numba's threads on this machine, behind the project's thread policy.

The sonar of 10,000 robots (``coopsim bench step``'s arena, 110,000 rays) is cast by the
compiled caster on 1 thread and on every thread numba has (the policy's gate lifted for the
measurement), with idle OpenMP threads spinning (``OMP_WAIT_POLICY=ACTIVE``), with libgomp's default (spin
a while, then sleep) and sleeping (``PASSIVE``, what coopsim sets), each in a fresh process: median and p95 ms. The
policy (coopsim/model/threads.py) used threads only with 3 or more of them until issue 36; now
every core by default (benchmarks/scaling_bench.py measures that).

Usage: python benchmarks/threads_bench.py [--casts 30]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = """
import json, sys, time
import numba, numpy as np
from coopsim.model import threads as policy
from coopsim.app.bench import swarm_scenario
from coopsim.raycast import auto as casters, jitcast
from coopsim.raycast.jitcast import JitRayCaster
from coopsim.sim.simulation import Simulation
from coopsim.plugins.modules.sonar import ANGLES
casters.wait_ready(600)
jitcast._PARALLEL_MIN = 4096  # lift the policy's gate: threads from 4,096 rays
sim = Simulation(swarm_scenario(10000), engine="kinematic", caster=JitRayCaster())
frame = sim._frame(sim.world.engine.robot_state(), {}, geometry=True)
rows, reach = np.arange(10000), np.full(10000, 2.0)
out = {}
for threads in (1, numba.config.NUMBA_NUM_THREADS):
    numba.set_num_threads(threads)
    policy.use(threads)  # what the kernels read
    frame.geometry.cast_fan(rows, ANGLES, reach)
    t = []
    for _ in range(int(sys.argv[1])):
        t0 = time.perf_counter(); frame.geometry.cast_fan(rows, ANGLES, reach)
        t.append((time.perf_counter() - t0) * 1e3)
    out[threads] = (float(np.median(t)), float(np.percentile(t, 95)))
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--casts", type=int, default=30)
    args = parser.parse_args()
    print("| OMP_WAIT_POLICY | threads | median ms | p95 ms |\n|---|---:|---:|---:|")
    for policy in ("ACTIVE", "default", "PASSIVE") * 2:
        # "default": empty, which libgomp ignores (its default: spin a while, then sleep);
        # coopsim's setdefault keeps an empty value
        env = dict(os.environ, OMP_WAIT_POLICY="" if policy == "default" else policy)
        out = subprocess.run([sys.executable, "-c", CHILD, str(args.casts)], env=env,
                             capture_output=True, text=True, check=True).stdout
        for threads, (med, p95) in json.loads(out).items():
            print(f"| {policy} | {threads} | {med:.2f} | {p95:.2f} |", flush=True)


if __name__ == "__main__":
    main()
