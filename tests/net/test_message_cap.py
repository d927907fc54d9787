"""The message cap: a request over 65,536 bytes is answered with error 1 wherever the transport
lets the server see it; a frame beyond the transport cap drops the connection (and a REQ socket
with REQ_RELAXED recovers); a request of many frames is refused with error 1."""

from __future__ import annotations

import msgpack
import pytest
import zmq

from coopsim.net import protocol as p

from helpers import robot, scenario
from nethelpers import Peer, live

SERVERS = ["/nameserver", "/sim", "/r1"]


@pytest.fixture(scope="module")
def run():
    with live(scenario(robots=[robot("r1")], mode="realtime")) as run:
        yield run


def _endpoint(run, name: str) -> str:
    return run.network.endpoint if name == "/nameserver" else run.network.names.lookup(name)


def _big(size: int) -> bytes:
    return msgpack.packb([0, "x" * size, 1, [], []])


@pytest.mark.parametrize("name", SERVERS)
@pytest.mark.parametrize("kind", [zmq.REQ, zmq.DEALER], ids=["req", "dealer"])
def test_a_request_over_the_limit_gets_error_1(run, name, kind):
    peer = Peer(_endpoint(run, name), kind)
    try:
        for size in (p.MAX_MESSAGE_BYTES + 1, p.MAX_FRAME_BYTES - 100):
            error, text, command, *_ = peer.raw(_big(size))  # a plain REQ used to get nothing
            assert (error, command) == (p.BAD_MESSAGE, -1)
            assert str(p.MAX_MESSAGE_BYTES) in text
        assert peer.ok(0)[1] == name
    finally:
        peer.close()


@pytest.mark.parametrize("name", SERVERS)
def test_beyond_the_transport_cap_the_connection_drops_and_a_relaxed_req_recovers(run, name):
    peer = Peer(_endpoint(run, name))
    other = Peer(_endpoint(run, name))
    try:
        peer.sock.setsockopt(zmq.REQ_RELAXED, 1)  # what docs/protocol.md tells clients to do
        peer.sock.setsockopt(zmq.REQ_CORRELATE, 1)
        peer.send_frames([_big(p.MAX_FRAME_BYTES + 1)])
        assert not peer.sock.poll(500), "beyond the transport cap there is no reply"
        assert other.ok(0)[1] == name  # only that connection went
        assert peer.ask(0, timeout=10.0)[1] == name  # same socket: it reconnected by itself
    finally:
        peer.close()
        other.close()


@pytest.mark.parametrize("name", SERVERS)
@pytest.mark.parametrize("kind", [zmq.REQ, zmq.DEALER], ids=["req", "dealer"])
def test_a_request_of_many_frames_is_refused(run, name, kind):
    peer = Peer(_endpoint(run, name), kind)
    try:
        chunk = b"y" * 60_000
        peer.send_frames([chunk] * 300)
        error, text, command, *_ = peer.receive(timeout=30.0)
        assert (error, command) == (p.BAD_MESSAGE, -1) and "300" in text and "one frame" in text
        assert peer.ok(0)[1] == name
    finally:
        peer.close()


def test_giving_memory_back_starts_no_process(monkeypatch):
    """The server gives a flood's memory back with glibc's malloc_trim, found in the process's
    own symbols: ``ctypes.util.find_library`` ran ``ldconfig -p`` from the serving thread."""
    import subprocess

    from coopsim.net import server

    started = []
    monkeypatch.setattr(subprocess.Popen, "_execute_child",
                        lambda self, args, *a, **k: started.append(args) or 1 / 0)
    monkeypatch.setattr(server, "_TRIM", False)
    server.release_memory()
    assert started == []
    assert server._TRIM is not None  # glibc: found (this suite runs on Linux)
