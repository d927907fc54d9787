"""Whether a request socket's server is still there: the patient wait of every coopsim client.

A lockstep reply comes after its step, however long that takes (other controllers, a busy
machine, a simulator stopped in a debugger): a client that gives up after a fixed time changes
the run. So a client waits its timeout, then asks :class:`Link` whether the server is there and,
while it is, waits on. The answer comes from the socket's ZeroMQ monitor (read only when a reply
is late): the connection must have completed the ZeroMQ handshake and not closed since. A
server process that is stopped (SIGSTOP) keeps its TCP connections and is waited for; one that
crashed or ended closes them, and a request sent before a disconnect is lost with it.
"""

from __future__ import annotations

import zmq
from zmq.utils.monitor import parse_monitor_message

EVENTS = (zmq.EVENT_CONNECTED | zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED
          | zmq.EVENT_CLOSED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
          | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
_FAILED = (zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
           | zmq.EVENT_HANDSHAKE_FAILED_AUTH)


class Link:
    """The connection state of one request socket (make it before the socket connects).

    Args:
        sock: A REQ or DEALER socket.
    """

    def __init__(self, sock: zmq.Socket) -> None:
        self.sock = sock
        self.monitor = sock.get_monitor_socket(EVENTS)
        self.connected = False  # TCP connected (the ZeroMQ handshake may still be going on)
        self.up = False  # the handshake succeeded
        self.failed = False  # a handshake failed (keys refused, not a ZeroMQ peer of this kind)
        self.lost = False  # closed after it was up: a request sent before is lost with it

    def gone(self) -> str:
        """Why the server is not there ("" while it is, or while its handshake goes on: a
        starved server may take long; ZeroMQ gives a handshake 30 s)."""
        while True:
            try:
                event = parse_monitor_message(self.monitor.recv_multipart(zmq.NOBLOCK))["event"]
            except zmq.Again:
                break
            self._note(event)
        if self.lost:
            return "its connection closed (the server stopped or crashed)"
        if self.up or (self.connected and not self.failed):
            return ""
        if self.failed:
            return "it refused the handshake (keys it does not accept, or not a request server)"
        return "no connection to it (nothing listens there)"

    def _note(self, event: int) -> None:
        if event == zmq.EVENT_CONNECTED:
            self.connected = True
        elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            self.up = True
        elif event & _FAILED:
            self.failed = True
        else:  # disconnected, closed
            self.lost = self.lost or self.up
            self.up = self.connected = False

    def close(self) -> None:
        """Stop monitoring (before the socket closes)."""
        try:
            self.sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self.monitor.close(0)
