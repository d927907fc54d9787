"""Command slots: leases counted in the run's active time from the moment a step awaits the
controller, and robot ownership (who may command a robot's motion)."""

from __future__ import annotations

import pytest

from coopsim.model.errors import OwnedError
from coopsim.sim.clock import ManualClock
from coopsim.sim.slots import ACTIVE_GAP, CommandSlots, Owner

ALICE, BOB = Owner("alice", "alice's connection", 1), Owner("bob", "bob's connection", 2)


def _looks(slots, clock, seconds: float, every: float = 0.05) -> None:
    """The stepper looks every ``every`` s for ``seconds`` (expiring late controllers)."""
    for _ in range(round(seconds / every)):
        clock.t += every
        slots.expire()


def test_a_stopped_or_starved_simulator_does_not_count_against_its_controllers():
    clock = ManualClock()
    slots = CommandSlots(clock, lease=3.0)
    slots.put("r1", "motors", (0.1, 0.1))
    slots.take()  # the step ran: now the run awaits r1's next command
    clock.t += 15.0  # the simulator was stopped (SIGSTOP) for 15 s: one gap
    assert slots.expire() == [] and slots.attached() == ["r1"]
    for _ in range(10):  # starved: the stepper looks only every 2 s
        clock.t += 2.0
        assert slots.expire() == []
    _looks(slots, clock, 3.0 - 11 * ACTIVE_GAP + 0.1)
    assert slots.attached() == [], "silent for the lease of active time: detached"
    assert "lease" in slots.detached_log[-1]


def test_silence_counts_from_when_the_step_awaits_the_controller():
    clock = ManualClock()
    slots = CommandSlots(clock, lease=1.0)
    slots.put("fast", "motors", (0.1, 0.1))
    slots.put("slow", "motors", (0.1, 0.1))
    slots.take()
    slots.put("fast", "motors", (0.1, 0.1))  # committed; the run now waits for slow
    _looks(slots, clock, 0.9)
    slots.put("slow", "motors", (0.1, 0.1))
    slots.take()  # fast waited 0.9 s for its reply: its silence starts now
    _looks(slots, clock, 0.5)
    assert slots.attached() == ["fast", "slow"]


def test_an_owner_holds_its_robot_until_it_releases_or_its_lease_lapses():
    clock = ManualClock()
    slots = CommandSlots(clock, lease=1.0)
    slots.put("r1", "motors", (0.1, 0.1), attach=False, owner=ALICE)
    with pytest.raises(OwnedError) as info:
        slots.put("r1", "motors", (0.0, 0.0), attach=False, owner=BOB)
    assert info.value.owner == "alice's connection" and "r1 is owned by alice's" in str(info.value)
    with pytest.raises(OwnedError):
        slots.release("r1", "bob")
    assert slots.claim("r1", BOB, force=True) == "alice's connection"
    assert slots.owner("r1") == "bob's connection"
    _looks(slots, clock, 1.2)  # bob silent longer than the lease (not attached): it lapses
    assert slots.claim("r1", ALICE) == "bob's connection"
    assert "lapsed" in slots.detached_log[-1]
    assert slots.disconnected(1) == ["r1"] and slots.owner("r1") == ""
    slots.put("r1", "motors", (0.1, 0.1), owner=BOB)
    assert slots.release("r1", "bob") and slots.attached() == [] and slots.owners() == {}


def test_a_controller_starved_by_the_machine_is_not_silent_and_a_hung_one_is():
    """A loaded machine keeps a launched controller waiting for a CPU (its CPU waits, read
    from /proc by the run's hook: mocked here, at the OS edge): that time is the machine's,
    not its silence. Once it gets no more of it (asleep: hung, or stopped) the lease runs."""
    clock = ManualClock()
    slots = CommandSlots(clock, lease=3.0)
    waited = {"r1": 0.0}
    slots.cpu_wait = lambda robot: (waited[robot], False, 0.0)
    slots.put("r1", "motors", (0.1, 0.1))
    slots.take()
    for _ in range(200):  # 10 s of looks, the controller runnable but never on a CPU
        clock.t += 0.05
        waited["r1"] += 0.05
        assert slots.expire() == [], "a starved controller is not detached"
    slots.put("r1", "motors", (0.1, 0.1))  # it got a CPU at last and sent its command
    slots.take()
    looks = 0
    while slots.attached():  # now it hangs (asleep): its CPU waits stand still
        looks += 1
        assert looks < 1000, "a hung controller must be detached"
        clock.t += 0.05
        slots.expire()
    assert 3.0 <= looks * 0.05 <= 3.0 + 0.5, looks  # the lease, give or take the looks
    assert "lease" in slots.detached_log[-1]


def test_a_runnable_controller_is_waiting_for_a_cpu_unless_it_spins_for_a_lease():
    """The kernel counts a wait for a CPU when it ends: a controller runnable right now may be
    in the middle of one (not silent), unless it has run on a CPU for a lease since its step's
    wait began (it spins: hung all the same, and detached)."""
    clock = ManualClock()
    slots = CommandSlots(clock, lease=3.0)
    ran = {"r1": 0.0}
    slots.cpu_wait = lambda robot: (0.0, True, ran[robot])
    slots.put("r1", "motors", (0.1, 0.1))
    slots.take()
    _looks(slots, clock, 10.0)  # runnable, off the CPU all along (its wait not yet counted)
    assert slots.attached() == ["r1"]
    looks = 0
    while slots.attached():  # now it spins: on the CPU, never sending
        looks += 1
        assert looks < 1000, "a spinning controller must be detached"
        clock.t += 0.05
        ran["r1"] += 0.05
        slots.expire()
    assert ran["r1"] >= 3.0


def test_a_starved_controller_is_not_benched_for_patience_before_its_lease():
    """Two controllers; the step waits for r1 alone (r2 is in). r1 is starved by a loaded
    machine (its CPU waits, read from /proc by the run's hook: mocked here, at the OS edge): its
    lease does not run, and neither does its patience, which once benched it (the plain wait
    passed the lease) so that its next command was refused for good."""
    clock = ManualClock()
    slots = CommandSlots(clock, lease=3.0)
    waited = {"r1": 0.0, "r2": 0.0}
    slots.cpu_wait = lambda robot: (waited[robot], False, 0.0)
    slots.put("r1", "motors", (0.1, 0.1), owner=ALICE)
    slots.put("r2", "motors", (0.1, 0.1), owner=BOB)
    slots.take()
    slots.put("r2", "motors", (0.1, 0.1), owner=BOB)  # r2 is in: the step waits for r1
    for _ in range(200):  # 10 s of looks, r1 runnable but never on a CPU
        clock.t += 0.05
        waited["r1"] += 0.05
        assert slots.expire() == [], slots.detached_log
    slots.put("r1", "motors", (0.1, 0.1), owner=ALICE)  # not refused
    assert slots.ready() and slots.attached() == ["r1", "r2"]
