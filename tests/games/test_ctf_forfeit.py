"""A capture-the-flag team whose controller crashed forfeited, and the summary's ``ended`` line
says so (before, it read like any game's result)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from test_ctf_game import short_game

CRASH = """\
from coopsim.client import Client

with Client() as client:
    bot = client.robot("b1")
    bot.motors.set_speeds(0.0, 0.0)  # attached: the lockstep run waits for it
    print("team B's controller: about to crash")
    raise RuntimeError("a bug in team B's controller")
"""

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _game(tmp_path, *options):
    done = subprocess.run(
        [sys.executable, "-m", "coopsim", "run", str(short_game(tmp_path, 4)), "--headless",
         "--port", "0", *options],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    ended = re.search(r"^ended\s+(.*)$", done.stdout, re.M)
    assert ended, done.stdout
    return ended.group(1), done.stdout


def test_a_team_whose_controller_crashed_forfeited_and_the_ended_line_says_so(tmp_path):
    (tmp_path / "crash.py").write_text(CRASH)
    # lockstep: the run waits for b1's controller once it has attached, so it has crashed
    # before the game goes on; --wait-for 1: it is the one controller launched (the scenario's
    # wait_for 5 counts team B's five robots and would hold the first step ~12 s for four
    # that never come); --speed 0: the game's 4 s played at once (the summary waits for the
    # exit of a controller that let go, app/verdict.py)
    ended, out = _game(tmp_path, "--mode", "lockstep", "--wait-for", "1", "--speed", "0",
                       "--controller", "b1=crash.py")
    assert ended.startswith("ctf: capture the flag: ") and \
        ended.endswith("; team B forfeited (its controllers crashed)"), out
    assert "controller of b1 exited with code 1" in out and "a bug in team B's" in out


def test_a_team_whose_controller_plays_does_not_forfeit(tmp_path):
    ended, out = _game(tmp_path, "--speed", "0")  # as tests/games/test_ctf_game.py plays
    assert ended.startswith("ctf: capture the flag: ") and "forfeit" not in out, out
