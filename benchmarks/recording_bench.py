"""Benchmark: recording overhead, recording size, seek time and replay memory.

1. Overhead: 100 ``single`` robots (``coopsim.app.bench.swarm_scenario``: driving, new random wheel
   speeds every 50 steps, all sonars cast), dt = 0.02 s, unpaced ``Stepper.tick()`` loop. Blocks
   of steps with and without the recorder alternate; the figure is the ratio of the median
   block means (the recorder's writer thread runs during its blocks and competes for the GIL).
2. Size: bytes of those recordings per robot per recorded step.
3. A long recording ("one hour": 180,000 steps of 100 robots at 50 Hz, unpaced), then random
   seeks: in-process (``Recording.frame_at`` on a fresh file, so chunks are decoded cold) and
   over the network (``/playback`` seek round trips to a ``coopsim replay`` process), and that
   process's peak memory (VmHWM) after the seeks.

Usage: python benchmarks/recording_bench.py [--robots 100] [--minutes 60] [--out FILE]
       [--reuse] [--seeks 1000] [--blocks 30] [--block-steps 300]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from coopsim.app.bench import swarm_scenario, timed_block
from coopsim.client import Client
from coopsim.recording.writer import Recorder
from coopsim.recording.reader import Recording
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

DT = 0.02


def _stepper(n: int, seed: int = 0) -> tuple[Stepper, np.random.Generator]:
    scenario = swarm_scenario(n, seed, DT)
    return Stepper(Simulation(scenario), mode="lockstep", speed=0), np.random.default_rng(seed)




def overhead(n: int, blocks: int, block_steps: int, folder: Path) -> dict:
    """Step time with and without recording (ms, medians of alternating blocks), their ratio,
    and bytes per robot per recorded step.

    One recorder stays attached to the stepper; its hook is put in for the recorded blocks and
    taken out for the plain ones, and between blocks the writer is given time to drain, so its
    work lands in its own blocks.
    """
    stepper, rng = _stepper(n)
    timed_block(stepper, rng, 50)  # warm-up
    sim = stepper.sim
    path = folder / "overhead.mcap"
    rec = Recorder(path, sim.scenario, sim.scenario.settings, sim.seed, sim.dt).attach(stepper)
    stepper.hooks.remove(rec)
    plain, recorded = [], []
    for _ in range(blocks):
        plain.append(timed_block(stepper, rng, block_steps))
        time.sleep(0.2)
        stepper.hooks.append(rec)
        recorded.append(timed_block(stepper, rng, block_steps))
        stepper.hooks.remove(rec)
        time.sleep(0.3)  # let the writer drain outside the timed blocks
    rec.close()
    if rec.dropped:
        print(f"  {rec.dropped} steps dropped", file=sys.stderr)
    ratios = [r / p for p, r in zip(plain, recorded)]
    return {"plain_ms": statistics.median(plain), "recorded_ms": statistics.median(recorded),
            "ratio": statistics.median(ratios),
            "bytes_per_robot_step": path.stat().st_size / n / max(rec.frames, 1)}


def make_long(path: Path, n: int, minutes: float) -> dict:
    """Record ``minutes`` of sim time of ``n`` robots at 50 Hz, as fast as possible."""
    stepper, rng = _stepper(n, seed=1)
    sim = stepper.sim
    rec = Recorder(path, sim.scenario, sim.scenario.settings, sim.seed, sim.dt).attach(stepper)
    steps = round(minutes * 60 / DT)
    t0 = time.perf_counter()
    for k in range(0, steps, 15000):
        print(f"  {k}/{steps} steps", file=sys.stderr)
        timed_block(stepper, rng, min(15000, steps - k))
    rec.close()
    wall = time.perf_counter() - t0
    return {"steps": steps, "wall_s": wall, "dropped": rec.dropped,
            "bytes": path.stat().st_size,
            "bytes_per_robot_step": path.stat().st_size / n / max(rec.frames, 1)}


def _percentiles(ms: list[float]) -> dict:
    ms = sorted(ms)
    pick = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]  # noqa: E731
    return {"p50": pick(0.5), "p99": pick(0.99), "max": ms[-1]}


def seek_local(path: Path, seeks: int) -> dict:
    """Random in-process seeks on a freshly opened recording, ms."""
    t0 = time.perf_counter()
    rec = Recording(path)
    opened = (time.perf_counter() - t0) * 1000
    rng = np.random.default_rng(2)
    times = []
    for t in rng.uniform(rec.start, rec.end, seeks):
        t1 = time.perf_counter()
        rec.frame_at(float(t))
        times.append((time.perf_counter() - t1) * 1000)
    rec.close()
    return {"open_ms": opened, **_percentiles(times)}


def seek_network(path: Path, seeks: int) -> dict:
    """Random /playback seeks to a `coopsim replay` process, ms; then its peak memory, MB."""
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "replay", str(path), "--headless",
                             "--port", "0", "--paused"], stderr=subprocess.PIPE, text=True)
    try:
        endpoint = None
        while endpoint is None:
            line = proc.stderr.readline()
            if not line:
                raise RuntimeError("coopsim replay did not start")
            found = re.search(r"name server: (tcp://\S+)", line)
            endpoint = found.group(1) if found else None
        with Client(endpoint, timeout=10.0) as client:
            playback = client.lookup("/playback")
            duration = client.request(playback, 1).data[1]
            rng = np.random.default_rng(3)
            times = []
            for t in rng.uniform(0, duration, seeks):
                t1 = time.perf_counter()
                client.request(playback, 4, data=(float(t),))
                times.append((time.perf_counter() - t1) * 1000)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024
        return {**_percentiles(times), "peak_mb": peak}
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=100)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--out", type=Path, default=Path("recordings/bench-long.mcap"))
    parser.add_argument("--reuse", action="store_true", help="Keep an existing --out file.")
    parser.add_argument("--seeks", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=30)
    parser.add_argument("--block-steps", type=int, default=300)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        o = overhead(args.robots, args.blocks, args.block_steps, Path(folder))
    print(f"overhead, {args.robots} robots: step {o['plain_ms']:.3f} ms without, "
          f"{o['recorded_ms']:.3f} ms with recording: x{o['ratio']:.3f}; "
          f"{o['bytes_per_robot_step']:.2f} bytes per robot per step")
    if not (args.reuse and args.out.exists()):
        args.out.parent.mkdir(parents=True, exist_ok=True)
        print(f"recording {args.minutes:g} min of {args.robots} robots to {args.out} ...",
              file=sys.stderr)
        m = make_long(args.out, args.robots, args.minutes)
        print(f"long recording: {m['steps']} steps in {m['wall_s']:.0f} s wall, "
              f"{m['bytes'] / 1e6:.1f} MB, {m['bytes_per_robot_step']:.2f} bytes per robot "
              f"per step, {m['dropped']} dropped")
    s = seek_local(args.out, args.seeks)
    print(f"seek in-process ({args.seeks} random, cold file): open {s['open_ms']:.1f} ms, "
          f"p50 {s['p50']:.2f} ms, p99 {s['p99']:.2f} ms, max {s['max']:.2f} ms")
    r = seek_network(args.out, args.seeks)
    print(f"seek over /playback ({args.seeks} random): p50 {r['p50']:.2f} ms, "
          f"p99 {r['p99']:.2f} ms, max {r['max']:.2f} ms; replay peak memory "
          f"{r['peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()
