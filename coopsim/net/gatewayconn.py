"""One connection of the JSON-lines gateway: its thread, its request lines and its stream.

The thread waits on the client's TCP socket (and, once subscribed, a SUB socket) in slices, so it
notices the gateway closing, an eviction and its own idle timeout. Each whole line is answered
in order: decoded (:func:`~coopsim.net.gatewaylines.parse_request`), the port looked up, the request
forwarded over a REQ socket and the reply written back. A line to a stream (a ``pub`` name) is a
subscribe or unsubscribe, or else refused at once. Every wait is bounded: a server that never
answers costs one timeout per request, a client that does not read its replies is closed.
"""

from __future__ import annotations

import logging
import socket
import threading
import time

import zmq

from . import protocol as p
from ..model.errors import ProtocolError
from ..model.images import inline
from ..model.limits import shown
from . import gatewaylines as _lines  # AUTH_WAIT looked up when used (tests shorten it)
from .gatewaylines import (AUTH_PORT, MAX_LINE, SLICE_MS, auth_reply, format_line, format_reply,
                           parse_request)
from .liveness import Link
from .protocol import Message

log = logging.getLogger(__name__)

SUBSCRIBE, UNSUBSCRIBE = 1, 2  # commands of a line sent to a stream
DEFAULT_RATE, RATE_LIMITS = 10.0, (0.1, 100.0)  # stream lines per second
WRITE_TIMEOUT = 10.0  # s a reply may wait for the client to read; then the connection closes
_RECV_BYTES = 65536
_DRAIN_SECONDS, _DRAIN_BYTES = 1.0, 1 << 20  # what is read and dropped before a polite close


class _Closing(Exception):
    """End this connection, telling the client ``line`` first (None: nothing to say)."""

    def __init__(self, line: bytes | None = None) -> None:
        super().__init__()
        self.line = line


