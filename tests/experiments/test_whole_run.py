"""experiments/whole_run.py, the whole-run row's command (docs/performance.md) at a tiny size:
it alternates its trees' processes and prints each one's figures and the summary. Checked for
being there and sane, never for speed (benchmarks/ and the experiment itself measure speed)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_whole_run_experiment_prints_each_process_and_the_summary():
    done = subprocess.run([sys.executable, str(ROOT / "experiments" / "whole_run.py"), str(ROOT),
                           str(ROOT), "--rounds", "1", "--steps", "20", "--blocks", "1",
                           "--cases", "one_robot"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    rows = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(rows) == 2 and all(r["root"] == str(ROOT) for r in rows)
    for row in rows:
        case = row["one_robot"]
        assert case["whole_us"] > 0 and case["tick_us"] > 0 and math.isfinite(case["over_tick"])
        assert case["x_real_time"] > 0 and row["load"] >= 0
    summary = [line for line in lines if line.startswith(f"{ROOT} one_robot: whole ")]
    assert len(summary) == 1 and "2 processes" in summary[0], done.stdout
