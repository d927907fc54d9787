"""tests/sim/scenario_digests.py, the check that compares kernel paths and checkouts: a run with
the compiled kernels (the modules', the caster's) gives the digest of the run on numpy alone,
for a scenario with every module of the reference robot, sonar noise and monitors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.model import compiled

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def digests(policy: str, scenario: str) -> list[str]:
    env = dict(os.environ, COOPSIM_JIT=policy)
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "sim" / "scenario_digests.py"),
                          "--only", scenario, "--steps", "60"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900, check=True).stdout
    lines = out.splitlines()
    assert lines[0].startswith("# coopsim from") and f"COOPSIM_JIT={policy}" in lines[0]
    return lines[1:]


@pytest.mark.skipif(not compiled.COMPILED, reason="the kernels need numba")
def test_the_compiled_kernels_give_the_numpy_runs_digests():
    numpy_run, compiled_run = digests("numpy", "learn_goal"), digests("wait", "learn_goal")
    assert [line.split()[:2] for line in numpy_run] == [["learn_goal", "pymunk"],
                                                        ["learn_goal", "kinematic"]]
    assert all(len(line.split()[2]) == 16 for line in numpy_run)  # digests, not refusals
    assert compiled_run == numpy_run
