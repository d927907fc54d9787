"""Every robot on the network, served from one ROUTER socket by the thread that owns the world.

Each robot keeps an endpoint of its own (a TCP port; every module name of the robot resolves to
it), but all of them are bound on one ROUTER socket: 10,000 robots cost 10,000 listening file
descriptors, not 10,000 sockets with their mailboxes and threads. A request's robot is the local
port of the connection it came in on (ZeroMQ's SRCFD message property, then getsockname,
once per connection: coopsim.net.hubconns).

The hub is the stepper's :class:`~coopsim.sim.waiter.Waiter`: while the stepper waits between
steps it polls the socket and answers requests itself. Reads answer at once from the snapshot; a
lockstep motion command is stored in the robot's slot and answered right after the step that used
it, by the same thread that took the step, so a lockstep loop costs no thread hand-off; parameter
changes and actions run in place, between two steps. While the stepper's loop is not running
(before start, after stop) a fallback thread serves instead; one thread serves at a time.

While the stepper takes a long step and clients are asking, the hub's reading thread serves in
its place (:mod:`coopsim.net.hubreads`): it answers reads from the latest snapshot at once and
leaves every other request to the stepper, which serves those first when the step is done.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Callable

import zmq

from ..model.errors import SimulationError
from ..sim.external import arrivals
from ..sim.slots import Owner
from . import ports
from . import protocol as p
from .protocol import Message
from .imagereads import ImageReads, Rendering
from .offload import Offload
from .hubreads import Reads, only_reads
from .hubwait import FdWait
from .hubconns import Routes, _Descriptors, _fd_limit, identify
from .exchange import reply_wire
from .robotport import Later, Reply, RobotPort
from .server import answer_errors, decoded, forget_closed, recv_request, split_request

log = logging.getLogger(__name__)

STEP_WAIT = 0.5  # s a lockstep motor reply waits, while the run is paused, before "not yet"
START_STEP_WAIT = 2.0  # s it waits while the first step waits for controllers (see _answer_early)
_BATCH = 256  # requests served per poll before the stepper gets its thread back
_FALLBACK_POLL = 0.1  # s
# flags as plain ints: pyzmq's enum flags cost an enum operation each time they are combined
_NOBLOCK, _MORE = int(zmq.NOBLOCK), int(zmq.NOBLOCK | zmq.SNDMORE)
_EVENTS, _POLLIN = int(zmq.EVENTS), int(zmq.POLLIN)
#: libzmq's send as pyzmq's compiled socket has it: the Python socket's ``send`` wraps it in
#: a Python call for options a ROUTER never uses (DRAFT routing_id, group); 8 frames a
#: lockstep step go out through it
_zsend = zmq.backend.Socket.send


@dataclass
class _Pending:
    """A lockstep motion reply waiting for its step."""

    envelope: list
    msg: Message
    generation: int
    deadline: float
    port: RobotPort | None = None  # an exchange's (protocol 13), with its plan
    plan: object = None


class RobotHub:
    """The robots' endpoints of one run.

    Args:
        ctx: ZeroMQ context.
        stepper: The run's stepper (the hub installs itself as its waiter).
        bind: Address every robot port binds.
        advertise: Host written into the endpoints the name server hands out (default: bind).
        configure: Called with the ROUTER socket before its first bind (CurveZMQ keys...).
    """

    def __init__(self, ctx: zmq.Context, stepper, bind: str = "127.0.0.1",
                 advertise: str | None = None, configure: Callable | None = None) -> None:
        self.stepper, self.bind, self.advertise = stepper, bind, advertise or bind
        self.socket = ctx.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.MAXMSGSIZE, p.MAX_FRAME_BYTES)
        self.socket.setsockopt(zmq.ROUTER_MANDATORY, 0)
        if configure is not None:
            configure(self.socket)
        self.ports: dict[str, RobotPort] = {}
        self._by_port: dict[int, RobotPort] = {}
        self._gone: dict[int, str] = {}  # ports of removed robots: their connections may linger
        self._pending: list[_Pending] = []
        self._later: list[tuple[list, RobotPort, Later]] = []  # offloaded actions in flight
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._poller = zmq.Poller()
        self._poller.register(self.socket, zmq.POLLIN)
        self._poller.register(self._wake_r, zmq.POLLIN)
        # closed connections free the robots they owned (and leave lockstep) at once
        self._monitor = self.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._poller.register(self._monitor, zmq.POLLIN)
        self._fdwait = FdWait(self.socket, self._monitor, self._wake_r)  # the usual wait
        self._owner: int | None = None  # ident of the thread serving now
        self._lock = threading.Lock()  # held by whoever serves; layout ops from others wait
        self._fallback: threading.Thread | None = None
        self._fallback_stop = threading.Event()
        self._closed = False
        self._fds = _Descriptors()
        self._callers: dict[bytes, Owner] = {}  # routing id -> who, for motion commands
        self._routes = Routes()  # routing id -> the robot port its connection reached
        self.offload = Offload(self.wake)  # inverse kinematics off the stepper in real time
        self.images = ImageReads()  # image reads rendered beside the stepper, their budgets
        self.reads = Reads(self)  # the reading thread, lent the socket for long steps
        self._asked = 0.0  # perf_counter() of the latest request served
        self._empty = time.perf_counter()  # when the socket was last seen empty (arrivals)
        self._awaited: Callable[[], bool] | None = None  # what the stepper's wait waits for
        self._ended = False  # that wait's predicate held after the request _ends_wait served
        stepper.waiter = self

    # -- robots (any thread; carried out by the serving thread) ----------------------------------

    def add(self, name: str, modules: dict, driver=None, info=None) -> RobotPort:
        """Give robot ``name`` an endpoint of its own (or keep the one it has)."""
        return self._as_owner(self._add, name, modules, driver, info)

    def remove(self, name: str) -> None:
        """Close robot ``name``'s endpoint (its open connections get 'not in the simulation')."""
        self._as_owner(self._remove, name)

    def _add(self, name: str, modules: dict, driver, info) -> RobotPort:
        port = self.ports.get(name)
        if port is not None:  # same name after a reset or update: keep the endpoint
            port.set_modules(modules, driver, info)
            return port
        try:
            self._fds.take()  # libzmq aborts the process if a bind runs out of descriptors
            number = ports.bind_any(self.socket, self.bind, f"robot {name!r}")
        except (zmq.ZMQError, OSError) as exc:  # out of descriptors or ports: say so
            raise SimulationError(
                f"cannot open an endpoint for robot {name!r}: {exc} ({len(self.ports)} robot "
                f"endpoints open, open-file limit {_fd_limit()}); host robots in-process with "
                "drivers, or raise the limit (ulimit -n)") from None
        port = RobotPort(name, modules, self.stepper, f"tcp://{self.advertise}:{number}",
                         driver, info)
        port.identify = self._identify
        port.offload = self.offload
        port.images = self.images
        port.local = f"tcp://{self.bind}:{number}"
        self.ports[name] = port
        self._by_port[number] = port
        self._gone.pop(number, None)
        return port

    def _remove(self, name: str) -> None:
        port = self.ports.pop(name, None)
        if port is None:
            return
        number = int(port.local.rsplit(":", 1)[1])
        try:
            self.socket.unbind(port.local)
        except zmq.ZMQError as exc:
            log.warning("robot hub: unbinding %s failed: %s", port.local, exc)
        del self._by_port[number]
        self._gone[number] = name

    def _as_owner(self, fn, *args):
        """Run ``fn`` on the serving thread (now, if that is us; else under the serve lock)."""
        if self.reads.lender == threading.get_ident():  # the stepper, mid-step: the socket back
            self.take_back()
        if self._owner == threading.get_ident():
            return fn(*args)
        with self._lock:  # the fallback thread releases it between polls; the stepper's
            return fn(*args)  # layout changes come through stepper.call, on its own thread

    # -- the waiter protocol (the stepper thread) ---------------------------------------------------

    @property
    def sleeps(self) -> bool:
        return False

    def wait(self, timeout: float, predicate: Callable[[], bool]) -> bool:
        """Serve requests until ``predicate()`` holds or ``timeout`` s have passed; return
        whether it holds."""
        deadline = time.perf_counter() + timeout
        lockstep = self.stepper.mode == "lockstep"  # a step's commands awaited (_ends_wait)
        self._awaited, self._ended = predicate if lockstep else None, False
        try:
            while not predicate():
                left = deadline - time.perf_counter()
                if left <= 0:
                    return False
                self._poll(left)
                if self._ended:  # _ends_wait asked the predicate already
                    return True
            return True
        finally:
            self._awaited = None

    def poll(self) -> None:
        """Serve what is waiting now."""
        self._poll(0.0)

    def wake(self) -> None:
        """Interrupt a wait (any thread): a call was queued, or stop."""
        try:
            os.write(self._wake_w, b"w")
        except (BlockingIOError, OSError):
            pass  # the pipe is full (it will wake anyway) or closed

    def stepped(self) -> None:
        """A step was published: answer the motion replies it completes."""
        if self._owner == threading.get_ident():
            self._flush()
        else:
            self.wake()

    def acquire(self) -> None:
        """The stepper's loop starts serving: the fallback thread stops first."""
        self._stop_fallback()
        self._lock.acquire()
        self._owner = threading.get_ident()

    def lend(self, last_tick: float) -> bool:
        """See :meth:`Reads.lend` (the stepper's thread, before a step)."""
        return self.reads.lend(last_tick)

    def take_back(self) -> None:
        """See :meth:`Reads.take_back` (the stepper's thread, after a lent step)."""
        self.reads.take_back()

    def release(self) -> None:
        """The stepper's loop ended: serve from the fallback thread again (unless closing)."""
        self.images.settle(self._send)  # reads in flight: answered now, no flush comes later
        self._owner = None
        self._lock.release()
        if not self._closed:
            self.start()

    # -- serving ----------------------------------------------------------------------------------

    def _poll(self, timeout: float, reads_only: bool = False) -> None:
        """Serve what comes within ``timeout`` s; ``reads_only`` (the reading thread, while
        the stepper steps): answer reads alone, leave the rest (disconnections, requests
        that may change something, offloaded actions' replies) to the stepper."""
        ms = 0 if timeout <= 0 else max(1, int(timeout * 1000))
        if reads_only or self.images.watching:
            asked, closed, woken = self._zmq_poll(ms, reads_only)
        else:  # the usual: one system poll (coopsim.net.hubwait)
            asked, closed, woken = self._fdwait.wait(ms)
        if woken:
            try:
                while os.read(self._wake_r, 4096):
                    pass
            except BlockingIOError:
                pass
        if closed:
            self._disconnected()
        if not asked or not self._serve_batch(reads_only):
            self._empty = time.perf_counter()  # seen empty: later arrivals came after
        if self._pending or self._later or self.images.busy:
            self._flush(reads_only)

    def _zmq_poll(self, ms: int, reads_only: bool) -> tuple[bool, bool, bool]:
        """:meth:`FdWait.wait`'s answer from zmq_poll: the reading thread's poller (it leaves
        the monitor out: its events wait for the stepper), or the hub's while image reads
        render (their render process's socket wakes it too)."""
        if reads_only:
            events = dict(self.reads.poller.poll(ms))
        else:
            ms = self.images.watch(self._poller, ms, self.stepper.owns_world()
                                   and self.stepper.sim.world.engine)
            events = dict(self._poller.poll(ms))
        return (self.socket in events, self._monitor in events and not reads_only,
                self._wake_r in events)

    def _disconnected(self) -> None:
        """Connections that closed: the robots they owned are free and leave lockstep."""
        closed: set[int] = set()
        self._callers = forget_closed(self._monitor, self._callers, self.stepper.slots, closed)
        self._routes.forget(closed)

    def _identify(self, caller) -> Owner:
        """Who sent a request (see :func:`identify`), worked out once per connection."""
        owner = self._callers.get(caller[0])
        if owner is None or owner.link != caller[2]:
            # A new connection may have the descriptor of one that closed a moment ago: take
            # that close first (libzmq queues it before it closes the descriptor), or it would
            # free the robots the new connection is about to own.
            self._disconnected()
            owner = self._callers[caller[0]] = identify(caller)
        return owner

    def _serve_batch(self, reads_only: bool = False) -> bool:
        """Serve what is waiting (at most _BATCH), received first: their arrival is stamped
        before any is served (an external pose's flood limit counts from it, posechannel).
        Returns whether there was any (a descriptor's wake may have had none)."""
        batch, sock, served = [], self.socket, False
        try:  # after the first, the socket's EVENTS says whether another waits: an empty
            batch.append(recv_request(sock, _NOBLOCK))  # receive's exception costs 3x that
            if self._awaited is not None and not reads_only:  # the stepper's lockstep wait
                served = True
                if self._ends_wait(batch.pop()):
                    return True  # the rest, if any, in the next wait: FdWait asks EVENTS first
            while len(batch) < _BATCH and sock.get(_EVENTS) & _POLLIN:
                batch.append(recv_request(sock, _NOBLOCK))
        except zmq.Again:
            pass
        if not batch:
            return served
        self._asked = now = time.perf_counter()
        if len(batch) == 1:  # a lockstep loop's one request a step: it arrived by now
            self._serve_one(*batch[0], reads_only, now)
        else:
            for (frames, total), wall in zip(batch, arrivals(self._empty, now, len(batch))):
                self._serve_one(frames, total, reads_only, wall)
        self._empty = now
        return True

    def _ends_wait(self, first: tuple[list, int]) -> bool:
        """Serve a lockstep wait's first request now; True when that ended the wait (a loop's
        one request a step): no ZMQ_EVENTS ask (a ``getpid`` and a ``poll`` in libzmq) looks
        for more then. Later requests are stamped after it, in the socket's order."""
        self._asked = self._empty = now = time.perf_counter()
        self._serve_one(*first, False, now)
        self._ended = self._awaited()
        return self._ended

    def _serve_one(self, frames: list, total: int, reads_only: bool = False,
                   wall: float | None = None) -> None:
        envelope, payload, count = split_request(frames, total)
        port, fd = self._port_of(envelope[0], frames[-1])
        if reads_only and (not only_reads(port, payload) or self.reads.held(frames)):
            self.reads.defer(frames, total, wall)  # the stepper serves it after its step
            return
        robot = isinstance(port, RobotPort)  # asked once: on every request
        if robot:
            port.caller, port.arrival = (envelope[0], frames[-1], fd), wall
        reply = self._answer(port, payload, count)
        if robot:
            port.caller = None
            port.requests += 1
        if isinstance(reply, Message):  # the usual: answered now
            if robot and reply.error and not self.stepper.finished:  # after the end, errors
                port.note_error(reply)  # are not the client's
            self._send(envelope, reply)
        elif isinstance(reply, Reply):  # a lockstep motion command: answered after its step
            self._pending.append(_Pending(envelope, reply.msg, reply.generation,
                                          time.perf_counter() + STEP_WAIT, port, reply.plan))
        elif isinstance(reply, bytes):  # an exchange answered now (real time): its frame
            self._send_wire(envelope, reply)
        elif isinstance(reply, Later):  # an offloaded action: answered once solved
            self._later.append((envelope, port, reply))
        elif isinstance(reply, Rendering):  # an image read: answered once rendered
            self.images.pending.append((envelope, port, reply))
        else:
            self._send(envelope, reply)

    def _answer(self, port, payload: bytes | None, count: int):
        if payload is None:
            return Message(p.BAD_MESSAGE, f"a request is one frame, got {count}", -1)
        if isinstance(port, str):  # a connection to a robot that has been removed
            msg = decoded(payload)
            return msg if msg.error else msg.fail(
                p.UNKNOWN_NAME, f"/{port} is not in the simulation any more")
        if port is None:
            return Message(p.FAILED, "the connection went away", -1)
        return answer_errors(port, payload)

    def _port_of(self, route: bytes, frame) -> tuple[RobotPort | str | None, int]:
        """The robot whose endpoint the frame's connection reached (by its local port), and
        the connection's descriptor."""
        number, fd = self._routes.port_of(route, frame)
        if number is None:
            return None, -1
        return self._by_port.get(number) or self._gone.get(number), fd

    def _flush(self, reads_only: bool = False) -> None:
        """Answer offloaded actions that are solved (not ``reads_only``: their finish writes
        the World), and motion replies whose step is done or whose wait ran out."""
        if self._later and not reads_only:
            self._finish_later()
        if not reads_only and self.images.busy and self.stepper.owns_world():
            self.images.flush(self._send, self.stepper.sim.world.engine)
        if not self._pending:
            return
        stepper, now = self.stepper, time.perf_counter()
        done, keep = stepper.done_generation, []
        for item in self._pending:
            if done > item.generation:  # the usual reply, packed without a Message
                snap = stepper.snapshot
                self._send_wire(item.envelope, p.pack(p.OK, "lockstep", item.msg.command,
                                                      (snap.step,), (snap.time,))
                                if item.plan is None else
                                reply_wire(item.port, item.plan, "lockstep", snap))
            elif stepper.finished:  # no step will use it
                self._send(item.envelope, item.msg.fail(
                    p.NOT_ALLOWED, f"the run has finished ({stepper.finished})"))
            elif now >= item.deadline and _answer_early(stepper, now - item.deadline):
                snap = stepper.snapshot
                if item.plan is not None:  # an exchange: the reads of the latest step
                    self._send_wire(item.envelope, reply_wire(
                        item.port, item.plan, "lockstep: queued, the step has not run yet", snap))
                    continue
                self._send(item.envelope, item.msg.reply(
                    "lockstep: queued, the step has not run yet", params=(snap.step,),
                    data=(snap.time,)))
            else:
                keep.append(item)
        self._pending = keep

    def _finish_later(self) -> None:
        """Finish the offloaded actions whose jobs are done and send their replies."""
        done, keep = [], []
        for item in self._later:
            (done if item[2].future.done() else keep).append(item)
        self._later = keep
        for envelope, port, later in done:
            reply = port.finish(later)
            if reply.error and not self.stepper.finished:
                port.note_error(reply)
            self._send(envelope, reply)

    def _send(self, envelope: list, reply: Message) -> None:
        if not reply.frames:
            self._send_wire(envelope, reply.to_wire())
            return
        try:
            # protocol 11: binary frames (a camera's pixels) go after the message, uncopied
            self.socket.send_multipart(envelope + [reply.to_wire(), *reply.frames], zmq.NOBLOCK,
                                       copy=False)
        except zmq.ZMQError:
            pass  # the peer went away: nothing to answer

    def _send_wire(self, envelope: list, wire: bytes) -> None:
        """Send one reply frame after its envelope, frame by frame (send_multipart's Python
        combines pyzmq's enum flags per frame: more than the sends themselves)."""
        sock = self.socket
        try:
            for part in envelope:
                _zsend(sock, part, _MORE)
            _zsend(sock, wire, _NOBLOCK)
        except zmq.ZMQError:
            pass  # the peer went away: nothing to answer

    # -- the fallback thread ----------------------------------------------------------------------

    def start(self) -> "RobotHub":
        """Serve from a thread of the hub's own until the stepper's loop takes over."""
        if self._fallback is None and not self._closed:
            self._fallback_stop.clear()
            self._fallback = threading.Thread(target=self._serve_fallback,
                                              name="coopsim-robots", daemon=True)
            self._fallback.start()
        return self

    def _serve_fallback(self) -> None:
        # the stepper's loop takes over as soon as it runs (it waits for this lock first)
        while not self._fallback_stop.is_set() and not self.stepper.running:
            with self._lock:
                self._owner = threading.get_ident()
                try:
                    self._poll(_FALLBACK_POLL)
                except Exception:  # noqa: BLE001 -- the server never dies on input
                    log.exception("robot hub: serving failed")
                finally:
                    self._owner = None
            time.sleep(0)  # let a waiting layout change or the stepper take the lock

    def _stop_fallback(self) -> None:
        thread, self._fallback = self._fallback, None
        if thread is not None and thread is not threading.current_thread():
            self._fallback_stop.set()
            self.wake()
            thread.join(5.0)

    def close(self) -> None:
        """Stop serving and close the socket (after the stepper has stopped)."""
        self._closed = True
        self._stop_fallback()
        self.reads.close()
        self.offload.close()
        try:
            self.socket.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(0)
        self.socket.close(0)
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)


def _answer_early(stepper, late: float) -> bool:
    """Whether a lockstep reply STEP_WAIT + ``late`` s old is answered "not yet" now. While the
    run takes steps it never is: it waits for its step however long the machine or the other
    controllers take. A paused or stopped run answers after STEP_WAIT, so its controllers do not
    hang on it; one whose first step still waits for its controllers to attach after
    START_STEP_WAIT (one process may attach its robots in turn, each waiting for its reply)."""
    if not stepper.running or stepper.paused:
        return True
    return stepper.starting and late >= START_STEP_WAIT - STEP_WAIT

