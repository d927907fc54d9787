"""SwarmSimX's tracking study, reproduced: a quadrotor (``holonomic``) flies a figure-eight,
and the cumulative distribution of its tracking error F(d) is compared across three conditions:

A. the ``tracking`` driver in-process, lockstep (no network, no timing: the controller's best);
B. the same driver as a network controller process, the run in real time at 50 Hz;
C. as B, with 1,000 other quadrotors in the same run, each flying its own figure-eight under an
   in-process batch ``tracking`` driver (they load the machine; the run must keep real time).

Each condition is a real ``coopsim run`` recorded to MCAP; ``coopsim analyze tracking`` reads
the three recordings (the reference is recorded with each command) and draws F(d) in one figure.
Prints the analysis table and, for B and C, each run's summary (steps, real-time factor,
deadline misses: C is also the "1,000 robots with batch tracking drivers at 50 Hz hold real
time" benchmark).

Usage: python studies/swarmsimx_study.py [--out DIR] [--seconds 24] [--others 1000]
       [--plot docs/experiments/swarmsimx_tracking.png]
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHAPE = "driver tracking shape eight size 2 period 12"
DT = 0.02  # s: 50 Hz, SwarmSimX's step


def scenario(folder: Path, name: str, mode: str, seconds: float, others: int,
             hosted: bool) -> Path:
    """A scenario file: quad1 (in-process driver when ``hosted``) and ``others`` quadrotors
    with batch tracking drivers, 6 m apart (their eights are 4 m long), in a square arena."""
    side = math.ceil(math.sqrt(others + 1))
    size = side * 6.0 + 6.0
    (folder / f"{name}.world").write_text(f"[FLOOR]\nsize {size} {size} 0.1\n")
    lines = [f"# {name}: SwarmSimX's tracking study (studies/swarmsimx_study.py)",
             "[WORLD]", f"file {name}.world", "[SETTINGS]", f"dt {DT}", f"mode {mode}",
             f"duration {seconds}", "seed 1",
             "[ROBOT_1]", "type holonomic", "name quad1", f"position {-size / 2 + 4} 0 0"]
    if hosted:
        lines.append(SHAPE)
    for k in range(others):
        x = -size / 2 + 4 + (k + 1) % side * 6.0
        y = -size / 2 + 4 + (k + 1) // side * 6.0
        lines += [f"[ROBOT_{k + 2}]", "type holonomic", f"name other{k}", f"position {x} {y} 0",
                  SHAPE]
    path = folder / f"{name}.scenario"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(path: Path, record: Path, controller: bool) -> str:
    """``coopsim run`` the scenario, recording; with ``controller`` a network controller
    process flies quad1 at the step's period. Returns the run's summary."""
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run", str(path), "--headless",
                             "--port", "0", "--record", str(record)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    drone = None
    if controller:
        for line in proc.stderr:
            found = re.search(r"name server: (\S+)", line)
            if found:
                break
        code = ("from coopsim.client.host import run_controller; "
                f"run_controller('tracking', 'quad1', {{'shape': 'eight', 'size': 2, "
                f"'period': 12}}, nameserver={found.group(1)!r}, period={DT})")
        drone = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    out, err = proc.communicate(timeout=3600)
    if drone is not None:
        drone.wait(60)
    if proc.returncode:
        raise SystemExit(f"coopsim run failed: {err}")
    said = [line for line in err.splitlines() if line.startswith("realtime:")]
    return out + "".join(f"\n(stderr) {line}" for line in said)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="folder for the scenarios and recordings (default: temp)")
    parser.add_argument("--seconds", type=float, default=24.0)
    parser.add_argument("--others", type=int, default=1000)
    parser.add_argument("--plot", default=str(ROOT / "docs/experiments/swarmsimx_tracking.png"))
    args = parser.parse_args()
    folder = Path(args.out or tempfile.mkdtemp(prefix="swarmsimx-"))
    folder.mkdir(parents=True, exist_ok=True)
    conditions = [("A: driver in-process, lockstep", "lockstep", 0, True),
                  ("B: network controller, realtime", "realtime", 0, False),
                  (f"C: as B with {args.others} other robots", "realtime", args.others, False)]
    recordings, labels = [], []
    for k, (label, mode, others, hosted) in enumerate(conditions):
        path = scenario(folder, "abc"[k], mode, args.seconds, others, hosted)
        record = folder / f"{'abc'[k]}.mcap"
        summary = run(path, record, controller=not hosted)
        print(f"## {label}\n\n```\n{summary.strip()}\n```\n", flush=True)
        recordings.append(str(record))
        labels.append(label)
    cmd = [sys.executable, "-m", "coopsim", "analyze", "tracking", *recordings, "--robot",
           "quad1", "--plot", args.plot, "--title",
           "quadrotor on a figure-eight (2D): cumulative tracking error"]
    for label in labels:
        cmd += ["--label", label]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    print(out.stdout or out.stderr)


if __name__ == "__main__":
    main()