class Connection(threading.Thread):
    """One client: reads request lines, answers each in order, streams what it subscribed to.

    Attributes:
        host: The peer's address (admission counts connections per address).
        last_active: ``time.monotonic()`` of the last whole line received, reply or stream line
            sent: what the idle timeout and eviction look at.
    """

    def __init__(self, gateway, sock: socket.socket, host: str) -> None:
        super().__init__(name="coopsim-gateway-conn", daemon=True)
        self.gateway, self.sock, self.host = gateway, sock, host
        self.last_active = time.monotonic()
        self._lock = threading.Lock()  # held while answering a line or writing: not evictable
        self._evicted = False
        self._zmq: dict[str, zmq.Socket] = {}
        self._links: dict[str, Link] = {}  # endpoint -> whether its server is there
        self._stream: _Stream | None = None
        self._buffer = b""
        self._authenticated = gateway.token is None  # with a token, the first line must carry it
        self._opened = time.monotonic()
        sock.settimeout(WRITE_TIMEOUT)  # reads only follow a poll; this bounds the writes

    # -- called by the gateway's threads ----------------------------------------------------------

    def evict(self, why: str) -> bool:
        """Close this connection to make room, if it is idle (not answering, not writing);
        return whether it was evicted. Never blocks."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._evicted:
                return False
            self._evicted = True
            try:
                self.sock.send(format_reply(Message(p.FAILED, why, -1)), socket.MSG_DONTWAIT)
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # gone already, or not reading: it is closed all the same
            return True
        finally:
            self._lock.release()

    def shut(self) -> None:
        """Wake the thread so it ends (called by Gateway.close)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already gone

    # -- the thread -------------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self._serve()
        except _Closing as closing:
            self._close_politely(closing.line)
        except OSError:
            pass  # the client went away, or stopped reading its replies
        except Exception:  # noqa: BLE001 -- the never-die boundary: one bad client, one log line
            log.exception("gateway: connection failed")
        finally:
            if self._stream is not None:
                self._stream.close()
            for link in self._links.values():
                link.close()
            for zsock in self._zmq.values():
                zsock.close(0)
            self.sock.close()
            self.gateway.forget(self)

    def _serve(self) -> None:
        fd = self.sock.fileno()
        while not self.gateway.closing.is_set():
            if self._evicted:
                raise _Closing()
            poller = zmq.Poller()  # a new one each time round: the subscription may change
            poller.register(fd, zmq.POLLIN)
            if self._stream is not None:
                poller.register(self._stream.sub, zmq.POLLIN)
            events = dict(poller.poll(self._wait_ms()))
            if fd in events and not self._read():
                return
            if self._stream is not None:
                self._stream.pump(self._write_stream)
            self._check_idle()

    def _wait_ms(self) -> int:
        due = self._stream.due_in() if self._stream is not None else None
        if due is None:
            return SLICE_MS
        return max(0, min(SLICE_MS, int(due * 1000)))

    def _check_idle(self) -> None:
        wait = _lines.AUTH_WAIT
        if not self._authenticated and time.monotonic() - self._opened >= wait:
            raise _Closing(format_reply(Message(
                p.NOT_ALLOWED, f"no auth line within {wait:g} s; closing", -1)))
        limit = self.gateway.idle_timeout
        if limit and time.monotonic() - self.last_active >= limit:
            raise _Closing(format_reply(Message(
                p.TIMEOUT, f"idle for {limit:g} s (no whole line received, nothing sent); "
                           "closing the connection", -1)))

    def _read(self) -> bool:
        """Read what came and answer every whole line; False at end of input."""
        chunk = self.sock.recv(_RECV_BYTES)
        lines = (self._buffer + chunk).split(b"\n")
        self._buffer = lines.pop()
        if not chunk:  # end of input: an unterminated last line is answered too
            lines.append(self._buffer)
        for line in lines:
            if len(line) > MAX_LINE:
                raise _Closing(format_reply(Message(
                    p.BAD_MESSAGE, f"line over {MAX_LINE} bytes; closing the connection", -1)))
            if line.strip():
                self._answer_line(line)
        if len(self._buffer) > MAX_LINE:
            raise _Closing(format_reply(Message(
                p.BAD_MESSAGE, f"line over {MAX_LINE} bytes; closing the connection", -1)))
        return bool(chunk)

    def _answer_line(self, line: bytes) -> None:
        with self._lock:
            if self._evicted:
                raise _Closing()
            self.last_active = time.monotonic()
            if not self._authenticated:
                reply = auth_reply(line, self.gateway.token)
                if reply.error:
                    raise _Closing(format_reply(reply))
                self._authenticated = True
                self.sock.sendall(format_reply(reply))
                return
            try:
                reply = self._answer(line)
            except Exception as exc:  # noqa: BLE001 -- a bug answers error 10, the session lives
                log.exception("gateway: answering a line failed")
                reply = Message(p.INTERNAL, f"internal error: {type(exc).__name__}: {exc}", -1)
            self.sock.sendall(format_reply(reply))
            self.last_active = time.monotonic()

    def _write_stream(self, line: bytes) -> None:
        with self._lock:
            if not self._evicted:
                self.sock.sendall(line)
                self.last_active = time.monotonic()

    def _close_politely(self, line: bytes | None) -> None:
        """Say why (if there is a line), end our side, and drain (boundedly) what is still
        coming: closing with unread input sends a reset that can destroy the line unread."""
        try:
            if line is not None:
                self.sock.sendall(line)
            self.sock.shutdown(socket.SHUT_WR)
            self.sock.settimeout(_DRAIN_SECONDS)
            drained = 0
            while drained < _DRAIN_BYTES:
                chunk = self.sock.recv(_RECV_BYTES)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass  # timed out or reset: we tried

    # -- one request ------------------------------------------------------------------------------

    def _answer(self, line: bytes) -> Message:
        try:
            port, msg = parse_request(line)
        except ProtocolError as exc:
            return p.error_reply(exc)
        if port == AUTH_PORT:  # authenticated already, or no token needed here
            return msg.reply("authenticated")
        endpoint, kind = self.gateway.nameserver, "rep"
        if port != "/nameserver":
            found = self._forward(endpoint, Message(0, port, 1))
            if found.error:
                return msg.fail(found.error, found.text)
            endpoint, kind = found.text, p.kind_of(found)
        if kind != "rep":
            return self._stream_request(port, endpoint, kind, msg)
        return self._forward(endpoint, msg)

    def _forward(self, endpoint: str, msg: Message) -> Message:
        """Send ``msg`` to ``endpoint`` and wait for the reply: after the timeout, on while the
        server's connection is up (a lockstep step, a busy or stopped simulator), error 9 when
        it never came up or closed (see :mod:`coopsim.net.liveness`).

        After a timeout the REQ socket is dropped: a server that never completes the ZeroMQ
        handshake leaves a REQ with nowhere to queue, whose next send would block for good.
        """
        gateway = self.gateway
        deadline = time.monotonic() + gateway.timeout
        why = ""
        try:
            zsock = self._socket(endpoint)
            sent = _wait(lambda: _try_send(zsock, msg.to_wire()), deadline, gateway.closing)
            while sent and not gateway.closing.is_set():
                if _wait(lambda: zsock.poll(SLICE_MS), deadline, gateway.closing):
                    try:
                        return _inlined(zsock.recv_multipart())
                    except ProtocolError as exc:  # a server that does not speak the protocol
                        return msg.fail(exc.code, f"the server's reply: {exc.text}")
                why = self._links[endpoint].gone()  # late: wait on while it is there
                if why:
                    break
                deadline = time.monotonic() + gateway.timeout
        except zmq.ZMQError as exc:  # e.g. a malformed endpoint, out of file descriptors
            self._drop(endpoint)
            return msg.fail(p.FAILED, f"cannot reach {endpoint}: {exc}")
        self._drop(endpoint)
        return msg.fail(p.TIMEOUT, f"no reply from {endpoint}: {why}" if why else
                        f"no reply from {endpoint} within {gateway.timeout:g} s")

    def _socket(self, endpoint: str) -> zmq.Socket:
        zsock = self._zmq.get(endpoint)
        if zsock is None:
            zsock = self.gateway.ctx.socket(zmq.REQ)
            zsock.setsockopt(zmq.LINGER, 0)
            zsock.setsockopt(zmq.SNDTIMEO, SLICE_MS)  # sends are sliced like the waits
            if self.gateway.keys is not None:
                self.gateway.keys.apply(zsock)
            self._links[endpoint] = Link(zsock)
            zsock.connect(endpoint)
            self._zmq[endpoint] = zsock
        return zsock

    def _drop(self, endpoint: str) -> None:
        link = self._links.pop(endpoint, None)
        if link is not None:
            link.close()
        zsock = self._zmq.pop(endpoint, None)
        if zsock is not None:
            zsock.close(0)

    # -- streams ----------------------------------------------------------------------------------

    def _stream_request(self, port: str, endpoint: str, kind: str, msg: Message) -> Message:
        """A line sent to a stream: subscribe (1), unsubscribe (2); anything else is refused."""
        if msg.command == UNSUBSCRIBE and not msg.params and not msg.data:
            was = self._stream is not None
            if was:
                self._stream.close()
                self._stream = None
            return msg.reply(f"unsubscribed from {port}" if was else "was not subscribed",
                             params=(int(was),))
        if msg.command != SUBSCRIBE:
            return msg.fail(p.NOT_ALLOWED, p.not_a_server(port, kind))
        if msg.params or len(msg.data) > 1:
            return msg.fail(p.WRONG_ARITY, "subscribe takes no params and data [rate] "
                                           "(lines per second) or none")
        rate = msg.data[0] if msg.data else DEFAULT_RATE
        lo, hi = RATE_LIMITS
        if not lo <= rate <= hi:
            return msg.fail(p.OUT_OF_RANGE, f"rate must be within {lo:g}..{hi:g} lines per "
                                            f"second, not {shown(rate, lo, hi)}")
        if self._stream is not None:
            self._stream.close()
        self._stream = _Stream(self.gateway.ctx, port, endpoint, rate, self.gateway.keys)
        return msg.reply(f"subscribed to {port}: the latest frame, at most {rate:g} lines per "
                         "second", data=(rate,))


