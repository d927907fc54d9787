"""The ports a run's servers bind: any the OS picks, or only those of a range a lab's firewall
opens (``coopsim run --ports 20000-20100``, ``$COOPSIM_PORTS``; docs/protocol.md section 2,
*Ports*).

Every server socket a run or a replay binds without a fixed port (the module servers, ``/sim``,
the state streams, ``/squads`` and its events, the pose channel, every robot's endpoint, the
name server with ``--port 0``, the JSON-lines gateway and the Foxglove bridge with port 0) asks
:func:`bind_any` (or :func:`free_port`) here. While a range is confined (:func:`confined`), a
port is taken from it, the lowest free one first; when none is left the bind fails with
:class:`PortRangeError`, one sentence saying so, which a start-up turns into exit status 2 and a
request (``/sim insert_robot``) into error 8. Without a range the OS picks, as before.

The range is the process's (one run per process): set by the run while it lives.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import threading

import zmq

from ..model.errors import SimulationError

ENV = "COOPSIM_PORTS"

_lock = threading.Lock()
_range: tuple[int, int] | None = None


class PortRangeError(SimulationError):
    """No port of the confined range is free for one more server."""


def parse(text: str) -> tuple[int, int]:
    """``LOW-HIGH`` (both included, 1..65535, LOW <= HIGH) as (low, high).

    Raises:
        ValueError: anything else, with the reason.
    """
    low, sep, high = text.strip().partition("-")
    try:
        span = (int(low), int(high))
    except ValueError:
        span = ()
    if not sep or len(span) != 2 or not 1 <= span[0] <= span[1] <= 65535:
        raise ValueError(f"a port range is LOW-HIGH with 1 <= LOW <= HIGH <= 65535 (e.g. "
                         f"20000-20100), not {text!r}")
    return span


def current() -> tuple[int, int] | None:
    """The confined range (low, high), or None when the OS picks."""
    return _range


@contextlib.contextmanager
def confined(span: tuple[int, int] | None):
    """Bind the servers started inside the block in ``span`` (None: leave it as it is)."""
    global _range
    if span is None:
        yield
        return
    with _lock:
        before, _range = _range, tuple(span)
    try:
        yield
    finally:
        with _lock:
            _range = before


def _exhausted(span: tuple[int, int], what: str) -> PortRangeError:
    low, high = span
    return PortRangeError(
        f"the port range {low}-{high} (--ports, ${ENV}) is too small for this world: no port "
        f"of its {high - low + 1} is free for {what}; a run binds 7 ports, one more per robot "
        "and one for each of --json-port 0 and --foxglove 0 (docs/protocol.md, Ports): give a "
        "wider range")


def bind_any(sock: zmq.Socket, bind: str, what: str = "a server") -> int:
    """Bind the ZeroMQ socket ``sock`` on ``bind`` to a port (the range's lowest free one
    while a range is confined, else one the OS picks) and return it.

    Raises:
        PortRangeError: the range has no free port left.
        zmq.ZMQError: another failure to bind.
    """
    span = _range
    if span is None:
        return sock.bind_to_random_port(f"tcp://{bind}")
    for port in range(span[0], span[1] + 1):
        try:
            sock.bind(f"tcp://{bind}:{port}")
            return port
        except zmq.ZMQError as exc:
            if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
                raise
    raise _exhausted(span, what)


def listen_any(bind: str, port: int, what: str) -> socket.socket:
    """A listening TCP socket on ``bind``:``port``; port 0 takes the range's lowest free port
    while a range is confined (else one the OS picks).

    Raises:
        PortRangeError: port 0, and the range has no free port left.
        OSError: the address cannot be bound.
    """
    span = _range
    if port or span is None:
        return socket.create_server((bind, port))
    for candidate in range(span[0], span[1] + 1):
        try:
            return socket.create_server((bind, candidate))
        except OSError as exc:
            if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
                raise
    raise _exhausted(span, what)


def free_port(bind: str, port: int, what: str) -> int:
    """``port``, or for port 0 while a range is confined the range's lowest port free now
    (for a server that binds by number itself: the Foxglove bridge)."""
    if port or _range is None:
        return port
    with listen_any(bind, 0, what) as probe:
        return probe.getsockname()[1]

