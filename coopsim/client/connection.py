"""A connection to a simulation through its name server: sockets, requests, look-ups."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Iterator, Sequence

import zmq

from ..model.errors import ProtocolError
from ..net import protocol as p
from ..net.liveness import Link
from ..net.protocol import Message
from ..net.security import ClientKeys
from .process import SIM_PID_ENV, _process_gone


#: libzmq's send as pyzmq's compiled socket has it, without the Python socket's wrapper (for
#: DRAFT options a REQ never uses): on every request
_zsend = zmq.backend.Socket.send


class RemoteError(ProtocolError):
    """The server answered with a non-zero error code (see docs/protocol.md)."""


class RobotOwned(RemoteError):
    """Error 11: another connection owns the robot (docs/protocol.md section 3, *Ownership*);
    the text names the owner. Reads still work; :meth:`Robot.claim` with ``force`` takes it."""


class RobotTeleoperated(RobotOwned):
    """Error 13 (protocol 10): a person's teleop took the robot from this connection; it is
    this connection's again, without a claim, once the person lets it go. A motion command
    waits for that (:attr:`~coopsim.client.robot.Robot.wait_while_teleoperated`)."""


class RunFinished(RemoteError):
    """The run has finished (its duration, or a rule such as an exercise's verdict, ended it):
    error 6 with "finished" in the text. Leaving a ``with Client()`` block on it is a normal end,
    so :meth:`Client.__exit__` swallows it and the controller exits with status 0."""


class Client:
    """A connection to a simulation (or robots) through its name server.

    Args:
        nameserver: Name server endpoint; defaults to $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000.
        timeout: Seconds to wait for a reply before looking whether the server is still there.
            With ``patient`` (the default) a request whose server's connection is up (its
            process alive, though busy, starved, stopped by a debugger or waiting for a
            lockstep step) goes on waiting, in slices of this length; it fails with error 9 only
            when the connection never came up, or closed (the server stopped or crashed), or
            ``$COOPSIM_SIM_PID`` names a process that is gone. ``patient=False``: error 9 after
            ``timeout`` whatever the server's state.
        patient: Wait for replies as long as the server is alive (see ``timeout``).
        keys: CurveZMQ keys for a run started with ``--keys``: a client folder (``server.key``
            and ``client.key_secret``, as ``coopsim keys`` makes in ``DIR/clients/NAME``) or a
            :class:`~coopsim.net.security.ClientKeys`; default: ``$COOPSIM_SERVER_KEY`` and
            ``$COOPSIM_CLIENT_KEY`` if set (a run sets them for the controllers it launches).

    Raises:
        SecurityError: the keys are missing or malformed.
    """

    def __init__(self, nameserver: str | None = None, timeout: float = 5.0,
                 keys: "ClientKeys | str | os.PathLike | None" = None,
                 patient: bool = True) -> None:
        self.nameserver = nameserver or os.environ.get("COOPSIM_NAMESERVER",
                                                       p.DEFAULT_NAMESERVER)
        self.keys = ClientKeys.resolve(keys)
        self._ctx = zmq.Context()
        self._sockets: dict[str, zmq.Socket] = {}
        self._links: dict[str, _Link] = {}  # endpoint -> its socket's connection state
        self.patient = patient
        self._streams: set[zmq.Socket] = set()  # SUB sockets of open subscribe_state()
        self.timeout = timeout
        self._endpoints: dict[str, tuple[str, str]] = {}  # name -> (endpoint, kind)

    @property
    def timeout(self) -> float:
        """Seconds any call waits for its reply."""
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self._timeout = float(seconds)
        for sock in self._sockets.values():
            _set_timeouts(sock, self._timeout)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, kind, value, tb) -> bool:
        self.close()
        return kind is not None and issubclass(kind, RunFinished)  # the run ended: not an error

    def close(self) -> None:
        """Close every socket."""
        for link in self._links.values():
            link.close()
        for sock in [*self._sockets.values(), *self._streams]:
            sock.close(0)
        self._links.clear()
        self._sockets.clear()
        self._streams.clear()
        self._ctx.term()

    def request(self, endpoint: str, command: int, text: str = "",
                params: Sequence[int] = (), data: Sequence[float] = ()) -> Message:
        """Send one request to ``endpoint`` and return the reply.

        Raises:
            RemoteError: the reply carries a non-zero error code.
            ProtocolError: no reply within the timeout (code TIMEOUT); the socket is then
                replaced, so a server that never completes its handshake (or a lost reply)
                costs one timeout per request, never a socket that blocks for good.
        """
        sock = self._sockets.get(endpoint) or self._socket(endpoint)
        try:  # the socket's SNDTIMEO and RCVTIMEO are the timeout: one call each, no poll
            _zsend(sock, p.pack(0, text, command, params, data))  # Message(...).to_wire()
            frame = sock.recv(copy=False)  # a Frame: its ``more`` came with it
        except zmq.Again:
            frame = self._await(endpoint, sock)
        reply = _with_frames(Message.from_wire(frame.bytes, max_bytes=None), frame, sock)
        if reply.error:
            raise _remote_error(reply.error, reply.text)
        return reply

    def request_fields(self, endpoint: str, wire: bytes) -> tuple:
        """:meth:`request` for a packed request (``wire``) whose reply is one frame: the
        reply's five fields ``(error, text, command, params, data)``, no Message made (a
        lockstep loop's exchange, every step). Raises as :meth:`request`."""
        sock = self._sockets.get(endpoint) or self._socket(endpoint)
        try:
            _zsend(sock, wire)
            frame = sock.recv(copy=False)
        except zmq.Again:
            frame = self._await(endpoint, sock)
        if frame.more:  # binary frames after it (no exchange's): read them, drop them
            _with_frames(p.new_message(0, "", 0, (), ()), frame, sock)
        fields = p.fields_of(frame.bytes)
        if fields[0]:
            raise _remote_error(fields[0], fields[1])
        return fields

    def request_many(self, calls) -> list[Message]:
        """Send several requests, each to its own endpoint, before awaiting any reply; return
        the replies in order (those with an error code too: they are not raised). One process
        driving several robots in lockstep needs this: no motion reply comes before every
        attached robot has sent its command for the step.

        Args:
            calls: (endpoint, command, text, params, data) tuples, no endpoint twice.

        Raises:
            ValueError: an endpoint appears twice.
            ProtocolError: a reply did not come within the timeout (code TIMEOUT); that
                endpoint's socket is replaced, as in :meth:`request`.
        """
        calls = list(calls)
        if len({c[0] for c in calls}) != len(calls):
            raise ValueError("request_many sends one request per endpoint")
        sent = []
        for endpoint, command, text, params, data in calls:
            sock = self._socket(endpoint)
            try:
                sock.send(p.pack(0, text, command, params, data))
            except zmq.Again:
                self._drop(endpoint)
                raise ProtocolError(p.TIMEOUT, f"{endpoint} took no request within "
                                               f"{self.timeout:g} s") from None
            sent.append((endpoint, sock))
        replies = []
        for endpoint, sock in sent:
            try:
                frame = sock.recv(copy=False)
            except zmq.Again:
                frame = self._await(endpoint, sock)
            replies.append(_with_frames(Message.from_wire(frame.bytes, max_bytes=None), frame,
                                        sock))
        return replies

    def _await(self, endpoint: str, sock: zmq.Socket) -> zmq.Frame:
        """A reply that did not come within the timeout: go on waiting while the server is
        alive (``patient``), else drop the socket and raise error 9. Returns its first frame."""
        link = self._links.get(endpoint)
        while self.patient and link is not None:
            gone = link.gone()
            if gone:
                self._drop(endpoint)
                raise ProtocolError(p.TIMEOUT, f"no reply from {endpoint}: {gone}")
            if sock.poll(int(self.timeout * 1000)):
                return sock.recv(copy=False)
        self._drop(endpoint)
        raise ProtocolError(p.TIMEOUT, f"no reply from {endpoint} within {self.timeout:g} s")

    def _drop(self, endpoint: str) -> None:
        link = self._links.pop(endpoint, None)
        if link is not None:
            link.close()
        self._sockets.pop(endpoint).close(0)

    def lookup(self, name: str, kind: str | None = None) -> str:
        """The endpoint of a port name such as ``/robot1/motors`` (cached).

        Args:
            name: The port name.
            kind: When given (``rep``, ``pub``), a name of another kind is refused.

        Raises:
            RemoteError: no such name (code UNKNOWN_NAME), or not of ``kind`` (NOT_ALLOWED).
        """
        if name not in self._endpoints:
            reply = self.request(self.nameserver, 1, name)
            self._endpoints[name] = (reply.text, p.kind_of(reply))
        endpoint, found = self._endpoints[name]
        if kind is not None and found != kind:
            if kind == "rep":
                raise RemoteError(p.NOT_ALLOWED, p.not_a_server(name, found))
            raise RemoteError(p.NOT_ALLOWED, f"{name} is a {found} port, not a {kind} port")
        return endpoint

    def kind(self, name: str) -> str:
        """What ``name`` is: ``rep`` (a request/reply server) or ``pub`` (a stream)."""
        self.lookup(name)
        return self._endpoints[name][1]

    def names(self, prefix: str = "") -> dict[str, str]:
        """Every registered name (starting with ``prefix``) and its endpoint."""
        text = self.request(self.nameserver, 2, prefix).text
        return dict(line.split(" ", 1) for line in text.splitlines() if line)

    def hello(self, name: str = "/nameserver") -> tuple[int, str]:
        """(protocol version, server name) of the server behind ``name``."""
        endpoint = self.nameserver if name == "/nameserver" else self.lookup(name, "rep")
        reply = self.request(endpoint, 0, params=(p.PROTOCOL_VERSION,))
        return reply.params[0], reply.text

    def subscribe_state(self, latest_only: bool = True, names: bool = True) -> Iterator:
        """The state stream's frames, decoded (docs/protocol.md section 5; needs numpy).

        Args:
            latest_only: Subscribe to the single-frame ``/sim/state1`` with ZMQ_CONFLATE: each
                frame yielded is the newest one published, none queue up while the caller works
                (a monitor, a viewer). False: every frame of ``/sim/state`` in order, as far as
                the socket's queue holds them.
            names: Name each frame's columns (``StateFrame.column_names``, ``column(name)``):
                the client asks ``/sim`` for the state document once per new layout (protocol
                8: the columns are those of the modules the world's robots carry, so they
                change with the layout).

        Returns:
            An iterator of :class:`~coopsim.net.statestream.StateFrame`; ``close()`` it when
            done (closing the client closes it too). Waiting longer than the client's timeout
            for a frame raises ProtocolError (code TIMEOUT).

        Raises:
            RemoteError: the name server has no such stream (code UNKNOWN_NAME).
        """
        name = "/sim/state1" if latest_only else "/sim/state"
        endpoint = self.lookup(name, "pub")
        sub = self._ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        if latest_only:
            sub.setsockopt(zmq.CONFLATE, 1)  # single frames only: hence /sim/state1
        sub.setsockopt(zmq.SUBSCRIBE, b"" if latest_only else p.STATE_TOPIC)
        if self.keys is not None:
            self.keys.apply(sub)  # a run with --keys serves Curve clients only
        sub.connect(endpoint)
        self._streams.add(sub)
        return self._frames(sub, name, names)

    def _frames(self, sub: zmq.Socket, name: str, names: bool) -> Iterator:
        from ..net.statestream import decode_wire  # numpy: only for those who subscribe
        from .stream import ColumnNames

        columns = ColumnNames(lambda: self.request(self.lookup("/sim", "rep"), 23).text)
        try:
            while True:
                if not sub.poll(int(self.timeout * 1000)):
                    raise ProtocolError(p.TIMEOUT, f"no state frame from {name} within "
                                                   f"{self.timeout:g} s")
                frame = decode_wire(sub.recv_multipart()[-1])
                yield columns.named(frame) if names else frame
        finally:
            if sub in self._streams:
                self._streams.discard(sub)
                sub.close(0)

    def robot(self, name: str):
        """A handle on robot ``name`` (one socket serves all its modules)."""
        from .robot import Robot

        return Robot(self, name, self.lookup(f"/{name}", "rep"))

    def sim(self):
        """A handle on ``/sim`` (typed helpers for every command, docs/protocol.md section 4)."""
        from .sim import Sim

        return Sim(self, self.lookup("/sim", "rep"))

    def playback(self):
        """A handle on ``/playback`` of a replay (docs/protocol.md section 7)."""
        from .sim import Playback

        return Playback(self, self.lookup("/playback", "rep"))

    def _socket(self, endpoint: str) -> zmq.Socket:
        sock = self._sockets.get(endpoint)
        if sock is None:
            sock = self._ctx.socket(zmq.REQ)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.REQ_RELAXED, 1)  # a timed-out request does not wedge the socket
            sock.setsockopt(zmq.REQ_CORRELATE, 1)  # ...and its late reply is discarded
            _set_timeouts(sock, self.timeout)
            if self.keys is not None:
                self.keys.apply(sock)
            self._links[endpoint] = _Link(sock)
            sock.connect(endpoint)
            self._sockets[endpoint] = sock
        return sock


