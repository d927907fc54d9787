"""SwarmSimX's fidelity study in 3D (its Fig. 4): a quadrotor flies a horizontal and a vertical
figure-eight at a constant yaw rate, and the cumulative distribution of its 3D tracking error
F(d) is compared with the paper's.

The robot is a ``quadrotor`` (1.5 kg, 0.5 m, SwarmSimX class) on the ``mujoco`` engine, flown
by the cascaded controller (driver ``flight``: from its imu and mocap readings, commanding its
four propellers); the eight is a lemniscate of Gerono, ``SIZE`` m from the centre to each end
and half that across, a lap every ``PERIOD`` s, yaw turning at ``YAW_RATE`` rad/s, 1.5 m above
the floor, after ``TAKEOFF`` s of climbing to its centre. Three conditions per eight:

A. the driver in-process, lockstep (no network, no wall clock);
B. the same driver as a network controller process (``run_controller('flight', ...)``, the
   class clients/python/flight.py runs) against ``coopsim run`` in real time;
C. as B, with ``--others`` other quadrotors in the same run, each flying its own eight under an
   in-process batch ``flight`` driver (the ``aerial`` engine would be the swarm's choice; the
   study keeps mujoco so that only the load changes).

The error at a step is the distance between the position the controller read and the
reference it computed from that reading (the reference rides with the ``set_rotors`` command:
recording columns ``flight_ref_x/y/z``). Prints a table (mean, std, median, p95, max, m) beside
Fig. 4's figures and draws the CDFs.

Usage: python studies/swarmsimx_eights.py [--laps 2] [--others 30] [--only A]
       [--plot docs/experiments/swarmsimx_eights.png]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DT = 0.01  # s: 100 Hz, the controller's rate
STARTUP = 10.0  # s of sim time B's and C's network controller has to connect before its hold
SIZE, PERIOD, YAW_RATE, TAKEOFF, HEIGHT = 1.5, 6.0, 0.3, 3.0, 1.5
PAPER = {"horizontal": {"real": (0.0919, 0.0412), "SwarmSimX": (0.1245, 0.0444)},
         "vertical": {"real": (0.0654, 0.0179), "SwarmSimX": (0.0546, 0.0131)}}


def driver_settings(plane: str) -> dict:
    """The flight driver's parameters of the study's eight in ``plane``."""
    return {"shape": "eight", "plane": plane, "size": SIZE, "period": PERIOD,
            "yaw_rate": YAW_RATE, "takeoff": TAKEOFF, "height": HEIGHT}


def scenario_text(plane: str, mode: str, seconds: float, others: int, hosted: bool) -> str:
    """A scenario: quad1 (in-process driver when ``hosted``) and ``others`` quadrotors, 4 m
    apart, each flying the same eight with the batch driver; and the world file's text."""
    drive = "driver      flight " + " ".join(f"{k} {v}" for k, v in driver_settings(plane).items())
    side = math.ceil(math.sqrt(others + 1))
    size = side * 4.0 + 6.0
    lines = ["[WORLD]", "file w.world", "[SETTINGS]", "engine mujoco", f"dt {DT}",
             f"mode {mode}", f"duration {seconds}", "seed 1",
             "[ROBOT_1]", "type quadrotor", "name quad1",
             f"position {-size / 2 + 3} {-size / 2 + 3} 0"]
    if hosted:
        lines.append(drive)
    for k in range(others):
        x = -size / 2 + 3 + (k + 1) % side * 4.0
        y = -size / 2 + 3 + (k + 1) // side * 4.0
        lines += [f"[ROBOT_{k + 2}]", "type quadrotor", f"name other{k}", f"position {x} {y} 0",
                  drive]
    return "\n".join(lines) + "\n", f"[FLOOR]\nsize {size} {size} 0.1\n"


def lockstep_errors(plane: str, laps: float = 2.0) -> np.ndarray:
    """Condition A in-process: (n,) 3D tracking errors (m), one per step of the eight."""
    from coopsim.formats.files import load
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    with tempfile.TemporaryDirectory() as folder:
        text, world = scenario_text(plane, "lockstep", TAKEOFF + laps * PERIOD, 0, True)
        (Path(folder) / "w.world").write_text(world)
        (Path(folder) / "a.scenario").write_text(text)
        sim = Simulation(load(str(Path(folder) / "a.scenario")))
    stepper, row, errors = Stepper(sim, mode="lockstep"), sim.robots.index["quad1"], []
    while stepper.snapshot.time < TAKEOFF + laps * PERIOD - 1e-9:
        before = stepper.snapshot
        stepper.tick()
        cmd = sim.commands["rotors"][row]  # computed from ``before``
        if before.time >= TAKEOFF and cmd[8] > 0.5:
            errors.append(float(np.linalg.norm(before.pose3d[row, :3] - cmd[5:8])))
    return np.array(errors)


