"""The stepper: phase order, realtime pacing and deadline misses, lockstep waiting and leases,
pause / single step / reset, and bit-for-bit determinism."""

import threading

import numpy as np
import pytest

from coopsim.sim.clock import ManualClock
from coopsim.sim.slots import CommandSlots
from coopsim.model.errors import SimulationError
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario


def test_tick_runs_phases_in_order():
    sim = Simulation(scenario([robot()]))
    calls = []
    for phase in ("command", "actuate", "physics", "sense", "apply_rules"):
        original = getattr(sim, phase)

        def spy(*args, _original=original, _phase=phase):
            calls.append(_phase)
            return _original(*args)
        setattr(sim, phase, spy)
    stepper = Stepper(sim)
    stepper.hooks.append(lambda snap: calls.append("hooks"))
    stepper.tick()
    assert calls == ["command", "actuate", "physics", "sense", "apply_rules", "hooks"]


def test_realtime_paces_to_the_clock_and_counts_missed_deadlines():
    clock = ManualClock()
    stepper = Stepper(Simulation(scenario([robot()], dt=0.01)), clock=clock, mode="realtime")
    stepper.hooks.append(lambda snap: clock.advance(0.005 if snap.step < 10 else 0.05))
    stepper.run(max_steps=20)
    assert stepper.snapshot.step == 20
    assert stepper.missed == 10  # steps 10..19 took 50 ms against a 10 ms period
    assert clock.now() >= 11 * 0.05


def test_speed_factor_scales_the_period():
    clock = ManualClock()
    stepper = Stepper(Simulation(scenario([robot()], dt=0.01)), clock=clock, speed=2.0)
    stepper.run(max_steps=100)
    assert clock.now() == pytest.approx(0.5, abs=1e-6) and stepper.missed == 0
    assert stepper.stats().rtf == pytest.approx(2.0, rel=0.01)


def test_lockstep_waits_for_every_attached_controller():
    slots = CommandSlots()
    stepper = Stepper(Simulation(scenario([robot("a"), robot("b", 2, 0)])), mode="lockstep",
                      slots=slots)
    slots.put("a", "motors", (0.1, 0.1))
    slots.put("b", "motors", (0.1, 0.1))
    stepper.start()
    try:
        assert stepper.wait_step(0, 2.0) is not None
        step = stepper.snapshot.step
        slots.put("a", "motors", (0.1, 0.1))  # b has not committed: no further step
        assert stepper.wait_step(step, 0.3) is None
        slots.put("b", "motors", (0.1, 0.1))
        assert stepper.wait_step(step, 2.0).step == step + 1
    finally:
        stepper.stop()


def test_a_silent_lockstep_controller_is_detached_after_its_lease():
    slots = CommandSlots(lease=0.2)
    stepper = Stepper(Simulation(scenario([robot("a")])), mode="lockstep", slots=slots)
    slots.put("a", "motors", (0.1, 0.1))
    stepper.start()
    try:
        assert stepper.wait_step(0, 2.0) is not None
        assert stepper.wait_step(stepper.snapshot.step + 5, 3.0) is not None  # runs on
        assert slots.attached() == [] and "lease" in slots.detached_log[0]
    finally:
        stepper.stop()


def test_pause_single_step_resume_and_reset():
    stepper = Stepper(Simulation(scenario([robot()])), speed=0.0)
    stepper.pause()
    stepper.start()
    try:
        assert stepper.wait_step(0, 0.3) is None
        stepper.call(stepper.step, 3).result(2)
        assert stepper.wait_step(2, 2.0).step == 3
        assert stepper.wait_step(3, 0.3) is None  # still paused
        stepper.call(stepper.resume).result(2)
        assert stepper.wait_step(50, 5.0) is not None
        snap = stepper.call(stepper.reset).result(2)
        assert snap.step == 0 and snap.time == 0.0
    finally:
        stepper.stop()


def test_calls_run_on_the_stepper_thread():
    stepper = Stepper(Simulation(scenario([robot()])), speed=0.0)
    stepper.start()
    try:
        name = stepper.call(lambda: threading.current_thread().name).result(2)
        assert name == "coopsim-stepper"
        with pytest.raises(SimulationError):
            stepper.call(stepper.sim.world.add_object, box("X", 99, 0)).result(2)
        assert stepper.running  # a failed call does not stop the loop
    finally:
        stepper.stop()


