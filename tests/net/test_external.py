"""External robots over real sockets: a pose stream sent as another language would
(raw msgpack over ZeroMQ), hostile streams answered with documented codes while the run goes
on, a simulated robot that cannot push the external body, staleness in ``/sim state`` and the
snapshot, latencies measured."""

from __future__ import annotations

import math
import re
import threading

import msgpack
import pytest
import zmq

from coopsim.client.connection import Client, RemoteError
from coopsim.formats.files import parse_scenario
from coopsim.net import protocol as p

from nethelpers import ROOT, Peer, live, lookup, wait_until

SCENARIO = f"""
[WORLD]
file {ROOT / "worlds" / "empty.world"}

[ROBOT_1]
type single
name real
position -2 0 0
external stale 0.3 max_speed 2 max_rate 500

[ROBOT_2]
type single
name pusher
position -3 0 0

[ROBOT_3]
type single
name other
position 3 3 0
"""


@pytest.fixture(scope="module")
def run():
    with live(parse_scenario(SCENARIO, "external.scenario")) as r:
        yield r


@pytest.fixture(scope="module")
def real(run):
    peer = Peer(lookup(run.network.endpoint, "/real"))
    yield peer
    peer.close()


def test_a_raw_pose_message_moves_the_body_and_hostile_ones_get_documented_codes(run, real):
    assert p.POSE_REFUSED == 14 and p.POSE_FLOOD == 15
    reply = real.ask(20, data=[-2.0, 0.0, 0.0])
    assert reply[:3] == [0, "external", 20] and len(reply[3]) == 1
    for data, code, why in (([math.nan, 0.0, 0.0], 14, "not finite"),
                            ([1000.0, 0.0, 0.0], 14, "off the floor"),
                            ([1.5, 0.0, 0.0], 14, "a jump of 3.5 m"),
                            ([-2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0], 14, "not a unit one"),
                            ([-2.0, 0.0, 0.0, 1.0], 14, "got 4 numbers")):
        reply = real.ask(20, data=data)
        assert reply[0] == code and why in reply[1], reply
    other = Peer(lookup(run.network.endpoint, "/other"))
    stranger = Peer(lookup(run.network.endpoint, "/real"))
    try:
        assert other.ask(20, data=[3.0, 3.0, 0.0])[0] == 14  # not an external robot
        assert stranger.ask(20, data=[-2.0, 0.0, 0.0])[0] == p.OWNED  # not the owner
    finally:
        other.close()
        stranger.close()
    snap = run.stepper.wait_step(run.stepper.snapshot.step + 2, 30.0)
    assert snap.poses[snap.index["real"], 0] == pytest.approx(-2.0, abs=1e-3)


def test_every_malformed_pose_is_14_and_counted_as_refused(run, real):
    """2 or 8 numbers are error 14 as 4 are (not 3, wrong arity), a NaN
    refusal is counted in the state document's ``refused``, and a yaw of 1e308 is refused as
    any yaw beyond the bounds of model/limits.py."""
    def refused() -> int:
        state = json_state(run)
        return state["external"]["robots"]["real"]["refused"].get("14", 0)
    real.ask(20, data=[-2.0, 0.0, 0.0])
    before = refused()
    for data, why in (([0.0, 0.0], "got 2 numbers"), ([0.0] * 8, "got 8 numbers"),
                      ([math.nan, 0.0, 0.0], "not finite"), ([-2.0, 0.0, 1e308], "yaw must be")):
        reply = real.ask(20, data=data)
        assert reply[0] == p.POSE_REFUSED and why in reply[1], reply
    assert refused() == before + 4


def json_state(run) -> dict:
    """The state document of ``run`` (/sim command 23)."""
    import json

    peer = Peer(lookup(run.network.endpoint, "/sim"))
    try:
        return json.loads(peer.ok(23)[1])
    finally:
        peer.close()


