"""The JSON-lines gateway under abuse: idle and greedy clients, fair admission, and every
malformed line an error line (never a traceback, never a closed connection)."""

from __future__ import annotations

import json
import logging
import random
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coopsim.net import protocol as p
from coopsim.net.gateway import Gateway

from helpers import robot, scenario
from nethelpers import live, run_with_gateway

WAIT = 30.0  # s a test waits for a line: far beyond every timeout in play
SEED = 20260311


@pytest.fixture(scope="module")
def run():
    with live(scenario(robots=[robot("r1")], mode="realtime")) as run:
        yield run


@pytest.fixture
def no_errors(caplog):
    """The test must not log any error (a traceback is an error record)."""
    caplog.set_level(logging.WARNING, logger="coopsim")
    yield
    bad = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not bad, bad


class Line:
    """A raw gateway connection, optionally from another loopback source address."""

    def __init__(self, address, source: str | None = None) -> None:
        self.sock = socket.create_connection(address, timeout=WAIT,
                                             source_address=(source, 0) if source else None)
        self.file = self.sock.makefile("rb")

    def send(self, raw: bytes) -> None:
        self.sock.sendall(raw + b"\n")

    def ask(self, items) -> list:
        self.send(items if isinstance(items, bytes) else json.dumps(items).encode())
        return self.reply()

    def reply(self) -> list:
        raw = self.file.readline()
        assert raw.endswith(b"\n"), f"connection closed (got {raw!r})"
        return json.loads(raw)

    def closed(self) -> bool:
        """True when the gateway has closed the connection (after any lines still coming)."""
        return self.file.readline() == b""

    def told_and_closed(self, code: int, *words: str) -> bool:
        """The gateway's last line has ``code`` and every word, then the connection closed."""
        error, text, *_ = self.reply()
        assert error == code and all(w in text for w in words), text
        return self.closed()

    def close(self) -> None:
        self.file.close()
        self.sock.close()


HELLO = ["/sim", 0, "", 0, [], []]


def test_a_lone_surrogate_is_an_error_line_not_a_closed_connection(run, no_errors):
    gateway = Gateway(run.network.endpoint).start()
    line = Line(gateway.address)
    try:
        for raw in (b'["/\\ud800", 0, "", 0, [], []]', b'["/sim", 0, "\\udfff", 0, [], []]',
                    b'["/r1/\\ud83d", 0, "", 200, [], []]'):
            error, text, command, params, data = line.ask(raw)
            assert (error, command, params, data) == (p.BAD_MESSAGE, -1, [], []), text
            assert "Unicode" in text
        assert line.ask(HELLO)[:2] == [0, "/sim"]
    finally:
        line.close()
        gateway.close()


def _junk_line(rng: random.Random) -> bytes:
    """A malformed or hostile request line: mutated JSON, wrong shapes, odd strings."""
    good = json.dumps([rng.choice(["/sim", "/r1", "/r1/sonar", "/nameserver", "/sim/state"]),
                       0, rng.choice(["", "r1", "x" * 50]), rng.choice([0, 1, 10, 23, 200]),
                       [], [rng.random()]])
    roll = rng.random()
    if roll < 0.4:  # flip, drop and insert characters of a valid line
        chars = list(good)
        for _ in range(rng.randint(1, 5)):
            at = rng.randrange(len(chars))
            how = rng.randrange(3)
            if how == 0:
                chars[at] = rng.choice('[]{}",:0-9e.\\u/ aZ\x00')
            elif how == 1:
                del chars[at]
            else:
                chars.insert(at, rng.choice(['\\ud800', '\\u0000', 'NaN', '1e999', '"', ',']))
        return "".join(chars).encode("utf-8", "surrogatepass")
    if roll < 0.7:  # valid JSON of the wrong shape or types
        value = rng.choice([None, True, 1, 1.5, "x", {}, {"a": 1}, [], [1] * 6, ["/sim"] * 6,
                            ["/sim", 0, "", 1, [2**70], []], ["/sim", 0, "", 1, [], [True]],
                            ["/sim", "0", "", 1, [], []], ["/sim", 0, "", 1.5, [], []],
                            ["/sim", 0, "", 1, {}, []], ["sim", 0, "", 1, [], []],
                            ["/" + "\ud800" * rng.randint(1, 3), 0, "", 0, [], []],
                            ["/sim", 0, "\udc80x", 0, [], []], ["/sim", 0, "", -2**63 - 1, [], []]])
        return json.dumps(value).encode()
    if roll < 0.9:  # bytes that are not UTF-8 or not JSON
        return bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 60))).replace(b"\n", b"")
    return b"[" * rng.randint(1, 5000)  # nesting


def test_fuzzed_lines_each_get_one_error_line_and_the_session_goes_on(run, no_errors):
    rng = random.Random(SEED)
    gateway = Gateway(run.network.endpoint, timeout=5.0).start()
    line = Line(gateway.address)
    codes: dict[int, int] = {}
    try:
        for i in range(1500):
            raw = _junk_line(rng)
            if not raw.strip():
                continue
            reply = line.ask(raw)
            assert isinstance(reply, list) and len(reply) == 5, (i, raw, reply)
            assert reply[0] in p.ERROR_NAMES and reply[0] not in (p.TIMEOUT, p.INTERNAL), \
                (i, raw, reply)  # a documented code; no 9, no 10
            assert isinstance(reply[1], str) and (reply[1] or not reply[0]), (i, raw, reply)
            codes[reply[0]] = codes.get(reply[0], 0) + 1
        assert line.ask(HELLO)[:2] == [0, "/sim"]
    finally:
        line.close()
        gateway.close()
    assert codes.get(p.BAD_MESSAGE, 0) > 500, codes


