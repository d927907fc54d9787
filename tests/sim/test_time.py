"""Simulated time and the physics step: one validation everywhere, time summed over steps (a dt
change keeps the past), the recording following a dt change, nothing touching the World once a
run has ended."""

from __future__ import annotations

import pytest

from coopsim.client import Client, RemoteError
from coopsim.model.errors import NotAllowedError, SimulationError
from coopsim.model.specs import DT_RANGE, check_dt
from coopsim.net import protocol as p
from coopsim.recording.reader import Recording
from coopsim.recording.writer import Recorder
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import robot, scenario
from nethelpers import live


def test_a_dt_change_does_not_rewrite_the_past():
    stepper = Stepper(Simulation(scenario([robot()], dt=0.01)))
    for _ in range(1000):
        stepper.tick()
    assert stepper.snapshot.time == pytest.approx(10.0, abs=1e-9)
    stepper.set_dt(0.02)
    stepper.tick()
    assert stepper.snapshot.time == pytest.approx(10.02, abs=1e-9)  # not 1001 * 0.02
    stepper.reset()
    assert (stepper.snapshot.time, stepper.sim.dt) == (0.0, 0.02)


@pytest.mark.parametrize("dt", [DT_RANGE[0] / 2, DT_RANGE[1] * 1.01, 0.0, -0.01])
def test_dt_has_one_rule_in_code_and_on_the_network(dt):
    why = check_dt(dt)
    assert why.startswith(f"dt must be between {DT_RANGE[0]:g} and {DT_RANGE[1]:g} s")
    with pytest.raises(SimulationError, match="dt must be between"):
        Simulation(scenario([robot()]), dt=dt)
    with live(scenario([robot()]), paused=True) as run, Client(run.network.endpoint) as c:
        with pytest.raises(RemoteError) as info:
            c.sim().set_dt(dt)
        assert info.value.code == p.OUT_OF_RANGE and info.value.text == why
        assert c.sim().set_dt(DT_RANGE[0])["dt"] == DT_RANGE[0]


def test_the_recording_follows_a_dt_change(tmp_path):
    spec = scenario([robot()], dt=0.01)
    stepper = Stepper(Simulation(spec))
    rec = Recorder(tmp_path / "dt.mcap", spec, spec.settings, 0, 0.01).attach(stepper)
    for k in range(60):
        if k == 30:
            stepper.set_dt(0.04)
        stepper.tick()
    rec.close()
    with Recording(tmp_path / "dt.mcap") as r:
        frames = list(r.iter_frames())
    assert [f.dt for f in frames[1:31]] == [0.01] * 30 and frames[31].dt == 0.04
    assert frames[-1].time == pytest.approx(0.3 + 30 * 0.04)
    assert frames[-1].position - frames[-2].position == pytest.approx(0.04)


def test_after_the_duration_no_other_thread_touches_the_world():
    stepper = Stepper(Simulation(scenario([robot()])), mode="lockstep", speed=0)
    stepper.start(duration=0.2)
    assert stepper.wait_finished(10)
    assert stepper.stats().finished == "duration 0.2 s reached"
    thread = stepper.call(lambda: __import__("threading").current_thread().name).result(2)
    assert thread == "coopsim-stepper"  # served by the lingering stepper, not the caller
    with pytest.raises(NotAllowedError, match="finished"):
        stepper.call(stepper.resume).result(2)
    # a reset starts it over: read on the stepper's thread in the same call, since the 20 steps
    # of the new run may all be done before this thread looks again
    assert stepper.call(lambda: (stepper.reset(), stepper.finished)[1]).result(2) == ""
    assert stepper.wait_finished(10) and stepper.finished == "duration 0.2 s reached"
    stepper.stop()
    with pytest.raises(NotAllowedError, match="stopped"):
        stepper.call(lambda: None).result(2)


@pytest.mark.parametrize("limit", [{"duration": 0.2}, {"max_steps": 20}])
def test_the_step_that_reaches_the_limit_finishes_the_run_with_its_snapshot(limit):
    """The run says it finished as it publishes the step that reached its duration (or step
    count), as a rule's ending does: nothing served between that step and the finish (a
    command, a state read) sees the last step without the finish."""
    stepper = Stepper(Simulation(scenario([robot()])), mode="lockstep", speed=0)
    seen = []
    stepper.hooks.append(lambda snap: seen.append((snap.step, stepper.finished)))
    stepper.start(**limit)
    assert stepper.wait_finished(10)
    stepper.stop()
    assert seen[-1] == (20, "duration 0.2 s reached" if "duration" in limit else "20 steps taken")
    assert all(not why for _, why in seen[:-1]) and len(seen) == 20


def test_a_finished_run_refuses_motion_and_ends_network_controllers():
    with live(scenario([robot()], mode="lockstep"), duration=0.5) as run, \
            Client(run.network.endpoint) as client:
        assert run.stepper.wait_finished(10)
        with pytest.raises(RemoteError) as info:
            client.robot("r1").motors.set_speeds(0.1, 0.1)
        assert info.value.code == p.NOT_ALLOWED and "finished" in info.value.text
        assert client.sim().state()["finished"] == "duration 0.5 s reached"
