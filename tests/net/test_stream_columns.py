"""Protocol 8: the state stream and ``/sim state`` carry only the columns of the modules some
robot of this world carries, re-announced (the document of the new ``layout_version``) when
the layout brings new ones; a client of an older protocol is refused. Real runs, real ZeroMQ
sockets on 127.0.0.1; the stream's message is numpy-packed byte for byte as msgpack packs it."""

from __future__ import annotations

import numpy as np
import pytest
import zmq

from coopsim.client import Client, RemoteError
from coopsim.conformance.transcript import FLIGHT_SCENARIO
from coopsim.formats.files import load
from coopsim.net import protocol as p
from coopsim.net.protocol import Message
from coopsim.net.statestream import decode_state, decode_wire, pack_message

from helpers import robot, scenario
from nethelpers import Peer, live, lookup

SONAR = tuple(f"sonar{i}" for i in range(11))
LEDS = tuple(f"led{i}" for i in range(8))
ARM = tuple(f"arm_q{i}" for i in range(1, 8))
ROTORS = tuple(f"rotor_w{i}" for i in range(1, 5))  # protocol 11: the propellers' speeds
FRAMES = 400  # frames a condition may take to show (a failure if more: ~13 s at 30 Hz)


def _until(stream, pred):
    """The first frame of ``stream`` satisfying ``pred`` (at most FRAMES frames)."""
    for _ in range(FRAMES):
        frame = next(stream)
        if pred(frame):
            return frame
    raise AssertionError(f"no such frame in {FRAMES} frames")


def _raw_columns(endpoint: str) -> int:
    """n_columns (params[8]) of one message of ``/sim/state1``, read on a bare SUB socket."""
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    try:
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(endpoint)
        assert sub.poll(60_000), "no state message"
        return Message.from_wire(sub.recv(), max_bytes=None).params[8]
    finally:
        sub.close(0)
        ctx.term()


@pytest.fixture(scope="module")
def swarm():
    spec = scenario(robots=[robot("a"), robot("b", 2.0, 0.0), robot("c", -2.0, 0.0)],
                    mode="realtime")
    with live(spec) as run:
        yield run


def test_a_2d_swarm_streams_and_states_no_arm_led_or_imu_columns(swarm):
    with Client(swarm.network.endpoint, timeout=30.0) as client:
        state = client.sim().state()
        assert tuple(state["columns"]) == SONAR  # was arm_q1..7, led0..7, sonar0..10
        stream = client.subscribe_state()
        frame = next(stream)
        stream.close()
        assert frame.columns.shape == (3, 11) and frame.column_names == SONAR
        assert not [c for c in state["columns"] if c.startswith(("arm_", "imu_", "led"))]
        assert np.isfinite(frame.column("sonar0")).all()
        with pytest.raises(KeyError, match="arm_q1"):
            frame.column("arm_q1")
        assert _raw_columns(client.lookup("/sim/state1")) == 11


def test_a_world_where_one_robot_carries_an_arm_streams_its_angles():
    pytest.importorskip("mujoco")
    with live(load(FLIGHT_SCENARIO)) as run, \
            Client(run.network.endpoint, timeout=30.0) as client:
        state = client.sim().state()
        rows = {r["name"]: i for i, r in enumerate(state["robots"])}
        assert tuple(state["columns"]) == ARM + ROTORS  # a Crazyflie and an IRB 120: no sonar
        stream = client.subscribe_state()
        frame = _until(stream, lambda f: f.column_names is not None)
        stream.close()
        assert frame.column_names == ARM + ROTORS and frame.columns.shape == (2, 11)
        q1, w1 = frame.column("arm_q1"), frame.column("rotor_w1")
        assert np.isfinite(q1[rows["arm"]]) and np.isnan(q1[rows["cf"]])
        assert np.isfinite(w1[rows["cf"]]) and np.isnan(w1[rows["arm"]])


