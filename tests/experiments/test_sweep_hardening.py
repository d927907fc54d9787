"""coopsim sweep against hostile or mistaken input: a --scheduler that is not a Dask scheduler
(an HTTP server), a malformed address, and Ctrl-C at the terminal (SIGINT to the whole process
group, workers included) on a real LocalCluster."""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

from coopsim.app import sweep as sweep_module
from coopsim.app.cli import main

from test_sweep import folder, rows, sweep, write_sweep  # noqa: F401 -- fixture


@pytest.fixture
def http_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_http_server_as_scheduler_is_one_line_and_exit_2(folder, http_server):
    path = write_sweep(folder)
    start = time.monotonic()
    out = sweep(folder, path, "--scheduler", http_server)
    # 6 s to hear a scheduler answer, plus starting Python and Dask on a loaded machine; a
    # sweep that waits on the HTTP server forever never gets here within the bound
    assert time.monotonic() - start < 10 + 20
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"coopsim: cannot reach the Dask scheduler at {http_server} "
                               "within 6 s") or "is not a Dask scheduler" in lines[0]
    assert not (folder / "a.parquet").exists() or rows(folder / "a.parquet") == []


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:notaport", "tcp://127.0.0.1:70000",
                                     "127.0.0.1", "http://127.0.0.1:8786/"])
def test_a_malformed_scheduler_address_is_refused_before_dask_is_asked(folder, address,
                                                                       monkeypatch):
    def never(*_):
        raise AssertionError("a malformed address reached Dask")
    monkeypatch.setattr(sweep_module, "connect", never)
    monkeypatch.setattr(sweep_module, "check_dependencies", never)
    result = CliRunner().invoke(main, ["sweep", str(write_sweep(folder)), "--scheduler",
                                       address])
    assert result.exit_code == 2, result.output
    assert result.output == (f"coopsim: --scheduler {address!r} is not a Dask scheduler "
                             "address: give tcp://HOST:PORT (PORT a number from 1 to "
                             "65535)\n")


def test_ctrl_c_at_the_terminal_prints_only_the_friendly_message(folder):
    """SIGINT to the process group, as a terminal's Ctrl-C sends it, with a LocalCluster's
    worker processes busy: no worker traceback under the message."""
    path = write_sweep(folder, seeds="0-7", duration=40, speeds="0")
    env = {**os.environ, "PYTHONPATH": str(folder)}
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "sweep", str(path),
                             "--workers", "2"], cwd=folder, env=env, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        table = folder / "a.parquet"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (table.exists() and rows(table)):
            assert proc.poll() is None
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=120)[1]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    text = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    assert text[-1] == (f"interrupted: finished points are in {table}; run the same command "
                        "again to resume")
    assert all(line.startswith("sweep [") for line in text[:-1]), err


EVENT = "[EVENT_1]\nat 3\nparam r1.motors.max_speed 0\n"


@pytest.mark.parametrize("duration, axis, needle, value", [
    (2, "", "duration    2", 2),
    (5, "\n[AXIS_3]\nsetting duration\nvalues 4 3\n", "values 4 3", 3),
    (5, "\n[AXIS_3]\nsetting duration\nrange 1 5 1\n", "range 1 5 1", 1),
])
def test_a_duration_ending_before_an_event_is_file_line_in_sweep_and_check(folder, duration,
                                                                          axis, needle, value):
    scenario = folder / "s.scenario"
    text = scenario.read_text().replace("duration    2", "duration    10")
    scenario.write_text(text + EVENT)
    event_line = len(text.splitlines()) + 1
    path = write_sweep(folder, duration=duration, extra=axis)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)
    expected = (f"{path}:{line}: duration {value} s ends before [EVENT_1] at 3 s "
                f"({scenario}:{event_line}): it would never happen")
    checked = CliRunner().invoke(main, ["check", str(path)])
    assert checked.exit_code == 2 and expected in checked.output, checked.output
    out = sweep(folder, path)
    assert out.returncode == 2 and out.stderr.strip() == f"coopsim: {expected}", out.stderr
    assert not (folder / "a.parquet").exists()


def test_durations_after_every_event_load(folder):
    scenario = folder / "s.scenario"
    scenario.write_text(scenario.read_text().replace("duration    2", "duration    10") + EVENT)
    path = write_sweep(folder, duration=5, extra="\n[AXIS_3]\nsetting duration\nvalues 4 6\n")
    assert CliRunner().invoke(main, ["check", str(path)]).exit_code == 0
