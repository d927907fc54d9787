"""The robot hub's reading thread: it answers reads while the stepper takes a long step.

The stepper's thread serves the hub's socket between steps (coopsim.net.robothub). Before a
real-time step that is likely long (the one before it took :data:`LEND_MIN` s of CPU time or
more) and while clients are asking, it lends the socket to this thread (:meth:`Reads.lend`): reads of modules and the
generic read-only commands are answered from the latest snapshot at once; every other request
(motion, claims, parameter writes, actions: anything that may change something) is kept for the
stepper, which serves it first when it takes the socket back after the step
(:meth:`Reads.take_back`). Only the stepper writes the World; the hub's serve lock says who uses
the socket (sim/ownership.py, the lock order).

The lock order, read by read: this thread holds the serve lock while it serves, and the
stepper takes that lock back after the step, so nothing served here may wait for the
stepper. What it serves needs nothing of the World: the snapshot (published under the
stepper's ``stepped`` lock, held for a few statements), the port's module tables, the
external robots' latency book (its own lock, a leaf), the pending lockstep replies (sent
from the snapshot's step number). A read that needs the World (``read_world``) and
everything that may change something is deferred (:func:`only_reads`); disconnections and
offloaded actions' replies wait for the stepper too.
"""

from __future__ import annotations

import logging
import threading
import time

import zmq

from ..model.errors import ProtocolError
from .protocol import Message
from .robotport import RobotPort

log = logging.getLogger(__name__)

#: A step at least this long (s of CPU time; the one before it, as the guess) has the reading
#: thread answer reads while it runs. Shorter ones keep the socket: two thread hand-overs a
#: step (~20-50 us) would cost a small world more than a read waiting for its step. Lockstep
#: steps are never lent: every controller waits for its step's reply then, none reads meanwhile,
#: and its loop keeps costing no thread hand-off.
LEND_MIN = 0.001
LEND_QUIET = 1.0  # s without a request after which steps are no longer lent
_POLL = 0.1  # s; take_back wakes the thread sooner
_READ_ONLY = frozenset(("hello", "modules", "commands"))  # robot commands that only read


class Reads:
    """The reading thread of one hub and the hand-over of its socket.

    Args:
        hub: The RobotHub (its serve lock, socket, wake pipe and serving).

    Attributes:
        lend_min: s, see :data:`LEND_MIN`. quiet: s, see :data:`LEND_QUIET`.
        lender: The stepper's thread ident while it has lent the socket, else None.
        deferred: (frames, count, arrival) of the requests left to the stepper.
        poller: The reading thread's poller: the socket and the wake pipe (not the monitor).
    """

    def __init__(self, hub) -> None:
        self.hub = hub
        self.lend_min, self.quiet = LEND_MIN, LEND_QUIET
        self.lender: int | None = None
        self.deferred: list[tuple[list, int]] = []
        self._held: set[bytes] = set()  # the connections (routing ids) with a deferred request
        self.poller = zmq.Poller()
        self.poller.register(hub.socket, zmq.POLLIN)
        self.poller.register(hub._wake_r, zmq.POLLIN)
        self._lent = threading.Event()  # set while this thread may serve
        self._thread: threading.Thread | None = None

    def lend(self, last_tick: float) -> bool:
        """Before a step (the stepper's thread, serving): in real time, when the last step
        took ``lend_min`` s of CPU time or more and someone asked something in the last
        ``quiet`` s, this thread serves reads until :meth:`take_back`. Returns whether it
        does."""
        hub = self.hub
        if last_tick < self.lend_min or hub.stepper.mode != "realtime" or hub._closed \
                or hub._owner != threading.get_ident() \
                or time.perf_counter() - hub._asked > self.quiet:
            return False
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="coopsim-reads",
                                            daemon=True)
            self._thread.start()
        self.lender, hub._owner = threading.get_ident(), None
        hub._lock.release()
        self._lent.set()
        return True

    def take_back(self) -> None:
        """After a lent step (the stepper's thread): serve again, first what was left."""
        if self.lender != threading.get_ident():
            return  # taken back already (a layout change mid-step: RobotHub._as_owner)
        hub = self.hub
        self._lent.clear()
        hub.wake()  # this thread's poll returns
        hub._lock.acquire()
        self.lender, hub._owner = None, threading.get_ident()
        deferred, self.deferred, self._held = self.deferred, [], set()
        for frames, total, wall in deferred:
            hub._serve_one(frames, total, wall=wall)

    def defer(self, frames: list, total: int, wall: float | None = None) -> None:
        """Leave a request to the stepper (served first after the step), and every later
        request of the same connection with it: replies go out in the order asked (a read
        sent after a motion command is not answered before it). ``wall``: its arrival."""
        self.deferred.append((frames, total, wall))
        self._held.add(frames[0].bytes)

    def held(self, frames: list) -> bool:
        """Whether the connection that sent ``frames`` has a request waiting for the
        stepper (its later reads wait too)."""
        return bool(self._held) and frames[0].bytes in self._held

    def _serve(self) -> None:
        hub, me = self.hub, threading.get_ident()
        while not hub._closed:
            self._lent.wait()
            with hub._lock:
                if not self._lent.is_set() or hub._closed:
                    continue  # taken back before this thread got here
                hub._owner = me
                try:
                    while self._lent.is_set():
                        hub._poll(_POLL, reads_only=True)
                except Exception:  # noqa: BLE001 -- the server never dies on input
                    log.exception("robot hub: serving reads failed")
                finally:
                    hub._owner = None

    def close(self) -> None:
        """End the thread (the hub is closing: ``hub._closed`` is set)."""
        if self._thread is not None:
            self._lent.set()  # its wait returns and it sees the hub closed
            self._thread.join(5.0)


def only_reads(port, payload: bytes | None) -> bool:
    """Whether a request to ``port`` only reads the snapshot (the reading thread answers it):
    a read of a module or a generic read-only command, or one whose answer is an error the
    World has no part in (a malformed or unknown request, a removed robot's).

    A read the module answers from the World itself (``read_world``: camera3d renders an
    image) is not one: it is left to the stepper like a write. Why: served here it queued its
    render to the stepper and waited for it while this thread held the serve lock, and the
    stepper, its step done, waited for that lock to take the socket back: both waited out
    the 5 s call timeout (error 9, the world frozen). This thread never waits on the World."""
    if not isinstance(port, RobotPort) or payload is None:
        return True
    try:
        msg = Message.from_wire(payload)
    except ProtocolError:
        return True
    command = port.commands.get(msg.command)
    if command is None or command.name in _READ_ONLY:
        return True
    return command.kind == "read" and not hasattr(port.classes.get(command.module), "read_world")
