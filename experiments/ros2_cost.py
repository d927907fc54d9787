"""What ``--ros2`` costs a realtime run in CPU, trees alternating (issue 54; the suite's
``ros2cost.Ros2Cpu`` measured the same way, with the CPU of each thread of the bridged run).

Each round runs, for each tree in turn, one process (``PYTHONPATH=TREE``, started in /tmp so
that every tree's coopsim is its own; the harness, benchmarks/suite/ros2cost.py, is this
checkout's): 100 robots at 50 Hz paced in real time for ``--steps``
steps without the bridge, then with it and a subscriber (stock rclpy where
``COOPSIM_ROS_PYTHON`` names a ROS 2 Python). Prints one JSON line a run: CPU ms a step off
and on, the share the bridge added, and the bridged run's threads (ms a step).

    COOPSIM_ROS_PYTHON=.venv-ros-kilted/bin/python \\
        python experiments/ros2_cost.py BASE_TREE NEW_TREE --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
from suite import ros2cost
steps, domain, per, got = int(sys.argv[2]), 150 + (os.getpid() + 25) % 50, {}, []
off = ros2cost.cpu_per_step(100, steps, None) * 1e3
on = ros2cost.cpu_per_step(100, steps, domain, per, received=got) * 1e3
print(json.dumps({"off_ms": round(off, 3), "on_ms": round(on, 3),
                  "share": round((on - off) / on, 3), "received": got[0],
                  "threads_ms": {k: round(v, 3) for k, v in per.items() if v >= 0.005}}))
"""


#: This checkout's top: the suite's harness (benchmarks/suite) comes from here, the coopsim
#: under test from each tree (PYTHONPATH).
HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trees", nargs="+", help="coopsim trees (the base first)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=500)
    args = ap.parse_args()
    for rnd in range(args.rounds):
        for tree in args.trees:
            tree = os.path.abspath(tree)
            env = {**os.environ, "PYTHONPATH": tree}
            out = subprocess.run([sys.executable, "-c", CHILD, HARNESS, str(args.steps)],
                                 cwd="/tmp", env=env, capture_output=True, text=True)
            line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr
            load = open("/proc/loadavg").read().split()[0]
            print(json.dumps({"round": rnd, "tree": tree, "load": load,
                              **json.loads(line)}) if line.startswith("{") else line,
                  flush=True)


if __name__ == "__main__":
    main()
