"""benchmarks/step_plan_bench.py (issue 41's goals against a base tree) runs: two of its cases at
their smallest size, this checkout standing in for the base tree, each tree in its own worker
process. It checks that the figures are there and sane, never how fast anything is."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.model import compiled

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not compiled.COMPILED, reason="the aerial kernels need numba")
def test_the_step_plan_bench_measures_both_trees(tmp_path):
    out = tmp_path / "figures.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "step_plan_bench.py"),
                           "--base", str(ROOT), "--cases", "cf1000,calls", "--cap", "2",
                           "--steps", "3", "--rounds", "2", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    results = {r["case"]: r for r in json.loads(out.read_text())}
    assert set(results) == {"cf1000", "calls"}
    for res in results.values():
        assert set(res["rounds"]) == {"current", "base"}
        assert all(len(r) == 2 for r in res["rounds"].values())  # one block a round each
        assert res["before"]["cores"] >= 1 and len(res["after"]["load"]) == 3
    (row,) = results["cf1000"]["summary"].values()  # 2 Crazyflies: the cap
    for side in ("current", "base"):
        assert row[side]["robots"] == 2 and row[side]["dt"] == 0.002
        assert row[side]["cpu_ms"] > 0 and row[side]["wall_ms"] > 0
        assert math.isclose(row[side]["x_real_time"], 2.0 / row[side]["cpu_ms"])
    assert row["ratio"] > 0 and math.isfinite(row["ratio"])
    calls = results["calls"]["summary"]
    assert set(calls) == {"1 Crazyflies", "2 Crazyflies"}
    assert all(calls[k][side]["calls"] > 10 and calls[k][side]["c_calls"] > 10
               for k in calls for side in ("current", "base"))
    (goal,) = results["cf1000"]["goals"]
    assert goal[0] == "2 Crazyflies, aerial, 1 thread: >= 2x real time"
    assert goal[4] in ("met", "missed") and goal[5] == "2 Crazyflies, aerial, 1 thread"
    assert "| goal | figure | base | current |" in done.stdout
