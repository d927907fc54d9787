"""The first run after an install compiles in the open: with numba's cache cold
(NUMBA_CACHE_DIR a fresh folder) ``coopsim run`` says, on one line, that it compiles the
kernels, then steps compiled from its first step and ends as any run; a refused file compiles
nothing and says its one error line. Real processes; waits on their exits, with only a
generous bound on the whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.model.compiled import NOTICE

ROOT = Path(__file__).resolve().parents[2]
BOUND = 1800  # s: a cold compile on a loaded two-core machine takes minutes

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")  # cold: nothing compiled yet
    return env


@pytest.mark.slow
def test_a_cold_first_run_says_it_compiles_once_and_runs(tmp_path):
    result = subprocess.run([sys.executable, "-m", "coopsim", "run",
                             str(ROOT / "scenarios" / "one_robot.scenario"), "--headless",
                             "--no-controllers", "--port", "0", "--duration", "1"],
                            cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True,
                            timeout=BOUND)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "duration 1 s reached" in out, out
    assert out.count(NOTICE.strip()) == 1, out  # one line, before the run's own
    assert result.stderr.index(NOTICE.strip()) < result.stderr.index("simulating"), out
    assert "Traceback" not in out


def test_a_refused_cold_run_says_one_line(tmp_path):
    """A scenario refused before anything is built: the error is the only line (nothing
    compiles for it)."""
    bad = tmp_path / "bad.scenario"
    bad.write_text("[WORLD]\nfile nowhere.world\n")
    result = subprocess.run([sys.executable, "-m", "coopsim", "run", str(bad), "--headless",
                             "--no-controllers", "--port", "0"], cwd=tmp_path,
                            env=_env(tmp_path), capture_output=True, text=True, timeout=BOUND)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert str(bad) in result.stderr and "Traceback" not in result.stderr
