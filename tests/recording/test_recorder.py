"""The recorder in a run: the hook never blocks (dropped steps are counted), --record and
[SETTINGS] record, the CLI's info and export, and a run killed with SIGKILL."""

import json
import signal
import time

import pytest
from mcap.exceptions import McapError
from mcap.reader import NonSeekingReader, make_reader

from coopsim.model.errors import RecordingError
from coopsim.formats.files import load_scenario
from coopsim.recording.reader import Recording
from coopsim.app.run import Run, RunOptions

from rechelpers import RECDATA, record, run_cli, start_cli, stop, wait_endpoint

SCENARIO = RECDATA / "two_robots.scenario"
KILL_WAIT = 20.0  # s for the killed run's file to hold 1.5 s of steps (a failure if longer)


def test_a_full_queue_drops_steps_and_never_waits(tmp_path):
    # a 1-step queue: every step but one taken between two wake-ups of the writer (0.2 s apart)
    # is dropped, and the burst of 400 steps takes far less than 0.2 s a step
    rec, truth = record(tmp_path / "drop.mcap", 400, queue_size=1)
    assert rec.dropped > 0
    assert rec.frames + rec.dropped == len(truth)
    with Recording(tmp_path / "drop.mcap") as r:
        steps = [f.step for f in r.iter_frames()]
        assert r.info().dropped == rec.dropped
    assert len(steps) == rec.frames and steps == sorted(set(steps)) and steps[0] == 0
    by_step = {s.step: s for s in truth}
    with Recording(tmp_path / "drop.mcap") as r:
        for f in r.iter_frames():  # differences skip the dropped steps correctly
            assert abs(f.robots[:, :2] - by_step[f.step].poses[:, :2]).max() <= 0.5e-4 + 1e-9


def _run(spec, tmp_path, **options):
    options = {"network": False, "controllers": False, "speed": 0, "duration": 0.4, **options}
    with Run(spec, RunOptions(**options)) as live:
        live.start()
        assert live.stepper.wait_finished(30)  # finished runs linger: wait, then leave
    return live


def test_run_records_to_the_default_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    live = _run(load_scenario(SCENARIO), tmp_path, record="")
    files = list((tmp_path / "recordings").glob("two_robots-*Z.mcap"))
    assert len(files) == 1 and live.recorder.path.resolve() == files[0].resolve()
    with Recording(files[0]) as r:
        assert r.frame_count == 21 and r.complete  # step 0 and 20 steps of 0.02 s


def test_settings_record_true_records_and_every_thins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _run(load_scenario(RECDATA / "recorded.scenario"), tmp_path, record_every=5, duration=None)
    (path,) = (tmp_path / "recordings").glob("recorded-*.mcap")
    with Recording(path) as r:
        assert [f.step for f in r.iter_frames()] == [0, 5, 10, 15, 20, 25]
        assert r.info().record_every == 5


def test_no_recording_unless_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    live = _run(load_scenario(SCENARIO), tmp_path)
    assert live.recorder is None and not (tmp_path / "recordings").exists()


@pytest.mark.slow
def test_cli_records_then_info_and_export(tmp_path):
    out = tmp_path / "cli.mcap"
    done = run_cli("run", str(SCENARIO), "--headless", "--port", "0", "--no-controllers",
                   "--duration", "1", "--speed", "0", "--record", str(out))
    assert done.returncode == 0, done.stderr
    assert f"recording: {out}" in done.stderr and "51 steps written" in done.stderr
    info = run_cli("info", str(out), "--json")
    assert info.returncode == 0, info.stderr
    facts = json.loads(info.stdout)
    assert facts["frames"] == 51 and facts["robots"] == ["alpha", "beta"]
    assert facts["scenario"] == "two_robots" and facts["complete"] is True
    assert "duration  1.000 s" in run_cli("info", str(out)).stdout
    csv_path = tmp_path / "cli.csv"
    export = run_cli("export", str(out), "--csv", str(csv_path))
    assert export.returncode == 0, export.stderr
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "time,robot,x,y,theta,vx,vy,omega,left_cmd,right_cmd"
    assert len(lines) == 1 + 51 * 2 and lines[1].startswith("0.000000,alpha,-1.0000,-1.0000,")


@pytest.mark.slow
def test_sigkill_leaves_a_recording_info_and_replay_can_read(tmp_path):
    out = tmp_path / "killed.mcap"
    proc = start_cli("run", str(SCENARIO), "--headless", "--port", "0", "--no-controllers",
                     "--speed", "1", "--record", str(out))
    try:
        wait_endpoint(proc)
        recorded = _wait_for_steps(out, 1.5)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        stop(proc)
    assert proc.returncode == -signal.SIGKILL
    info = run_cli("info", str(out), "--json")
    assert info.returncode == 0, info.stderr
    facts = json.loads(info.stdout)
    assert facts["complete"] is False and facts["dropped"] is None
    assert facts["frames"] >= recorded and facts["duration"] >= 1.5
    with open(out, "rb") as f:  # the mcap package reads it up to where it was cut
        blocks = 0
        with pytest.raises(McapError):  # at the cut
            for _, channel, _ in NonSeekingReader(f).iter_messages(log_time_order=False):
                blocks += channel.topic == "/frames"
        assert blocks > 0
    replay = run_cli("replay", str(out), "--headless", "--port", "0", "--exit-at-end",
                     "--speed", "50")
    assert replay.returncode == 0, replay.stderr
    assert f"{facts['frames']} steps" in replay.stderr


def _wait_for_steps(path, seconds: float) -> int:
    """Poll the growing file until it holds ``seconds`` of steps; return how many it holds."""
    deadline = time.monotonic() + KILL_WAIT
    while time.monotonic() < deadline:
        try:
            with Recording(path) as r:
                if r.end >= seconds:
                    return r.frame_count
        except RecordingError:  # no complete chunk on disk yet: try again
            pass
        time.sleep(0.2)
    raise AssertionError(f"{path} did not reach {seconds} s of steps")


@pytest.mark.slow
def test_sigterm_ends_the_run_cleanly_with_a_complete_recording(tmp_path):
    out = tmp_path / "terminated.mcap"
    proc = start_cli("run", str(SCENARIO), "--headless", "--port", "0", "--no-controllers",
                     "--speed", "1", "--record", str(out))
    try:
        wait_endpoint(proc)
        _wait_for_steps(out, 0.5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)  # a hang guard: the clean stop took over 10 s at load 20
    finally:
        stop(proc)
    assert proc.returncode == 0
    facts = json.loads(run_cli("info", str(out), "--json").stdout)
    assert facts["complete"] is True
    with open(out, "rb") as f:
        assert make_reader(f).get_summary() is not None