def test_inserting_a_robot_of_a_new_type_announces_the_new_columns(swarm):
    with Client(swarm.network.endpoint, timeout=30.0) as client:
        sim = client.sim()
        stream = client.subscribe_state(latest_only=False)
        first = _until(stream, lambda f: f.column_names is not None)
        assert first.column_names == SONAR
        sim.insert_robot("k", "kilobot", (0.0, 3.0, 0.0))
        try:
            frame = _until(stream, lambda f: f.layout_version != first.layout_version
                           and f.column_names is not None)
            state = sim.state()
        finally:
            sim.remove_robot("k")
            stream.close()
        assert frame.column_names == LEDS + SONAR == tuple(state["columns"])
        assert frame.columns.shape == (4, 19)
        kilobot = [r["name"] for r in state["robots"]].index("k")
        singles = [i for i in range(4) if i != kilobot]
        assert np.isnan(frame.column("led0")[singles]).all()  # the singles have no LEDs
        assert np.isnan(frame.column("sonar0")[kilobot])  # nor the kilobot a sonar
        assert np.isfinite(frame.column("sonar0")[singles]).all()


@pytest.mark.parametrize("name", ["/nameserver", "/sim", "/a"])
def test_a_protocol_7_hello_is_refused_with_the_documented_error(swarm, name):
    endpoint = swarm.network.endpoint if name == "/nameserver" else \
        lookup(swarm.network.endpoint, name)
    peer = Peer(endpoint)
    try:
        reply = peer.ask(0, params=[7])
        assert reply[0] == p.VERSION_MISMATCH == 7 and reply[3:] == [[], []]
        assert reply[1] == ("this server speaks coopsim protocol 14, the client protocol 7; what "
                            "changed between them is listed in docs/protocol.md, 'Changelog' "
                            "(update the client)")
        assert peer.ask(0, params=[8])[0::3] == [0, [8]]  # the connection goes on (9 serves 8)
    finally:
        peer.close()


def test_the_python_client_says_protocol_14_and_an_older_one_is_told_why(swarm):
    with Client(swarm.network.endpoint) as client:
        assert client.hello("/sim") == (14, "/sim")
        with pytest.raises(RemoteError, match="speaks coopsim protocol 14, the client protocol 7"):
            client.request(client.nameserver, 0, params=(7,))


@pytest.mark.parametrize("size", [0, 1, 15, 16, 65535, 65536, 70000])
def test_the_numpy_packed_message_is_msgpacks_byte_for_byte(size):
    data = np.random.default_rng(size).normal(size=size) * 1e3
    data[::7] = np.nan
    data[1::11] = -np.inf
    params = (1, 2, 3, 0, 10**12, -1)
    assert pack_message(0, "realtime", 1, params, data) == \
        Message(0, "realtime", 1, params, tuple(data.tolist())).to_wire()


def test_the_numpy_decoder_reads_what_the_generic_one_reads_and_refuses_the_same():
    data = np.arange(3 + 2 * 3 + 2 * 2 + 1, dtype=float)  # 2 robots, 2 columns, 1 metric
    data[-2] = np.nan
    params = (5, 1, 2, 0, 0, 0, 0, 0, 2, 1, 0, 0)
    wire = pack_message(0, "lockstep", 1, params, data)
    fast, slow = decode_wire(wire), decode_state(Message.from_wire(wire, max_bytes=None))
    for name in ("robots", "columns", "metrics"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name), equal_nan=True)
    assert (fast.step, fast.layout_version, fast.mode) == (5, 1, "lockstep")
    ints = Message(0, "lockstep", 1, params, tuple(int(v) for v in data[:-2]) + (0.5, 1))
    assert np.array_equal(decode_wire(ints.to_wire()).columns, [[9, 10], [11, 0.5]])
    short = pack_message(0, "lockstep", 1, params, data[:-1])
    with pytest.raises(ValueError, match="does not match its counts"):
        decode_wire(short)
