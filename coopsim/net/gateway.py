"""A plain-TCP JSON-lines gateway: the five-item messages as JSON arrays, one per line.

For languages and tools without ZeroMQ (netcat, telnet, a shell script, a spreadsheet macro).
A request line names its destination port first, then carries the five items::

    ["/robot1/sonar", 0, "", 200, [], []]

and the reply line is the five-item message the server answered::

    [0, "", 200, [57], [2.0, 2.0, 1.42, ...]]

The gateway looks the port up at the name server and forwards the request over ZeroMQ, exactly
as a native client would, so it works in front of a live run or a replay alike, and lockstep
motor replies block only the connection that sent them. Each connection has its own thread and
its own ZeroMQ sockets. docs/protocol.md section 6 is the normative description.

With a token (needed to listen beyond loopback) the first line of a connection must be the auth
line ``["/auth", 0, "TOKEN", 0, [], []]``; anything else is answered with error 6 and the
connection is closed. With CurveZMQ keys the gateway is a Curve client of the servers.
"""

from __future__ import annotations

import hmac
import json
import logging
import math
import socket
import threading

import msgpack
import zmq

from . import protocol as p
from ..model.errors import ProtocolError
from .protocol import Message
from .security import ClientKeys, SecurityError, is_loopback

log = logging.getLogger(__name__)

MAX_LINE = p.MAX_MESSAGE_BYTES  # a longer line gets an error line, then the connection closes
MAX_CONNECTIONS = 64  # one more is told so and closed
FORWARD_TIMEOUT = 10.0  # s to wait for a server's reply before answering error 9
_SLICE_MS = 100  # how often a waiting connection checks whether the gateway is closing
_RECV_BYTES = 65536
_DRAIN_SECONDS, _DRAIN_BYTES = 1.0, 1 << 20  # what is read and dropped after an over-long line
_SEND_MS = 1000  # a send waits only when there is no connection at all (refused by Curve)
AUTH_PORT = "/auth"  # the port name of the auth line
AUTH_WAIT = 10.0  # s a connection has to send its auth line
MIN_TOKEN = 16  # characters: a shorter token could be guessed


def parse_request(line: bytes) -> tuple[str, Message]:
    """Decode one request line into its port name and message.

    Raises:
        ProtocolError: BAD_MESSAGE with a sentence saying what is wrong.
    """
    try:
        items = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ProtocolError(p.BAD_MESSAGE, "not a line of UTF-8 JSON; send e.g. "
                            '["/robot1/sonar", 0, "", 200, [], []]') from None
    if not isinstance(items, list) or len(items) != 6:
        raise ProtocolError(p.BAD_MESSAGE, "a line is a JSON array of 6 items: "
                                           "[port, error_code, text, command, params, data]")
    port = items[0]
    if not isinstance(port, str) or not port.startswith("/"):
        raise ProtocolError(p.BAD_MESSAGE, 'the first item is a port name such as "/robot1"')
    try:
        wire = msgpack.packb(items[1:], use_bin_type=True)
    except (OverflowError, TypeError, ValueError):  # integers beyond 64 bits, and the like
        raise ProtocolError(p.BAD_MESSAGE, "a number does not fit the protocol's types") from None
    return port, Message.from_wire(wire)


def format_reply(msg: Message) -> bytes:
    """One reply line: the five items as a JSON array (non-finite numbers become null)."""
    data = [d if math.isfinite(d) else None for d in msg.data]
    items = [msg.error, msg.text, msg.command, list(msg.params), data]
    return json.dumps(items, ensure_ascii=False).encode() + b"\n"


