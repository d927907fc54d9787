"""Lockstep results do not depend on the machine: the capture-the-flag scenario, with its
launched team controller and in-process drivers, plays the identical game (score, end time,
every recorded pose of every step, bit for bit) on a quiet machine, beside two CPU-burning
processes, and when the simulator process is stopped for 12 s mid-game (SIGSTOP/SIGCONT, as a
debugger or a suspended laptop does) and continued.

The game is cut short (``--duration``): enough steps for both teams to move, plan and radio.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from coopsim.recording.reader import Recording

from nethelpers import Peer, lookup, wait_until

ROOT = Path(__file__).resolve().parents[2]
CTF = ROOT / "scenarios" / "ctf.scenario"
DURATION = 4.0  # s of game: 80 steps at the scenario's dt 0.05
STOP_AT = 30  # the step after which the simulator is stopped
STOPPED = 12.0  # s the simulator stays stopped: past team B's 10 s call timeout
# (clients/python/ctf_team.py), so its client waits on by the connection's monitor
RUN_WAIT = 600.0  # s a run may take on a loaded machine before the test gives up
BURN_FOR = 900  # s a burner runs at most, should the test die without killing it
BURNER = (f"import time\nend = time.monotonic() + {BURN_FOR}\n"
          "while time.monotonic() < end:\n    pass\n")

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _start(record: Path) -> tuple[subprocess.Popen, str, threading.Thread, list]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "coopsim", "run", str(CTF), "--headless", "--speed", "0",
         "--port", "0", "--duration", str(DURATION), "--record", str(record)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    found = threading.Event()

    def read():
        for line in proc.stderr:
            lines.append(line)
            if "name server:" in line:
                found.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert found.wait(RUN_WAIT), "".join(lines)
    endpoint = re.search(r"tcp://[^ ]+", next(l for l in lines if "name server:" in l))[0]
    return proc, endpoint, reader, lines


def _finish(proc, reader, lines) -> str:
    out, _ = proc.communicate(timeout=RUN_WAIT)
    reader.join(10)
    assert proc.returncode == 0, "".join(lines)
    return out


def _game(record: Path) -> dict:
    """What the recorded game was: its end time, score, and every step's poses."""
    with Recording(record) as rec:
        frames = list(rec.iter_frames())
        last = frames[-1]
        ctf = last.rules["ctf"]
        return {"steps": [f.step for f in frames], "end": last.time,
                "score": {name: team["score"] for name, team in ctf["teams"].items()},
                "game": ctf,
                "robots": np.stack([f.robots for f in frames]),
                "bodies": np.stack([f.bodies for f in frames])}


def _play(tmp_path: Path, name: str, during=None) -> dict:
    record = tmp_path / f"{name}.mcap"
    proc, endpoint, reader, lines = _start(record)
    try:
        if during is not None:
            during(proc, endpoint)
        out = _finish(proc, reader, lines)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()
    assert f"duration {DURATION:g} s reached" in out, out
    err = "".join(lines)
    assert "detached" not in err and "went silent" not in out, err + out
    return _game(record)


def _stop_mid_game(proc, endpoint):
    sim = Peer(lookup(endpoint, "/sim"))
    try:
        wait_until(lambda: sim.ask(1)[3][0] >= STOP_AT, timeout=RUN_WAIT, every=0.05)
    finally:
        sim.close()
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        threading.Event().wait(STOPPED)  # the controllers wait meanwhile
    finally:
        os.kill(proc.pid, signal.SIGCONT)


def _same(a: dict, b: dict, what: str) -> None:
    assert a["steps"] == b["steps"], what
    assert (a["end"], a["score"]) == (b["end"], b["score"]), what
    assert a["game"] == b["game"], what
    assert np.array_equal(a["robots"], b["robots"], equal_nan=True), f"{what}: robot poses differ"
    assert np.array_equal(a["bodies"], b["bodies"], equal_nan=True), f"{what}: bodies differ"


def test_capture_the_flag_is_the_same_game_whatever_the_machine_does(tmp_path):
    quiet = _play(tmp_path, "quiet")
    assert quiet["end"] == pytest.approx(DURATION) and len(quiet["steps"]) > 1
    moved = np.abs(quiet["robots"][-1, :, :2] - quiet["robots"][0, :, :2]).max(axis=1)
    assert (moved > 0.05).sum() >= 8, "both teams played: most robots moved"
    burners = [subprocess.Popen([sys.executable, "-c", BURNER]) for _ in range(2)]
    try:
        busy = _play(tmp_path, "busy")
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    _same(quiet, busy, "beside two CPU burners")
    stopped = _play(tmp_path, "stopped", during=_stop_mid_game)
    _same(quiet, stopped, f"stopped {STOPPED:g} s mid-game")
