"""The base of every coopsim server: one ROUTER socket served by one thread.

A ROUTER serves both REQ clients (their frames arrive as [identity, b"", payload]) and DEALER
clients ([identity, payload], or with the empty delimiter if the client adds one); the reply goes
back in the same envelope. Whatever arrives, the loop answers or drops the connection, and never
dies: malformed input gets an error reply with a documented code, and a bug in a handler becomes an
INTERNAL reply and a log line.

Sizes: libzmq drops a connection whose frame exceeds ``MAX_FRAME_BYTES`` (its MAXMSGSIZE is per
frame) and hands over only whole multipart messages, so a request of many frames is already in
memory when it arrives; :func:`recv_request` keeps its first few frames, drops the rest as it reads
them, and gives the freed memory back to the OS (docs/reliability.md, *Message size*).
"""

from __future__ import annotations

import ctypes
import logging
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Callable

import zmq
from zmq.utils.monitor import parse_monitor_message

from . import ports
from . import protocol as p
from ..model.errors import (CoopsimError, NotAllowedError, OwnedError, ParameterError,
                             ProtocolError, RegistryError, UnknownNameError)
from .protocol import Command, Message

log = logging.getLogger(__name__)

_POLL_MS = 100  # how often an idle server checks whether it should stop
MAX_FRAMES = 4  # kept of one message: identity, REQ_CORRELATE's request id, delimiter, payload
_TRIM_BYTES = 1 << 20  # dropping this much or more gives the freed heap back to the OS


