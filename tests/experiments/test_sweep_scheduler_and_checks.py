"""coopsim sweep against hostile or mistaken input: a --scheduler that is not a Dask scheduler
(an HTTP server), a malformed address, and Ctrl-C at the terminal (SIGINT to the whole process
group, workers included) on a real LocalCluster."""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import os
import signal
import subprocess
import sys
import threading
import time

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from coopsim.app import sweep as sweep_module
from coopsim.app.cli import main
from coopsim.formats.sweep import load_sweep

from prochelpers import ROOT
from test_sweep import HANG, folder, rows, sweep, write_sweep  # noqa: F401 -- fixture


def _sigint_default() -> None:
    """In the child: Ctrl-C's default, as a terminal's foreground job has it (a suite started
    in the background, `cmd &`, hands its children SIGINT ignored, and Python keeps that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def http_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_an_http_server_as_scheduler_is_one_line_and_exit_2(folder, http_server):
    path = write_sweep(folder)
    out = sweep(folder, path, "--scheduler", http_server)
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


@pytest.mark.slow
def test_ctrl_c_at_the_terminal_prints_only_the_friendly_message(folder):
    """SIGINT to the process group, as a terminal's Ctrl-C sends it, with a LocalCluster's
    worker processes busy: no worker traceback under the message."""
    path = write_sweep(folder, seeds="0-7", duration=40, speeds="0")
    env = {**os.environ, "PYTHONPATH": str(folder)}
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "sweep", str(path),
                             "--workers", "2"], cwd=folder, env=env, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=_sigint_default)
    try:
        table = folder / "a.parquet"
        deadline = time.monotonic() + HANG  # a guard against a hang: waits for a row
        while time.monotonic() < deadline and not (table.exists() and rows(table)):
            assert proc.poll() is None
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=HANG)[1]
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
@pytest.mark.slow
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


# --- keys -------------------------------------------------------------------------------------


def _extended(obj, **extra):
    """``obj`` as an instance of a subclass of its dataclass with more fields (what adding a
    field to a spec in a later coopsim does)."""
    cls = type(obj)
    fields = [(name, type(value), dataclasses.field(default=value))
              for name, value in extra.items()]
    bigger = dataclasses.make_dataclass(cls.__name__, fields, bases=(cls,), frozen=True)
    return bigger(**{f.name: getattr(obj, f.name) for f in dataclasses.fields(cls)})


def test_adding_a_field_to_a_spec_leaves_every_key_unchanged(folder):
    from coopsim.app.sweep import plan

    spec = load_sweep(write_sweep(folder))
    before = [t.key for t in plan(spec, folder / "a.parquet", False)]
    robots = tuple(_extended(r, wheels=4) for r in spec.scenario.robots)
    world = _extended(spec.scenario.world, gravity=9.81)
    scenario = dataclasses.replace(spec.scenario, robots=robots, world=world,
                                   settings=_extended(spec.scenario.settings, turbo=True))
    scenario = _extended(scenario, weather="fair")
    assert scenario.weather == "fair" and scenario.settings.turbo
    assert scenario.world.gravity == 9.81 and scenario.robots[0].wheels == 4
    after = [t.key for t in plan(dataclasses.replace(spec, scenario=scenario),
                                 folder / "a.parquet", False)]
    assert after == before and len(set(before)) == 4


def test_the_key_hashes_the_documented_description(folder):
    from coopsim.app.points import point_description, point_key

    spec = load_sweep(write_sweep(folder))
    point = spec.points()[1]
    text = point_description(spec.scenario, 1, 2.0, point)
    assert text == (
        "coopsim point key 1\nscenario:\n[WORLD]\n[ROBOT_1]\ntype single\nname r1\n"
        "position -3 0 0\ndriver wander cruise 0.3\n[ROBOT_2]\ntype single\nname r2\n"
        "position -3 2 0\ndriver wander cruise 0\n[MONITORS]\nmetric gap distance r1 r2\n"
        "metric probe python sweep_probe:probe r1\nafter 0.5\n[SETTINGS]\ndt 0.02\n"
        "duration 2\nworld:\n[FLOOR]\nsize 10 10 0.1\naxes:\nr1.motors.max_speed = 0.2\n"
        "r2.driver.cruise = 0.1\nseed: 1\nduration: 2.0\n")
    assert point_key(spec.scenario, 1, 2.0, point) == \
        hashlib.sha256(text.encode()).hexdigest()[:24]


def test_keys_survive_comments_spacing_and_moved_files_but_not_a_real_change(folder):
    from coopsim.app.sweep import plan

    def keys():
        return [t.key for t in plan(load_sweep(folder / "a.sweep"), folder / "a.parquet",
                                    False)]
    write_sweep(folder)
    first = keys()
    scenario = folder / "s.scenario"
    text = scenario.read_text()
    scenario.write_text("# a comment\n\n" + text.replace("name        r1", "name r1   # me")
                        .replace(f"file {folder / 'w.world'}", "file w.world"))
    assert keys() == first
    scenario.write_text(text.replace("position    -3 2 0", "position    -3 2.5 0"))
    assert not set(keys()) & set(first)


@pytest.mark.slow
def test_the_committed_amsa_table_has_one_row_per_point_of_its_sweep():
    """studies/amsa.py resumes it: every point of sweeps/amsa_grid.sweep has exactly
    one row (so nothing reruns and no cell pools duplicates)."""
    from coopsim.app.sweep import Table, plan

    table = ROOT / "docs" / "experiments" / "amsa_grid.parquet"
    tasks = plan(load_sweep(ROOT / "sweeps" / "amsa_grid.sweep"), table, False)
    rows = pq.read_table(table).to_pylist()
    assert len(tasks) == 720 and len({t.key for t in tasks}) == 720
    assert sorted(r["key"] for r in rows) == sorted(t.key for t in tasks)
    assert all(Table(table).done(t.key) for t in tasks)
    axes = [a for a in rows[0] if a.count(".") >= 2 or a == "seed"]
    assert len({tuple(r[a] for a in axes) for r in rows}) == 720