class _Link(Link):
    """:class:`~coopsim.net.liveness.Link`, and the simulator's process when a run launched
    this controller (``$COOPSIM_SIM_PID``)."""

    def gone(self) -> str:
        pid = os.environ.get(SIM_PID_ENV, "")
        if pid.isdigit() and _process_gone(int(pid)):
            return f"the simulation (pid {pid}) is gone"
        return super().gone()


def _remote_error(code: int, text: str) -> RemoteError:
    """The exception of an error reply: its kind says what a caller may do about it."""
    finished = code == p.NOT_ALLOWED and "finished" in text
    kind = RunFinished if finished else RobotOwned if code == p.OWNED \
        else RobotTeleoperated if code == p.TELEOPERATED else RemoteError
    return kind(code, text)


def _set_timeouts(sock: zmq.Socket, seconds: float) -> None:
    """Bound both halves of a request: a REQ whose peer never completes the ZeroMQ handshake
    (a stream, a non-coopsim server) has nowhere to queue and would block its send for good."""
    ms = max(1, int(seconds * 1000))
    sock.setsockopt(zmq.RCVTIMEO, ms)
    sock.setsockopt(zmq.SNDTIMEO, ms)


def _with_frames(reply: Message, first: zmq.Frame, sock: zmq.Socket) -> Message:
    """``reply`` (of frame ``first``) with the binary frames that came after its own (protocol
    11: a camera read's pixels), received uncopied (memoryviews of ZeroMQ's buffers); most
    replies have none. A received Frame says whether more follow (``more``): asking the socket
    (RCVMORE) would cost an enum conversion in pyzmq on every reply."""
    if not first.more:
        return reply
    frames, frame = [], first
    while frame.more:
        frame = sock.recv(copy=False)
        frames.append(frame.buffer)
    return replace(reply, frames=tuple(frames))
