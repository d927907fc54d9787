"""The robot hub's wait for its next request: one system poll on descriptors, not zmq_poll.

libzmq's ``zmq_poll`` over the hub's three sources (the ROUTER socket, its monitor, the wake
pipe) makes two passes when it waits: a ``poll()`` with no timeout, then the real one, and after
each pass it asks both sockets for ZMQ_EVENTS, each ask a ``getpid()`` and a ``poll()`` of the
socket's mailbox inside libzmq: seven system polls for each request a lockstep loop sends
(19 a step in the stepper's thread). :class:`FdWait` waits on the sockets' own
descriptors (ZMQ_FD) and the pipe with one ``poll()``.

Why that is correct: a ZeroMQ socket's descriptor is edge-triggered. It turns readable when a
command reaches the socket's mailbox (a message arriving on a pipe that was found empty is
one), and any call on the socket may take those commands and leave it unreadable with messages
waiting. So:

- before blocking, the ROUTER socket is asked for ZMQ_EVENTS (the hub's sends since its last
  receive may have taken commands); when it has a request the poll does not block;
- the monitor is looked at once when the wait is made, and after that touched only where it
  is read to the end (``forget_closed`` receives until ``zmq.Again``): both leave its pipe
  found empty, so its next event makes its descriptor readable; its descriptor alone says
  when to read it;
- a readable descriptor with no message behind it (some other command) costs one empty
  receive: the hub's batch is then empty.
"""

from __future__ import annotations

import select

import zmq

_EVENTS, _POLLIN, _FD = int(zmq.EVENTS), int(zmq.POLLIN), int(zmq.FD)


class FdWait:
    """One poll over the hub's socket, its monitor and its wake pipe.

    Args:
        socket: The hub's ROUTER socket (only the serving thread calls this).
        monitor: Its monitor's socket (read only to the end: :func:`~coopsim.net.server.
            forget_closed`).
        wake: The wake pipe's read end.
    """

    def __init__(self, socket: zmq.Socket, monitor: zmq.Socket, wake: int) -> None:
        self.socket = socket
        self.fd, self.monitor, self.wake = socket.get(_FD), monitor.get(_FD), wake
        self._poll = select.poll()
        for fd in (self.fd, self.monitor, wake):
            self._poll.register(fd, select.POLLIN)
        # a reader that has never found its pipe empty is not woken by a new message: look
        # once, so the monitor's first event makes its descriptor readable
        monitor.get(_EVENTS)

    def wait(self, ms: int) -> tuple[bool, bool, bool]:
        """Wait up to ``ms`` ms (0: look only) for a request, a monitor event or a wake.

        Returns:
            (requests may wait on the socket, the monitor has events, the pipe was written).
        """
        asked = bool(self.socket.get(_EVENTS) & _POLLIN)
        closed = woken = False
        for fd, _ in self._poll.poll(0 if asked else ms):
            if fd == self.fd:
                asked = True
            elif fd == self.monitor:
                closed = True
            else:
                woken = True
        return asked, closed, woken