class _Stream:
    """A subscription: the latest frame of a PUB endpoint, written at most ``rate`` a second."""

    def __init__(self, ctx: zmq.Context, port: str, endpoint: str, rate: float,
                 keys=None) -> None:
        self.port, self.period = port, 1.0 / rate
        self.sub = ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.RCVHWM, 4)  # only the latest frame is wanted
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")  # any topic: the last frame is the message
        if keys is not None:
            keys.apply(self.sub)
        self.sub.connect(endpoint)
        self._latest: bytes | None = None
        self._next = 0.0

    def due_in(self) -> float | None:
        """Seconds until the held frame may be written (None: no frame held)."""
        return None if self._latest is None else self._next - time.monotonic()

    def pump(self, write) -> None:
        """Take what arrived (keeping the newest) and write it if its time has come."""
        while True:
            try:
                self._latest = self.sub.recv_multipart(zmq.NOBLOCK)[-1]
            except zmq.Again:
                break
        now = time.monotonic()
        if self._latest is None or now < self._next:
            return
        frame, self._latest = self._latest, None
        try:
            msg = Message.from_wire(frame, max_bytes=None)
        except ProtocolError:
            return  # not a five-item message: nothing a client could use
        self._next = now + self.period
        write(format_line([self.port, msg.error, msg.text, msg.command, list(msg.params),
                           list(msg.data)]))

    def close(self) -> None:
        self.sub.close(0)


def _try_send(zsock: zmq.Socket, wire: bytes) -> bool:
    try:
        zsock.send(wire)
    except zmq.Again:  # SNDTIMEO: no peer to queue on yet
        return False
    return True


def _wait(attempt, deadline: float, closing: threading.Event) -> bool:
    """Repeat ``attempt()`` (itself waiting one slice) until it succeeds, the deadline passes
    or the gateway closes; return whether it succeeded."""
    while not attempt():
        if time.monotonic() >= deadline or closing.is_set():
            return False
    return True


def _inlined(frames: list) -> Message:
    """A server's reply as the gateway's line carries it: a camera read's pixel frame
    (protocol 11, asked for with the word ``frame``) back in the text as base64, as a read
    without the word has it; a line has no binary frame."""
    reply = Message.from_wire(frames[0], max_bytes=None)
    if len(frames) < 2:
        return reply
    try:
        text = inline(reply.text, frames[1])
    except ValueError as exc:
        raise ProtocolError(p.BAD_MESSAGE, f"a frame that does not match its text: {exc}") \
            from None
    return Message(reply.error, text, reply.command, reply.params, reply.data)