class Gateway:
    """The JSON-lines gateway in front of one name server.

    Args:
        nameserver: The name server endpoint the gateway forwards through.
        bind: Address to listen on (127.0.0.1 unless told otherwise).
        port: TCP port; 0 picks a free one.
        max_connections: Connections served at once.
        timeout: Seconds to wait for a server's reply.
        token: The auth line's token (at least 16 characters); required beyond loopback.
        keys: CurveZMQ client keys to forward with (a run started with ``--keys``).

    Raises:
        SecurityError: a bind beyond loopback without a token, or a token too short.
    """

    def __init__(self, nameserver: str, bind: str = "127.0.0.1", port: int = 0,
                 max_connections: int = MAX_CONNECTIONS,
                 timeout: float = FORWARD_TIMEOUT, token: str | None = None,
                 keys: ClientKeys | None = None) -> None:
        self.nameserver = nameserver
        self.max_connections = max_connections
        self.timeout = timeout
        self.token, self.keys = check_token(token, bind), keys
        try:
            self._listener = socket.create_server((bind, port))
        except OSError as exc:
            raise OSError(f"cannot open the JSON gateway on {bind}:{port}: {exc}") from None
        self._listener.settimeout(_SLICE_MS / 1000)  # so the accept loop notices close()
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self.ctx = zmq.Context()
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[_Connection] = set()
        self._thread = threading.Thread(target=self._accept_loop, name="coopsim-gateway",
                                        daemon=True)

    def start(self) -> "Gateway":
        """Start accepting connections."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop accepting, close every connection and release the ZeroMQ sockets."""
        self.closing.set()
        if self._thread.is_alive():
            self._thread.join(2.0)
        self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            conn.shut()
        for conn in connections:
            conn.join(2.0)
        self.ctx.term()

    def forget(self, conn: "_Connection") -> None:
        """Called by a connection's thread when it ends."""
        with self._lock:
            self._connections.discard(conn)

    def _accept_loop(self) -> None:
        while not self.closing.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError as exc:  # e.g. out of file descriptors: log, breathe, go on
                log.warning("gateway: accept failed: %s", exc)
                self.closing.wait(_SLICE_MS / 1000)
                continue
            self._admit(sock)

    def _admit(self, sock: socket.socket) -> None:
        sock.settimeout(None)
        with self._lock:
            full = len(self._connections) >= self.max_connections
            if not full:
                conn = _Connection(self, sock)
                self._connections.add(conn)
        if full:
            _send_quietly(sock, format_reply(Message(
                p.FAILED, f"the gateway serves at most {self.max_connections} connections; "
                          "try again later", -1)))
            sock.close()
            return
        conn.start()