def test_an_idle_connection_is_told_and_closed(run):
    gateway = Gateway(run.network.endpoint, idle_timeout=0.5).start()
    line = Line(gateway.address)
    try:
        assert line.ask(HELLO)[0] == 0
        # nothing sent: the gateway speaks first
        assert line.told_and_closed(p.TIMEOUT, "idle", "0.5 s")
    finally:
        line.close()
        gateway.close()


def test_a_line_trickled_byte_by_byte_does_not_keep_a_connection_alive(run):
    gateway = Gateway(run.network.endpoint, idle_timeout=0.5).start()
    sock = socket.create_connection(gateway.address, timeout=0.05)
    got = None
    try:
        deadline = time.monotonic() + WAIT
        while got is None and time.monotonic() < deadline:
            try:
                sock.sendall(b" ")  # never a whole line
                got = sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                got = b""  # reset: closed (the idle line may have been lost with it)
    finally:
        sock.close()
        gateway.close()
    assert got is not None, "the gateway kept a trickling connection open"
    assert got == b"" or json.loads(got.splitlines()[0])[0] == p.TIMEOUT, got


def test_when_full_the_longest_idle_connection_makes_room(run):
    gateway = Gateway(run.network.endpoint, max_connections=3, evict_idle=0.2).start()
    lines = [Line(gateway.address) for _ in range(3)]
    try:
        for line in lines:
            assert line.ask(HELLO)[0] == 0
        time.sleep(0.6)
        assert lines[1].ask(HELLO)[0] == 0  # 1 and 2 were active since 0 last was
        assert lines[2].ask(HELLO)[0] == 0
        newcomer = Line(gateway.address)
        assert newcomer.ask(HELLO)[:2] == [0, "/sim"]  # admitted, not refused
        assert lines[0].told_and_closed(p.FAILED, "room", "idle")
        for line in (lines[1], lines[2], newcomer):
            assert line.ask(HELLO)[0] == 0
        newcomer.close()
    finally:
        for line in lines:
            line.close()
        gateway.close()


def test_when_full_of_busy_connections_a_newcomer_is_refused(run):
    gateway = Gateway(run.network.endpoint, max_connections=2, evict_idle=3600).start()
    lines = [Line(gateway.address) for _ in range(2)]
    try:
        for line in lines:
            assert line.ask(HELLO)[0] == 0
        extra = Line(gateway.address)
        assert extra.told_and_closed(p.FAILED, "2 connections")
        extra.close()
        for line in lines:
            assert line.ask(HELLO)[0] == 0
    finally:
        for line in lines:
            line.close()
        gateway.close()


def test_one_address_cannot_take_every_connection(run):
    gateway = Gateway(run.network.endpoint, max_connections=4, per_address=2,
                      evict_idle=3600).start()
    mine = [Line(gateway.address, "127.0.0.1") for _ in range(2)]
    try:
        for line in mine:
            assert line.ask(HELLO)[0] == 0
        third = Line(gateway.address, "127.0.0.1")
        assert third.told_and_closed(p.FAILED, "127.0.0.1", "2 connections")
        third.close()
        other = Line(gateway.address, "127.0.0.2")  # another address still gets in
        assert other.ask(HELLO)[:2] == [0, "/sim"]
        other.close()
    finally:
        for line in mine:
            line.close()
        gateway.close()


def test_an_address_at_its_cap_makes_room_from_its_own_idle_connections(run):
    gateway = Gateway(run.network.endpoint, max_connections=4, per_address=2,
                      evict_idle=0.2).start()
    other = Line(gateway.address, "127.0.0.2")
    mine = [Line(gateway.address, "127.0.0.1") for _ in range(2)]
    try:
        for line in (other, *mine):
            assert line.ask(HELLO)[0] == 0
        time.sleep(0.6)
        assert mine[1].ask(HELLO)[0] == 0  # mine[0] is now this address's longest idle
        newcomer = Line(gateway.address, "127.0.0.1")
        assert newcomer.ask(HELLO)[0] == 0
        assert mine[0].told_and_closed(p.FAILED, "room")
        assert other.ask(HELLO)[0] == 0  # the other address's idle connection was spared
        newcomer.close()
    finally:
        for line in (other, *mine):
            line.close()
        gateway.close()


@pytest.mark.slow
def test_coopsim_gateway_idle_timeout_option(run):
    coopsim = Path(sys.executable).parent / "coopsim"
    proc = subprocess.Popen([coopsim, "gateway", run.network.endpoint, "--json-port", "0",
                             "--idle-timeout", "0.5"], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        match = re.match(r"json gateway: ([\d.]+):(\d+)", proc.stderr.readline().decode())
        assert match
        line = Line((match[1], int(match[2])))
        assert line.told_and_closed(p.TIMEOUT, "idle")
        line.close()
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.slow
def test_coopsim_run_json_idle_timeout_option():
    proc, address = run_with_gateway("--json-idle-timeout", "0.5")
    try:
        line = Line(address)
        assert line.told_and_closed(p.TIMEOUT, "idle")
        line.close()
    finally:
        proc.terminate()
        proc.wait(30)
