"""A lease that cannot hold a run hostage, on the command book with a manual
clock: a controller alive but slow (one command every 2.5 s under the 3 s lease) is detached
once the steps waited for it alone pass its patience, and is refused until it claims again; a
fast one beside it never is; a slow controller alone is never held against itself; time the
simulator lost (no look of the stepper) does not count."""

from __future__ import annotations

import pytest

from coopsim.model.errors import NotAllowedError
from coopsim.sim.clock import ManualClock
from coopsim.sim.slots import PATIENCE_WINDOW, CommandSlots, Owner

SLOW, FAST = Owner("slow", "the slow connection", 1), Owner("fast", "the fast connection", 2)
LOOK = 0.05  # s between two looks of a waiting stepper


def _wait(slots: CommandSlots, clock: ManualClock, seconds: float) -> list[str]:
    """The stepper waits ``seconds`` for commands, looking every LOOK; returns who expired."""
    gone = []
    for _ in range(round(seconds / LOOK)):
        clock.advance(LOOK)
        gone += slots.expire()
    return gone


def _step(slots, clock, slow_delay: float, fast=True) -> list[str]:
    """One lockstep step: the fast controller commits at once, the slow one after
    ``slow_delay`` s (unless detached meanwhile); the step is taken once all are in."""
    slots.take()
    clock.advance(0.001)
    if fast:
        slots.put("fast", "motors", (0.1, 0.1), owner=FAST)
    gone = _wait(slots, clock, slow_delay)
    if "slow" in slots.attached():
        slots.put("slow", "motors", (0.1, 0.1), owner=SLOW)
    assert slots.ready()
    return gone


def _two_attached() -> tuple[ManualClock, CommandSlots]:
    """A manual clock and slots (lease 3 s) with controllers FAST and SLOW attached."""
    clock = ManualClock()
    slots = CommandSlots(clock, lease=3.0)
    slots.put("fast", "motors", (0, 0), owner=FAST)
    slots.put("slow", "motors", (0, 0), owner=SLOW)
    return clock, slots


def test_a_slow_but_alive_controller_is_detached_and_a_fast_one_never():
    clock, slots = _two_attached()
    steps = 0
    while "slow" in slots.attached():
        assert steps < 5, "a controller holding every step 2.5 s was never detached"
        assert _step(slots, clock, 2.5) in ([], ["slow"])
        steps += 1
    assert steps == 2  # 2.5 s held, then 0.5 s more passes the 3 s patience (the lease)
    assert any("slow: slow was detached from lockstep" in e for e in slots.detached_log)
    with pytest.raises(NotAllowedError, match="claims the robot again"):
        slots.put("slow", "motors", (0.1, 0.1), owner=SLOW)
    # the fast one goes on alone, as fast as it is, never detached
    for _ in range(10 * PATIENCE_WINDOW):
        assert _step(slots, clock, 0.0) == []
    assert slots.attached() == ["fast"] and slots.owner("fast") == "the fast connection"
    # a claim attaches the slow one again, knowingly
    slots.claim("slow", SLOW)
    slots.put("slow", "motors", (0.1, 0.1), owner=SLOW)
    assert slots.attached() == ["fast", "slow"]


def test_a_controller_alone_is_never_held_against_itself():
    clock = ManualClock()
    slots = CommandSlots(clock, lease=3.0)
    slots.put("slow", "motors", (0, 0), owner=SLOW)
    for _ in range(3 * PATIENCE_WINDOW):
        assert _step(slots, clock, 2.5, fast=False) == []
    assert slots.attached() == ["slow"]


def test_steps_as_slow_as_the_others_are_patience_enough():
    """Patience grows with the others' median wait: two controllers at 0.2 s and 0.5 s a step
    (0.3 s held each step, 6 s a window) stay: 10 x 20 x 0.2 s = 40 s."""
    clock, slots = _two_attached()
    for _ in range(3 * PATIENCE_WINDOW):
        slots.take()
        gone = _wait(slots, clock, 0.2)
        slots.put("fast", "motors", (0.1, 0.1), owner=FAST)
        gone += _wait(slots, clock, 0.3)
        slots.put("slow", "motors", (0.1, 0.1), owner=SLOW)
        assert gone == []
    assert slots.attached() == ["fast", "slow"]


def test_time_the_simulator_lost_is_not_held_against_anyone():
    clock, slots = _two_attached()
    for _ in range(PATIENCE_WINDOW):
        slots.take()
        slots.put("fast", "motors", (0.1, 0.1), owner=FAST)
        clock.advance(30.0)  # the simulator stopped (SIGSTOP): no look for 30 s
        slots.put("slow", "motors", (0.1, 0.1), owner=SLOW)
        assert slots.expire() == []
    assert slots.attached() == ["fast", "slow"]


def test_an_operators_release_lifts_the_detach():
    clock, slots = _two_attached()
    while "slow" in slots.attached():
        _step(slots, clock, 2.5)
    slots.release("slow")  # /sim detach: an operator's, for any owner (a DDS publisher too)
    slots.put("slow", "motors", (0.1, 0.1), owner=SLOW)
    assert slots.attached() == ["fast", "slow"]
