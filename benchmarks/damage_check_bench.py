"""Benchmark: what the damage check every reader makes costs (docs/recording-format.md section 7).

A recording of N ``single`` robots (``coopsim.app.bench.swarm_scenario``, driving, dt 0.02 s) is
made once; then, alternating in each of R rounds on a fresh ``Recording``: opening it, its
``check()`` (every chunk's CRC, records and blocks' structure) and decoding every step
(``iter_frames``, what an export does anyway). The figure is the ratio of the medians,
check / decode, measured in the same run.

Usage: python benchmarks/damage_check_bench.py [--robots 6] [--steps 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from coopsim.app.bench import swarm_scenario, timed_block
from coopsim.recording.reader import Recording
from coopsim.recording.writer import Recorder
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper


def make(path: Path, robots: int, steps: int) -> None:
    """Record ``steps`` unpaced steps of ``robots`` driving robots."""
    stepper = Stepper(Simulation(swarm_scenario(robots, seed=1)), mode="lockstep", speed=0)
    sim = stepper.sim
    rec = Recorder(path, sim.scenario, sim.scenario.settings, sim.seed, sim.dt).attach(stepper)
    timed_block(stepper, np.random.default_rng(1), steps)
    rec.close()


def rounds(path: Path, count: int) -> dict[str, list[float]]:
    """Seconds per round of open, check and decode-every-step."""
    times: dict[str, list[float]] = {"open": [], "check": [], "decode": []}
    for _ in range(count):
        t0 = time.perf_counter()
        with Recording(path) as rec:
            t1 = time.perf_counter()
            assert rec.check() == ()
            t2 = time.perf_counter()
        with Recording(path) as rec:
            t3 = time.perf_counter()
            frames = sum(1 for _ in rec.iter_frames())
            t4 = time.perf_counter()
        assert frames == rec.frame_count
        times["open"].append(t1 - t0)
        times["check"].append(t2 - t1)
        times["decode"].append(t4 - t3)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=6)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.mcap"
        make(path, args.robots, args.steps)
        with Recording(path) as rec:
            chunks, size = rec.info().chunks, path.stat().st_size
        times = rounds(path, args.rounds)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{args.robots} robots, {args.steps} steps, {chunks} chunks, {size / 1e6:.2f} MB; "
          f"medians of {args.rounds} rounds: open {med['open'] * 1e3:.1f} ms, check "
          f"{med['check'] * 1e3:.1f} ms, decode every step {med['decode'] * 1e3:.1f} ms; "
          f"check / decode = {med['check'] / med['decode']:.3f}")


if __name__ == "__main__":
    main()