def test_mode_and_speed_are_validated():
    stepper = Stepper(Simulation(scenario([robot()])))
    with pytest.raises(SimulationError):
        stepper.set_mode("fast")
    with pytest.raises(SimulationError):
        stepper.set_speed(-1)
    with pytest.raises(SimulationError):
        stepper.step(0)


def _scripted_run(seed):
    scn = scenario([robot("a", params=[("sonar", "noise", 0.05), ("gps", "lost", 30.0)]),
                    robot("b", 1.5, 0.5, 3.0), robot("t", 0, -3, type="team2")],
                   [box("L", 1, -1, size=(0.3, 0.3), mass=0.4)], seed=seed)
    stepper = Stepper(Simulation(scn), mode="lockstep")
    rng = np.random.default_rng(123)
    for k in range(300):
        for name in ("a", "b", "t_leader", "t_helper"):
            if k % 7 == 0:
                stepper.slots.put(name, "motors", tuple(rng.uniform(-0.5, 0.5, 2)), attach=False)
        stepper.tick()
    snap = stepper.snapshot
    return np.concatenate([snap.poses.ravel(), snap.object_poses.ravel(),
                           *(snap.readings[k].ravel() for k in sorted(snap.readings))])


def test_same_scenario_seed_and_commands_give_bit_identical_runs():
    first, second = _scripted_run(5), _scripted_run(5)
    assert first.tobytes() == second.tobytes()
    assert first.tobytes() != _scripted_run(6).tobytes()  # the seed matters (noise)


def test_reset_restores_the_scenario_and_seed_bit_for_bit():
    scn = scenario([robot(params=[("gps", "noise", 0.1)])], seed=3)
    stepper = Stepper(Simulation(scn), mode="lockstep")

    def go():
        for _ in range(50):
            stepper.slots.put("r1", "motors", (0.3, 0.2), attach=False)
            stepper.tick()
        return stepper.snapshot.readings["gps"].tobytes(), stepper.snapshot.poses.tobytes()
    first = go()
    stepper.reset()
    assert go() == first


def test_a_failing_step_pauses_the_run_instead_of_killing_the_thread():
    stepper = Stepper(Simulation(scenario([robot()])), speed=0.0)

    def broken(snap):
        if snap.step == 5:
            raise ZeroDivisionError("boom")
    stepper.hooks.append(broken)
    stepper.start()
    try:
        assert stepper.wait_step(4, 2.0) is not None
        deadline = 50
        while not stepper.paused and deadline:
            stepper.wait_step(stepper.snapshot.step, 0.05)
            deadline -= 1
        assert stepper.paused and "ZeroDivisionError: boom" in stepper.error
        assert stepper.running and stepper.call(lambda: "alive").result(2) == "alive"
    finally:
        stepper.stop()


def test_the_detach_log_keeps_only_the_latest():
    from coopsim.sim.slots import DETACHED_KEPT, CommandSlots

    slots = CommandSlots()
    for k in range(DETACHED_KEPT + 500):  # controllers that come and go for a long run
        slots.put(f"r{k}", "motors", (0.1, 0.1))
        assert slots.detach(f"r{k}", "asked to")
    assert len(slots.detached_log) == DETACHED_KEPT
    assert slots.detached_log[-1] == f"r{DETACHED_KEPT + 499}: asked to"


@pytest.mark.parametrize("stop", ["pause", "reset", "resume"])
def test_pause_reset_and_resume_drop_the_steps_a_long_step_still_owes(stop):
    stepper = Stepper(Simulation(scenario([robot()])), speed=0.0)
    stepper.pause()
    stepper.start()
    try:
        target, cuts = stepper.call(lambda: (stepper.step(1_000_000), stepper.step_cuts)).result(5)
        assert target == 1_000_000
        assert stepper.wait_step(20, 60.0) is not None, "the steps are under way"
        stepper.call(getattr(stepper, stop)).result(5)
        if stop == "resume":
            stepper.call(stepper.pause).result(5)
        # the steps were dropped: a waiter for them is answered at once, not at its timeout
        snap = stepper.wait_steps(target, cuts, 600.0)
        assert snap.step < target and stepper.step_cuts != cuts
        at = stepper.snapshot.step
        for _ in range(5):  # five trips through the loop: on a run still stepping, 5+ steps
            stepper.call(lambda: None).result(5)
        assert stepper.snapshot.step == at and stepper.paused
        if stop == "reset":
            assert at == 0
    finally:
        stepper.stop()
