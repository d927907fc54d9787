"""scenarios/inverted_v.scenario (CoopDynSim's Fig. 4) passes headless: five robots in an
inverted V follow a red target that moves twice and stand formed at its last place."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.rechelpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def test_the_inverted_v_follows_the_target_and_passes(tmp_path):
    done = run_cli("run", str(ROOT / "scenarios" / "inverted_v.scenario"), "--headless",
                   "--port", "0", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout + done.stderr
    match = re.search(r"squad_shape: PASS: formed at the red target at t = ([\d.]+) s .*RMS "
                      r"([\d.]+) m, ([\d.]+) m at most, (\d+) break", said)
    assert match, said
    at, rms, worst, breaks = float(match[1]), float(match[2]), float(match[3]), int(match[4])
    assert at > 50.0  # after the target's last move
    assert rms < 0.25 and breaks <= 4
