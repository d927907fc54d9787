"""Probe: Ctrl-C twice, 0.1 s apart, at random moments of a run's start-up (issue 45 item 7).

Each try starts ``python -m coopsim run scenarios/one_robot.scenario --headless --port 0
--duration 600 --record rK.mcap``, waits a random delay (uniform in LO..HI s, seeded), sends
SIGINT, and 0.1 s later a second one when the process is still there; then waits for it (60 s
cap: past it the try counts as hung) and reads its recording, if any, with ``coopsim info``.
One line per try: the exit status, how long after the first signal the process ended, and
whether its output held a traceback, "Aborted!" or the summary; the last line counts them.
With ``--keep DIR`` the whole output of a try that was not clean is written there.

Usage: python experiments/interrupt_probe.py [--tries 22] [--low 0.3] [--high 12] [--seed 45]
       [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "one_robot.scenario"
CAP = 60.0  # s a process may take to end before the try counts as hung


def coopsim(*args: str) -> list[str]:
    return [sys.executable, "-m", "coopsim", *args]


def one_try(folder: Path, k: int, delay: float) -> dict:
    """Start a run, Ctrl-C it twice after ``delay`` s; what happened."""
    rec = folder / f"r{k}.mcap"
    env = {**os.environ, "DISPLAY": ""}
    proc = subprocess.Popen(coopsim("run", str(SCENARIO), "--headless", "--port", "0",
                                    "--duration", "600", "--record", str(rec)),
                            cwd=folder, env=env, text=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    time.sleep(delay)
    first = time.monotonic()
    proc.send_signal(signal.SIGINT)
    time.sleep(0.1)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=CAP)
        hung = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        hung = True
    took = time.monotonic() - first
    sound = None
    if rec.exists():
        info = subprocess.run(coopsim("info", str(rec)), capture_output=True, text=True,
                              env=env)
        sound = info.returncode == 0 and "complete  yes" in info.stdout
        rec.unlink()
    return {"status": proc.returncode, "took": took, "traceback": "Traceback" in out,
            "aborted": "Aborted!" in out, "summary": "wall time" in out, "hung": hung,
            "recording": sound, "out": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=22)
    parser.add_argument("--low", type=float, default=0.3)
    parser.add_argument("--high", type=float, default=12.0)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    clean = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.tries):
            delay = rng.uniform(args.low, args.high)
            r = one_try(Path(tmp), k, delay)
            ok = (not (r["traceback"] or r["aborted"] or r["hung"])
                  and (r["status"] == 130 or (r["status"] == 0 and r["summary"]))
                  and r["recording"] is not False)
            clean += ok
            print(f"{k:2d} Ctrl-C at {delay:5.2f} s: status {r['status']}, ended "
                  f"{r['took']:.2f} s after, summary {r['summary']}, traceback "
                  f"{r['traceback']}, Aborted! {r['aborted']}, hung {r['hung']}, recording "
                  f"{'none' if r['recording'] is None else 'sound' if r['recording'] else 'BAD'}",
                  flush=True)
            if not ok and args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / f"try{k}.txt").write_text(r["out"])
    print(f"{clean} of {args.tries} clean (status 130, or 0 with the summary; no traceback, "
          "no Aborted!, no hang, every recording sound)")


if __name__ == "__main__":
    main()
