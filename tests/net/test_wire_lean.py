"""The lean request path: the same bytes as the general one, and a connection's
robot worked out once per connection without ever reaching the wrong robot."""

from __future__ import annotations

import math

import msgpack
import pytest
import zmq

from coopsim.net import protocol as p
from coopsim.net.protocol import Message

from helpers import robot, scenario
from nethelpers import Peer, live, lookup, wait_until

MESSAGES = [
    (0, "", 101, (), (0.2, 0.2)),
    (0, "lockstep", 100, (7,), (0.07,)),
    (3, "bad arity: ünïcode", 2**40, (0, -1, 2**63 - 1), (1, -2, 3.5)),
    (0, "x" * 300, 0, tuple(range(40)), (math.inf, -math.inf, 0.0, -0.0, 1e308)),
    (0, "", -1, (2**64 - 1,), ()),
]


@pytest.mark.parametrize("fields", MESSAGES)
def test_a_packed_message_is_the_general_encoding_byte_for_byte(fields):
    error, text, command, params, data = fields
    general = msgpack.packb([error, text, command, list(params), [float(x) for x in data]],
                            use_bin_type=True)
    assert p.pack(*fields) == general
    assert Message(*fields).to_wire() == general
    made = p.new_message(error, text, command, params, data)
    assert made == Message(*fields) and repr(made) == repr(Message(*fields))
    assert hash(made) == hash(Message(*fields)) and made.frames == ()
    assert Message.from_wire(general, max_bytes=None) == Message(
        error, text, command, params, tuple(float(x) for x in data))


def test_a_nan_packs_as_the_general_encoding():
    assert p.pack(0, "", 1, (), (math.nan,)) == msgpack.packb([0, "", 1, [], [math.nan]])


@pytest.fixture()
def run():
    with live(scenario(robots=[robot("r1", -2.0, 0.0), robot("r2", 2.0, 0.0)],
                       mode="realtime"), paused=True) as run:
        yield run


def _own_id(endpoint: str, route: bytes) -> Peer:
    peer = Peer.__new__(Peer)
    peer.ctx, peer.endpoint, peer.kind, peer.delimiter = (zmq.Context.instance(), endpoint,
                                                          zmq.DEALER, False)
    peer.sock = peer.ctx.socket(zmq.DEALER)
    peer.sock.setsockopt(zmq.LINGER, 0)
    peer.sock.setsockopt(zmq.ROUTING_ID, route)
    peer.sock.connect(endpoint)
    return peer


def _hello(endpoint: str, route: bytes) -> str:
    """The hello reply's name over a fresh connection with routing id ``route``: libzmq
    refuses a connection whose id is still taken (the old one's close not yet taken), so
    it connects again until one is answered."""
    for _ in range(240):  # a hang guard of minutes
        peer = _own_id(endpoint, route)
        try:
            peer.send_frames([msgpack.packb([0, "", 0, [], []])])
            if peer.sock.poll(500):
                return msgpack.unpackb(peer.sock.recv_multipart()[-1])[1]
        finally:
            peer.close()
    raise AssertionError(f"{endpoint} never answered a connection with id {route!r}")


def test_a_routing_id_used_again_reaches_the_robot_its_new_connection_reached(run):
    """A client's own routing id, closed and used again (likely on the same descriptor) to
    another robot's endpoint: each connection is answered by the robot it connected to."""
    ends = [lookup(run.network.endpoint, f"/{name}") for name in ("r1", "r2", "r1", "r2")]
    for endpoint, name in zip(ends, ("/r1", "/r2", "/r1", "/r2")):
        assert _hello(endpoint, b"my-own-id") == name
    assert b"my-own-id" not in run.network.hub._routes._ports  # looked up every time


def test_a_connection_is_looked_up_once_and_forgotten_when_it_closes(run):
    hub = run.network.hub
    peers = [Peer(lookup(run.network.endpoint, f"/{name}")) for name in ("r1", "r2")]
    try:
        for _ in range(3):
            assert [peer.ok(0)[1] for peer in peers] == ["/r1", "/r2"]
        assert len(hub._routes._ports) == 2
    finally:
        for peer in peers:
            peer.close()
    wait_until(lambda: not hub._routes._ports)  # the monitor's closes took them


class _CountingSocket(zmq.Socket):
    """The hub's ROUTER socket (a shadow: the same libzmq socket), counting its ZMQ_EVENTS
    asks (each a ``getpid`` and a ``poll`` inside libzmq)."""

    asks = 0

    def get(self, option: int):
        self.asks += option == zmq.EVENTS
        return super().get(option)


def test_a_lockstep_loop_request_that_completes_its_step_is_served_without_a_look_for_more():
    """The stepper's wait for a driven step serves the request that completes it
    at once, without asking the socket whether more wait (the next wait's look finds them)."""
    with live(scenario([robot("r1")], mode="lockstep")) as run:
        hub = run.network.hub
        bot = Peer(lookup(run.network.endpoint, "/r1"))
        bot.ok(100, data=[0.1, 0.1])  # attached: every step waits for its command now
        plain = hub.socket
        counting = _CountingSocket(shadow=plain.underlying)
        hub.socket = counting  # the batch's look uses hub.socket; FdWait keeps its own
        try:
            steps = [bot.ok(6, params=[100, 200], data=[0.1, 0.1])[3][0] for _ in range(50)]
        finally:
            hub.socket = plain
        assert steps == list(range(steps[0], steps[0] + 50))  # one step a request
        assert counting.asks <= 5, counting.asks  # 50 and more before: one look a step


def test_reads_that_come_during_a_driven_steps_wait_are_all_answered_and_the_step_taken():
    """Requests that reach the hub before the awaited command, or beside it, are all served
    (those after the command in the next wait, right after the step)."""
    with live(scenario([robot("r1")], mode="lockstep")) as run:
        endpoint = lookup(run.network.endpoint, "/r1")
        bot, readers = Peer(endpoint), [Peer(endpoint) for _ in range(4)]
        try:
            first = bot.ok(100, data=[0.1, 0.1])[3][0]
            for k in range(10):
                for reader in readers[:2]:
                    reader.send_frames([msgpack.packb([0, "", 200, [], []])])
                bot.send_frames([msgpack.packb([0, "", 100, [], [0.1, 0.1]])])
                for reader in readers[2:]:
                    reader.send_frames([msgpack.packb([0, "", 200, [], []])])
                assert bot.receive()[3][0] == first + 1 + k
                for reader in readers:
                    reply = reader.receive()
                    assert reply[0] == 0 and len(reply[4]) == 11, reply
        finally:
            for peer in (bot, *readers):
                peer.close()
