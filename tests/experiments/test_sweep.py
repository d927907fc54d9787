"""coopsim sweep on real Dask: a LocalCluster, a real scheduler with two worker processes,
resume after Ctrl-C, failure rows, every bad input, an unreachable scheduler, the missing
extra. Kept small: a few points of a few seconds of sim time."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from coopsim.formats.sweep import load_sweep
from coopsim.model.errors import FileFormatError
from coopsim.recording.reader import Recording

DASK = str(Path(sys.executable).parent / "dask")

SCENARIO = """\
[WORLD]     file {world}
[ROBOT_1]
type        single
name        r1
position    -3 0 0
driver      wander cruise 0.3
[ROBOT_2]
type        single
name        r2
position    -3 2 0
driver      wander cruise 0
[MONITORS]
metric      gap     distance r1 r2
metric      probe   python sweep_probe:probe r1
after       0.5
[SETTINGS]
dt          0.02
duration    2
"""

PROBE = """\
def probe(snap, name):
    x = float(snap.poses[snap.index[name], 0])
    if x > -2.95:  # moved: only runs where r1 may drive get here
        raise ValueError(f"probe: r1 left the start ({x:.3f})")
    return x
"""

SWEEP = """\
[SWEEP]
scenario    s.scenario
seeds       {seeds}
duration    {duration}
metrics     gap

[AXIS_1]
param       r1.motors.max_speed
values      {speeds}

[AXIS_2]
param       r2.driver.cruise
values      0.1
"""


def _sigint_default() -> None:
    """In the child: Ctrl-C's default, as a terminal's foreground job has it (a suite started
    in the background, `cmd &`, hands its children SIGINT ignored, and Python keeps that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))  # the probe metric imports in this process too
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 10 10 0.1\n")
    (tmp_path / "s.scenario").write_text(SCENARIO.format(world=tmp_path / "w.world"))
    (tmp_path / "sweep_probe.py").write_text(PROBE)
    return tmp_path


def write_sweep(folder, name="a.sweep", seeds="0 1", duration=2, speeds="0 0.2", extra=""):
    path = folder / name
    path.write_text(SWEEP.format(seeds=seeds, duration=duration, speeds=speeds) + extra)
    return path


HANG = 600  # s: a sweep still running after this hangs (a guard, not a speed bound)


def sweep(folder, *args, timeout=HANG):
    """``coopsim sweep ARGS`` as a real process in ``folder``; fails the test on a hang.

    Why only a hang: how soon a sweep gives up on a scheduler is stated in its one line
    ("within 6 s", the connect timeout) and checked there; the wall time around it is mostly
    starting Python, importing Dask and running points, which a loaded machine stretches
    without limit (an unreachable scheduler took 35 s at load 5-17 against a 30 s bound, a
    resumed sweep more than the 120 s the helper allowed at load 15).
    """
    env = {**os.environ, "PYTHONPATH": str(folder)}
    try:
        return subprocess.run([sys.executable, "-m", "coopsim", "sweep", *map(str, args)],
                              capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=folder)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the sweep did not end within {timeout} s: it hangs (a guard against a "
                    "hang, not a speed bound)")


def rows(path):
    return pq.read_table(path).to_pylist()


