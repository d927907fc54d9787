"""Timed events ([EVENT_n]): checked at load at their line, carried out between two steps at
exactly their step, reset keeping the clock, recorded, and listed in /sim state."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from coopsim.client import Client
from coopsim.formats.files import load_scenario, parse_scenario
from coopsim.model.errors import FileFormatError
from coopsim.recording.reader import Recording
from coopsim.recording.writer import Recorder
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from nethelpers import live

HEAD = """\
[WORLD]     file {world}
[ROBOT_1]
type        single
name        r1
position    0 0 0
driver      wander cruise 0.3
[ROBOT_2]
type        team2
name        t
position    -3 3 0
[OBJECT_1]
type        box
size        0.4 0.4 0.4
position    2 -3 0.2
mass        1
[OBJECT_2]
type        cylinder
size        0.5 0.5 0.5
position    -3 -3 0.25
start       false
[TARGET]
red         3 3 0
red         -3 -2 0
[SETTINGS]
dt          0.01
duration    5
"""


def scenario_text(tmp_path, events: str) -> str:
    world = tmp_path / "w.world"
    world.write_text("[FLOOR]\nsize 10 10 0.1\n")
    return HEAD.format(world=world) + textwrap.dedent(events)


def load(tmp_path, events: str):
    path = tmp_path / "s.scenario"
    path.write_text(scenario_text(tmp_path, events))
    return load_scenario(path)


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("event, needle, message", [
    ("at 1\nparam r2.motors.max_speed 0.3\n", "param r2", "no robot named 'r2'"),
    ("at 1\nparam r1.lidar.range 3\n", "param r1", "no module 'lidar'"),
    ("at 1\nparam r1.motors.top 3\n", "param r1", "unknown parameter 'top'"),
    ("at 1\nparam r1.motors.max_speed 9\n", "param r1", "out of range"),
    ("at 1\nparam r1.driver.cruise 99\n", "param r1", "out of range"),
    ("at 1\nparam t_leader.driver.cruise 0.2\n", "param t_leader", "has no driver"),
    ("at -1\n", "at -1", "must be >= 0"),
    ("at 5\n", "[EVENT_1]", "not before the end of the run"),
    ("at 7.5\n", "[EVENT_1]", "duration 5 s"),
    ("at 1\ninsert OBJECT_9\n", "insert", "no object named 'OBJECT_9'"),
    ("at 1\ninsert OBJECT_1\n", "insert", "already in the world"),
    ("at 1\nremove OBJECT_2\n", "remove", "not in the world"),
    ("at 1\nremove target blue\n", "remove", "no blue target"),
    ("at 1\nremove target red 1 1\n", "remove", "no red target at (1, 1)"),
    ("at 1\nreset now\n", "reset", "reset takes no value"),
    ("at 1\ninsert target mauve 1 1 0\n", "insert", "unknown target colour"),
    ("at 1\nparam r1.max_speed 3\n", "param", "robot.module.name"),
    ("param r1.motors.max_speed 0.3\n", "[EVENT_1]", "missing the required key 'at'"),
])
def test_a_bad_event_is_reported_at_its_line(tmp_path, event, needle, message):
    text = scenario_text(tmp_path, "[EVENT_1]\n" + event)
    with pytest.raises(FileFormatError) as err:
        parse_scenario(text, tmp_path / "s.scenario")
    assert err.value.line == line_of(text, needle), err.value
    assert message in err.value.reason


def test_presence_is_followed_through_events_and_resets(tmp_path):
    spec = load(tmp_path, """\
        [EVENT_1]
        at 1
        insert OBJECT_2
        remove OBJECT_1
        [EVENT_2]
        at 2
        reset
        insert OBJECT_2
        """)
    assert [e.name for e in spec.events] == ["EVENT_1", "EVENT_2"]
    with pytest.raises(FileFormatError, match="OBJECT_1 is not in the world then"):
        load(tmp_path, "[EVENT_1]\nat 1\nremove OBJECT_1\n[EVENT_2]\nat 2\nremove OBJECT_1\n")


@pytest.mark.slow
def test_coopsim_check_says_file_line_and_exits_2(tmp_path):
    path = tmp_path / "s.scenario"
    path.write_text(scenario_text(tmp_path, "[EVENT_1]\nat 1\nparam r1.motors.max_speed 9\n"))
    out = subprocess.run([sys.executable, "-m", "coopsim", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    line = line_of(path.read_text(), "max_speed 9")
    assert out.stderr.strip().startswith(f"{path}:{line}: ")
    assert "Traceback" not in out.stderr


def stepper(spec) -> Stepper:
    return Stepper(Simulation(spec), mode="lockstep", speed=0)


def test_a_param_event_applies_between_exactly_its_two_steps(tmp_path):
    spec = load(tmp_path, "[EVENT_1]\nat 0.5\nparam r1.motors.max_speed 0.1\n"
                          "param r1.driver.cruise 0.05\n")
    st = stepper(spec)
    motors = st.sim.world.robot("r1").modules["motors"]
    for _ in range(50):  # step 50 ends at t = 0.5; the event comes before step 51
        st.tick()
    assert motors["max_speed"] == 0.6 and st.snapshot.rules["events"]["events"][0]["done"] is False
    snap = st.tick()
    assert motors["max_speed"] == 0.1
    assert st.sim.drivers.set_param("r1", "cruise", 0.05) == 0.05
    event = snap.rules["events"]["events"][0]
    assert (event["done"], event["step"], event["time"]) == (True, 50, 0.5)
    assert snap.rules["events"]["applied"] == ["EVENT_1"]
    assert st.tick().rules["events"]["applied"] == []


def test_reset_puts_bodies_back_and_keeps_the_clock_and_params(tmp_path):
    spec = load(tmp_path, """\
        [EVENT_1]
        at 0
        param r1.motors.max_speed 0.5
        [EVENT_2]
        at 1.5
        reset
        param r1.driver.cruise 0.2
        """)
    st = stepper(spec)
    start = st.snapshot.poses.copy()
    for _ in range(150):
        st.tick()
    moved = st.snapshot.poses[0].copy()
    assert np.hypot(*(moved[:2] - start[0, :2])) > 0.2  # the wanderer went somewhere
    driver_before = st.sim.drivers._hosted["r1"][0]
    snap = st.tick()  # step 151: the reset came first, then one step from the start
    assert snap.step == 151 and snap.time == pytest.approx(1.51)
    assert np.hypot(*(snap.poses[0, :2] - start[0, :2])) < 0.01
    assert np.allclose(snap.poses[1:], start[1:], atol=1e-3)  # the team2 members too
    assert st.sim.world.robot("r1").modules["motors"]["max_speed"] == 0.5  # kept
    driver_after = st.sim.drivers._hosted["r1"][0]
    assert driver_after is not driver_before and driver_after.p["cruise"] == 0.2
    assert st.sim.snapshot.readings["odometry"][0, :2] == pytest.approx([0, 0], abs=0.01)


def test_insert_and_remove_objects_and_targets(tmp_path):
    spec = load(tmp_path, """\
        [EVENT_1]
        at 0.1
        insert OBJECT_2
        remove OBJECT_1
        insert target blue 1 1 0
        remove target red -3 -2
        [EVENT_2]
        at 0.2
        reset
        """)
    st = stepper(spec)
    assert st.snapshot.objects == ("OBJECT_1",)
    for _ in range(11):
        st.tick()
    snap = st.snapshot
    assert snap.objects == ("OBJECT_2",)
    assert [(t.color, t.position[:2]) for t in snap.targets] == [("red", (3, 3)), ("blue", (1, 1))]
    for _ in range(10):
        st.tick()
    assert st.snapshot.objects == ("OBJECT_1",) and len(st.snapshot.targets) == 2


def test_events_keep_their_times_over_a_dt_change(tmp_path):
    spec = load(tmp_path, "[EVENT_1]\nat 1\nparam r1.motors.max_speed 0.2\n")
    st = stepper(spec)
    for _ in range(50):  # 0.5 s at dt 0.01
        st.tick()
    st.set_dt(0.02)
    for _ in range(25):  # 0.5 s more at dt 0.02: t = 1.0 after step 75
        st.tick()
    assert st.sim.world.robot("r1").modules["motors"]["max_speed"] == 0.6
    st.tick()
    event = st.snapshot.rules["events"]["events"][0]
    assert (event["step"], event["time"]) == (75, pytest.approx(1.0))


def test_events_are_recorded_with_the_layout_they_make(tmp_path):
    spec = load(tmp_path, "[EVENT_1]\nat 0.05\ninsert OBJECT_2\n[EVENT_2]\nat 0.1\nreset\n")
    st = stepper(spec)
    rec = Recorder(tmp_path / "e.mcap", spec, spec.settings, 0, 0.01).attach(st)
    for _ in range(20):
        st.tick()
    rec.close()
    with Recording(tmp_path / "e.mcap") as r:
        frames = list(r.iter_frames())
        applied = [(f.step, f.rules["events"]["applied"]) for f in frames
                   if f.rules["events"]["applied"]]
        layouts = [r.layout(f.layout)["objects"] for f in frames]
    assert applied == [(6, ["EVENT_1"]), (11, ["EVENT_2"])]
    assert [o["name"] for o in layouts[6]] == ["OBJECT_1", "OBJECT_2"]
    assert [o["name"] for o in layouts[11]] == ["OBJECT_1"]
    assert frames[11].robots[0, 0] == pytest.approx(0.0, abs=0.02)  # back at the start


def test_sim_state_lists_done_and_pending_events(tmp_path):
    spec = load(tmp_path, "[EVENT_1]\nat 0.02\nparam r1.motors.max_speed 0.2\n"
                          "[EVENT_2]\nat 4\nreset\n")
    with live(spec, paused=True) as run, Client(run.network.endpoint) as client:
        sim = client.sim()
        sim.step(5)
        events = sim.state()["rules"]["events"]["events"]
    assert [(e["name"], e["done"], e["at"]) for e in events] == [
        ("EVENT_1", True, 0.02), ("EVENT_2", False, 4.0)]
    assert events[0]["step"] == 2 and events[1]["step"] is None
