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

EVENTS = (zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED | zmq.EVENT_CLOSED
          | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
          | zmq.EVENT_HANDSHAKE_FAILED_AUTH)


class Link:
    """The connection state of one request socket (make it before the socket connects).

    Args:
        sock: A REQ or DEALER socket.
    """

    def __init__(self, sock: zmq.Socket) -> None:
        self.sock = sock
        self.monitor = sock.get_monitor_socket(EVENTS)
        self.up = False
        self.lost = False

    def gone(self) -> str:
        """Why the server is not there ("" while it is)."""
        while True:
            try:
                event = parse_monitor_message(self.monitor.recv_multipart(zmq.NOBLOCK))["event"]
            except zmq.Again:
                break
            if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self.up = True
            elif self.up:  # a request sent before a disconnect is lost with the connection
                self.lost, self.up = True, False
        if self.lost:
            return "its connection closed (the server stopped or crashed)"
        if not self.up:
            return "no connection to it (nothing listens there, or it refused the handshake)"
        return ""

    def close(self) -> None:
        """Stop monitoring (before the socket closes)."""
        try:
            self.sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self.monitor.close(0)
