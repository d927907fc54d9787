"""Tests of the name server and of what every ROUTER server shares: envelopes, hello, bad input."""

from __future__ import annotations

import inspect
import socket
from concurrent.futures import TimeoutError as FutureTimeout

import msgpack
import pytest
import zmq

from coopsim.net import protocol as p
from coopsim.net.nameserver import NameServer
from coopsim.net.network import Network
from coopsim.app.run import RunOptions
from coopsim.net.server import Server

from nethelpers import Peer

KINDS = [(zmq.REQ, False), (zmq.DEALER, False), (zmq.DEALER, True)]
KIND_IDS = ["req", "dealer", "dealer+delimiter"]


@pytest.fixture()
def names():
    ctx = zmq.Context()
    server = NameServer(ctx, port=0).start()
    server.register("/robot1", "tcp://127.0.0.1:1")
    for module in ("motors", "sonar"):
        server.register(f"/robot1/{module}", "tcp://127.0.0.1:1")
    server.register("/robot10", "tcp://127.0.0.1:2")
    server.register("/sim", "tcp://127.0.0.1:3")
    yield server
    server.stop()
    ctx.term()


@pytest.fixture(params=KINDS, ids=KIND_IDS)
def peer(request, names):
    kind, delimiter = request.param
    peer = Peer(names.endpoint, kind, delimiter)
    yield peer
    peer.close()


def test_defaults_are_yarps_port_on_localhost():
    assert p.DEFAULT_NAMESERVER == "tcp://127.0.0.1:10000"
    defaults = inspect.signature(NameServer).parameters
    assert (defaults["bind"].default, defaults["port"].default) == ("127.0.0.1", 10000)
    assert (RunOptions().port, RunOptions().bind) == (10000, "127.0.0.1")


def test_port_and_bind_are_honoured(names):
    with socket.socket() as probe:  # a free port, released at once (zmq closes lazily)
        probe.bind(("127.0.0.2", 0))
        port = probe.getsockname()[1]
    ctx = zmq.Context()
    server = NameServer(ctx, bind="127.0.0.2", port=port).start()
    try:
        assert server.endpoint == f"tcp://127.0.0.2:{port}"
        peer = Peer(server.endpoint)
        assert peer.ok(0)[1] == "/nameserver"
        peer.close()
    finally:
        server.stop()
        ctx.term()
    assert names.endpoint.startswith("tcp://127.0.0.1:")


def test_a_taken_port_is_a_clear_error(names):
    port = int(names.endpoint.rsplit(":", 1)[1])
    with pytest.raises(OSError, match=f"cannot bind the name server on 127.0.0.1:{port}"):
        Network(stepper=None, port=port)


def test_hello(peer):
    assert peer.ok(0) == [0, "/nameserver", 0, [p.PROTOCOL_VERSION], []]
    assert peer.ok(0, params=[p.PROTOCOL_VERSION])[3] == [p.PROTOCOL_VERSION]


def test_hello_of_another_version(peer):
    reply = peer.ask(0, params=[99])
    assert reply[0] == p.VERSION_MISMATCH and "99" in reply[1]


def test_lookup(peer, names):
    assert peer.ok(1, "/robot1/motors")[1] == "tcp://127.0.0.1:1"
    assert peer.ok(1, "/nameserver")[1] == names.endpoint


def test_lookup_of_an_unknown_name(peer):
    error, text, command, params, data = peer.ask(1, "/robotX/motors")
    assert (error, command) == (p.UNKNOWN_NAME, 1)
    assert "/robotX/motors" in text and text.endswith("names")


def test_lookup_needs_a_name(peer):
    assert peer.ask(1)[0] == p.WRONG_ARITY


def test_list_everything_and_by_prefix(peer):
    reply = peer.ok(2)
    rows = reply[1].splitlines()
    assert reply[3] == [len(rows)] == [6]
    assert "/sim tcp://127.0.0.1:3" in rows and rows == sorted(rows)
    robot1 = peer.ok(2, "/robot1")
    assert robot1[3] == [4]  # /robot1, its two modules, and /robot10 (a prefix, like yarp)
    assert peer.ok(2, "/nothing") == [0, "", 2, [0], []]


def test_unregister_prefix_keeps_longer_names(names, peer):
    names.unregister_prefix("/robot1")
    assert peer.ask(1, "/robot1/sonar")[0] == p.UNKNOWN_NAME
    assert peer.ok(1, "/robot10")[1] == "tcp://127.0.0.1:2"


