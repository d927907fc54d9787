"""A teleop claim (claim params [2]) over real sockets: the person's connection takes the robot
from its controller, the controller is told with error 13 while the person drives, and has the
robot back, without a claim, when the teleop releases it or its connection closes."""

from __future__ import annotations

from coopsim.net import protocol as p

from helpers import robot, scenario
from nethelpers import Peer, live, lookup, wait_until

SPEEDS, CLAIM, RELEASE, PARAM_SET, ODO_RESET = 100, 4, 5, 13, 401
TELEOPERATED = 13


def _world():
    return scenario(robots=[robot("r1", -3.0, 0.0)], mode="realtime", dt=0.01, seed=3)


def test_teleop_takes_tells_the_controller_and_gives_back():
    with live(_world()) as run:
        endpoint = lookup(run.network.endpoint, "/r1")
        controller, person, other = Peer(endpoint), Peer(endpoint), Peer(endpoint)
        controller.ok(SPEEDS, data=[0.2, 0.2])
        taken = person.ok(CLAIM, params=[2])
        assert taken[3] == [1] and "taken from the connection from" in taken[1]
        for reply in (controller.ask(SPEEDS, data=[0.1, 0.1]), controller.ask(CLAIM, params=[1]),
                      controller.ask(PARAM_SET, "motors.max_speed", data=[0.2]),
                      controller.ask(ODO_RESET)):
            assert reply[0] == TELEOPERATED, reply
            assert "is driven by teleop" in reply[1] and "yours again" in reply[1], reply[1]
        assert other.ask(SPEEDS, data=[0.1, 0.1])[0] == p.OWNED, "others: owned, as before"
        assert person.ok(SPEEDS, data=[0.3, -0.3])[1] == "realtime"
        assert person.ok(RELEASE)[3] == [1]
        assert controller.ok(SPEEDS, data=[0.1, 0.1])[0] == 0, "given back without a claim"
        assert other.ask(SPEEDS, data=[0.1, 0.1])[0] == p.OWNED
        assert "teleop gave it back" in " ".join(run.stepper.slots.detached_log)
        # a closed teleop connection gives it back too
        person.ok(CLAIM, params=[2])
        person.close()
        wait_until(lambda: controller.ask(SPEEDS, data=[0.0, 0.0])[0] == 0, every=0.05)
        # a teleop claim on a free robot: released, the robot is free
        third = Peer(endpoint)
        controller.ok(RELEASE)
        assert third.ok(CLAIM, params=[2])[3] == [0]
        third.ok(RELEASE)
        assert other.ok(SPEEDS, data=[0.0, 0.0])[0] == 0
        assert third.ask(CLAIM, params=[3])[0] == p.OUT_OF_RANGE


def test_in_lockstep_the_displaced_controller_leaves_and_rejoins():
    """The book alone (no sockets): a teleop claim detaches the controller it displaces, so
    the steps stop waiting for it; the teleop's lease lapsing gives the robot back too."""
    import pytest

    from coopsim.model.errors import ProtocolError
    from coopsim.sim.clock import ManualClock
    from coopsim.sim.slots import CommandSlots, Owner

    clock = ManualClock()
    slots = CommandSlots(clock, lease=3.0)
    robot, person = Owner("ctl", "the controller", 1), Owner("me", "the person", 2)
    slots.put("r1", "motors", (0.1, 0.1), owner=robot)
    assert slots.attached() == ["r1"]
    assert slots.claim("r1", person, teleop=True) == "the controller"
    assert slots.attached() == [] and slots.owner("r1") == "the person"
    with pytest.raises(ProtocolError) as told:
        slots.put("r1", "motors", (0.1, 0.1), owner=robot)
    assert told.value.code == TELEOPERATED
    slots.put("r1", "motors", (0.3, 0.3), owner=person)  # the person drives: attached
    assert slots.attached() == ["r1"]
    slots.release("r1", person.key)
    assert slots.owner("r1") == "the controller" and slots.attached() == []
    slots.put("r1", "motors", (0.1, 0.1), owner=robot)  # attaches again, no claim
    assert slots.attached() == ["r1"]
    slots.claim("r1", person, teleop=True)  # silent person: the lease gives it back
    for _ in range(20):
        clock.advance(0.2)
        slots.take()
    slots.put("r1", "motors", (0.1, 0.1), owner=robot)
    assert slots.owner("r1") == "the controller"