def test_a_flood_is_refused_with_15_and_the_run_goes_on(run):
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(lookup(run.network.endpoint, "/real"))
    try:
        # another connection than the fixture's, which owns the robot: take it (claim, force)
        sock.send_multipart([b"", msgpack.packb([0, "", 4, [1], []])])
        assert sock.poll(30_000) and msgpack.unpackb(sock.recv_multipart()[-1])[0] == 0
        frame = msgpack.packb([0, "", 20, [], [-2.0, 0.0, 0.0]])
        before = run.stepper.snapshot.step
        for _ in range(2000):  # as fast as a socket goes: far beyond max_rate 500 Hz
            sock.send_multipart([b"", frame])
        codes = []
        for _ in range(2000):
            assert sock.poll(30_000)
            codes.append(msgpack.unpackb(sock.recv_multipart()[-1])[0])
    finally:
        sock.close(0)
    assert set(codes) == {0, 15} and codes[0] == 0  # a burst let through, then refused
    assert run.stepper.wait_step(before + 5, 30.0) is not None  # the run goes on


def _stream(endpoint: str, stop: threading.Event, pose=(-2.0, 0.0, 0.0)) -> None:
    with Client(endpoint) as client:
        bot = client.robot("real")
        client.request(bot.pose_channel, 4, "real", params=(1,))  # claim its poses (force)
        while not stop.wait(0.01):
            bot.send_pose(*pose)


def test_a_simulated_robot_cannot_push_the_external_body(run):
    stop = threading.Event()
    streamer = threading.Thread(target=_stream, args=(run.network.endpoint, stop))
    streamer.start()
    try:
        with Client(run.network.endpoint) as client:
            pusher = client.robot("pusher")
            start = run.stepper.snapshot.step
            while run.stepper.snapshot.step < start + 150:  # 1.5 s driving into it
                pusher.motors.set_speeds(0.4, 0.4)
                run.stepper.wait_step(run.stepper.snapshot.step, 30.0)
            snap = run.stepper.snapshot
    finally:
        stop.set()
        streamer.join()
    x_real, x_pusher = snap.poses[snap.index["real"], 0], snap.poses[snap.index["pusher"], 0]
    assert x_real == pytest.approx(-2.0, abs=0.02)  # not pushed
    assert -2.6 < x_pusher < -2.1  # it drove up to it and stopped there


def test_a_silent_stream_goes_stale_and_the_state_and_the_summary_say_so(run):
    from coopsim.app.run import format_summary
    with Client(run.network.endpoint) as client:
        bot = client.robot("real")
        client.request(bot.pose_channel, 4, "real", params=(1,))  # whatever test ran before
        bot.send_pose(-2.0, 0.0, 0.0)
        with pytest.raises(RemoteError, match="error 14: .*off the floor"):
            bot.send_pose(40.0, 0.0, 0.0)

        def stale():
            run.stepper.wait_step(run.stepper.snapshot.step, 30.0)
            return client.sim().state()["external"]["robots"]["real"]["status"] == "stale"
        wait_until(stale)
        external = client.sim().state()["external"]
    assert "real" in run.stepper.snapshot.extra["external_stale"]
    robot = external["robots"]["real"]
    assert robot["stale_count"] >= 1 and robot["stale_since"] > 0
    assert robot["refused"]["14"] >= 1 and robot["received"] >= 1
    latency = external["latency"]["to_snapshot"]
    assert latency["count"] >= 1 and 0 < latency["p50"] <= latency["p95"] < 5.0
    line = run.stepper.sim.external.summary()
    assert line.startswith("real stale (") and "to snapshot p95" in line
    text = format_summary(run.stepper.stats(), run.stepper.sim.scenario, 3, external=line)
    assert re.search(rf"^external +{re.escape(line)}$", text, re.M), text


def test_a_teleop_claim_on_an_external_robot_is_refused_and_its_stream_goes_on(run, real):
    """A teleop claim would displace the pose stream (its poses then refused
    with 13, the twin frozen): error 17, and the stream keeps the robot."""
    person = Peer(lookup(run.network.endpoint, "/real"))
    try:
        real.ok(4, params=[1])  # the stream's connection owns it (a flood test took it)
        real.ok(20, data=[-2.0, 0.0, 0.0])
        reply = person.ask(4, params=[2])
        assert reply[0] == 17, reply
        assert "real is an external robot" in reply[1] and "displace" in reply[1]
        assert real.ask(20, data=[-2.0, 0.0, 0.0])[0] == 0  # not displaced
    finally:
        person.close()
