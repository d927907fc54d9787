"""Monitors ([MONITORS]): metrics every step against hand computation, their summary in the
CLI, /sim state, the state stream, the recording, coopsim info and coopsim export."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import zmq

from coopsim.client import Client
from coopsim.formats.files import load_scenario, parse_scenario
from coopsim.model.errors import FileFormatError
from coopsim.net import protocol as p
from coopsim.net.protocol import Message
from coopsim.net.statestream import decode_state
from coopsim.recording.writer import Recorder
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from nethelpers import live

SCENARIO = """\
[WORLD]     file {world}
[ROBOT_1]
type        single
name        a
position    0 0 0
driver      wander cruise 0.3
[ROBOT_2]
type        single
name        b
position    -2 1 0
[OBJECT_1]
type        box
size        0.4 0.4 0.4
position    3 -3 0.2
[TARGET]
red         0.5 0 0
[MONITORS]
metric      gap       distance a b
metric      to_box    distance b OBJECT_1
metric      v         speed a
metric      home      at_target a 0.3 red
metric      near      min_sonar a
metric      custom    python monitor_probe:x_of a
after       0.5
[SETTINGS]
dt          0.01
duration    1
seed        3
"""

PROBE = "def x_of(snap, name):\n    return float(snap.poses[snap.index[name], 0]) * 10\n"


@pytest.fixture
def spec_path(tmp_path, monkeypatch):
    (tmp_path / "monitor_probe.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 10 10 0.1\n")
    path = tmp_path / "m.scenario"
    path.write_text(SCENARIO.format(world=tmp_path / "w.world"))
    return path


def run(spec, steps):
    st = Stepper(Simulation(spec), mode="lockstep", speed=0)
    snaps = [st.tick() for _ in range(steps)]
    return st, snaps


def test_metrics_match_hand_computation_every_step(spec_path):
    st, snaps = run(load_scenario(spec_path), 100)
    for snap in snaps[::7]:
        m = snap.rules["monitors"]["metrics"]
        a, b = snap.poses[snap.index["a"]], snap.poses[snap.index["b"]]
        assert m["gap"] == pytest.approx(math.dist(a[:2], b[:2]))
        assert m["to_box"] == pytest.approx(math.dist(b[:2], (3, -3)), abs=1e-9)
        assert m["v"] == pytest.approx(math.hypot(*snap.velocities[0, :2]))
        assert m["home"] == float(math.dist(a[:2], (0.5, 0)) <= 0.3)
        assert m["near"] == pytest.approx(snap.readings["sonar"][0].min())
        assert m["custom"] == pytest.approx(a[0] * 10)


def test_summary_is_max_mean_final_and_max_after(spec_path):
    st, snaps = run(load_scenario(spec_path), 100)
    values = np.array([s.rules["monitors"]["metrics"]["v"] for s in snaps])
    times = np.array([s.time for s in snaps])
    got = snaps[-1].rules["monitors"]["summary"]["v"]
    assert got["max"] == pytest.approx(values.max())
    assert got["mean"] == pytest.approx(values.mean())
    assert got["final"] == values[-1]
    assert got["max_after"] == pytest.approx(values[times >= 0.5 - 1e-9].max())
    assert values[times < 0.5].max() > got["max_after"] or values.max() == got["max_after"]
    home = [s.rules["monitors"]["metrics"]["home"] for s in snaps]
    assert set(home) <= {0.0, 1.0} and 1.0 in home  # the wanderer crosses the red target


def test_a_metric_that_cannot_be_computed_is_null_and_left_out(spec_path):
    text = spec_path.read_text().replace("[OBJECT_1]", "[OBJECT_1]\nstart false")
    spec = parse_scenario(text, spec_path)
    st, snaps = run(spec, 5)
    assert snaps[-1].rules["monitors"]["metrics"]["to_box"] is None
    assert snaps[-1].rules["monitors"]["summary"]["to_box"] == {
        "max": None, "mean": None, "final": None, "max_after": None}
    json.dumps(snaps[-1].rules, allow_nan=False)  # strict JSON: no NaN on the wire


@pytest.mark.parametrize("line, message", [
    ("metric x distance a", "takes 2 arguments"),
    ("metric x distance a ghost", "no robot or object named 'ghost'"),
    ("metric x speed OBJECT_1", "no robot named 'OBJECT_1'"),
    ("metric x lidar a", "unknown metric kind 'lidar'"),
    ("metric x at_target a -1", "radius must be > 0"),
    ("metric x at_target a 0.5 mauve", "colour must be a target colour"),
    ("metric x python nowhere_at_all:f", "cannot import nowhere_at_all:f"),
    ("metric x python monitor_probe", "needs module:function"),
    ("metric gap speed a", "already defined at line"),
    ("metric 2x speed a", "must be an identifier"),
])
def test_a_bad_metric_is_reported_at_its_line(spec_path, line, message):
    text = spec_path.read_text().replace("after       0.5", f"{line}\nafter 0.5")
    with pytest.raises(FileFormatError) as err:
        parse_scenario(text, spec_path)
    assert err.value.line == text.splitlines().index(line) + 1
    assert message in err.value.reason


@pytest.mark.slow
def test_cli_summary_info_and_export(spec_path, tmp_path):
    rec = tmp_path / "m.mcap"
    out = subprocess.run([sys.executable, "-m", "coopsim", "run", str(spec_path), "--headless",
                          "--mode", "lockstep", "--port", "0", "--record", str(rec)],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    table = out.stdout[out.stdout.index("metric "):].splitlines()
    assert table[0].split()[:4] == ["metric", "max", "mean", "final"]
    assert "max after 0.5 s" in table[0]
    assert [row.split()[0] for row in table[1:]] == [
        f"monitors.{m}" for m in ("gap", "to_box", "v", "home", "near", "custom")]
    info = subprocess.run([sys.executable, "-m", "coopsim", "info", str(rec), "--json"],
                          capture_output=True, text=True, timeout=60)
    facts = json.loads(info.stdout)
    assert facts["metrics_after"] == 0.5 and set(facts["metrics"]) >= {"monitors.gap",
                                                                        "monitors.v"}
    text = subprocess.run([sys.executable, "-m", "coopsim", "info", str(rec)],
                          capture_output=True, text=True, timeout=60).stdout
    assert "max after 0.5 s" in text and "\nmonitors.gap " in text
    csv_out = tmp_path / "m.csv"
    done = subprocess.run([sys.executable, "-m", "coopsim", "export", str(rec), "--csv",
                           str(csv_out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(open(tmp_path / "m.metrics.csv")))
    assert len(rows) == 101 and rows[0].keys() >= {"time", "step", "sim_time", "monitors.gap",
                                                   "monitors.custom"}
    last = rows[-1]
    assert float(last["monitors.gap"]) == pytest.approx(
        facts["metrics"]["monitors.gap"]["final"], rel=1e-9)
    assert last["step"] == "100" and rows[1]["monitors.to_box"] != ""


def test_metrics_in_sim_state_and_on_the_state_stream(spec_path):
    spec = load_scenario(spec_path)
    with live(spec, paused=True, publish_rate=0) as run_, Client(run_.network.endpoint) as client:
        ctx = zmq.Context.instance()
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.SUBSCRIBE, p.STATE_TOPIC)
        sub.connect(run_.network.publisher.endpoint)
        sim = client.sim()
        frame = None
        for _ in range(50):
            sim.step(1)
            if sub.poll(200):
                frame = decode_state(Message.from_wire(sub.recv_multipart()[1]))
                if frame.step > 0:
                    break
        state = sim.state()
        sub.close()
    assert state["metrics"] == ["monitors.gap", "monitors.to_box", "monitors.v",
                                "monitors.home", "monitors.near", "monitors.custom"]
    assert set(state["rules"]["monitors"]["summary"]) == {"gap", "to_box", "v", "home", "near",
                                                          "custom"}
    assert frame is not None and frame.metrics.shape == (6,)
    assert frame.metrics[0] == pytest.approx(math.dist(frame.robots[0, :2], frame.robots[1, :2]))


def test_a_recorded_step_carries_the_metrics(spec_path, tmp_path):
    from coopsim.recording.reader import Recording

    spec = load_scenario(spec_path)
    st = Stepper(Simulation(spec), mode="lockstep", speed=0)
    rec = Recorder(tmp_path / "r.mcap", spec, spec.settings, 3, 0.01).attach(st)
    snaps = [st.tick() for _ in range(30)]
    rec.close()
    with Recording(tmp_path / "r.mcap") as r:
        frames = list(r.iter_frames())
    assert frames[-1].rules["monitors"] == json.loads(json.dumps(snaps[-1].rules["monitors"]))
