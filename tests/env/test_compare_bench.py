"""benchmarks/compare_sims_bench.py runs and its task is the task (robots reach their goals,
scans have 11 beams), at tiny sizes; never for speed (docs/performance.md has the figures)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from learnhelpers import ROOT

BENCH = ROOT / "benchmarks" / "compare_sims_bench.py"


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, str(BENCH), "--blocks", "1", "--steps", "30",
                           *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COOPSIM_JIT": "wait"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def _rows(out: str, name: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()
            if line.startswith(f"| {name}")]


def test_coopsim_drives_every_robot_toward_its_goal_alone_and_batched():
    out = _run("--n", "1", "4", "--only", "coopsim", "--batched", "3")
    rows = _rows(out, "coopsim kinematic |") + _rows(out, "coopsim pymunk")
    assert sorted(r[1] for r in rows) == ["1", "1", "4", "4"]
    for r in rows:  # 34 steps of 0.1 s at up to 0.5 m/s: well on the way to 2.12 m away
        assert float(r[2].replace(",", "")) > 0 and float(r[6]) > 0.5
    batched = _rows(out, "coopsim kinematic, BatchWorld")
    assert len(batched) == 1 and batched[0][1] == "3 x 4"
    assert "IR-SIM" not in out and "VMAS" not in out


@pytest.mark.skipif(importlib.util.find_spec("irsim") is None,
                    reason="IR-SIM is a benchmark-only install (the bench extra)")
def test_irsim_runs_the_same_task_headless():
    out = _run("--n", "3", "--only", "irsim", "--batched", "0")
    rows = _rows(out, "IR-SIM")
    assert len(rows) == 1 and rows[0][1] == "3" and float(rows[0][6]) > 0.5
    assert re.search(r"IR-SIM \d", out)