@pytest.mark.slow
def test_a_localcluster_sweep_writes_rows_csv_plots_and_recordings(folder):
    path = write_sweep(folder, speeds="0 0.0001")
    out = sweep(folder, path, "--workers", 2, "--csv", "--plot", "--record")
    assert out.returncode == 0, out.stderr
    table = rows(folder / "a.parquet")
    assert len(table) == 4 and {r["status"] for r in table} == {"ok"}
    assert sorted((r["r1.motors.max_speed"], r["seed"]) for r in table) == [
        (0.0, 0), (0.0, 1), (0.0001, 0), (0.0001, 1)]
    one = table[0]
    assert one["steps"] == 100 and one["sim_time"] == pytest.approx(2.0)
    assert one["gap.max"] >= one["gap.mean"] >= 0 and one["gap.max_after"] <= one["gap.max"]
    assert "probe.max" not in one  # only the metrics the sweep keeps
    csv_lines = (folder / "a.csv").read_text().splitlines()
    assert len(csv_lines) == 5 and csv_lines[0].startswith("key,")
    plots = sorted(p.name for p in (folder / "a-plots").iterdir())
    assert plots == ["gap-vs-r1.motors.max_speed.png", "gap-vs-r2.driver.cruise.png"]
    assert (folder / "a-plots" / plots[0]).read_bytes()[:4] == b"\x89PNG"
    recordings = list((folder / "a-recordings").glob("*.mcap"))
    assert len(recordings) == 4 and all(Path(r["recording"]).exists() for r in table)
    with Recording(recordings[0]) as rec:  # the engine it ran on, the scenario naming none
        assert json.loads(rec.meta["settings"])["engine"] == "pymunk"
    again = sweep(folder, path, "--workers", 1)  # every point done: nothing runs
    assert again.returncode == 0 and "0 run now" in again.stderr


@pytest.mark.slow
def test_a_failing_point_gets_an_error_row_and_the_exit_status_counts(folder):
    path = write_sweep(folder, seeds="0", speeds="0 0.5")
    out = sweep(folder, path, "--workers", 1)
    assert out.returncode == 1, out.stderr
    assert "1 failed" in out.stderr.splitlines()[-1]
    table = {r["r1.motors.max_speed"]: r for r in rows(folder / "a.parquet")}
    assert table[0.0]["status"] == "ok"
    assert table[0.5]["status"] == "error" and "r1 left the start" in table[0.5]["error"]


@pytest.mark.slow
def test_resume_after_ctrl_c_runs_only_what_is_missing(folder):
    path = write_sweep(folder, seeds="0-7", duration=40, speeds="0")
    env = {**os.environ, "PYTHONPATH": str(folder)}
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "sweep", str(path),
                             "--workers", "1"], cwd=folder, env=env, stderr=subprocess.PIPE,
                            text=True, preexec_fn=_sigint_default)
    table = folder / "a.parquet"
    deadline = time.monotonic() + HANG  # a guard against a hang: waits for a row
    while time.monotonic() < deadline and not (table.exists() and rows(table)):
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=HANG)[1]
    assert proc.returncode == 130, err
    first = {r["key"]: r for r in rows(table)}
    assert 0 < len(first) < 8, err
    out = sweep(folder, path, "--workers", 1)
    assert out.returncode == 0, out.stderr
    assert f"{8 - len(first)} run now" in out.stderr
    final = {r["key"]: r for r in rows(table)}
    assert len(final) == 8
    assert all(final[k]["wall_time"] == r["wall_time"] for k, r in first.items())  # kept


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_sweep_on_a_real_scheduler_with_two_workers(folder):
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(folder)}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], **quiet)]
    try:
        for name in ("w1", "w2"):
            procs.append(subprocess.Popen([DASK, "worker", address, "--nthreads", "1",
                                           "--name", name, "--no-dashboard"], **quiet))
        path = write_sweep(folder, seeds="0-2", speeds="0")
        out = sweep(folder, path, "--scheduler", address)
        assert out.returncode == 0, out.stderr
        table = rows(folder / "a.parquet")
        assert len(table) == 3 and {r["status"] for r in table} == {"ok"}
        assert all(p.poll() is None for p in procs)  # the cluster outlives the sweep
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_line_within_10_s(folder):
    path = write_sweep(folder)
    out = sweep(folder, path, "--scheduler", f"tcp://127.0.0.1:{free_port()}")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Dask scheduler" in lines[0], out.stderr
    assert "within 6 s" in lines[0]  # CONNECT_TIMEOUT: under the 10 s asked


