"""``coopsim bench step``: engines and casters side by side, CPU beside wall, SwarmSimX's box
plot, bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # every test runs coopsim in a process


def coopsim(*args):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([sys.executable, "-m", "coopsim", *args], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env=env)


def test_bench_step_engines_and_plot(tmp_path):
    png = tmp_path / "steps.png"
    out = coopsim("bench", "step", "--robots", "3,12", "--steps", "5", "--engine",
                  "pymunk,kinematic", "--plot", str(png))
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| pymunk") or
            line.startswith("| kinematic")]
    assert len(rows) == 4
    assert "| kinematic | jit | 12 |" in out.stdout and "| pymunk | jit | 3 |" in out.stdout
    header = [c.strip() for c in out.stdout.splitlines()[0].strip("|").split("|")]
    wall, cpu = header.index("median ms"), header.index("CPU median ms")
    for row in rows:  # the CPU of a step beside its wall time (never above it by much)
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert 0 < float(cells[cpu]) <= 2 * float(cells[wall]) + 0.05
    rss = [float(r.rstrip(" |").rsplit("|", 1)[1]) for r in rows]
    assert all(50 < m < 4000 for m in rss)  # MiB, read from /proc
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_bench_step_bad_input_is_one_line_and_exit_2():
    out = coopsim("bench", "step", "--robots", "3,x")
    assert out.returncode == 2 and "--robots takes comma-separated counts" in out.stderr


def test_bench_realtime_counts_paced_steps_and_deadlines():
    out = coopsim("bench", "realtime", "--robots", "2,30", "--seconds", "0.4")
    # no --engine: the first with the swarm feature, kinematic
    assert out.returncode == 0, out.stderr
    rows = [line.strip("| ").split(" | ") for line in out.stdout.splitlines()
            if line.startswith("| kinematic")]
    assert [r[:3] for r in rows] == [["kinematic", "jit", "2"], ["kinematic", "jit", "30"]]
    for row in rows:
        seconds, steps, missed = float(row[3]), int(row[4]), int(row[5])
        rtf, p50, p99 = float(row[7]), float(row[8]), float(row[10])
        cpu50, cpu95 = float(row[11]), float(row[12])
        assert abs(seconds - 0.4) < 1e-6 and steps == 20 and 0 <= missed <= steps
        assert 0 < rtf < 1.05  # paced: never much faster than the wall clock
        # in ms, and no step longer than the whole run (whatever the machine's load)
        assert 0 < p50 <= p99 <= 1000 * seconds / rtf * 1.01 + 1
        assert 0 < cpu50 <= cpu95 < 400 and cpu50 <= p50 * 1.5  # CPU time within wall time
    out = coopsim("bench", "realtime", "--robots", "x")
    assert out.returncode == 2 and "--robots takes comma-separated counts" in out.stderr
