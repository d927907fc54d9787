"""Benchmark: where a networked lockstep step's time goes, inside the simulator.

One live run (``coopsim.app.run.Run``, the one-robot scenario of ``network_bench.py``, lockstep,
its name server on a free port) in this process, its step's phases timed on the stepper's
thread, in two conditions measured one after the other in the same run:

* driven: ``network_bench.py``'s driving client in its own process (``coopsim.client``: read
  the sonar, set the motors, for ``--seconds``), so every step waits for a motor command;
* free: no controller attached, so the stepper steps as fast as it can (the baseline: the same
  world, the same process, no interleaving with a client).

Prints per condition the median of each phase (µs), of the whole tick, and of the gap from the
end of one tick to the start of the next (what the server waits for: the reply's trip, the
client's Python and its next requests). ``publish`` includes sending the motor reply.

Usage: python benchmarks/lockstep_phases_bench.py [--seconds 4]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import network_bench as nb

from coopsim.app.run import Run, RunOptions
from coopsim.formats.files import load
from coopsim.raycast import auto as casters

PHASES = ("command", "actuate", "physics", "sense", "apply_rules")


def _timed(times: dict, key: str, fn):
    def run(*args):
        start = time.perf_counter()
        out = fn(*args)
        times.setdefault(key, []).append(time.perf_counter() - start)
        return out
    return run


def _instrument(stepper) -> dict:
    """Time the stepper's phases, its publish, its whole tick and the gaps between ticks."""
    times: dict = {}
    for phase in PHASES:
        setattr(stepper.sim, phase, _timed(times, phase, getattr(stepper.sim, phase)))
    stepper._publish = _timed(times, "publish", stepper._publish)
    tick, last = stepper.tick, [None]

    def timed_tick():
        start = time.perf_counter()
        if last[0] is not None:
            times.setdefault("gap", []).append(start - last[0])
        out = tick()
        last[0] = time.perf_counter()
        times.setdefault("tick", []).append(last[0] - start)
        return out
    stepper.tick = timed_tick
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    casters.wait_ready(600)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        spec = load(nb._scenario(1, "lockstep", folder))
        with Run(spec, RunOptions(port=0, controllers=False, mode="lockstep")) as run:
            times = _instrument(run.stepper)
            run.start()
            drive = subprocess.run(
                [sys.executable, str(Path(nb.__file__)), "--role", "drive",
                 run.network.endpoint, "robot1", str(args.seconds)],
                capture_output=True, text=True, timeout=120 + args.seconds)
            rows.append(("driven", {k: list(v) for k, v in times.items()}))
            times.clear()
            time.sleep(args.seconds)
            rows.append(("free", {k: list(v) for k, v in times.items()}))
    print(f"driving client: {drive.stdout.strip()} iterations in {args.seconds:g} s\n")
    keys = (*PHASES, "publish", "tick", "gap")
    print("| condition | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for name, t in rows:
        cells = [f"{statistics.median(t[k]) * 1e6:.0f}" if t.get(k) else "-" for k in keys]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n(medians, µs)")


if __name__ == "__main__":
    main()
