"""Controllers a run launched never outlive it: ``coopsim run`` killed with SIGKILL (no clean-up
of its own can run) still takes every controller with it -- one that sleeps, one that ignores
SIGTERM, one that started a process of its own, and a real client -- through the watchdog."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from prochelpers import ROOT, Coopsim

SLEEP = 'python -c "import time; time.sleep(600)"'
STUBBORN = ('python -c "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
            'time.sleep(600)"')
PARENT = "sh -c 'sleep 600 & sleep 600'"
CLIENT = f"python {ROOT / 'clients' / 'python' / 'wander.py'}"

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _scenario(folder: Path) -> Path:
    (folder / "w.world").write_text("[FLOOR]\nsize 10 10 0.1\n")
    robots = "".join(f"[ROBOT_{n}]\ntype single\nname r{n}\nposition {n - 3} 0 0\n"
                     f"controller {command}\n"
                     for n, command in enumerate((SLEEP, STUBBORN, PARENT, CLIENT), start=1))
    path = folder / "ctl.scenario"
    path.write_text("[WORLD]\nfile w.world\n[SETTINGS]\nduration 100000\n" + robots)
    return path


def _table() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, state, command line) of every process."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            fields = stat.rsplit(b")", 1)[1].split()
            table[int(entry)] = (int(fields[1]), fields[0].decode(), cmd.decode(errors="replace"))
    return table


def _descendants(root: int) -> dict[int, str]:
    table, found, todo = _table(), {}, [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, _, cmd) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = cmd
                todo.append(pid)
    return found


def _running(pids) -> set[int]:
    table = _table()
    return {p for p in pids if p in table and table[p][1] not in ("Z", "X")}


def test_killing_the_run_with_sigkill_stops_every_controller(tmp_path):
    run = Coopsim("run", str(_scenario(tmp_path)), "--headless", "--port", "0", cwd=tmp_path)
    found: dict[int, str] = {}
    try:
        run.endpoint()
        deadline = time.monotonic() + 30
        while True:  # 4 controllers, the shell's own sleep, and the watchdog
            found.update(_descendants(run.proc.pid))
            if len(found) >= 6:
                break
            assert time.monotonic() < deadline, found
            time.sleep(0.1)
        time.sleep(0.5)  # the shell starts its second sleep too
        found.update(_descendants(run.proc.pid))
        controllers = {p for p, cmd in found.items() if "coopsim.app.watchdog" not in cmd}
        assert len(controllers) >= 5, found
        os.kill(run.proc.pid, signal.SIGKILL)
        run.proc.wait(10)
        deadline = time.monotonic() + 8.0  # SIGTERM, 2 s of grace for the stubborn one, SIGKILL
        while _running(found) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = {p: found[p] for p in _running(found)}
        assert left == {}, f"still running after the run was killed: {left}"
    finally:
        run.kill()
        for pid in _running(found):  # a failing test leaves nothing behind
            os.kill(pid, signal.SIGKILL)


def test_a_clean_end_leaves_neither_controllers_nor_the_watchdog(tmp_path):
    run = Coopsim("run", str(_scenario(tmp_path)), "--headless", "--port", "0",
                  "--duration", "3", cwd=tmp_path)
    found: dict[int, str] = {}
    try:
        run.endpoint()
        deadline = time.monotonic() + 30
        while len(found) < 6 and run.proc.poll() is None and time.monotonic() < deadline:
            found.update(_descendants(run.proc.pid))
            time.sleep(0.05)
        assert run.finish() == 0, run.err
        assert len(found) >= 5, found
        assert _running(found) == set()
        assert not any("is gone" in line for line in run.err), run.err
    finally:
        run.kill()
        for pid in _running(found):
            os.kill(pid, signal.SIGKILL)
