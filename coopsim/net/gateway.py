"""A plain-TCP JSON-lines gateway: the five-item messages as JSON arrays, one per line.

For languages and tools without ZeroMQ (netcat, telnet, a shell script, a spreadsheet macro).
A request line names its destination port first, then carries the five items::

    ["/robot1/sonar", 0, "", 200, [], []]

and the reply line is the five-item message the server answered::

    [0, "", 200, [57], [2.0, 2.0, 1.42, ...]]

The gateway looks the port up at the name server and forwards the request over ZeroMQ, exactly
as a native client would, so it works in front of a live run or a replay alike, and lockstep
motor replies block only the connection that sent them. A stream (``/sim/state``) takes the
*subscribe* line instead, after which its frames come as lines of their own. Each connection
has its own thread and ZeroMQ sockets (:mod:`coopsim.net.gatewayconn`), lines are decoded and
written by :mod:`coopsim.net.gatewaylines`; this module admits connections: at most
``max_connections`` at once and ``per_address`` from one address; when full, the longest-idle
connection makes room. docs/protocol.md section 6 is the
normative description.

With a token (needed to listen beyond loopback) the first line of a connection must be the auth
line ``["/auth", 0, "TOKEN", 0, [], []]``; anything else is answered with error 6 and the
connection is closed. With CurveZMQ keys the gateway is a Curve client of the servers.
"""

from __future__ import annotations

import logging
import socket
import threading
import time

import zmq

from . import ports
from . import protocol as p
from .gatewayconn import Connection
from .gatewaylines import SLICE_MS, format_reply
from .protocol import Message
from .security import ClientKeys, SecurityError, is_loopback

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 64  # connections served at once
PER_ADDRESS = 48  # connections one peer address may hold: others keep at least 16
IDLE_TIMEOUT = 300.0  # s without a whole line (or a reply or stream line) before closing
EVICT_IDLE = 2.0  # s idle before a connection may be closed to make room for a newcomer
FORWARD_TIMEOUT = 10.0  # s to wait for a server's reply before answering error 9
_CLOSE_WAIT = 5.0  # s Gateway.close() waits for all connection threads together
MIN_TOKEN = 16  # characters: a shorter token could be guessed


