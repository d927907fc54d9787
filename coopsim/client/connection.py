"""A connection to a simulation through its name server: sockets, requests, look-ups."""

from __future__ import annotations

import os
from typing import Sequence

import zmq

from ..model.errors import ProtocolError
from ..net import protocol as p
from ..net.protocol import Message
from ..net.security import ClientKeys


class RemoteError(ProtocolError):
    """The server answered with a non-zero error code (see docs/protocol.md)."""


class Client:
    """A connection to a simulation (or robots) through its name server.

    Args:
        nameserver: Name server endpoint; defaults to $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000.
        timeout: Seconds to wait for any reply.
        keys: CurveZMQ keys for a run started with ``--keys``: a client folder (``server.key``
            and ``client.key_secret``, as ``coopsim keys`` makes in ``DIR/clients/NAME``) or a
            :class:`~coopsim.net.security.ClientKeys`; default: ``$COOPSIM_SERVER_KEY`` and
            ``$COOPSIM_CLIENT_KEY`` if set (a run sets them for the controllers it launches).

    Raises:
        SecurityError: the keys are missing or malformed.
    """

    def __init__(self, nameserver: str | None = None, timeout: float = 5.0,
                 keys: "ClientKeys | str | os.PathLike | None" = None) -> None:
        self.nameserver = nameserver or os.environ.get("COOPSIM_NAMESERVER",
                                                       p.DEFAULT_NAMESERVER)
        self.keys = ClientKeys.resolve(keys)
        self._ctx = zmq.Context()
        self._sockets: dict[str, zmq.Socket] = {}
        self.timeout = timeout
        self._endpoints: dict[str, str] = {}

    @property
    def timeout(self) -> float:
        """Seconds any call waits for its reply."""
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self._timeout = float(seconds)
        for sock in self._sockets.values():
            sock.setsockopt(zmq.RCVTIMEO, max(1, int(self._timeout * 1000)))
            sock.setsockopt(zmq.SNDTIMEO, max(1, int(self._timeout * 1000)))

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close every socket."""
        for sock in self._sockets.values():
            sock.close(0)
        self._sockets.clear()
        self._ctx.term()

    def request(self, endpoint: str, command: int, text: str = "",
                params: Sequence[int] = (), data: Sequence[float] = ()) -> Message:
        """Send one request to ``endpoint`` and return the reply.

        Raises:
            RemoteError: the reply carries a non-zero error code.
            ProtocolError: no reply within the timeout (code TIMEOUT).
        """
        sock = self._socket(endpoint)
        try:
            sock.send(Message(0, text, command, tuple(params), tuple(data)).to_wire())
            frame = sock.recv()  # the socket's RCVTIMEO is the timeout: one call, no poll
        except zmq.Again:
            raise ProtocolError(p.TIMEOUT,
                                f"no reply from {endpoint} within {self.timeout:g} s") from None
        reply = Message.from_wire(frame, max_bytes=None)
        if reply.error:
            raise RemoteError(reply.error, reply.text)
        return reply

    def lookup(self, name: str) -> str:
        """The endpoint of a port name such as ``/robot1/motors`` (cached)."""
        if name not in self._endpoints:
            self._endpoints[name] = self.request(self.nameserver, 1, name).text
        return self._endpoints[name]

    def names(self, prefix: str = "") -> dict[str, str]:
        """Every registered name (starting with ``prefix``) and its endpoint."""
        text = self.request(self.nameserver, 2, prefix).text
        return dict(line.split(" ", 1) for line in text.splitlines() if line)

    def hello(self, name: str = "/nameserver") -> tuple[int, str]:
        """(protocol version, server name) of the server behind ``name``."""
        endpoint = self.nameserver if name == "/nameserver" else self.lookup(name)
        reply = self.request(endpoint, 0, params=(p.PROTOCOL_VERSION,))
        return reply.params[0], reply.text

    def robot(self, name: str):
        """A handle on robot ``name`` (one socket serves all its modules)."""
        from .robot import Robot

        return Robot(self, name, self.lookup(f"/{name}"))

    def sim(self):
        """A handle on ``/sim`` (typed helpers for every command, docs/protocol.md section 4)."""
        from .sim import Sim

        return Sim(self, self.lookup("/sim"))

    def playback(self):
        """A handle on ``/playback`` of a replay (docs/protocol.md section 7)."""
        from .sim import Playback

        return Playback(self, self.lookup("/playback"))

    def _socket(self, endpoint: str) -> zmq.Socket:
        sock = self._sockets.get(endpoint)
        if sock is None:
            sock = self._ctx.socket(zmq.REQ)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.REQ_RELAXED, 1)  # a timed-out request does not wedge the socket
            sock.setsockopt(zmq.REQ_CORRELATE, 1)  # ...and its late reply is discarded
            sock.setsockopt(zmq.RCVTIMEO, max(1, int(self.timeout * 1000)))
            # a send may wait too: a connection refused at the CurveZMQ handshake has no pipe
            sock.setsockopt(zmq.SNDTIMEO, max(1, int(self.timeout * 1000)))
            if self.keys is not None:
                self.keys.apply(sock)
            sock.connect(endpoint)
            self._sockets[endpoint] = sock
        return sock
