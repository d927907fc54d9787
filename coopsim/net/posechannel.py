"""``/external``: the external robots' pose channel (protocol 11, docs/in-the-loop.md).

A motion-capture bridge streams every external robot's poses to this one endpoint, a ROUTER
socket served by a thread of its own: a pose is received, checked and stored here
(:meth:`~coopsim.sim.external.ExternalRobots.receive`, under its lock) and the stepper takes
the latest one of each robot when it applies them before its next step. The stepper's thread
never sees a pose: 2,000 poses/s cost it nothing but that table, while the robots' endpoints
(served by the stepper's thread, :mod:`coopsim.net.robothub`) keep answering their sonar reads.

Requests are the protocol's five-item message, the robot named in the text (command 20,
``external_pose``; 4 ``claim`` and 5 ``release`` of a robot's poses): a ROUTER answers each
one, so a refused pose still gets its documented code (14, 15, 11), and ``params [1]`` on a
pose asks for an answer only when it is refused (a DEALER streaming without reading replies).
The connection that sends a robot's poses owns it, as on the robot's endpoint (the same book,
:class:`~coopsim.sim.slots.CommandSlots`); closing it frees the robot.
"""

from __future__ import annotations

import time

import zmq

from ..model.errors import NotAllowedError, ProtocolError
from ..sim.external import arrivals
from . import protocol as p
from .protocol import HELLO, Command, Message, PoseCommand
from .hubconns import identify
from .server import Server, forget_closed, recv_request, split_request

#: The channel's commands: the robot is the text.
POSE_CHANNEL_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(4, "claim", params=(0, 1), text="req"),
    Command(5, "release", text="req"),
    PoseCommand(20, "external_pose", params=(0, 1), data=(3, 7), text="req"),
)}
QUIET = 1  # a pose's params [1]: answer it only when it is refused
BATCH = 4096  # requests received at once before they are served (their arrival stamped)
class PoseChannel(Server):
    """Serves ``/external`` for one stepper, on its own thread.

    Args:
        ctx: ZeroMQ context. stepper: The run's Stepper. bind: Address to bind.
        advertise: Host written into the endpoint (default: bind).
        configure: Called with the socket before it binds (CurveZMQ: ``Guard.configure``).
    """

    def __init__(self, ctx: zmq.Context, stepper, bind: str = "127.0.0.1",
                 advertise: str | None = None, configure=None) -> None:
        super().__init__(ctx, "/external", POSE_CHANNEL_COMMANDS, bind, advertise=advertise,
                         configure=configure)
        self.stepper = stepper
        self._monitor = self.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._callers: dict[bytes, object] = {}  # routing id -> Owner (this thread only)
        self._caller = None  # (routing id, frame, descriptor) of the request being served
        self._arrival: float | None = None  # its arrival (perf_counter s, see arrivals())
        self.received = 0  # poses taken through the channel (read by other threads: an int)

    def stop(self, timeout: float = 2.0) -> None:
        if self._thread.ident is None:  # never started: its monitor would hold ctx.term()
            self.socket.disable_monitor()
            self._monitor.close(0)
        super().stop(timeout)

    def register(self, names) -> None:
        """Put ``/external`` in the name server."""
        names.register("/external", self.endpoint)

    def handle(self, msg: Message, command: Command) -> Message:
        robot = msg.text
        if msg.params and msg.params[0] not in (0, 1):
            raise ProtocolError(p.OUT_OF_RANGE, f"{command.name} takes params [], [0] or [1], "
                                                f"got {list(msg.params)}")
        owner = self._owner()
        slots = self.stepper.slots
        if command.id == 5:
            was = slots.release(robot, owner.key if owner else None)
            return msg.reply("released" if was else "was not owned", params=(int(was),))
        external = self.stepper.sim.external
        if robot not in external.tracks:
            external.receive(robot, msg.data, self._arrival)  # raises error 14, its sentence
        if command.id == 4:
            if owner is None:
                raise NotAllowedError("claim needs a network connection")
            taken = slots.claim(robot, owner, force=bool(msg.params and msg.params[0]))
            return msg.reply(f"claimed by {owner.label}" + (f" (taken from {taken})"
                                                            if taken else ""),
                             params=(int(bool(taken)),))
        external.check_shape(robot, msg.data)  # error 14 before 11, counted
        if owner is not None:
            slots.claim(robot, owner)  # error 11: another connection's
        external.receive(robot, msg.data, self._arrival)
        self.received += 1
        if msg.params and msg.params[0] == QUIET:
            return None
        snap = self.stepper.snapshot
        return msg.reply("external", params=(snap.step,), data=(snap.time,))

    def _owner(self):
        """The Owner the request being served comes from, worked out once per connection."""
        if self._caller is None:
            return None
        owner = self._callers.get(self._caller[0])
        if owner is None or owner.link != self._caller[2]:
            self._disconnected()  # a closed connection's descriptor may be reused: first
            owner = self._callers[self._caller[0]] = identify(self._caller)
        return owner

    def _serve(self) -> None:
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        poller.register(self._monitor, zmq.POLLIN)
        empty = time.perf_counter()  # when the socket was last seen empty
        try:
            while not self._stop.is_set():
                events = dict(poller.poll(self.poll_ms))
                if self._monitor in events:
                    self._disconnected()
                if self.socket not in events:
                    empty = time.perf_counter()
                    continue
                batch = self._drain()
                now = time.perf_counter()
                for (frames, total), wall in zip(batch, arrivals(empty, now, len(batch))):
                    self._serve_caller(frames, total, wall)
                empty = now
        finally:
            self.socket.disable_monitor()
            self._monitor.close(0)
            self.socket.close(0)

    def _drain(self) -> list:
        """Every request waiting now (at most :data:`BATCH`), received before any is served:
        their arrival is stamped from this moment (:func:`arrivals`)."""
        batch = []
        while len(batch) < BATCH:
            try:
                batch.append(recv_request(self.socket, zmq.NOBLOCK))
            except zmq.Again:
                break
        return batch

    def _serve_caller(self, frames: list, total: int, wall: float) -> None:
        envelope, payload, count = split_request(frames, total)
        try:
            fd = frames[-1].get(zmq.SRCFD)
        except zmq.ZMQError:
            fd = -1
        self._caller, self._arrival = (envelope[0], frames[-1], fd), wall
        try:
            reply = Message(p.BAD_MESSAGE, f"a request is one frame, got {count}", -1) \
                if payload is None else self.answer(payload)
        finally:
            self._caller = None
        if reply is None:  # a quiet pose, taken
            return
        try:
            self.socket.send_multipart(envelope + [reply.to_wire()], zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # the peer went away: nothing to answer

    def _disconnected(self) -> None:
        """Connections that closed: the robots whose poses they sent are free."""
        self._callers = forget_closed(self._monitor, self._callers, self.stepper.slots)
