"""A lockstep run that waits for nothing (nobody attached, unpaced) steps in the loop's lean
path (``Stepper._run_free``): it still leaves that path for a controller that
attaches, a pause, a queued call, a failed step and its duration."""

import threading

from coopsim.sim.simulation import Simulation
from coopsim.sim.slots import CommandSlots
from coopsim.sim.stepper import Stepper

from helpers import robot, scenario


def _free(**kwargs) -> Stepper:
    return Stepper(Simulation(scenario([robot("a")])), mode="lockstep", speed=0.0, **kwargs)


def _step_now(stepper: Stepper) -> int:
    """The step as the stepper's thread sees it between two steps."""
    return stepper.call(lambda: stepper.snapshot.step).result(5)


def test_a_controller_attaching_mid_run_is_waited_for():
    slots = CommandSlots(lease=60.0)  # a loaded machine's slow test thread: never detached
    stepper, attached = _free(slots=slots), threading.Event()

    def attach(snap):  # on the stepper's thread, inside step 10: a commits for step 11
        if snap.step == 10:
            slots.put("a", "motors", (0.1, 0.1))
            attached.set()
    stepper.hooks.append(attach)
    stepper.start()
    try:
        assert attached.wait(10)
        assert _step_now(stepper) == 11  # step 11 took a's command; 12 waits for the next
        assert _step_now(stepper) == 11
        slots.put("a", "motors", (0.2, 0.2))
        assert stepper.wait_step(11, 5).step >= 12
        slots.detach("a")  # nobody awaited again: the run goes on by itself
        assert stepper.wait_step(200, 10) is not None
    finally:
        stepper.stop()


def test_a_pause_stops_a_free_run_at_once():
    stepper, paused = _free(), threading.Event()

    def pause(snap):  # inside step 20, with no call queued to stop the run by itself
        if snap.step == 20:
            stepper.pause()
            paused.set()
    stepper.hooks.append(pause)
    stepper.start()
    try:
        assert paused.wait(10)
        assert _step_now(stepper) == 20 and _step_now(stepper) == 20
        stepper.resume()
        assert stepper.wait_step(40, 10) is not None
    finally:
        stepper.stop()


def test_a_free_run_stops_at_its_duration_and_a_failed_step_pauses_it():
    stepper = _free()
    stepper.run(duration=0.5)  # dt 0.01 (helpers.scenario): 50 steps, no more
    assert stepper.snapshot.step == 50

    stepper, failed = _free(), threading.Event()

    def broken(snap):
        if snap.step == 5:
            failed.set()
            raise ZeroDivisionError("boom")
    stepper.hooks.append(broken)
    stepper.start()
    try:
        assert failed.wait(10)
        assert stepper.call(lambda: stepper.paused).result(5)
        assert "ZeroDivisionError: boom" in stepper.error and _step_now(stepper) == 5
    finally:
        stepper.stop()


def test_a_driven_lockstep_run_steps_in_the_lean_loop_and_its_lease_still_detaches():
    """A controller's commands are waited for inside the lean loop (the round's tick path
    never runs while it drives), and one that falls silent is detached by its lease there,
    as the round's wait does, after which the run goes on by itself."""
    slots = CommandSlots(lease=0.3)
    stepper, rounds = _free(slots=slots), []
    plain = stepper._guarded_tick
    stepper._guarded_tick = lambda: (rounds.append(stepper.snapshot.step), plain())[1]
    stepper.start()
    try:
        slots.put("a", "motors", (0.1, 0.1))  # attached from here on: each step waits for it
        step = stepper.wait_step(0, 5).step
        for _ in range(20):  # the controller's loop: one command after each step
            slots.put("a", "motors", (0.1, 0.1))
            step = stepper.wait_step(step, 5).step
        assert rounds == []  # every step in the lean loop, the waits included
        # silent now: the lease detaches it and the run goes on without it
        assert stepper.wait_step(step + 50, 30) is not None
        assert "a" not in slots.attached() and rounds == []
    finally:
        stepper.stop()
