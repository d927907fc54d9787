"""The external robots' pose channel ``/external`` (protocol 11) over real sockets: poses sent
as another language would (raw msgpack over ZeroMQ, the robot named in the text) taken off the
stepper's thread, refused with the documented codes, the owner freed when its connection
closes; motion commands to an external robot refused with error 17; a robot inserted at run
time made external by insert_robot's text."""

from __future__ import annotations

import math

import msgpack
import pytest
import zmq

from coopsim.client.connection import Client, RemoteError
from coopsim.formats.files import parse_scenario
from coopsim.model.commands import EXTERNAL_ROBOT
from coopsim.net import protocol as p

from nethelpers import ROOT, Peer, live, lookup, wait_until

SCENARIO = f"""
[WORLD]
file {ROOT / "worlds" / "empty.world"}

[ROBOT_1]
type single
name real
position -2 0 0
external stale 5 max_speed 2 max_rate 500

[ROBOT_2]
type single
name simulated
position 3 3 0
"""


@pytest.fixture(scope="module")
def run():
    with live(parse_scenario(SCENARIO, "channel.scenario")) as r:
        yield r


@pytest.fixture(scope="module")
def channel(run):
    peer = Peer(lookup(run.network.endpoint, "/external"), zmq.DEALER, delimiter=True)
    yield peer
    peer.close()


def _moved_to(run, robot: str, x: float) -> bool:
    snap = run.stepper.wait_step(run.stepper.snapshot.step + 1, 30.0)
    return abs(snap.poses[snap.index[robot], 0] - x) < 1e-3


def test_a_raw_pose_on_the_channel_moves_the_body_without_the_stepper_serving_it(run, channel):
    port = run.network.hub.ports["real"]
    requests = port.requests
    assert channel.ask(0, params=[p.PROTOCOL_VERSION])[:2] == [0, "/external"]
    reply = channel.ask(20, "real", data=[-1.9, 0.0, 0.0])
    assert reply[:3] == [0, "external", 20] and len(reply[3]) == 1 and len(reply[4]) == 1
    wait_until(lambda: _moved_to(run, "real", -1.9))
    assert port.requests == requests  # the robot hub (the stepper's thread) never saw it
    assert run.network.poses.received >= 1
    for text, data, code, why in (("real", [math.nan, 0.0, 0.0], 14, "not finite"),
                                  ("real", [1000.0, 0.0, 0.0], 14, "off the floor"),
                                  ("simulated", [3.0, 3.0, 0.0], 14, "not an external robot"),
                                  ("nobody", [3.0, 3.0, 0.0], 14, "not an external robot"),
                                  ("", [3.0, 3.0, 0.0], 3, "text")):
        reply = channel.ask(20, text, data=data)
        assert reply[0] == code and why in reply[1], reply
    assert channel.ask(20, "real", params=[2], data=[-1.9, 0.0, 0.0])[0] == p.OUT_OF_RANGE
    stranger = Peer(lookup(run.network.endpoint, "/external"))
    try:
        reply = stranger.ask(20, "real", data=[-1.9, 0.0, 0.0])
        assert reply[0] == p.OWNED and "owned by" in reply[1]  # the channel's peer owns it
    finally:
        stranger.close()


def test_quiet_poses_are_answered_only_when_refused_and_a_flood_gets_15(run, channel):
    good = msgpack.packb([0, "real", 20, [1], [-1.9, 0.0, 0.0]])
    before = run.network.poses.received
    for _ in range(400):  # as fast as a socket goes: far beyond max_rate 500 Hz
        channel.send_frames([good])
    channel.send_frames([msgpack.packb([0, "real", 20, [1], [math.nan, 0.0, 0.0]])])
    codes = set()
    while True:  # replies come only for refused poses; the NaN one is the last
        reply = channel.receive()
        codes.add(reply[0])
        if "not finite" in reply[1]:
            break
    assert codes <= {14, 15} and 15 in codes
    assert 0 < run.network.poses.received - before < 400  # a burst taken, the rest dropped


def test_a_closed_connection_frees_the_robot_for_another(run):
    first = Peer(lookup(run.network.endpoint, "/external"))
    assert first.ask(4, "real", params=[1])[0] == 0  # take it (force) from the module's peer
    assert first.ask(20, "real", data=[-1.9, 0.0, 0.0])[0] == 0
    first.close()
    second = Peer(lookup(run.network.endpoint, "/external"))
    try:
        wait_until(lambda: second.ask(20, "real", data=[-1.9, 0.0, 0.0])[0] == 0)
        assert second.ask(5, "real")[:2] == [0, "released"]
    finally:
        second.close()


def test_a_motion_command_to_an_external_robot_is_error_17(run):
    assert EXTERNAL_ROBOT == 17 and p.ERROR_NAMES[17] == "external robot"
    with Client(run.network.endpoint) as client:
        with pytest.raises(RemoteError, match=r"error 17: real is an external robot: .*"
                                              r"set_speeds .* is refused"):
            client.robot("real").motors.set_speeds(0.3, 0.3)
        client.robot("simulated").motors.set_speeds(0.0, 0.0)  # a simulated one is driven


def test_a_robot_inserted_at_run_time_can_be_external(run):
    with Client(run.network.endpoint) as client:
        sim = client.sim()
        with pytest.raises(RemoteError, match="error 4: insert_robot: external has no "
                                              "setting 'speed'"):
            client.request(sim.endpoint, 16, "late single external speed 3",
                           data=(1.0, -3.0, 0.0, 0.0))
        sim.insert_robot("late", "single", (1.0, -3.0, 0.0), external={"stale": 2,
                                                                         "max_rate": 100})
        assert sim.state()["external"]["robots"]["late"]["status"] == "waiting"
        assert run.stepper.sim.external.tracks["late"].spec.max_rate == 100.0
        late = client.robot("late")
        assert late.pose_channel == lookup(run.network.endpoint, "/external")
        late.send_pose(1.1, -3.0, 0.0)
        wait_until(lambda: _moved_to(run, "late", 1.1))
        assert sim.state()["external"]["robots"]["late"]["status"] == "live"
        with pytest.raises(RemoteError, match="error 17"):
            late.motors.set_speeds(0.3, 0.3)
        client.request(sim.endpoint, 18, "late")  # removed: forgotten
    assert "late" not in run.stepper.sim.external.tracks