def test_integers_and_floats_are_accepted_in_data(peer):
    assert peer.ask(1, "/sim", data=[1, 2.5])[0] == p.WRONG_ARITY  # lookup takes no data


def test_unknown_command(peer):
    for command in (3, 100, -1, 2**40):
        error, text, cmd, *_ = peer.ask(command)
        assert (error, cmd) == (p.UNKNOWN_COMMAND, command) and str(command) in text


def test_bad_messages_get_a_reply(peer):
    for frame in (b"", b"\xc1", msgpack.packb([0, "", 1]), msgpack.packb([0, 1, "1", [], []]),
                  msgpack.packb({"command": 1}), b"\xff" * 100):
        error, text, command, params, data = peer.raw(frame)
        assert (error, command, params, data) == (p.BAD_MESSAGE, -1, [], []), text
        assert text
    assert peer.ok(0)[1] == "/nameserver"


def test_more_than_one_frame_is_bad(peer):
    peer.send_frames([msgpack.packb([0, "/sim", 1, [], []])] * 2)
    error, text, *_ = peer.receive()
    assert error == p.BAD_MESSAGE and "one frame" in text


def test_a_req_socket_with_correlation_gets_its_reply(names):
    peer = Peer(names.endpoint)
    peer.sock.setsockopt(zmq.REQ_CORRELATE, 1)
    peer.sock.setsockopt(zmq.REQ_RELAXED, 1)
    assert peer.ok(1, "/sim")[1] == "tcp://127.0.0.1:3"
    peer.close()


def test_an_oversized_message_drops_the_connection_only(names):
    big = Peer(names.endpoint, zmq.DEALER)
    other = Peer(names.endpoint)
    big.send_frames([msgpack.packb([0, "x" * (p.MAX_FRAME_BYTES + 1), 1, [], []])])
    assert not big.sock.poll(300), "a frame beyond the cap gets no reply: the peer is dropped"
    assert other.ok(1, "/sim")[1] == "tcp://127.0.0.1:3"
    big.reconnect()
    assert big.ok(0)[1] == "/nameserver"
    big.close()
    other.close()


def test_many_clients_at_once(names):
    peers = [Peer(names.endpoint, kind) for kind in (zmq.REQ, zmq.DEALER) * 10]
    for i, peer in enumerate(peers):
        peer.send_frames([msgpack.packb([0, "/robot1" if i % 2 else "/sim", 1, [], []])])
    for i, peer in enumerate(peers):
        assert peer.receive()[1] == ("tcp://127.0.0.1:1" if i % 2 else "tcp://127.0.0.1:3")
        peer.close()


def test_stop_releases_the_port():
    ctx = zmq.Context()
    server = NameServer(ctx, port=0).start()
    port = int(server.endpoint.rsplit(":", 1)[1])
    server.stop()
    ctx.term()  # returns once every socket is closed (as Network.close does)
    ctx = zmq.Context()
    again = NameServer(ctx, port=port).start()
    assert again.endpoint == server.endpoint
    again.stop()
    ctx.term()


class _Moody(Server):
    """A server whose handler fails the way a bug or a stalled stepper would."""

    def handle(self, msg, command):
        if msg.text == "stalled":
            raise FutureTimeout()
        raise RuntimeError("a bug")


def test_a_failing_handler_is_an_error_reply_and_the_server_lives_on(caplog):
    ctx = zmq.Context()
    server = _Moody(ctx, "/moody", p.NAME_COMMANDS).start()
    peer = Peer(server.endpoint)
    try:
        error, text, *_ = peer.ask(1, "anything")
        assert error == p.INTERNAL and "a bug" in text
        assert peer.ask(1, "stalled")[0] == p.TIMEOUT
        assert peer.ok(0)[1] == "/moody"
        assert any("command 1 failed" in r.getMessage() for r in caplog.records)
    finally:
        peer.close()
        server.stop()
        ctx.term()


def test_every_server_binds_the_address_asked_for():
    from helpers import robot, scenario
    from nethelpers import live

    with live(scenario(robots=[robot("r1")]), bind="127.0.0.2", start=False) as run:
        rows = Peer(run.network.endpoint).ok(2)[1].splitlines()
        assert len(rows) > 5
        assert all(row.split()[1].startswith("tcp://127.0.0.2:") for row in rows), rows
