"""Benchmark: the swarm-scale goals (docs/performance.md, *Swarm scale*), each against a
baseline measured in the same run, in alternating blocks so that load from elsewhere on the
machine spoils a block, not a ratio.

1. pymunk, 5,000 ``single`` robots (``coopsim bench step``'s arena), 11-ray sonar every step:
   whole steps (p50, p95) against bare pymunk steps of the same 5,000 driven discs
   (``engine.step`` alone). Goals: p95 <= 20 ms; whole / bare <= 4.
2. kinematic, 10,000 robots, same sensing: whole steps (p50, p95); goal p95 <= 20 ms. The
   sensing phase with the compiled caster against the numpy caster (two simulations of the same
   world, alternating); goal >= 8x. Resident memory; goal < 1 GB.
3. kinematic, 100,000 robots: p50 and p95 reported.
4. 1,000 ``holonomic`` robots with the batch ``tracking`` driver, pymunk, 11-ray sonar each,
   stepped in real time at 50 Hz for ``--realtime-seconds``: the share of missed deadlines
   (goal < 1 %) and the real-time factor.

Usage: python benchmarks/swarmscale_bench.py [--blocks 8] [--per-block 5] [--skip-100k]
       [--realtime-seconds 20] [--only-realtime]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from coopsim.app.bench import rss_mib, swarm_scenario
from coopsim.raycast import auto as casters
from coopsim.raycast.jitcast import JitRayCaster
from coopsim.raycast.numpycast import RayCaster
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper


def stepper(n: int, engine: str, caster) -> Stepper:
    """``n`` driving robots, warmed up."""
    sim = Simulation(swarm_scenario(n), engine=engine, caster=caster)
    st = Stepper(sim, mode="lockstep")
    rng = np.random.default_rng(0)
    for name, wheels in zip(sim.snapshot.robots, rng.uniform(0.1, 0.5, (n, 2))):
        st.slots.put(name, "motors", tuple(wheels), attach=False)
    for _ in range(5):
        st.tick()
    return st


def timed(fn, count: int) -> list[float]:
    """ms of ``count`` calls."""
    out = []
    for _ in range(count):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def sense_only(st: Stepper):
    """One step whose sensing phase alone is timed (the rest runs untimed)."""
    sim = st.sim

    def run():
        sim.command(st.slots.take())
        sim.actuate()
        sim.physics()
        t0 = time.perf_counter()
        sim.sense()
        return (time.perf_counter() - t0) * 1e3
    return run


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def pymunk_goal(blocks: int, per: int) -> None:
    st = stepper(5000, "pymunk", JitRayCaster())
    engine, dt = st.sim.world.engine, st.sim.dt
    whole, bare = [], []
    for _ in range(blocks):
        whole += timed(st.tick, per)
        bare += timed(lambda: engine.step(dt), per)
    ratio = statistics.median(whole) / statistics.median(bare)
    print(f"| pymunk 5,000: whole step p50 / p95 | {statistics.median(whole):.2f} / "
          f"{pct(whole, 95):.2f} ms | p95 <= 20 ms: {'met' if pct(whole, 95) <= 20 else 'missed'} |")
    print(f"| pymunk 5,000: bare pymunk step p50 / p95 | {statistics.median(bare):.2f} / "
          f"{pct(bare, 95):.2f} ms | baseline |")
    print(f"| pymunk 5,000: whole / bare (medians) | {ratio:.2f}x | <= 4x: "
          f"{'met' if ratio <= 4 else 'missed'} |", flush=True)


def kinematic_goal(blocks: int, per: int) -> None:
    jit, numpy_ = stepper(10000, "kinematic", JitRayCaster()), \
        stepper(10000, "kinematic", RayCaster())
    whole, s_jit, s_np = [], [], []
    for _ in range(blocks):
        whole += timed(jit.tick, per)
        run_jit, run_np = sense_only(jit), sense_only(numpy_)
        s_jit += [run_jit() for _ in range(per)]
        s_np += [run_np() for _ in range(per)]
    del numpy_
    ratio = statistics.median(s_np) / statistics.median(s_jit)
    print(f"| kinematic 10,000: whole step p50 / p95 | {statistics.median(whole):.2f} / "
          f"{pct(whole, 95):.2f} ms | p95 <= 20 ms: "
          f"{'met' if pct(whole, 95) <= 20 else 'missed'} |")
    print(f"| kinematic 10,000: sensing, compiled / numpy caster (p50) | "
          f"{statistics.median(s_jit):.2f} / {statistics.median(s_np):.2f} ms = {ratio:.1f}x | "
          f">= 8x: {'met' if ratio >= 8 else 'missed'} |")
    rss = rss_mib()
    print(f"| kinematic 10,000: resident memory (this process, both worlds built) | "
          f"{rss:.0f} MiB | < 1 GB: {'met' if rss < 1024 else 'missed'} |", flush=True)


def big(per: int) -> None:
    st = stepper(100_000, "kinematic", JitRayCaster())
    whole = timed(st.tick, per)
    print(f"| kinematic 100,000: whole step p50 / p95 | {statistics.median(whole):.1f} / "
          f"{pct(whole, 95):.1f} ms | reported (RSS {rss_mib():.0f} MiB) |", flush=True)


def realtime_goal(seconds: float) -> None:
    import dataclasses
    import math

    from coopsim.model.specs import DriverSetting, FloorSpec, RobotSpec, WorldSpec

    side = math.ceil(math.sqrt(1000))
    drive = DriverSetting("tracking", (("shape", "eight"), ("size", 2.0), ("period", 12.0)))
    robots = tuple(RobotSpec("holonomic", f"q{k}", (-3 * side + 6.0 * (k % side) + 3,
                                                    -3 * side + 6.0 * (k // side) + 3, 0.0),
                             drivers=(drive,)) for k in range(1000))
    spec = dataclasses.replace(swarm_scenario(1), robots=robots,
                               world=WorldSpec(FloorSpec(6.0 * side + 6, 6.0 * side + 6)))
    st = Stepper(Simulation(spec, caster=JitRayCaster()), mode="realtime")
    st.run(duration=seconds)
    stats = st.stats()
    share = stats.missed / max(1, stats.steps)
    print(f"| 1,000 tracking robots, pymunk, realtime 50 Hz, {seconds:g} s: missed deadlines | "
          f"{stats.missed} of {stats.steps} = {share:.2%} (real-time factor {stats.rtf:.3f}) | "
          f"< 1 %: {'met' if share < 0.01 else 'missed'} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--per-block", type=int, default=5)
    parser.add_argument("--skip-100k", action="store_true")
    parser.add_argument("--realtime-seconds", type=float, default=20.0)
    parser.add_argument("--only-realtime", action="store_true")
    args = parser.parse_args()
    if not casters.wait_ready(600):
        raise SystemExit("the compiled caster did not load (numba missing?)")
    print("| measurement | figure | goal |\n|---|---:|---|")
    realtime_goal(args.realtime_seconds)
    if args.only_realtime:
        return
    pymunk_goal(args.blocks, args.per_block)
    kinematic_goal(args.blocks, args.per_block)
    if not args.skip_100k:
        big(10)


if __name__ == "__main__":
    main()