class Server:
    """A protocol server on its own thread.

    Args:
        ctx: ZeroMQ context.
        name: The server's name (answered to hello, e.g. ``/robot1``).
        commands: Command table (id -> Command) this server accepts.
        bind: Address to bind (127.0.0.1 unless told otherwise).
        port: TCP port; 0 picks a free one.
        advertise: Host written into :attr:`endpoint` (default: bind).
        configure: Called with the socket before it binds (CurveZMQ: ``Guard.configure``).
    """

    def __init__(self, ctx: zmq.Context, name: str, commands: dict[int, Command],
                 bind: str = "127.0.0.1", port: int = 0, advertise: str | None = None,
                 configure: Callable | None = None) -> None:
        self.name = name
        self.commands = commands
        self.socket = ctx.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.MAXMSGSIZE, p.MAX_FRAME_BYTES)
        self.socket.setsockopt(zmq.ROUTER_MANDATORY, 0)
        try:
            if configure is not None:
                configure(self.socket)
            if port:
                self.socket.bind(f"tcp://{bind}:{port}")
            else:
                port = ports.bind_any(self.socket, bind, name)
        except BaseException:  # a bind refused, or a --ports range with no port left
            self.socket.close(0)  # an open socket would make ctx.term() hang forever
            raise
        self.endpoint = f"tcp://{advertise or bind}:{port}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"coopsim{name}", daemon=True)

    def start(self) -> "Server":
        """Start serving in the server's thread."""
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread, which closes the socket; wait for it up to ``timeout`` s (0: not)."""
        self._stop.set()
        if self._thread.ident is None:  # never started: nobody else will close the socket
            self.socket.close(0)
        elif timeout and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def handle(self, msg: Message, command: Command) -> Message:
        """Answer one well-formed request whose arity has been checked (subclasses)."""
        raise NotImplementedError

    def unknown(self, msg: Message) -> Message:
        """The reply to a command id this server does not have."""
        return msg.fail(p.UNKNOWN_COMMAND, f"{self.name} has no command {msg.command}")

    #: How long the server thread waits for a request before :meth:`idle`, ms.
    poll_ms = _POLL_MS

    def idle(self) -> None:
        """Called on the server's thread when no request came for ``poll_ms`` (subclasses)."""

    def answer(self, payload: bytes) -> Message:
        """Decode, validate and handle one request frame; always returns a reply."""
        return answer_errors(self, payload)

    def _serve(self) -> None:
        # A blocking receive with a timeout rather than poll + receive: one call into libzmq per
        # request instead of two, on the path every motor command takes.
        self.socket.setsockopt(zmq.RCVTIMEO, self.poll_ms)
        try:
            while not self._stop.is_set():
                try:
                    frames, total = recv_request(self.socket)
                except zmq.Again:
                    self.idle()
                    continue
                self._serve_one(frames, total)
        finally:
            self.socket.close(0)

    def _serve_one(self, frames: list, total: int) -> None:
        envelope, payload, count = split_request(frames, total)
        if payload is None:
            reply = Message(p.BAD_MESSAGE, f"a request is one frame, got {count}", -1)
        else:
            reply = self.answer(payload)
        if reply is None:  # answered later, by the subclass (SimServer's load)
            return
        try:
            self.socket.send_multipart(envelope + [reply.to_wire()], zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # the peer went away: nothing to answer


def forget_closed(monitor: zmq.Socket, callers: dict, slots, closed: set | None = None) -> dict:
    """Take the closed connections a socket's monitor reports: the robots each owned are free
    in ``slots`` (and leave lockstep); return ``callers`` (routing id -> Owner) without them.
    ``closed``: a set the closed connections' descriptors are added to."""
    while True:
        try:
            event = parse_monitor_message(monitor.recv_multipart(zmq.NOBLOCK))
        except zmq.Again:
            return callers
        if event["event"] == zmq.EVENT_DISCONNECTED:
            fd = event["value"]
            callers = {r: o for r, o in callers.items() if o.link != fd}
            slots.disconnected(fd)
            if closed is not None:
                closed.add(fd)


def decoded(frame: bytes) -> Message:
    """The request in ``frame``, or the reply with the documented code of why it is none."""
    try:
        return Message.from_wire(frame)
    except ProtocolError as exc:
        return p.error_reply(exc)


def answer_errors(server, payload: bytes):
    """Decode, validate and handle one request for ``server`` (anything with ``name``,
    ``commands``, ``unknown(msg)`` and ``handle(msg, command)``), turning every error into the
    reply with its documented code: the never-die boundary of every server."""
    try:
        msg = Message.from_wire(payload)
    except ProtocolError as exc:
        return p.error_reply(exc)
    command = server.commands.get(msg.command)
    if command is None:
        return server.unknown(msg)
    try:  # reply_errors' handling without its closure: on every request
        command.check(msg)
        if command.id == 0:
            return p.hello_reply(msg, server.name)
        return server.handle(msg, command)
    except Exception as exc:  # noqa: BLE001 -- a server never dies on input
        return error_of(server.name, msg, exc)


def reply_errors(name: str, msg: Message, fn: Callable[[], object]):
    """``fn()``'s reply, or the reply to ``msg`` with the documented code of the error it
    raised (server ``name`` says whose); also for a request finished later (an offloaded
    action: coopsim.net.offload)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 -- a server never dies on input
        return error_of(name, msg, exc)


def error_of(name: str, msg: Message, exc: Exception) -> Message:
    """The reply to ``msg`` with the documented code of ``exc``, an error its handling by
    server ``name`` raised (a bug in a handler: INTERNAL, and a log line)."""
    if isinstance(exc, ProtocolError):
        return msg.fail(exc.code, exc.text)
    if isinstance(exc, (UnknownNameError, RegistryError)):  # before ParameterError: an
        return msg.fail(p.UNKNOWN_NAME, str(exc))  # unknown parameter name is both
    if isinstance(exc, ParameterError):
        return msg.fail(p.OUT_OF_RANGE, str(exc))
    if isinstance(exc, OwnedError):  # before NotAllowedError, which it is
        return msg.fail(p.OWNED, str(exc))
    if isinstance(exc, NotAllowedError):
        return msg.fail(p.NOT_ALLOWED, str(exc))
    if isinstance(exc, CoopsimError):
        return msg.fail(p.FAILED, str(exc))
    if isinstance(exc, FutureTimeout):  # the stepper did not get to a queued change in time
        return msg.fail(p.TIMEOUT, f"{name}: the simulation did not carry out command "
                                   f"{msg.command} in time; it may or may not happen later")
    log.error("%s: command %s failed", name, msg.command, exc_info=exc)
    return msg.fail(p.INTERNAL, f"internal error: {type(exc).__name__}: {exc}")


def recv_request(socket: zmq.Socket, flags: int = 0) -> tuple[list, int]:
    """Receive one message from a ROUTER socket without keeping more of it than a request needs.

    Returns:
        (its first MAX_FRAMES frames as zmq.Frame, not copied; its frame count). The frames
        beyond are read and released one by one, and after a large drop the freed heap is given
        back to the OS, so a flood of small frames leaves no lasting memory behind.

    Raises:
        zmq.Again: no message (with NOBLOCK, or the socket's RCVTIMEO).
    """
    frame = socket.recv(flags, copy=False)
    kept, total, dropped = [frame], 1, 0
    while frame.more:  # the rest is here already: libzmq hands over whole messages only
        frame = socket.recv(copy=False)
        total += 1
        if len(kept) < MAX_FRAMES:
            kept.append(frame)
        else:
            dropped += len(frame)
    if dropped >= _TRIM_BYTES:
        release_memory()
    return kept, total


def split_request(frames: list, total: int) -> tuple[list[bytes], bytes | None, int]:
    """(envelope, payload, body frame count) of a message from :func:`recv_request`; the
    payload is None unless the body is exactly one frame."""
    if total == 4 and len(frames[2]) == 0 and len(frames[1]):  # the usual: a REQ_CORRELATE
        # REQ's [identity, request id, b"", payload], split without a list made and searched
        # (on every request of a lockstep loop)
        return [frames[0].bytes, frames[1].bytes, b""], frames[3].bytes, 1
    envelope, body = split_envelope([f.bytes for f in frames])
    count = len(body) + total - len(frames)
    return envelope, (body[0] if count == 1 else None), count


def release_memory() -> None:
    """Give the heap freed so far back to the OS (glibc's malloc_trim; nothing elsewhere):
    glibc keeps freed small blocks, so without it a flood's memory would stay in the RSS."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _malloc_trim():
    """glibc's ``malloc_trim`` from the process's own symbols (``dlopen(NULL)``), or None.
    Not ``ctypes.util.find_library``: it runs ``ldconfig -p`` (a process) from the serving
    thread at the first flood."""
    global _TRIM
    if _TRIM is False:
        try:
            _TRIM = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):  # not glibc
            _TRIM = None
    return _TRIM


_TRIM = False  # malloc_trim once looked up; None where there is none


def split_envelope(frames: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    """Split a ROUTER message into its routing envelope and its body.

    REQ peers send [identity, (request id,) b"", body]: the envelope runs up to and including the
    first empty frame. DEALER peers may send no delimiter at all: [identity, body].
    """
    for i in range(1, len(frames)):
        if frames[i] == b"":
            return frames[:i + 1], frames[i + 1:]
    return frames[:1], frames[1:]
