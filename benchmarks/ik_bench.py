"""Benchmark: inverse kinematics requests against the real-time factor (issue 45, item 3).

One run in this process: an ABB IRB 120 (``irb120``) on the ``mujoco`` engine, dt 0.002 s
(500 Hz), ``realtime``, its robots' endpoints served by the stepper thread as in ``coopsim
run``. One client in a process of its own sends ``tool.ik`` or ``tool.move_to`` requests at a
fixed rate (default 20 a second; each waits for its reply, REQ-style, as the Python client
does). Phases, each ``--seconds`` long, one after the other in the same run:

* ``no client``: the baseline;
* ``tool.read``: the same client sending reads (what serving 20 requests a second costs);
* ``ik, reachable``: ``ik 0.35 0.1 0.25 pi 0 0`` (tool pointing down, in reach);
* ``ik, far``: ``ik 2 0 0.3`` (1.25 m out of reach, beyond the chain's full stretch: two
  restarts run);
* ``ik, under``: ``ik 0 0 -0.3`` (under the pedestal, within the stretch, out of reach: every
  restart runs, the whole iteration budget: the worst case);
* ``move_to, under``: ``move_to 0 0 -0.3`` (error 4, "unreachable", with the residual).

First, what one request's search costs in CPU time, the compiled kernel against the SciPy search
``tool`` ran before (rebuilt here from ``coopsim.model.arm.solve_ik``), same targets. Then each
phase's row: the real-time factor over the phase (simulated s / wall s), its ratio to the
baseline, the steps late (the pacer's missed deadlines), the CPU time of the stepper thread
and of the solver thread per simulated second (what a busy machine's share does not change),
the requests answered and their median and largest round trip, ms. Before issue 45 these
requests were solved on the stepper thread by SciPy: one unreachable ``ik`` every 10 s held
the factor at 0.000, 5 reachable ones a second at 0.22 (the issue's figures). The phases are
interleaved over ``--rounds`` rounds (medians), so a busy machine's drift falls on each.
Usage: python benchmarks/ik_bench.py [--seconds 6] [--rounds 3] [--rate 20] [--repeat 200]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from coopsim.app.run import Run, RunOptions
from coopsim.model.arm import rpy_matrix, solve_ik
from coopsim.model.ikkernel import solve
from coopsim.model.specs import FloorSpec, RobotSpec, ScenarioSpec, Settings, WorldSpec
from coopsim.plugins.robots.arms import IRB120

DT = 0.002
NEAR = (0.35, 0.1, 0.25, math.pi, 0.0, 0.0)
FAR = (2.0, 0.0, 0.3)
UNDER = (0.0, 0.0, -0.3)
PHASES = (("no client", None, ()), ("tool.read", "read", ()), ("ik, reachable", "ik", NEAR),
          ("ik, far", "ik", FAR), ("ik, under", "ik", UNDER),
          ("move_to, under", "move_to", UNDER))

CLIENT = """
import json, sys, time
from coopsim.client import Client, RemoteError
endpoint, command, rate, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
values = [float(v) for v in sys.argv[5:]]
trips, errors = [], {}
with Client(endpoint, timeout=30.0) as client:
    call = getattr(client.robot("a1").tool, command)
    start = time.perf_counter()
    k = 0
    while time.perf_counter() - start < seconds:
        due = start + k / rate
        time.sleep(max(0.0, due - time.perf_counter()))
        t = time.perf_counter()
        try:
            call(*values)
        except RemoteError as exc:
            errors[exc.code] = errors.get(exc.code, 0) + 1
        trips.append(time.perf_counter() - t)
        k += 1