def recorded_errors(path: Path, plane: str, start: float,
                    laps: float) -> tuple[np.ndarray, float]:
    """(n,) quad1's 3D tracking errors (m) in a recording, one per frame of the eight: its true
    position at each frame against the reference for that frame's time, as A measures; and the
    sim time (s) of the first command the controller sent.

    The eight starts at ``start`` + ``TAKEOFF`` (the driver's ``start``); its centre is the
    reference the controller held before (the recording's ``flight_ref_x/y/z``). A network
    controller's recorded reference was computed from a reading a step or more before the
    frame, so the frame's own reference is rebuilt with coopsim.swarm.flight.eight instead.
    """
    from coopsim.recording.reader import Recording
    from coopsim.swarm.flight import eight

    begin, times, poses, centre, first = start + TAKEOFF, [], [], None, math.inf
    with Recording(str(path)) as rec:
        names = [c.name for c in rec.robot_columns]
        cols = [names.index(c) for c in ("flight_ref_x", "flight_ref_y", "flight_ref_z",
                                         "flight_tracking")]
        for frame in rec.iter_frames():
            robots = [r["name"] for r in rec.layout(frame.layout)["robots"]]
            i = robots.index("quad1")
            ref = rec.robot_values(frame)[i, cols]
            if ref[3] > 0.5:
                first = min(first, frame.time)
                if frame.time < begin - 1e-9:
                    centre = ref[:3].copy()  # the hold before the eight
            if begin - 1e-9 <= frame.time < begin + laps * PERIOD - 1e-9:
                times.append(frame.time)
                poses.append(frame.pose3d[i, :3].copy())
    if centre is None or not times:
        raise SystemExit(f"{path}: quad1's controller sent nothing before its eight began at "
                         f"{begin:g} s (it connected at {first:g} s); raise STARTUP")
    ref = eight(np.array(times) - begin, np.tile(centre, (len(times), 1)), SIZE, PERIOD, plane)
    return np.linalg.norm(np.array(poses) - ref[:, :3], axis=1), first


def network_run(folder: Path, plane: str, others: int, laps: float) -> tuple[np.ndarray, str]:
    """Conditions B/C: ``coopsim run`` in real time, quad1 flown by a network controller
    process whose eight begins at sim time ``STARTUP`` + ``TAKEOFF`` (it connects while the
    run goes, at a time the machine decides); the errors and the run's summary."""
    text, world = scenario_text(plane, "realtime", STARTUP + TAKEOFF + laps * PERIOD, others,
                                False)
    name = f"{plane}_{others}"
    (folder / "w.world").write_text(world)
    (folder / f"{name}.scenario").write_text(text)
    record = folder / f"{name}.mcap"
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run", str(folder / f"{name}.scenario"),
                             "--headless", "--port", "0", "--record", str(record)], cwd=ROOT,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    found = None
    for line in proc.stderr:
        found = re.search(r"name server: (\S+)", line)
        if found:
            break
    if found is None:
        raise SystemExit(f"coopsim run {name}.scenario did not start: {proc.communicate()}")
    settings = {**driver_settings(plane), "start": STARTUP}
    code = ("from coopsim.client.host import run_controller; "
            f"run_controller('flight', 'quad1', {settings!r}, "
            f"nameserver={found.group(1)!r}, period={DT})")
    drone = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    out, err = proc.communicate(timeout=3600)
    drone.wait(60)
    errors, first = recorded_errors(record, plane, STARTUP, laps)
    said = [line for line in err.splitlines() if line.startswith("realtime:")]
    if first > STARTUP + TAKEOFF - 2.0:  # the climb to the centre takes about 2 s
        said.append(f"late: the controller's first command came at {first:.2f} s, less than "
                    "2 s before its eight: raise STARTUP")
    return errors, (out + f" first command at {first:.2f} s"
                    + "".join(f"\n(stderr) {s}" for s in said))


def summary(e: np.ndarray) -> str:
    """mean | std | median | p95 | max of errors, m."""
    return " | ".join(f"{v:.4f}" for v in (e.mean(), e.std(), np.median(e),
                                           np.percentile(e, 95), e.max()))


def plot(rows: list[tuple[str, str, np.ndarray]], path: str) -> None:
    """F(d) of every row, one panel per eight."""
    from coopsim.app.analyze import pyplot

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    for ax, plane in zip(axes, ("horizontal", "vertical")):
        for p, label, e in rows:
            if p == plane:
                d = np.sort(e)
                ax.plot(d, np.arange(1, len(d) + 1) / len(d),
                        label=f"{label}: mean {e.mean():.3f}, std {e.std():.3f} m")
        for who, (mean, std) in PAPER[plane].items():
            ax.axvline(mean, linestyle=":", color="grey")
            ax.text(mean, 0.05, f" {who} mean", rotation=90, fontsize=7, color="grey")
        ax.set_xlabel("d, distance to the reference (m)")
        ax.set_ylabel("F(d)")
        ax.set_title(f"{plane} eight", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main() -> None:
    global SIZE, PERIOD
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--laps", type=float, default=2.0)
    parser.add_argument("--others", type=int, default=30)
    parser.add_argument("--only", default="ABC", help="conditions to run, e.g. A or AB")
    parser.add_argument("--plot", default="")
    parser.add_argument("--size", type=float, default=SIZE, help="the eight's half length, m")
    parser.add_argument("--period", type=float, default=PERIOD, help="a lap's time, s")
    args = parser.parse_args()
    SIZE, PERIOD = args.size, args.period
    rows, folder = [], Path(tempfile.mkdtemp(prefix="eights-"))
    print("| eight | condition | steps | mean m | std m | median m | p95 m | max m |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|")
    for plane in ("horizontal", "vertical"):
        for who, (mean, std) in PAPER[plane].items():
            print(f"| {plane} | paper, {who} | | {mean} | {std} | | | |")
        runs = [("A: in-process, lockstep", lambda: (lockstep_errors(plane, args.laps), ""))]
        runs.append(("B: network controller, realtime",
                     lambda: network_run(folder, plane, 0, args.laps)))
        runs.append((f"C: as B with {args.others} others",
                     lambda: network_run(folder, plane, args.others, args.laps)))
        for label, run in runs:
            if label[0] not in args.only:
                continue
            errors, said = run()
            rows.append((plane, label, errors))
            print(f"| {plane} | {label} | {len(errors)} | {summary(errors)} |", flush=True)
            if said:
                print(f"<!-- {' '.join(said.split())} -->", flush=True)
    if args.plot:
        plot(rows, args.plot)
        print(f"figure: {args.plot}", file=sys.stderr)


if __name__ == "__main__":
    main()