@pytest.mark.parametrize("change, needle, message", [
    (("r1.motors.max_speed", "r1.motors.top"), "param       r1.motors.top",
     "unknown parameter 'top'"),
    (("r1.motors.max_speed", "r9.motors.max_speed"), "r9.", "no robot named 'r9'"),
    (("r1.motors.max_speed", "r1.lidar.range"), "r1.lidar", "has no module 'lidar'"),
    (("0 0.2", ""), "values", "an empty axis"),
    (("0 0.2", "0 9"), "values", "out of range"),
    (("values      0 0.2", "range       1 0 0.5"), "range", "an empty axis"),
    (("metrics     gap", "metrics     nope"), "metrics", "no metric 'nope'"),
    (("seeds       0 1", "seeds       3-1"), "seeds", "A <= B"),
    (("scenario    s.scenario", "scenario    missing.scenario"), "scenario ", "not found"),
])
def test_a_bad_sweep_is_reported_at_its_line(folder, change, needle, message):
    path = write_sweep(folder)
    text = path.read_text().replace(*change)
    path.write_text(text)
    with pytest.raises(FileFormatError) as err:
        load_sweep(path)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if needle in t)
    assert (err.value.path, err.value.line) == (str(path), line), err.value
    assert message in err.value.reason


@pytest.mark.slow
def test_a_base_scenario_that_does_not_load_is_its_own_file_line(folder):
    (folder / "s.scenario").write_text("[WORLD]\nfile w.world\n[ROBOT_1]\ntype single\n")
    path = write_sweep(folder)
    out = sweep(folder, path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip() == f"coopsim: {folder / 's.scenario'}:3: [ROBOT_1] is missing " \
                                 "the required key 'name'"
    assert not (folder / "a.parquet").exists()  # nothing started


@pytest.mark.slow
def test_a_bad_value_on_the_command_line_exits_2_before_any_task(folder):
    path = write_sweep(folder, speeds="0 9")
    out = sweep(folder, path)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "0 9" in t)
    assert out.returncode == 2 and out.stderr.startswith(f"coopsim: {path}:{line}: ")
    assert not (folder / "a.parquet").exists()


@pytest.mark.slow
def test_without_the_extra_sweep_names_the_pip_command_and_run_needs_none(folder):
    code = ("import sys; sys.modules['distributed'] = None; sys.modules['pyarrow'] = None\n"
            "from coopsim.app.cli import main\n"
            f"main(['sweep', {str(write_sweep(folder))!r}])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2
    assert "needs distributed, pyarrow" in out.stderr and "pip install" in out.stderr
    probe = ("import sys, coopsim, coopsim.app.cli, coopsim.app.run, coopsim.app.console\n"
             "from coopsim.app.cli import main\n"
             "heavy = [m for m in ('dask', 'distributed', 'pyarrow', 'matplotlib') "
             "if m in sys.modules]\nprint(heavy)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_points_grid_zip_settings_and_keys(folder):
    from coopsim.app.points import point_key, resolve
    from coopsim.app.sweep import plan

    extra = "\n[AXIS_3]\nsetting dt\nrange 0.01 0.03 0.01\n"
    path = write_sweep(folder, speeds="0 0.2 0.4", extra=extra)
    spec = load_sweep(path)
    assert len(spec.points()) == 9 and spec.points()[1] == {
        "r1.motors.max_speed": 0.0, "r2.driver.cruise": 0.1, "setting.dt": 0.02}
    zipped = path.read_text().replace("seeds       0 1", "seeds 0 1\nmode zip").replace(
        "values      0.1", "values 0.1 0.2 0.3")
    path.write_text(zipped)
    spec = load_sweep(path)
    assert [p["setting.dt"] for p in spec.points()] == [0.01, 0.02, 0.03]
    point = spec.points()[2]
    scenario = resolve(spec.scenario, spec.axes, point)
    assert scenario.settings.dt == 0.03
    assert scenario.robots[0].params[-1].value == 0.4
    assert dict(scenario.robots[1].drivers[0].settings)["cruise"] == 0.3
    keys = [t.key for t in plan(spec, folder / "a.parquet", False)]
    assert len(set(keys)) == 6  # 3 points x 2 seeds
    assert keys == [t.key for t in plan(load_sweep(path), folder / "a.parquet", False)]
    assert point_key(scenario, 0, 2.0) != point_key(scenario, 0, 3.0)
    path.write_text(zipped.replace("values 0.1 0.2 0.3", "values 0.1 0.2"))
    with pytest.raises(FileFormatError, match="mode zip needs axes of one length"):
        load_sweep(path)
