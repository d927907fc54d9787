"""Ownership covers parameters: a connection that does not own a robot
cannot change its module parameters (``motors.max_speed 0.01`` would stop another's robot);
error 11 names the owner, as for motion commands; the owner may, /sim ``set_param`` (an
operator's) and scenario events keep their rights, and a free robot stays open to all."""

from __future__ import annotations

import dataclasses

from coopsim.model.specs import EventAction, EventSpec
from coopsim.net import protocol as p

from helpers import robot, scenario
from nethelpers import Peer, live, lookup, wait_until

SPEEDS, PARAM_GET, PARAM_SET, RELEASE = 100, 12, 13, 5
SIM_SET_PARAM = 25


def _world():
    return scenario(robots=[robot("r1", -3.0, 0.0)], mode="realtime", dt=0.01, seed=3)


def _max_speed(peer: Peer) -> float:
    return peer.ok(PARAM_GET, "motors.max_speed")[4][0]


def test_a_second_connection_cannot_set_a_parameter_of_a_robot_another_drives():
    with live(_world()) as run:
        endpoint = lookup(run.network.endpoint, "/r1")
        owner, intruder = Peer(endpoint), Peer(endpoint)
        before = _max_speed(intruder)
        owner.ok(SPEEDS, data=[0.2, 0.2])  # the first motion command owns the robot
        reply = intruder.ask(PARAM_SET, "motors.max_speed", data=[0.01])
        assert reply[0] == p.OWNED == 11 and reply[2] == PARAM_SET, reply
        assert "r1 is owned by the connection from 127.0.0.1:" in reply[1], reply[1]
        assert "parameter writes" in reply[1]
        assert _max_speed(intruder) == before, "the refused write changed nothing"
        # the owner may; reads stay open to everyone
        assert owner.ok(PARAM_SET, "motors.max_speed", data=[0.5])[4] == [0.5]
        assert _max_speed(intruder) == 0.5
        # the operator's /sim set_param keeps its right
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        assert sim.ok(SIM_SET_PARAM, "r1 motors.max_speed", data=[0.4])[4] == [0.4]
        # once the owner releases the robot, anyone may write again
        owner.ok(RELEASE)
        assert intruder.ok(PARAM_SET, "motors.max_speed", data=[0.3])[4] == [0.3]


def test_scenario_events_keep_their_right_over_an_owned_robot():
    event = EventSpec("EVENT_1", 0.5, (EventAction("param", robot="r1", module="motors",
                                                   name="max_speed", value=0.25),))
    world = dataclasses.replace(_world(), events=(event,))
    with live(world) as run:
        owner = Peer(lookup(run.network.endpoint, "/r1"))
        owner.ok(SPEEDS, data=[0.2, 0.2])  # owned from step 0, long before the event
        wait_until(lambda: run.stepper.snapshot.time > 0.6)
        assert run.stepper.slots.owner("r1"), "still owned when the event ran"
        assert _max_speed(owner) == 0.25
