"""The name server: YARP-style port names to endpoints (default tcp://127.0.0.1:10000).

Command 1 (lookup) takes a port name such as ``/robot1/motors`` in text and answers its endpoint
in text and its kind in params (``rep`` request/reply server, ``pub`` stream; see
:data:`~coopsim.net.protocol.PORT_KINDS`); command 2 (list) answers every ``name endpoint`` pair,
one per line, optionally only the names starting with the prefix given in text (like ``yarp name
list``), with the kind as a third word when params is ``[1]``.
"""

from __future__ import annotations

import threading

import zmq

from . import protocol as p
from .protocol import PORT_KINDS, Command, Message
from .server import Server


def _bind_error(bind: str, port: int, exc: Exception) -> OSError:
    return OSError(f"cannot bind the name server on {bind}:{port}: {exc} (is another coopsim "
                   "running? --port picks another port)")


def check_port(bind: str, port: int) -> None:
    """Raise at once when the name server could not bind ``bind:port`` now (a run checks
    before its slow set-up, so a taken port ends it in a moment, not after the world is
    built). Port 0 (any free port) always binds.

    Raises:
        OSError: the address cannot be bound, with the sentence the name server would give.
    """
    if not port:
        return
    sock = zmq.Context.instance().socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.bind(f"tcp://{bind}:{port}")
    except zmq.ZMQError as exc:
        raise _bind_error(bind, port, exc) from None
    finally:
        sock.close(0)


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
            raise _bind_error(bind, port, exc) from None
        self._names: dict[str, tuple[str, str]] = {}  # name -> (endpoint, kind)
        self._under: dict[str, set[str]] = {}  # "/robot1" -> the names at and below it
        self._lock = threading.Lock()
        self.register("/nameserver", self.endpoint)

    def register(self, name: str, endpoint: str, kind: str = "rep") -> None:
        """Add or replace a name; ``kind`` is one of :data:`PORT_KINDS`.

        Raises:
            ValueError: an unknown kind.
        """
        if kind not in PORT_KINDS:
            raise ValueError(f"a port kind is one of {', '.join(PORT_KINDS)}, not {kind!r}")
        with self._lock:
            self._names[name] = (endpoint, kind)
            self._under.setdefault(_top(name), set()).add(name)

    def unregister_prefix(self, prefix: str) -> None:
        """Remove ``prefix`` and every name below it (``/robot1`` takes ``/robot1/motors``)."""
        with self._lock:
            names = self._under.get(_top(prefix), set())
            for name in [n for n in names if n == prefix or n.startswith(prefix + "/")]:
                del self._names[name]
                names.discard(name)

    def lookup(self, name: str) -> str | None:
        """The endpoint of ``name``, or None."""
        with self._lock:
            found = self._names.get(name)
        return found[0] if found else None

    def kind(self, name: str) -> str | None:
        """The kind of ``name`` (``rep``, ``pub``), or None."""
        with self._lock:
            found = self._names.get(name)
        return found[1] if found else None

    def handle(self, msg: Message, command: Command) -> Message:
        if command.name == "lookup":
            with self._lock:
                found = self._names.get(msg.text)
            if found is None:
                return msg.fail(p.UNKNOWN_NAME, f"no port named {msg.text!r}; command 2 "
                                                "lists the registered names")
            return msg.reply(found[0], params=(PORT_KINDS.index(found[1]),))
        kinds = msg.params[0] if msg.params else 0
        if kinds not in (0, 1):
            return msg.fail(p.OUT_OF_RANGE, "list takes params [1] (a third word per line: "
                                            "the kind) or [0] / none (name and endpoint)")
        with self._lock:
            rows = sorted(f"{n} {e} {k}" if kinds else f"{n} {e}"
                          for n, (e, k) in self._names.items() if n.startswith(msg.text))
        return msg.reply("\n".join(rows), params=(len(rows),))


def _top(name: str) -> str:
    """The first component of a port name: ``/robot1/motors`` -> ``/robot1`` (an index, so
    removing one robot's names does not scan ten thousand robots')."""
    head, _, _ = name.lstrip("/").partition("/")
    return "/" + head
