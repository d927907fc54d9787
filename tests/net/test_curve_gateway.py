"""The JSON-lines gateway's auth line, its token rule beyond loopback, and forwarding with keys.

The gateway is tried over real TCP in front of a run whose servers are Curve servers, bound on a
non-loopback address of this machine (tests/curvehelpers.py): the session's first line must be
``["/auth", 0, TOKEN, 0, [], []]``; anything else is answered with error 6 and the connection
is closed.
"""

from __future__ import annotations

import json
import socket

import pytest

from coopsim.formats.files import load
from coopsim.net import gatewaylines as gw
from coopsim.net.gateway import Gateway
from coopsim.net.security import ClientKeys, SecurityError

from curvehelpers import keys, net  # noqa: F401 -- fixtures
from nethelpers import SCENARIOS, live

TOKEN = "correct-horse-battery-staple"
AUTH = ["/auth", 0, TOKEN, 0, [], []]
STATUS = ["/sim", 0, "", 1, [], []]


@pytest.fixture(scope="module")
def run(net, keys):
    """A Curve run with its own gateway on the same address, token required."""
    with live(load(str(SCENARIOS / "one_robot.scenario")), bind=net.host, keys=str(keys),
              json_port=0, json_token=TOKEN) as running:
        yield running


def session(address, *lines, wait: float = 30.0) -> list:
    """Send each line (JSON values, or raw bytes), then read reply lines until the gateway
    closes the connection or ``wait`` s pass; returns the decoded replies (and "open" last if
    the connection was still open)."""
    with socket.create_connection(address, timeout=wait) as sock:
        for line in lines:
            sock.sendall(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n")
        replies, buffer = [], b""
        try:
            while len(replies) < len(lines) or not lines:
                chunk = sock.recv(65536)
                if not chunk:
                    return replies
                buffer += chunk
                *done, buffer = buffer.split(b"\n")
                replies += [json.loads(d) for d in done]
            sock.settimeout(0.5)  # every line answered: is the connection still open?
            return replies + (["closed"] if sock.recv(1) == b"" else ["open"])
        except TimeoutError:
            return replies + ["open"]


@pytest.mark.slow
def test_the_auth_line_opens_a_session_forwarded_to_curve_servers(run):
    """The run's gateway forwards with the run's own keys; the session stays open."""
    replies = session(run.gateway.address, AUTH, STATUS, ["/robot1/sonar", 0, "", 200, [], []])
    assert replies[0] == [0, "authenticated", 0, [], []]
    assert replies[1][0] == 0 and replies[1][3][4] == 1  # status: one robot
    assert replies[2][0] == 0 and len(replies[2][4]) == 11
    assert replies[3] == "open"


@pytest.mark.parametrize("first, text", [
    (["/auth", 0, "wrong-token-of-some-length", 0, [], []], "wrong token; closing"),
    (["/auth", 0, TOKEN[:-1], 0, [], []], "wrong token; closing"),
    (STATUS, 'the first line must be ["/auth", 0, "TOKEN", 0, [], []]; closing'),
    (["/auth", 0, TOKEN, 1, [], []], 'the first line must be ["/auth", 0, "TOKEN", 0, [], []]; '
                                     'closing'),
    (b"hello\n", 'the first line must be ["/auth", 0, "TOKEN", 0, [], []]; closing'),
])
@pytest.mark.slow
def test_anything_but_the_token_first_is_error_6_and_the_connection_closes(run, first, text):
    replies = session(run.gateway.address, first, STATUS)
    assert replies[0][:2] == [6, text]
    assert replies[1:] == []  # the status request was never answered: closed


@pytest.mark.slow
def test_no_auth_line_in_time_is_error_6_and_closed(run, monkeypatch):
    monkeypatch.setattr(gw, "AUTH_WAIT", 0.5)
    replies = session(run.gateway.address)
    assert replies == [[6, "no auth line within 0.5 s; closing", -1, [], []]]


@pytest.mark.slow
def test_beyond_loopback_the_gateway_needs_a_long_enough_token(net):
    with pytest.raises(SecurityError, match="would take anyone's commands: give it a token"):
        Gateway("tcp://127.0.0.1:9", bind=net.host if net.netns else "0.0.0.0")
    with pytest.raises(SecurityError, match="at least 16"):
        Gateway("tcp://127.0.0.1:9", bind="127.0.0.1", token="short")


@pytest.mark.slow
def test_with_keys_a_token_is_needed_even_on_loopback(run, keys):
    """Without one, any local user would reach the Curve-protected run with its keys."""
    alice = ClientKeys.load(keys / "clients" / "alice")
    with pytest.raises(SecurityError, match="forward anyone's commands with the run's CurveZMQ "
                                            "keys: give it a token"):
        Gateway(run.network.endpoint, bind="127.0.0.1", keys=alice)


def test_on_loopback_without_keys_no_token_is_needed_and_an_auth_line_is_answered():
    with live(load(str(SCENARIOS / "one_robot.scenario"))) as plain:
        gateway = Gateway(plain.network.endpoint).start()
        try:
            replies = session(gateway.address, STATUS, AUTH, STATUS)
        finally:
            gateway.close()
    assert replies[0][0] == 0 and replies[2][0] == 0
    assert replies[1] == [0, "authenticated", 0, [], []]


@pytest.mark.slow
def test_on_loopback_a_token_given_is_required(run, keys):
    alice = ClientKeys.load(keys / "clients" / "alice")
    gateway = Gateway(run.network.endpoint, token=TOKEN, keys=alice).start()
    try:
        assert session(gateway.address, STATUS)[0][0] == 6
        assert session(gateway.address, AUTH, STATUS)[1][0] == 0
    finally:
        gateway.close()


@pytest.mark.slow
def test_without_keys_the_gateway_gets_nothing_from_curve_servers(run):
    gateway = Gateway(run.network.endpoint, timeout=1.0).start()
    try:
        replies = session(gateway.address, STATUS)
    finally:
        gateway.close()
    assert replies[0][0] == 9  # no reply: the handshake never completes