class Gateway:
    """The JSON-lines gateway in front of one name server.

    Args:
        nameserver: The name server endpoint the gateway forwards through.
        bind: Address to listen on (127.0.0.1 unless told otherwise).
        port: TCP port; 0 picks a free one.
        max_connections: Connections served at once.
        timeout: Seconds to wait for a server's reply.
        idle_timeout: Seconds a connection may stay idle (no whole line received, no reply or
            stream line sent) before it is told and closed; 0 = never.
        per_address: Connections one peer address may hold at once.
        evict_idle: Seconds a connection must have been idle before it may be closed to make
            room for a newcomer (when the gateway or the newcomer's address is full).
        token: The auth line's token (at least 16 characters); required beyond loopback and
            whenever ``keys`` are given.
        keys: CurveZMQ client keys to forward with (a run started with ``--keys``).

    Raises:
        SecurityError: a bind beyond loopback, or keys, without a token; a token too short.
    """

    def __init__(self, nameserver: str, bind: str = "127.0.0.1", port: int = 0,
                 max_connections: int = MAX_CONNECTIONS, timeout: float = FORWARD_TIMEOUT,
                 idle_timeout: float = IDLE_TIMEOUT, per_address: int = PER_ADDRESS,
                 evict_idle: float = EVICT_IDLE, token: str | None = None,
                 keys: ClientKeys | None = None) -> None:
        self.token, self.keys = check_token(token, bind, keys is not None), keys
        self.nameserver = nameserver
        self.max_connections = max_connections
        self.per_address = min(per_address, max_connections)
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self.evict_idle = evict_idle
        try:
            self._listener = ports.listen_any(bind, port, "the JSON-lines gateway")
        except OSError as exc:
            raise OSError(f"cannot open the JSON gateway on {bind}:{port}: {exc}") from None
        self._listener.settimeout(SLICE_MS / 1000)  # so the accept loop notices close()
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self.ctx = zmq.Context()
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._connections: set = set()
        self._thread = threading.Thread(target=self._accept_loop, name="coopsim-gateway",
                                        daemon=True)

    def hello(self, timeout: float = 2.0) -> Message | None:
        """Say hello to the name server with this coopsim's protocol version.

        Returns:
            The name server's reply (error VERSION_MISMATCH with a sentence naming both
            versions when it speaks another), or None when nothing answered within ``timeout``.
        """
        zsock = self.ctx.socket(zmq.REQ)
        zsock.setsockopt(zmq.LINGER, 0)
        zsock.setsockopt(zmq.SNDTIMEO, int(timeout * 1000))
        if self.keys is not None:
            self.keys.apply(zsock)
        try:
            zsock.connect(self.nameserver)
            zsock.send(Message(0, "", 0, (p.PROTOCOL_VERSION,)).to_wire())
            if not zsock.poll(int(timeout * 1000)):
                return None
            return Message.from_wire(zsock.recv(), max_bytes=None)
        except (zmq.ZMQError, ProtocolError):
            return None
        finally:
            zsock.close(0)

    def start(self) -> "Gateway":
        """Start accepting connections."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop accepting, close every connection and release the ZeroMQ sockets.

        Waits up to 2 s for the accept loop, then at most 5 s for the connection threads
        together; a thread still running after that (none should: every wait is sliced) is left
        to die with the process, and the ZeroMQ context with it.
        """
        self.closing.set()
        if self._thread.is_alive():
            self._thread.join(2.0)
        self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            conn.shut()
        deadline = time.monotonic() + _CLOSE_WAIT
        for conn in connections:
            conn.join(max(0.0, deadline - time.monotonic()))
        stuck = [conn for conn in connections if conn.is_alive()]
        if stuck:
            log.warning("gateway: %d connection threads did not end; leaving them", len(stuck))
            return
        self.ctx.term()

    def forget(self, conn) -> None:
        """Called by a connection's thread when it ends."""
        with self._lock:
            self._connections.discard(conn)

    def _accept_loop(self) -> None:
        while not self.closing.is_set():
            try:
                sock, peer = self._listener.accept()
            except TimeoutError:
                continue
            except OSError as exc:  # e.g. out of file descriptors: log, breathe, go on
                log.warning("gateway: accept failed: %s", exc)
                self.closing.wait(SLICE_MS / 1000)
                continue
            try:
                self._admit(sock, peer[0])
            except Exception:  # noqa: BLE001 -- the accept loop must outlive any one client
                log.exception("gateway: admitting a connection failed")
                sock.close()

    def _admit(self, sock: socket.socket, host: str) -> None:
        with self._lock:
            refusal = self._make_room(host)
            if refusal is None:
                conn = Connection(self, sock, host)
                self._connections.add(conn)
        if refusal is not None:
            _send_quietly(sock, format_reply(Message(p.FAILED, refusal, -1)))
            sock.close()
            return
        conn.start()

    def _make_room(self, host: str) -> str | None:
        """Under the lock: evict one connection if ``host`` or the gateway is full; return why
        the newcomer is refused, or None when there is room."""
        mine = [c for c in self._connections if c.host == host]
        if len(mine) >= self.per_address:
            pool, full = mine, (f"{host} already has {self.per_address} connections (the most "
                                "one address may hold)")
        elif len(self._connections) >= self.max_connections:
            pool, full = self._connections, (f"the gateway serves at most "
                                             f"{self.max_connections} connections")
        else:
            return None
        now = time.monotonic()
        for conn in sorted(pool, key=lambda c: c.last_active):  # longest idle first
            idle = now - conn.last_active
            if idle < self.evict_idle:
                break
            if conn.evict(f"closed to make room for a new connection: this one was idle for "
                          f"{idle:.1f} s and {full}"):
                self._connections.discard(conn)
                return None
        return f"{full}, and none has been idle for {self.evict_idle:g} s; try again later"


def _send_quietly(sock: socket.socket, line: bytes) -> None:
    try:
        sock.send(line, socket.MSG_DONTWAIT)  # never block the accept loop on a slow reader
    except OSError:
        pass  # a client that left at once (or does not read) needs no explanation


def check_token(token: str | None, bind: str, keys: bool = False) -> str | None:
    """The token a gateway on ``bind`` uses (None: no auth line), or SecurityError.

    A gateway forwarding with CurveZMQ ``keys`` needs a token even on loopback: without one,
    any local user's connection would reach the Curve-protected run with the run's own keys.
    """
    if token is None:
        if keys:
            raise SecurityError("the JSON gateway would forward anyone's commands with the "
                                "run's CurveZMQ keys: give it a token (--json-token-file "
                                "FILE, or $COOPSIM_JSON_TOKEN)")
        if not is_loopback(bind):
            raise SecurityError(f"the JSON gateway on {bind} would take anyone's commands: give "
                                "it a token (--json-token-file FILE, or $COOPSIM_JSON_TOKEN)")
        return None
    if len(token) < MIN_TOKEN or not token.isprintable():
        raise SecurityError(f"the JSON gateway's token must be at least {MIN_TOKEN} printable "
                            "characters")
    return token
