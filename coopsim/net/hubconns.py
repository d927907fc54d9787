"""The robot hub's connections: who sent a request, which robot's endpoint it reached, and the
descriptors the hub's binds may still take (coopsim.net.robothub).

A request's robot is the local port of the connection it came in on (ZeroMQ's SRCFD message
property, then ``getsockname``): a system call and a socket object, worked out once per
connection (:class:`Routes`), not once per request (a lockstep loop's two requests a
step paid it every time).
"""

from __future__ import annotations

import os
import resource
import socket as pysocket

import zmq

from ..sim.slots import Owner
from .security import RUN_USER

FD_SPARE = 64  # descriptors kept free for connections, files and libzmq (which aborts without)
_RECOUNT = 1024  # binds between exact counts of the open descriptors


class Routes:
    """The local port each connection reached, by its routing id, with the connection's
    descriptor it was worked out for.

    Only the routing ids libzmq makes (a zero byte and a counter it never repeats) are
    cached, and an entry counts only while the request's descriptor (SRCFD) is the one it was
    worked out for; a client's own ``ROUTING_ID`` is looked up every time. An entry goes when
    the hub's monitor reports its connection closed (:meth:`forget`). A peer that forges
    such an id after its connection closed, on the same descriptor, reaches at most the
    robot its old connection reached, which it could connect to anyway: what it may do there
    is decided by who it is (its routing id or key), not by this table.
    """

    def __init__(self) -> None:
        self._ports: dict[bytes, tuple[int, int]] = {}  # routing id -> (descriptor, port)

    def port_of(self, route: bytes, frame) -> tuple[int | None, int]:
        """(local port number or None, descriptor) of the connection that sent ``frame``
        (a zmq.Frame of the message; ``route``: its routing id)."""
        try:
            fd = frame.get(zmq.SRCFD)
        except zmq.ZMQError:
            return None, -1
        known = self._ports.get(route)
        if known is not None and known[0] == fd:
            return known[1], fd
        number = local_port(fd)
        if number is None:
            return None, -1
        if len(route) == 5 and route[0] == 0:  # libzmq's own: never given twice by a socket
            self._ports[route] = (fd, number)
        return number, fd

    def forget(self, fds) -> None:
        """Connections on these descriptors closed: their entries go."""
        if self._ports and fds:
            self._ports = {r: v for r, v in self._ports.items() if v[0] not in fds}


def local_port(fd: int) -> int | None:
    """The local TCP port of connection ``fd`` (ZeroMQ's descriptor: never closed here)."""
    try:
        sock = pysocket.socket(fileno=fd)
        try:
            return sock.getsockname()[1]
        finally:
            sock.detach()
    except (OSError, ValueError, TypeError, IndexError):
        return None


def identify(caller) -> Owner:
    """Who sent a request: ``caller`` is (routing id, frame, descriptor) of its connection.

    Where CurveZMQ keys are in use, a listed client key is the identity (its name, from the ZAP
    handler's User-Id: two connections with one key are one owner); otherwise, and for the run's
    own key pair, the connection is (its routing id). The label names the key and the peer's
    address.
    """
    route, frame, fd = caller
    try:
        user = frame.get("User-Id")
    except (zmq.ZMQError, KeyError, UnicodeDecodeError):
        user = ""
    address = _peer(fd)
    if user and user != RUN_USER:
        return Owner(("key", user), f"client key {user!r} ({address})", fd)
    return Owner(("connection", route), f"the connection from {address}", fd)


def _peer(fd: int) -> str:
    try:
        sock = pysocket.socket(fileno=fd)
        try:
            host, port = sock.getpeername()[:2]
        finally:
            sock.detach()
        return f"{host}:{port}"
    except (OSError, ValueError, TypeError):
        return "an unknown address"


class _Descriptors:
    """An estimate of this process's open descriptors, counted exactly now and then, so a bind
    is refused before libzmq runs out (it aborts the process when it does)."""

    def __init__(self) -> None:
        self.open, self.since = _count_fds(), 0

    def take(self) -> None:
        """Account for one more; raise OSError when fewer than FD_SPARE would stay free."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return
        if self.since >= _RECOUNT or self.open + self.since + 4 * FD_SPARE > soft:
            self.open, self.since = _count_fds(), 0
        if self.open + self.since + FD_SPARE >= soft:
            raise OSError(f"too many open files (keeping {FD_SPARE} free)")
        self.since += 1


def _count_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def _fd_limit() -> str:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return "unlimited" if soft == resource.RLIM_INFINITY else str(soft)


def raise_fd_limit() -> int:
    """Raise the soft open-file limit to the hard one (each robot endpoint holds a listening
    descriptor); return the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass  # keep the soft limit; binding past it is reported per robot
    return soft
