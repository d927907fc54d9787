"""The first run after an install never waits in silence (issue 35, item 7): with numba's cache
cold (NUMBA_CACHE_DIR a fresh folder), the kernels compile in a process of their own while the
run serves with numpy; the run ends right after its summary, naming the compiling process that
goes on for later runs, and SIGTERM during the warm-up ends it cleanly. Real processes; waits on
conditions (output lines, exits), with only a generous bound on the whole."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[2]
BOUND = 300  # s: a run that has not ended by then hangs (main's waited for the compile)
STILL = re.compile(r"the compiled kernels are still being built \(process (\d+)\)")

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _run(tmp_path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "COOPSIM_JIT"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")  # cold: nothing compiled yet
    return subprocess.Popen([sys.executable, "-m", "coopsim", "run",
                             str(ROOT / "scenarios" / "one_robot.scenario"), "--headless",
                             "--no-controllers", "--port", "0", *args],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _lines_until(proc: subprocess.Popen, word: str) -> list[str]:
    """The output lines up to the first holding ``word`` (all of them if it never comes)."""
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if word in line:
            break
    return lines


def _finish(proc: subprocess.Popen, lines: list[str]) -> str:
    """Wait for the run's end (within BOUND) and return its whole output; stop the compiling
    process it named (it would fill a cache folder about to be deleted)."""
    timer = threading.Timer(BOUND, proc.kill)
    timer.start()
    try:
        out = "".join(lines) + proc.stdout.read()
        proc.wait()
    finally:
        timer.cancel()
    for pid in STILL.findall(out):
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    return out


def test_a_cold_first_run_ends_right_after_its_summary(tmp_path):
    proc = _run(tmp_path, "--duration", "1")
    out = _finish(proc, [])
    assert proc.returncode == 0, out
    assert "ended" in out and "duration 1 s reached" in out
    assert STILL.search(out), out  # the compile went on elsewhere; the run did not wait for it
    assert out.rstrip().splitlines()[-1].startswith("coopsim: the compiled kernels are still")
    assert "Traceback" not in out and "Aborted!" not in out


def test_sigterm_during_the_cold_warm_up_ends_the_run_cleanly(tmp_path):
    proc = _run(tmp_path, "--duration", "600")
    lines = _lines_until(proc, "simulating")  # the run steps, the kernels compile elsewhere
    proc.send_signal(signal.SIGTERM)
    out = _finish(proc, lines)
    assert proc.poll() is not None and proc.returncode in (0, 130), out
    assert "wall time" in out and "deadline misses" in out, out  # the summary
    assert STILL.search(out), out
    assert "Traceback" not in out and "Aborted!" not in out and "KeyboardInterrupt" not in out


WAIT = """
from coopsim.raycast import auto
auto.PROGRESS_EVERY = 0.2
print("ready" if auto.wait_ready() else "numpy", flush=True)
"""


def test_a_caller_that_must_wait_is_told_what_it_waits_for(tmp_path):
    """``COOPSIM_JIT=wait`` (benchmarks, batched environments) waits for the compile: it says
    so, naming the compiling process, instead of waiting in silence."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), COOPSIM_JIT="wait")
    proc = subprocess.Popen([sys.executable, "-c", WAIT], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = _lines_until(proc, "waiting for the kernels to compile")
    proc.kill()
    out = _finish(proc, lines)
    said = re.search(r"waiting for the kernels to compile \(process (\d+);", out)
    assert said, out
    try:
        os.kill(int(said.group(1)), signal.SIGKILL)  # the compiling process, ours to stop
    except ProcessLookupError:
        pass


def _kill_fillers(folder: Path) -> None:
    """Stop every process compiling into FOLDER (a refused run does not name its filler)."""
    needle = f"NUMBA_CACHE_DIR={folder}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


def test_a_refused_cold_run_says_one_line(tmp_path):
    """A scenario refused while the kernels compile elsewhere: the error is the only line
    (the filler goes on silently; a notice about it would break 'file:line: why', alone)."""
    bad = tmp_path / "bad.scenario"
    bad.write_text("[WORLD]\nfile nowhere.world\n")
    env = {k: v for k, v in os.environ.items() if k not in ("COOPSIM_JIT", "DISPLAY")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    try:
        result = subprocess.run([sys.executable, "-m", "coopsim", "run", str(bad), "--headless",
                                 "--no-controllers", "--port", "0"], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=BOUND)
    finally:
        _kill_fillers(tmp_path / "numba")
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert str(bad) in result.stderr and "Traceback" not in result.stderr


def _waiting_on_lock(pid: int) -> bool:
    """True while process ``pid`` waits for a lock (/proc/locks lists waiters with '->')."""
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and str(pid) in fields:
            return True
    return False


def test_runs_started_together_queue_behind_one_compiling_process(tmp_path, monkeypatch):
    """A second filler waits, idle, for the first's lock, then finds the stamp and compiles
    nothing (seen before the lock: one compiler per run started, 50 sharing 2 cores)."""
    import fcntl
    import time

    from coopsim.raycast import cache

    folder = tmp_path / "numba"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(folder))
    folder.mkdir()
    with open(folder / "coopsim-kernels.lock", "a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # "another process is compiling"
        Path(cache.stamp_path()).write_text("filled\n")  # ...and will have filled it
        env = {k: v for k, v in os.environ.items() if k != "COOPSIM_JIT"}
        proc = subprocess.Popen([sys.executable, "-c", "from coopsim.raycast import auto; "
                                 "auto.fill_cache()"], cwd=tmp_path, env=env)
        try:
            while not _waiting_on_lock(proc.pid):  # a condition, polled
                assert proc.poll() is None, "the filler did not wait for the lock"
                time.sleep(0.05)
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
    assert proc.wait(timeout=BOUND) == 0
    assert not list(folder.rglob("*.nbi")), "the second filler compiled anyway"
