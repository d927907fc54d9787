"""A whole capture-the-flag game, headless, in lockstep: team A played in-process by the squad
driver, team B by the launched network controller (clients/python/ctf_team.py), both on the swarm
library; the game ends the run with a result, and the recording keeps the rule's fields."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coopsim.recording.reader import Recording

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def short_game(tmp_path: Path, time_limit: float) -> Path:
    """scenarios/ctf.scenario with a shorter clock, runnable from ``tmp_path``."""
    text = (ROOT / "scenarios" / "ctf.scenario").read_text()
    text = text.replace("../worlds/ctf.world", str(ROOT / "worlds" / "ctf.world"))
    text = text.replace("../clients/python/ctf_team.py", str(ROOT / "clients" / "python" /
                                                              "ctf_team.py"))
    text = re.sub(r"param       time_limit \d+", f"param       time_limit {time_limit}", text)
    path = tmp_path / "ctf_short.scenario"
    path.write_text(text)
    return path


def test_a_headless_game_plays_to_a_result_with_both_teams_moving(tmp_path):
    recording = tmp_path / "game.mcap"
    done = subprocess.run(
        [sys.executable, "-m", "coopsim", "run", str(short_game(tmp_path, 45)), "--headless",
         "--speed", "0", "--port", "0", "--record", str(recording), "--controller-logs", str(tmp_path)],
        capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    output = done.stdout + done.stderr  # the summary is on stdout
    ended = re.search(r"ended\s+ctf: capture the flag: (.*) at t = ([\d.]+) s", output)
    assert ended, output[-2000:]
    result, at = ended.groups()
    assert re.fullmatch(r"(draw \d-\d|[AB] wins \d-\d) \(A-B\)( on time)?", result), result
    assert float(at) <= 45.0 + 1e-6
    with Recording(recording) as rec:
        first, last = rec.frame(0), rec.frame(rec.info().frames - 1)
        names = [r["name"] for r in rec.layout(last.layout)["robots"]]
        moved = np.hypot(*(rec.robot_values(last)[:, :2] - rec.robot_values(first)[:, :2]).T)
        assert last.rules["ctf"]["result"] == result
    by_name = dict(zip(names, moved))
    assert all(by_name[f"a{i}"] > 1.0 for i in (1, 2, 3)), by_name  # A's attackers, in-process
    assert all(by_name[f"b{i}"] > 1.0 for i in (1, 2, 3)), by_name  # B's, over the network
