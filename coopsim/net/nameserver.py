"""The name server: YARP-style port names to endpoints (default tcp://127.0.0.1:10000).

Command 1 (lookup) takes a port name such as ``/robot1/motors`` in text and answers its endpoint
in text; command 2 (list) answers every ``name endpoint`` pair, one per line, optionally only the
names starting with the prefix given in text (like ``yarp name list``).
"""

from __future__ import annotations

import threading

import zmq

from . import protocol as p
from .protocol import Command, Message
from .server import Server


class NameServer(Server):
    """Registry of port names, served on the bootstrap endpoint.

    Args:
        ctx: ZeroMQ context.
        bind: Address to bind.
        port: Port (YARP's 10000 by default; 0 = any free port, for tests).
        advertise, configure: As for :class:`~coopsim.net.server.Server`.

    Raises:
        OSError: the address cannot be bound (most often: the port is taken).
    """

    def __init__(self, ctx: zmq.Context, bind: str = "127.0.0.1", port: int = 10000,
                 advertise: str | None = None, configure=None) -> None:
        try:
            super().__init__(ctx, "/nameserver", p.NAME_COMMANDS, bind, port, advertise,
                             configure)
        except zmq.ZMQError as exc:
            raise OSError(f"cannot bind the name server on {bind}:{port}: {exc} (is another "
                          "coopsim running? --port picks another port)") from None
        self._names: dict[str, str] = {}
        self._lock = threading.Lock()
        self.register("/nameserver", self.endpoint)

    def register(self, name: str, endpoint: str) -> None:
        """Add or replace a name."""
        with self._lock:
            self._names[name] = endpoint

    def unregister_prefix(self, prefix: str) -> None:
        """Remove ``prefix`` and every name below it (``/robot1`` takes ``/robot1/motors``)."""
        with self._lock:
            for name in [n for n in self._names if n == prefix or n.startswith(prefix + "/")]:
                del self._names[name]

    def lookup(self, name: str) -> str | None:
        """The endpoint of ``name``, or None."""
        with self._lock:
            return self._names.get(name)

    def handle(self, msg: Message, command: Command) -> Message:
        if command.name == "lookup":
            endpoint = self.lookup(msg.text)
            if endpoint is None:
                return msg.fail(p.UNKNOWN_NAME, f"no port named {msg.text!r}; command 2 "
                                                "lists the registered names")
            return msg.reply(endpoint)
        with self._lock:
            rows = sorted(f"{n} {e}" for n, e in self._names.items() if n.startswith(msg.text))
        return msg.reply("\n".join(rows), params=(len(rows),))
