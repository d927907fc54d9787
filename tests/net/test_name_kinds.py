"""Names that are not request/reply servers: the name server knows each name's kind, and the
gateway and the Python client refuse a request to a stream at once instead of waiting on it."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time

import pytest
import zmq

from coopsim.client import Client, RemoteError
from coopsim.net import protocol as p
from coopsim.net.gateway import Gateway
from coopsim.net.nameserver import NameServer

from helpers import robot, scenario
from nethelpers import Peer, live, run_with_gateway

GATEWAY_WAIT = 30.0  # s a test waits for a gateway line: far beyond any timeout in play


@pytest.fixture(scope="module")
def run():
    with live(scenario(robots=[robot("r1")], mode="realtime")) as run:
        yield run


def _line(sock: socket.socket, items) -> list:
    """Send one request line on a raw gateway connection and return the reply line."""
    sock.sendall(json.dumps(items).encode() + b"\n")
    raw = sock.makefile("rb").readline()
    assert raw.endswith(b"\n"), f"no reply line (got {raw!r})"
    return json.loads(raw)


def test_lookup_answers_the_kind_of_a_name(run):
    peer = Peer(run.network.endpoint)
    try:
        assert peer.ok(1, "/sim")[3] == [p.PORT_KINDS.index("rep")]
        assert peer.ok(1, "/r1/sonar")[3] == [p.PORT_KINDS.index("rep")]
        assert peer.ok(1, "/nameserver")[3] == [p.PORT_KINDS.index("rep")]
        assert peer.ok(1, "/sim/state")[3] == [p.PORT_KINDS.index("pub")]
    finally:
        peer.close()


def test_list_keeps_two_words_per_line_and_gives_kinds_when_asked(run):
    peer = Peer(run.network.endpoint)
    try:
        old = peer.ok(2)[1].splitlines()
        assert all(len(line.split(" ")) == 2 for line in old), old  # old clients unchanged
        reply = peer.ok(2, "", params=[1])
        rows = {line.split(" ")[0]: line.split(" ") for line in reply[1].splitlines()}
        assert reply[3] == [len(rows)] == [len(old)]
        assert rows["/sim/state"][2] == "pub" and rows["/sim"][2] == "rep"
        assert rows["/r1/motors"][2] == "rep"
        assert peer.ask(2, "", params=[2])[0] == p.OUT_OF_RANGE
    finally:
        peer.close()


def test_an_unknown_kind_is_refused_at_registration():
    ctx = zmq.Context()
    names = NameServer(ctx, port=0)
    try:
        with pytest.raises(ValueError, match="kind"):
            names.register("/x", "tcp://127.0.0.1:1", kind="push")
    finally:
        names.stop()
        ctx.term()


def test_the_gateway_refuses_a_stream_at_once_every_time(run):
    gateway = Gateway(run.network.endpoint, timeout=GATEWAY_WAIT).start()
    try:
        with socket.create_connection(gateway.address, timeout=GATEWAY_WAIT / 2) as sock:
            for _ in range(3):  # the second request used to wedge the connection forever
                error, text, command, *_ = _line(sock, ["/sim/state", 0, "", 23, [], []])
                assert (error, command) == (p.NOT_ALLOWED, 23)
                assert "/sim/state" in text and "pub" in text and "subscribe" in text
            assert _line(sock, ["/sim", 0, "", 0, [], []])[:2] == [0, "/sim"]
    finally:
        gateway.close()


def _stream_posing_as_server(run) -> zmq.Socket:
    """A PUB socket registered as if it were a request/reply server (a wrong registration)."""
    pub = run.network.ctx.socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    run.network.names.register("/impostor", f"tcp://127.0.0.1:{port}")
    return pub


def test_a_server_that_never_answers_costs_one_timeout_per_request(run):
    pub = _stream_posing_as_server(run)
    gateway = Gateway(run.network.endpoint, timeout=0.3).start()
    try:
        with socket.create_connection(gateway.address, timeout=GATEWAY_WAIT) as sock:
            for _ in range(3):  # each answered: error 9, never a wedged connection
                assert _line(sock, ["/impostor", 0, "", 1, [], []])[0] == p.TIMEOUT
            assert _line(sock, ["/sim", 0, "", 0, [], []])[:2] == [0, "/sim"]
    finally:
        gateway.close()
        run.network.names.unregister_prefix("/impostor")
        pub.close(0)


def test_closing_a_gateway_with_stuck_requests_is_quick(run):
    pub = _stream_posing_as_server(run)
    gateway = Gateway(run.network.endpoint, timeout=3600).start()
    socks = [socket.create_connection(gateway.address, timeout=GATEWAY_WAIT) for _ in range(16)]
    try:
        for sock in socks:  # two requests each: the second used to block its thread for good
            for _ in range(2):
                sock.sendall(b'["/impostor", 0, "", 1, [], []]\n')
        time.sleep(0.5)  # let every connection thread take its requests
        closer = threading.Thread(target=gateway.close, daemon=True)
        closer.start()
        closer.join(GATEWAY_WAIT)
        assert not closer.is_alive(), "Gateway.close() hung on stuck connections"
        # Every connection thread ended inside close's own bounded wait (a stuck one makes
        # close leave the ZeroMQ context open); it used to wait 2 s per thread and leave them
        assert gateway.ctx.closed, "Gateway.close() left connection threads stuck"
    finally:
        for sock in socks:
            sock.close()
        run.network.names.unregister_prefix("/impostor")
        pub.close(0)


def test_the_client_refuses_a_stream_where_it_wants_a_server(run):
    with Client(run.network.endpoint, timeout=GATEWAY_WAIT) as client:
        with pytest.raises(RemoteError) as caught:
            client.hello("/sim/state")
        assert caught.value.code == p.NOT_ALLOWED and "pub" in caught.value.text
        assert client.lookup("/sim/state").startswith("tcp://")  # a plain lookup still works
        assert client.kind("/sim/state") == "pub" and client.kind("/r1") == "rep"
        assert client.hello("/sim") == (p.PROTOCOL_VERSION, "/sim")


def test_a_client_request_to_a_dead_handshake_times_out_every_time(run):
    pub = _stream_posing_as_server(run)
    codes = []

    def ask_three_times():
        with Client(run.network.endpoint, timeout=0.3) as client:
            endpoint = client.lookup("/impostor")
            for _ in range(3):  # the second send used to block forever (no peer to queue on)
                try:
                    client.request(endpoint, 1)
                except Exception as exc:  # noqa: BLE001 -- its code is checked below
                    codes.append(getattr(exc, "code", repr(exc)))

    try:
        asker = threading.Thread(target=ask_three_times, daemon=True)
        asker.start()
        asker.join(GATEWAY_WAIT)
        assert not asker.is_alive(), f"a request hung (codes so far: {codes})"
        assert codes == [p.TIMEOUT] * 3
    finally:
        run.network.names.unregister_prefix("/impostor")
        pub.close(0)


@pytest.mark.slow
def test_sigterm_ends_a_run_whose_gateway_got_stream_requests():
    proc, address = run_with_gateway()
    socks = []
    try:
        for _ in range(16):  # each of these used to wedge its connection's thread for good
            sock = socket.create_connection(address, timeout=GATEWAY_WAIT)
            sock.sendall(b'["/sim/state", 0, "", 1, [], [5]]\n["/sim/state", 0, "", 23, [], []]\n')
            socks.append(sock)
        replies = [json.loads(sock.makefile("rb").readline()) for sock in socks]
        assert all(r[0] == 0 for r in replies), replies  # subscribed, streaming
        proc.send_signal(signal.SIGTERM)
        proc.wait(GATEWAY_WAIT)  # 16 wedged threads used to take 2 s each, then hang in term()
    finally:
        for sock in socks:
            sock.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
