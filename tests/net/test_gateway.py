"""The JSON-lines gateway: raw TCP sessions, bad lines, many connections, and the CLI flag."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from coopsim.formats.files import load
from coopsim.net.gateway import Gateway
from coopsim.net.gatewaylines import MAX_LINE
from coopsim.app.run import Run, RunOptions
from clienthelpers import SCENARIO, STEPS, assert_wandered  # the clients' scenario and checks

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def live(tmp_path):
    """A running lockstep simulation of one robot in the arena, with the gateway on a free port."""
    path = tmp_path / "one.scenario"
    path.write_text(SCENARIO)
    with Run(load(str(path)), RunOptions(port=0, controllers=False, json_port=0)) as run:
        run.start()
        yield run


class Session:
    """A netcat-like line session: write a line, read the reply line."""

    def __init__(self, address) -> None:
        self.sock = socket.create_connection(address, timeout=30)
        self.file = self.sock.makefile("rb")

    def ask(self, line) -> list:
        """Send a JSON value (or raw bytes/str) as one line; return the decoded reply."""
        if not isinstance(line, (bytes, str)):
            line = json.dumps(line)
        self.sock.sendall((line.encode() if isinstance(line, str) else line) + b"\n")
        return self.reply()

    def reply(self) -> list:
        """The next reply line, decoded (fails the test at end of stream)."""
        raw = self.file.readline()
        assert raw.endswith(b"\n"), f"connection closed (got {raw!r})"
        return json.loads(raw)

    def close(self) -> None:
        self.file.close()
        self.sock.close()


@pytest.fixture
def session(live):
    s = Session(live.gateway.address)
    yield s
    s.close()


def test_netcat_session_drives_a_robot(live, session):
    assert session.ask(["/nameserver", 0, "", 0, [8], []]) == [0, "/nameserver", 0, [8], []]
    endpoint = session.ask(["/nameserver", 0, "/robot1", 1, [], []])[1]
    assert endpoint.startswith("tcp://127.0.0.1:")
    for _ in range(STEPS):  # a simple avoid rule, in plain JSON over a plain socket
        error, _, _, params, d = session.ask(["/robot1/sonar", 0, "", 200, [], []])
        assert error == 0 and len(d) == 11 and len(params) == 1
        turn = 1.0 if min(d[3:8]) < 0.6 else 0.0
        reply = session.ask(["/robot1/motors", 0, "", 100, [], [0.3 - 0.5 * turn, 0.3]])
        assert reply[0] == 0 and reply[1].startswith("lockstep"), reply
    assert session.ask(["/robot1", 0, "", 2, [], []])[:4] == [0, "detached", 2, [1]]
    assert_wandered(live)


@pytest.mark.parametrize("line, code, command", [
    (b"hello", 1, -1),                                              # not JSON
    (b"\xff\xfe[]", 1, -1),                                         # not UTF-8
    (b'{"port": "/sim"}', 1, -1),                                   # not an array
    (b'["/sim", 0, "", 1, []]', 1, -1),                             # 5 items, not 6
    (b'[0, "", 1, [], [], []]', 1, -1),                             # no port first
    (b'["/sim", 0, 7, 1, [], []]', 1, 1),                           # text not a string
    (b'["/sim", 0, "", 1, [1.5], []]', 1, 1),                       # params not integers
    (b'["/sim", 0, "", 1, [], [' + b"[" * 30000 + b"]]", 1, -1),   # nested too deep
    (b'["/sim", 0, "", 1, [], [123456789012345678901234567890]]', 1, 1),  # beyond 64 bits
    (b'["/robotX/motors", 0, "", 100, [], [0.1, 0.1]]', 5, 100),   # unknown port
    (b'["/robot1", 0, "", 100, [], [0.1]]', 3, 100),               # wrong arity
    (b'["/robot1", 0, "", 101, [], [500, 0]]', 4, 101),             # out of range
    (b'["/robot1", 0, "", 100, [], [NaN, 0]]', 4, 100),             # not finite
    (b'["/robot1", 0, "", 999, [], []]', 2, 999),                  # unknown command
    (b'["/sim", 0, "", 0, [1], []]', 7, 0),                        # version mismatch
])
def test_a_bad_line_gets_an_error_line_and_the_session_goes_on(session, line, code, command):
    reply = session.ask(line)
    assert reply[0] == code and reply[2] == command, reply
    assert isinstance(reply[1], str) and reply[1]
    assert session.ask(["/sim", 0, "", 0, [], []])[:2] == [0, "/sim"]  # still served


def test_a_huge_line_gets_an_error_line_then_the_connection_closes(session):
    session.sock.sendall(b'["/sim", 0, "' + b"x" * (MAX_LINE + 10))  # no newline needed
    reply = session.reply()
    assert reply[0] == 1 and str(MAX_LINE) in reply[1]
    assert session.file.readline() == b""


def test_blank_lines_crlf_and_a_last_line_without_newline_are_fine(live):
    with socket.create_connection(live.gateway.address, timeout=30) as sock:
        sock.sendall(b'\r\n\n["/sim", 0, "", 0, [], []]\r\n["/nameserver", 0, "", 0, [], []]')
        sock.shutdown(socket.SHUT_WR)  # like `nc -N`: end of input after the last line
        lines = sock.makefile("rb").read().splitlines()
    assert [json.loads(x)[1] for x in lines] == ["/sim", "/nameserver"]


def test_many_connections_at_once(live):
    results, errors = [], []

    def client(i: int) -> None:
        try:
            s = Session(live.gateway.address)
            for _ in range(5):
                results.append(s.ask(["/robot1/gps", 0, "", 500, [], []])[0])
            s.close()
        except Exception as exc:  # noqa: BLE001 -- reported below, in the test's thread
            errors.append(f"{i}: {exc!r}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and results == [0] * 200


def test_connections_beyond_the_cap_are_told_and_closed(live):
    gateway = Gateway(live.network.endpoint, max_connections=2).start()
    try:
        kept = [Session(gateway.address) for _ in range(2)]
        for s in kept:  # both admitted and served
            assert s.ask(["/sim", 0, "", 0, [], []])[0] == 0
        extra = Session(gateway.address)
        assert extra.reply()[0] == 8
        assert extra.file.readline() == b""
        for s in (*kept, extra):
            s.close()
    finally:
        gateway.close()


@pytest.mark.slow
def test_coopsim_run_json_port_serves_the_gateway():
    coopsim = Path(sys.executable).parent / "coopsim"  # the venv's entry point
    proc = subprocess.Popen(
        [coopsim, "run", "scenarios/one_robot.scenario", "--headless", "--port", "0", "--mode",
         "lockstep", "--no-controllers", "--json-port", "0"], cwd=ROOT, stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        seen = [proc.stderr.readline().decode() for _ in range(2)]  # before the name server's
        match = next(filter(None, (re.match(r"json gateway: ([\d.]+):(\d+)", x) for x in seen)),
                     None)
        assert match, f"stderr began: {seen}"
        s = Session((match[1], int(match[2])))
        assert s.ask(["/robot1", 0, "", 0, [], []]) == [0, "/robot1", 0, [14], []]
        s.close()
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.slow
def test_coopsim_gateway_serves_a_running_simulation(live):
    coopsim = Path(sys.executable).parent / "coopsim"
    proc = subprocess.Popen([coopsim, "gateway", live.network.endpoint, "--json-port", "0"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    try:
        match = re.match(r"json gateway: ([\d.]+):(\d+)", proc.stderr.readline().decode())
        assert match
        s = Session((match[1], int(match[2])))
        assert s.ask(["/sim", 0, "", 10, [], []])[:2] == [0, "robot1"]
        s.close()
    finally:
        proc.terminate()
        proc.wait(30)


def test_each_gateway_connection_is_its_own_owner(live):
    """Two netcat sessions through the gateway: the first to drive robot1 owns it; the second
    gets error 11 naming the owner, reads freely, and claims it once the first released it."""
    first, second = Session(live.gateway.address), Session(live.gateway.address)
    try:
        assert first.ask(["/robot1", 0, "", 4, [], []])[0] == 0  # claim
        error, text, command, *_ = second.ask(["/robot1/motors", 0, "", 100, [], [0.1, 0.1]])
        assert (error, command) == (11, 100)
        assert text.startswith("robot1 is owned by the connection from 127.0.0.1:"), text
        assert second.ask(["/robot1/gps", 0, "", 500, [], []])[0] == 0
        assert first.ask(["/robot1", 0, "", 5, [], []])[:2] == [0, "released"]
        assert second.ask(["/robot1", 0, "", 4, [], []])[0] == 0
        assert first.ask(["/robot1/motors", 0, "", 102, [], []])[0] == 11
    finally:
        first.close()
        second.close()
