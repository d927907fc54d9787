"""Run transcripts against a running server, through one of three transports.

* :class:`PythonTransport`: coopsim's own Python client (``Client.request_many``, which returns
  error replies as they came), plus a bare ZeroMQ socket for the ``raw`` steps;
* :class:`GatewayTransport`: the JSON-lines gateway (docs/protocol.md section 6);
* :class:`ProcessTransport`: any client's transcript runner, a process that reads one request
  per line on stdin and writes the reply on stdout (the *line protocol*, below), so clients in
  C, JavaScript and Octave run the very same transcripts through their own request functions.

Line protocol (tab-separated, one line each way; text as UTF-8 hex, numbers comma-separated)::

    request:  CONN  PORT  COMMAND  TEXT_HEX  PARAMS  DATA        e.g. 1 /bot 200 (empty) ...
    reply:    ERROR  COMMAND  TEXT_HEX  PARAMS  DATA

CONN (1 or 2) names the runner's connection: steps of connection 2 use sockets of their own.
"""

from __future__ import annotations

import json
import math
import select
import socket
import subprocess
from dataclasses import dataclass, field

import zmq

from ..client import Client
from ..model.errors import ProtocolError
from ..net.protocol import Message
from .transcript import Step, load_all, match

WAIT = 30.0  # s a reply may take by default before the step fails (a hung server fails)


class Unreachable(ProtocolError):
    """The name server does not answer: nothing to test (exit 2)."""


@dataclass
class Report:
    """What a run found: steps passed, failed (with why) and skipped (with why)."""

    passed: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    skipped: list = field(default_factory=list)

    def lines(self, verbose: bool = False) -> list[str]:
        """The report as text lines: every failure, the skips when verbose, then a summary."""
        out = [f"FAIL {s.where} {s.id}: {'; '.join(why)}" for s, why in self.failed]
        if verbose:
            out += [f"skip {s.where} {s.id}: {why}" for s, why in self.skipped]
        out.append(f"{len(self.passed)} passed, {len(self.failed)} failed, "
                   f"{len(self.skipped)} skipped")
        return out


class PythonTransport:
    """Transcripts through coopsim's Python client (one Client per connection number)."""

    offers = {"raw"}

    def __init__(self, nameserver: str, keys=None, timeout: float = WAIT) -> None:
        self.nameserver, self.keys, self.timeout = nameserver, keys, timeout
        self._clients: dict[int, Client] = {}
        self._ctx = zmq.Context.instance()

    def _client(self, conn: int) -> Client:
        if conn not in self._clients:
            self._clients[conn] = Client(self.nameserver, timeout=self.timeout, keys=self.keys)
        return self._clients[conn]

    def exchange(self, step: Step, conn: int = 1) -> list:
        """Send the step's request (or raw frame) to its port; return the five-item reply."""
        client = self._client(conn)
        endpoint = self.endpoint(client, step.port)
        if step.raw is not None:
            return self._raw(endpoint, step.raw)
        error, text, command, params, data = step.send
        reply = client.request_many([(endpoint, command, text, params, data)])[0]
        return [reply.error, reply.text, reply.command, list(reply.params), list(reply.data)]

    def endpoint(self, client: Client, port: str) -> str:
        if port == "/nameserver":
            return self.nameserver
        reply = client.request_many([(self.nameserver, 1, port, (), ())])[0]
        if reply.error:
            raise ProtocolError(reply.error, reply.text)
        return reply.text

    def _raw(self, endpoint: str, frame: bytes) -> list:
        sock = self._ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        if self.keys is not None:
            self.keys.apply(sock)
        try:
            sock.connect(endpoint)
            sock.send_multipart([b"", frame])
            if not sock.poll(int(self.timeout * 1000)):
                raise ProtocolError(9, f"no reply from {endpoint} within {self.timeout:g} s")
            reply = Message.from_wire(sock.recv_multipart()[-1], max_bytes=None)
        finally:
            sock.close(0)
        return [reply.error, reply.text, reply.command, list(reply.params), list(reply.data)]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()


class GatewayTransport:
    """Transcripts through the JSON-lines gateway at ``host:port`` (one TCP connection per
    connection number)."""

    offers = {"gateway"}

    def __init__(self, address: str, timeout: float = WAIT) -> None:
        host, _, port = address.rpartition(":")
        self.address, self.timeout = (host or "127.0.0.1", int(port)), timeout
        self._socks: dict[int, tuple[socket.socket, object]] = {}

    def _conn(self, conn: int):
        if conn not in self._socks:
            sock = socket.create_connection(self.address, timeout=self.timeout)
            self._socks[conn] = (sock, sock.makefile("rb"))
        return self._socks[conn]

    def exchange(self, step: Step, conn: int = 1) -> list:
        """Write the step as a line, read lines up to its five-item reply (stream lines, six
        items with the port first, are skipped)."""
        sock, reader = self._conn(conn)
        if step.line is not None:
            line = step.line.encode()
        else:
            line = json.dumps([step.port, *step.send]).encode()
        sock.sendall(line + b"\n")
        while True:
            text = reader.readline()
            if not text:
                self._socks.pop(conn)
                sock.close()
                raise ProtocolError(9, "the gateway closed the connection")
            items = json.loads(text)
            if len(items) == 5:
                return [math.nan if v is None else v for v in items[:4]] + [
                    [math.nan if v is None else v for v in items[4]]]

    def close(self) -> None:
        for sock, reader in self._socks.values():
            reader.close()
            sock.close()