class _Connection(threading.Thread):
    """One client: reads request lines, forwards each, writes each reply, in order."""

    def __init__(self, gateway: Gateway, sock: socket.socket) -> None:
        super().__init__(name="coopsim-gateway-conn", daemon=True)
        self.gateway = gateway
        self.sock = sock
        self._zmq: dict[str, zmq.Socket] = {}

    def shut(self) -> None:
        """Wake the thread from a blocking read so it ends (called by Gateway.close)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already gone

    def run(self) -> None:
        try:
            lines = self._lines()
            if self.gateway.token is not None and not self._authenticate(lines):
                return
            for line in lines:
                self.sock.sendall(format_reply(self._answer(line)))
        except OSError:
            pass  # the client went away mid-reply
        except Exception:  # noqa: BLE001 -- the never-die boundary: one bad client, one log line
            log.exception("gateway: connection failed")
        finally:
            for zsock in self._zmq.values():
                zsock.close(0)
            self.sock.close()
            self.gateway.forget(self)

    def _lines(self):
        """Yield each non-empty line; after an over-long one send an error line and stop."""
        buffer = b""
        while not self.gateway.closing.is_set():
            chunk = self.sock.recv(_RECV_BYTES)
            lines = (buffer + chunk).split(b"\n")
            buffer = lines.pop()
            if not chunk:  # end of input: an unterminated last line is answered too
                lines.append(buffer)
            for line in lines:
                if len(line) > MAX_LINE:
                    self._too_long()
                    return
                if line.strip():
                    yield line
            if len(buffer) > MAX_LINE:
                self._too_long()
                return
            if not chunk:
                return

    def _too_long(self) -> None:
        self.sock.sendall(format_reply(Message(
            p.BAD_MESSAGE, f"line over {MAX_LINE} bytes; closing the connection", -1)))
        self._wind_down()

    def _wind_down(self) -> None:
        """Before closing after a last error line: end our side, drain what is still coming."""
        # Closing with unread input would send a reset that can destroy the error line before
        # the client reads it: end our side first and drain (boundedly) what is still coming.
        self.sock.shutdown(socket.SHUT_WR)
        self.sock.settimeout(_DRAIN_SECONDS)
        drained = 0
        try:
            while drained < _DRAIN_BYTES:
                chunk = self.sock.recv(_RECV_BYTES)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass  # timed out or reset: we tried

    def _authenticate(self, lines) -> bool:
        """Read the first line within AUTH_WAIT s; answer it; True if it carried the token."""
        self.sock.settimeout(AUTH_WAIT)
        try:
            line = next(lines, None)
        except TimeoutError:
            line = b""
        self.sock.settimeout(None)
        if line is None:
            return False  # the client left without a word
        reply = auth_reply(line, self.gateway.token)
        self.sock.sendall(format_reply(reply))
        if reply.error:
            self._wind_down()
        return reply.error == 0

    def _answer(self, line: bytes) -> Message:
        try:
            port, msg = parse_request(line)
        except ProtocolError as exc:
            return Message(exc.code, exc.text, -1)
        if port == AUTH_PORT:  # authenticated already, or no token needed here
            return msg.reply("authenticated")
        endpoint = self.gateway.nameserver
        if port != "/nameserver":
            found = self._forward(endpoint, Message(0, port, 1))
            if found.error:
                return msg.fail(found.error, found.text)
            endpoint = found.text
        return self._forward(endpoint, msg)

    def _forward(self, endpoint: str, msg: Message) -> Message:
        """Send ``msg`` to ``endpoint`` and wait for the reply (error 9 after the timeout)."""
        try:
            zsock = self._socket(endpoint)
            zsock.send(msg.to_wire())
        except zmq.Again:  # SNDTIMEO: refused at the CurveZMQ handshake, nowhere to send
            self._zmq.pop(endpoint).close(0)
            return msg.fail(p.TIMEOUT, f"no connection to {endpoint} (refused at the CurveZMQ "
                                       "handshake? see docs/protocol.md section 8)")
        except zmq.ZMQError as exc:  # e.g. a malformed endpoint, out of file descriptors
            return msg.fail(p.FAILED, f"cannot reach {endpoint}: {exc}")
        waited = 0.0
        while not zsock.poll(_SLICE_MS):
            waited += _SLICE_MS / 1000
            if waited >= self.gateway.timeout or self.gateway.closing.is_set():
                return msg.fail(p.TIMEOUT, f"no reply from {endpoint} within "
                                           f"{self.gateway.timeout:g} s")
        try:
            return Message.from_wire(zsock.recv(), max_bytes=None)
        except ProtocolError as exc:  # a server that does not speak the protocol
            return msg.fail(exc.code, f"the server's reply: {exc.text}")

    def _socket(self, endpoint: str) -> zmq.Socket:
        zsock = self._zmq.get(endpoint)
        if zsock is None:
            zsock = self.gateway.ctx.socket(zmq.REQ)
            zsock.setsockopt(zmq.LINGER, 0)
            zsock.setsockopt(zmq.REQ_RELAXED, 1)  # a timed-out request does not wedge it
            zsock.setsockopt(zmq.REQ_CORRELATE, 1)  # ...and its late reply is dropped
            zsock.setsockopt(zmq.SNDTIMEO, _SEND_MS)
            if self.gateway.keys is not None:
                self.gateway.keys.apply(zsock)
            zsock.connect(endpoint)
            self._zmq[endpoint] = zsock
        return zsock


def check_token(token: str | None, bind: str) -> str | None:
    """The token a gateway on ``bind`` uses (None: no auth line), or SecurityError."""
    if token is None:
        if not is_loopback(bind):
            raise SecurityError(f"the JSON gateway on {bind} would take anyone's commands: give "
                                "it a token (--json-token-file FILE, or $COOPSIM_JSON_TOKEN)")
        return None
    if len(token) < MIN_TOKEN or not token.isprintable():
        raise SecurityError(f"the JSON gateway's token must be at least {MIN_TOKEN} printable "
                            "characters")
    return token


def auth_reply(line: bytes, token: str) -> Message:
    """The answer to a connection's first line: ok if it is the auth line with ``token``."""
    usage = f'the first line must be ["{AUTH_PORT}", 0, "TOKEN", 0, [], []]'
    if not line:
        return Message(p.NOT_ALLOWED, f"no auth line within {AUTH_WAIT:g} s; closing", -1)
    try:
        port, msg = parse_request(line)
    except ProtocolError:
        return Message(p.NOT_ALLOWED, f"{usage}; closing", -1)
    if port != AUTH_PORT or msg.command != 0:
        return msg.fail(p.NOT_ALLOWED, f"{usage}; closing")
    if not hmac.compare_digest(msg.text.encode(), token.encode()):
        return msg.fail(p.NOT_ALLOWED, "wrong token; closing")
    return msg.reply("authenticated")


def _send_quietly(sock: socket.socket, line: bytes) -> None:
    try:
        sock.sendall(line)
    except OSError:
        pass  # a client that left at once needs no explanation