print(json.dumps({"trips": trips, "errors": errors}))
"""


def scenario() -> ScenarioSpec:
    """The IRB 120 alone on a floor, 500 Hz, real time, on mujoco."""
    return ScenarioSpec(WorldSpec(FloorSpec(4.0, 4.0)),
                        robots=(RobotSpec("irb120", "a1", (0.0, 0.0, 0.0), 0.0),),
                        settings=Settings(dt=DT, mode="realtime", engine="mujoco"),
                        name="ik_bench")


def phase(run, command, values, seconds: float, rate: float) -> dict:
    """One phase: the factor over it, the late steps, and the client's round trips."""
    client = None
    if command is not None:
        client = subprocess.Popen([sys.executable, "-c", CLIENT, run.network.endpoint, command,
                                   str(rate), str(seconds), *map(str, values)],
                                  stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)  # its interpreter and imports: not part of the phase
    snap, missed, wall = run.stepper.snapshot, run.stepper.missed, time.perf_counter()
    cpu = thread_cpu(run)
    time.sleep(seconds - 1.0 if client is not None else seconds)
    snap2, missed2, wall2 = run.stepper.snapshot, run.stepper.missed, time.perf_counter()
    cpu2 = thread_cpu(run)
    sim = snap2.time - snap.time
    out = {"rtf": sim / (wall2 - wall), "late": missed2 - missed,
           "stepper": (cpu2[0] - cpu[0]) / sim, "solver": (cpu2[1] - cpu[1]) / sim}
    if client is not None:
        report = json.loads(client.communicate()[0])
        trips = sorted(report["trips"])
        out.update(answered=len(trips), errors=report["errors"],
                   median_ms=1e3 * trips[len(trips) // 2], max_ms=1e3 * trips[-1])
    return out


def old_search(arm, position, rotation, q_now, tol: float, angle_tol: float):
    """The search ``tool`` ran before issue 45: SciPy's bounded least squares
    (coopsim.model.arm.solve_ik) from the angles now, the start and six fixed spreads."""
    lo, hi = arm.lower, arm.upper
    seeds = [q_now, arm.start] + [lo + s[:arm.dof] * (hi - lo)
                                  for s in np.random.default_rng(34).random((6, 7))]
    best = None
    for q0 in seeds:
        fit = solve_ik(arm, position, rotation, q0, tol=tol / 10, angle_tol=angle_tol / 10)
        score = fit.position_error + 0.1 * fit.angle_error
        if best is None or score < best[0]:
            best = (score, fit)
        if fit.position_error <= tol and fit.angle_error <= angle_tol:
            break
    return best[1]


def solver_rows(repeat: int) -> None:
    """CPU time of one request's search, compiled against SciPy's, same targets (base frame
    of the IRB 120: the world point less the mount's height)."""
    arm = IRB120
    down = rpy_matrix(NEAR[3:])
    for name, point, rotation in (("reachable, tool down", NEAR[:3], down),
                                  ("far (beyond the stretch)", FAR, None),
                                  ("under the pedestal", UNDER, None)):
        local = np.subtract(point, (0.0, 0.0, arm.mount[2]))
        times = {}
        for label, search, n in (("compiled", solve, repeat), ("SciPy", old_search, 2)):
            search(arm, local, rotation, arm.start, 1e-3, 1e-2)  # loaded, compiled
            t = time.process_time()
            for _ in range(n):
                fit = search(arm, local, rotation, arm.start, 1e-3, 1e-2)
            times[label] = (time.process_time() - t) / n
            times[label + " error"] = fit.position_error
        print(f"{name:26s} compiled {1e3 * times['compiled']:.3f} ms, SciPy "
              f"{1e3 * times['SciPy']:.1f} ms ({times['SciPy'] / times['compiled']:.0f} x); "
              f"position error {times['compiled error']:.4g} / {times['SciPy error']:.4g} m",
              flush=True)


def thread_cpu(run) -> tuple[float, float]:
    """CPU time (s) of the stepper thread and of the solver thread so far."""
    out = []
    for thread in (run.stepper._thread, run.network.hub.offload._thread):
        try:
            out.append(time.clock_gettime(time.pthread_getcpuclockid(thread.ident)))
        except (AttributeError, OSError):  # the solver thread starts with the first request
            out.append(0.0)
    return out[0], out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="s per phase")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of all the phases")
    parser.add_argument("--rate", type=float, default=20.0, help="requests a second")
    parser.add_argument("--repeat", type=int, default=200, help="compiled solves per row")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}: one request's search, CPU time")
    solver_rows(args.repeat)
    print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores; dt {DT} s; "
          f"{args.rate:g} requests/s; {args.rounds} rounds of {args.seconds:g} s per phase")
    rows: dict[str, list[dict]] = {name: [] for name, _, _ in PHASES}
    with Run(scenario(), RunOptions(port=0, controllers=False)) as run:
        run.start()
        time.sleep(3.0)  # the kernels' warm-up, the first steps
        for _ in range(args.rounds):  # interleaved: a busy machine's drift hits every phase
            for name, command, values in PHASES:
                rows[name].append(phase(run, command, values, args.seconds, args.rate))
    base = statistics.median(r["rtf"] for r in rows["no client"])
    for name, command, _ in PHASES:
        got = rows[name]
        rtf = statistics.median(r["rtf"] for r in got)
        extra = ""
        if command is not None:
            trips = sorted(r["median_ms"] for r in got)
            errors = {k: sum(r["errors"].get(k, 0) for r in got) for k in
                      {k for r in got for k in r["errors"]}}
            extra = (f"; {sum(r['answered'] for r in got)} answered (errors {errors}), round "
                     f"trip median {trips[len(trips) // 2]:.1f} ms, largest "
                     f"{max(r['max_ms'] for r in got):.1f} ms")
        each = ", ".join(f"{r['rtf']:.2f}" for r in got)
        cpu = (f"CPU per simulated s: stepper {statistics.median(r['stepper'] for r in got):.3f}"
               f" s, solver {statistics.median(r['solver'] for r in got):.3f} s")
        print(f"{name:16s} real-time factor {rtf:.3f} ({rtf / base:.2f} x no client; rounds "
              f"{each}), "
              f"{sum(r['late'] for r in got)} steps late; {cpu}{extra}", flush=True)


if __name__ == "__main__":
    main()