class ProcessTransport:
    """Transcripts through a client's own runner process (the line protocol above)."""

    offers: set = set()

    def __init__(self, argv: list[str], env: dict | None = None, cwd=None,
                 timeout: float = WAIT) -> None:
        self.timeout = timeout
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, cwd=cwd, text=True, bufsize=1)

    def exchange(self, step: Step, conn: int = 1) -> list:
        error, text, command, params, data = step.send
        self.proc.stdin.write("\t".join([
            str(conn), step.port, str(command), text.encode().hex(),
            ",".join(str(int(v)) for v in params), ",".join(repr(float(v)) for v in data)])
            + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        reply = self.proc.stdout.readline() if ready else ""
        if not reply:
            raise ProtocolError(9, f"the client runner gave no reply line "
                                   f"(exit status {self.proc.poll()})")
        return parse_reply_line(reply)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def parse_reply_line(line: str) -> list:
    """A reply line of the line protocol as the five items."""
    fields = line.rstrip("\n").split("\t")
    if len(fields) != 5:
        raise ProtocolError(1, f"a reply line has 5 tab-separated fields, got {line!r}")
    error, command, text, params, data = fields
    return [int(error), bytes.fromhex(text).decode("utf-8", "replace"), int(command),
            [int(v) for v in params.split(",") if v],
            [float(v) for v in data.split(",") if v]]


def features(transport) -> set[str]:
    """What the server behind ``transport`` offers: ``live`` or ``replay``, ``ownership``
    (robot command ``claim`` listed by ``/bot`` or ``/arm``), ``flying`` (flight.scenario's
    robot ``cf`` listed), ``arms`` (its robot ``arm`` listed), plus what the transport itself
    offers.

    Raises:
        Unreachable: the name server does not answer its hello.
    """
    hello = Step("probe.hello", "probe", "/nameserver", [], [0, "", 0, [], []])
    try:
        transport.exchange(hello)
    except (ProtocolError, OSError) as exc:
        raise Unreachable(9, f"cannot reach the server: {exc}") from None
    names = transport.exchange(Step("probe.list", "probe", "/nameserver", [],
                                    [0, "/", 2, [], []]))[1].split("\n")
    found = {line.split(" ")[0] for line in names}
    offered = set(transport.offers) | {"replay" if "/playback" in found else "live"}
    if "/cf" in found:  # flight.scenario's Crazyflie: the flying robot's modules
        offered.add("flying")
    if "/arm" in found:  # flight.scenario's IRB 120: the arm's modules (protocol 6)
        offered.add("arms")
    robot = next((name for name in ("/bot", "/arm") if name in found), None)
    if robot is not None:  # the conformance scenario's robot, or the flight scenario's arm
        table = transport.exchange(Step("probe.commands", "probe", robot, [],
                                        [0, "", 3, [], []]))[1]
        if any(line.split(" ")[1:2] == ["claim"] for line in table.split("\n")):
            offered.add("ownership")
    return offered


def run(transport, transcripts: dict[str, list[Step]] | None = None,
        only: tuple[str, ...] = (), offer: tuple[str, ...] = ()) -> Report:
    """Run every transcript (or those named in ``only``) through ``transport``, in order;
    ``offer`` adds features the probe cannot see (``idle_timeout``).

    Raises:
        Unreachable: the name server does not answer.
    """
    transcripts = load_all() if transcripts is None else transcripts
    offered = features(transport) | set(offer)
    report = Report()
    for name, steps in transcripts.items():
        if only and name not in only:
            continue
        for step in steps:
            missing = [r for r in step.requires if r not in offered]
            if missing:
                report.skipped.append((step, f"needs {', '.join(missing)}"))
                continue
            _run_step(transport, step, report)
    return report


def _run_step(transport, step: Step, report: Report) -> None:
    try:
        got = transport.exchange(step, step.conn)
    except (ProtocolError, OSError, ValueError) as exc:
        report.failed.append((step, [f"no reply: {exc}"]))
        return
    errors = match(step.expect, got)
    (report.failed.append((step, errors)) if errors else report.passed.append(step))

