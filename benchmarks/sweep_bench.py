"""Benchmark: coopsim sweep on Dask, against stepping the same runs directly, in the same run.

The load is the AMSA leader/follower rovers (scenarios/amsa_follow.scenario: two robots, two
in-process drivers, one monitor, dt 0.05 s), 30 s of sim time per point (600 steps).

1. Scaling: a 64-point sweep (Kv x 8 values, 8 seeds) on a LocalCluster of 1 worker, then of 2
   (single-threaded worker processes); points per second over the task phase (submission to
   the last row; cluster start-up reported apart), and the ratio.
2. Per-point overhead: the 1-worker sweep's wall time per point (loading and planning the
   sweep, scheduling, moving the scenario to the worker, the run, writing the row and the
   table) minus the run itself as the worker timed it (building the simulation and stepping
   it, as ``run_point`` does when called directly). The same runs stepped directly in this
   process are shown beside it: on a shared machine their time swings with the load, which
   is why the overhead is taken against the worker's own timing of the same run.
3. In-process against networked: one point stepped with its drivers in-process, against the
   same scenario in lockstep with the two drivers as network controller processes
   (``coopsim drive``) on the real protocol (from the 20th step: their start-up excluded);
   steps per second and the ratio.

Usage: python benchmarks/sweep_bench.py [--points 64] [--seconds 30] [--only-network]
Needs the experiments extra (pip install -e '.[experiments]'), except with --only-network.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "scenarios" / "amsa_follow.scenario"


def sweep_file(folder: Path, points: int, seconds: float) -> Path:
    gains = [round(0.05 + 0.05 * i, 2) for i in range(8)]
    seeds = max(1, points // len(gains))
    path = folder / "bench.sweep"
    path.write_text(f"[SWEEP]\nscenario {BASE}\nseeds 0-{seeds - 1}\nduration {seconds}\n"
                    f"[AXIS_1]\nparam follower.driver.kv\nvalues {' '.join(map(str, gains))}\n")
    return path


def timed_sweep(path: Path, workers: int) -> dict:
    """Load, plan and run the sweep on a new LocalCluster of ``workers``; times in s."""
    from coopsim.app import sweep as sw
    from coopsim.formats.sweep import load_sweep

    t0 = time.perf_counter()
    spec = load_sweep(path)
    out = path.with_name(f"out-{workers}.parquet")
    table = sw.Table(out)
    tasks = sw.plan(spec, out, record=False)
    t1 = time.perf_counter()
    client = sw.connect(None, workers)
    client.wait_for_workers(workers)
    t2 = time.perf_counter()
    try:
        sw._gather(client, tasks, table, sw.Progress(len(tasks), 0, lambda text: None))
        table.save()
    finally:
        t3 = time.perf_counter()
        cluster = client.cluster
        client.close()
        cluster.close()
    rows = list(table.rows.values())
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows][:3]
    return {"plan": t1 - t0, "startup": t2 - t1, "tasks": t3 - t2, "points": len(tasks),
            "tasks_list": tasks, "worker_run": [r["wall_time"] for r in rows]}


def direct(tasks) -> list[float]:
    """Each task stepped directly in this process (no Dask): wall time per run, s."""
    from coopsim.app.points import run_point

    times = []
    for task in tasks:
        t = time.perf_counter()
        row = run_point(task)
        times.append(time.perf_counter() - t)
        assert row["status"] == "ok", row["error"]
    return times


def in_process_rate(seconds: float) -> float:
    from coopsim.formats.files import load_scenario
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    spec = load_scenario(BASE)
    stepper = Stepper(Simulation(spec), mode="lockstep", speed=0)
    t = time.perf_counter()
    while stepper.snapshot.time < seconds - 1e-9:
        stepper.tick()
    return stepper.snapshot.step / (time.perf_counter() - t)


def networked_rate(seconds: float) -> float:
    """Steps per second with the drivers as ``coopsim drive`` processes in lockstep."""
    from coopsim.app.run import Run, RunOptions
    from coopsim.formats.files import load_scenario

    spec = load_scenario(BASE)
    leader, follower = spec.robots
    drive = f"{sys.executable} -m coopsim drive"
    commands = {
        "leader": f"{drive} amsa_leader leader --seed 1 -p behavior=4 -p speed=0.05",
        "follower": f"{drive} amsa_follower follower -p leader=leader -p gap=1.5 -p kv=0.35 "
                    "-p kw=0.05"}
    robots = tuple(dataclasses.replace(r, drivers=(), controller=commands[r.name])
                   for r in (leader, follower))
    spec = dataclasses.replace(spec, robots=robots)
    with Run(spec, RunOptions(port=0, mode="lockstep", duration=seconds, wait_for=2)) as live:
        live.start()
        # From the 20th step on: the controllers' start-up (two interpreters, each waiting
        # for the other to attach) is not the lockstep loop's speed
        first = live.stepper.wait_step(19, 120.0)
        t0 = time.perf_counter()
        while not live.stepper.wait_finished(0.5):
            pass
        wall, stats = time.perf_counter() - t0, live.stepper.stats()
    return (stats.steps - first.step) / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--only-network", action="store_true",
                    help="only part 3: in-process against networked (no Dask needed)")
    args = ap.parse_args()
    if args.only_network:
        from coopsim.raycast import auto

        auto.wait_ready(600)  # the compiled caster in this process, not timed
        local, remote = in_process_rate(args.seconds), networked_rate(args.seconds)
        print(f"in-process {local:.0f} steps/s, network {remote:.0f} steps/s, "
              f"in-process / network {local / remote:.1f}x")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = sweep_file(Path(tmp), args.points, args.seconds)
        one = timed_sweep(path, 1)
        two = timed_sweep(path, 2)
        steps = direct(one["tasks_list"])
    rate1, rate2 = one["points"] / one["tasks"], two["points"] / two["tasks"]
    per_direct = statistics.median(steps)
    per_sweep = (one["plan"] + one["tasks"]) / one["points"]
    overhead = per_sweep - statistics.mean(one["worker_run"])
    local = in_process_rate(args.seconds)
    remote = networked_rate(args.seconds)
    print(f"| measure | value |\n|---|---|\n"
          f"| points, sim time each | {one['points']}, {args.seconds:g} s ({round(args.seconds / 0.05)} steps) |\n"
          f"| 1 worker: points/s (task phase; cluster start {one['startup']:.1f} s) | {rate1:.2f} |\n"
          f"| 2 workers: points/s (task phase; cluster start {two['startup']:.1f} s) | {rate2:.2f} |\n"
          f"| **2 workers / 1 worker** | **{rate2 / rate1:.2f}x** |\n"
          f"| a run stepped directly in this process (median) | {per_direct * 1000:.0f} ms |\n"
          f"| the same run inside the worker (mean) | {statistics.mean(one['worker_run']) * 1000:.0f} ms |\n"
          f"| 1-worker sweep per point (load, plan, tasks, rows, table) | {per_sweep * 1000:.0f} ms |\n"
          f"| **per-point overhead** (sweep per point - run in the worker) | **{overhead * 1000:.0f} ms** |\n"
          f"| in-process drivers: steps/s | {local:.0f} |\n"
          f"| network controllers (lockstep, 2 processes): steps/s | {remote:.0f} |\n"
          f"| **in-process / network** | **{local / remote:.1f}x** |")


if __name__ == "__main__":
    main()
