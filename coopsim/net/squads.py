"""``/squads`` and ``/squads/events``: the squad event channel of a run (docs/protocol.md s. 8).

A player (the viewer, a script, a squad server) sends an order to ``/squads`` (a request/reply
server); the server checks it -- its grammar (:mod:`coopsim.model.orders`), that the squad
exists (unknown names are dropped and counted), and that its point is reachable for the squad
where it stands, on the same planning grid the controllers use (:mod:`coopsim.swarm.game`) --
gives it the next sequence number and then

* publishes it on ``/squads/events`` (a PUB socket; two frames: the squad's name as topic, and
  the five-item message ``[0, "<squad> <verb> [<formation>]", 2, [seq, step], data]``), where
  network controllers subscribe to their squads' topics;
* posts it on the simulation's board (``Snapshot.extra["orders"]``) between two steps (the
  reply does not wait for that), where in-process drivers read it from the snapshot after.

An order that fails a check is answered with its error code and reason and published nowhere:
the squad holds its previous order. The counts appear in ``/sim state`` under
``squad_orders``.
"""

from __future__ import annotations

import socket
import threading
from collections import deque
from dataclasses import replace
from types import MappingProxyType

import numpy as np
import zmq

from . import ports
from . import protocol as p
from ..model.errors import ProtocolError
from ..model.commands import NOT_SHARED
from ..model.orders import SquadOrder, parse_order
from ..model.statedoc import DocKey
from ..model.steering import Steer
from .protocol import HELLO, Command, Message
from .server import Server, recv_request
from .steerowners import SteerOwners

PERSON = 2  # steer params [2]: a person's steer (protocol 14), as claim params [2] (teleop)

SQUAD_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(1, "list", doc=(
        'Reply: text one line per squad, `<name> <robot,robot,...> <formation> <spacing>`; '
        'params `[count]`.')),
    Command(2, "send", data=(0, 3), text="req", doc=(
        'Request: an order: text and data as docs/protocol.md section 9 says. Reply: text = '
        "the order's text; params `[seq, step]` (its sequence number, counting from 1 over "
        'the run, and the step it was accepted at); data = its numbers.')),
    Command(3, "status", text="opt", doc=(
        "Request: text = a squad name, or empty. Reply: with a name: text the squad's latest "
        "order's text, params `[seq]`, data its numbers (params `[0]` and no text before any "
        'order); error 5 for no such squad. Empty: text `published unknown refused`, params '
        'those three counts.')),
    # protocol 14: params [2] a person's steer (coopsim teleop --group), as a teleop claim
    Command(4, "steer", params=(0, 1), data=(2, 4), text="req", doc=(
        "Request: text = a squad name; params `[2]` for a person's steer, else none; data "
        '`[vx, vy]`, `[vx, vy, vz]` or `[vx, vy, vz, yaw_rate]` (m/s, world frame; rad/s, the'
        " formation's turn; missing ones 0). Reply: shared control (docs/in-the-loop.md): "
        "text the squad (`<squad> (taken from <owner>)` for a person's steer that displaced "
        "one); params `[seq, step]` (the steer's sequence number over the run, the step it "
        "was taken after). Posted between two steps, not awaited; it holds for the driver's "
        '`hold` s (0.5 by default) of sim time, then the squad hovers. Errors: 5 no such '
        'squad; **16** a squad no `shared` driver flies (or before its first step); 4 a speed'
        ' over 50 m/s, a yaw rate over 10 rad/s, a number not finite, params other than `[2]`'
        ' or `[0]`; 3 fewer than 2 or more than 4 numbers; 11 and 13 as docs/protocol.md '
        'section 9, *Steer ownership*, says.')),
    Command(5, "feedback", text="req", doc=(
        "Request: text = a squad name. Reply: the squad's latest **feedback** (the force a "
        'haptic device renders, N, world frame, computed every step): text the squad; params '
        '`[step, seq]` (the step it was computed from, the steer in force, 0 for none); data '
        '`[time, fx, fy, fz, obstacle_x, obstacle_y, obstacle_z, neighbour_x, neighbour_y, '
        'neighbour_z, centre_x, centre_y, centre_z, vx, vy, vz]` (s; the force N = the '
        "obstacles' part + the neighbours' part; the squad's centroid, m; its mean velocity, "
        'm/s). Errors 5 and 16 as `steer`.')),
    # protocol 12: gives a squad's steering up
    Command(6, "release", text="req", doc=(
        "Request: text = a squad name. Reply: gives the squad's steering up: text `released`,"
        ' params `[1]`; `was not steered`, params `[0]`; error 11 naming the owner when '
        'another connection steers it (13 when a person took it from this one), 5 for no such'
        ' squad. The squad flies its latest steer until `hold` runs out.')),
)}


#: The keys of ``/sim state``'s ``squad_orders`` (docs/reference/state.md is generated from
#: them); a replay takes no orders: zeros and ``{}``, its recorded ``steered``.
SQUAD_ORDERS_KEYS = (
    DocKey("published", "integer", "orders taken and published"),
    DocKey("unknown", "integer", "orders dropped for naming no squad"),
    DocKey("refused", "integer", "orders that failed a check"),
    DocKey("orders", "squad -> object", "each squad's latest order: `{squad, verb, point "
           "([x, y] m or null), formation, radius, seq}`"),
    DocKey("arrived", "squad -> object", "a squad's arrival at the end of its latest order: "
           "`{seq, step, time, x, y}` (`seq` that order's); absent before it has arrived",
           since=3),
    DocKey("blocked", "squad -> {robot: why}", "the members a squad played by in-process "
           "`squad` drivers waits for, each with a sentence (`has not moved since t = 12.3 "
           "s, at (-9.0, 1.0) m, 2.4 m from its slot (left behind)`, docs/reliability.md)",
           since=4, present="live runs"),
    DocKey("steers", "integer", "the `steer` commands taken (shared control, "
           "docs/in-the-loop.md)", since=10),
    DocKey("steered", "squad -> object", "each squad under shared control's latest feedback: "
           "`{step, seq, force}` (`force` [fx, fy, fz] N, world frame)", since=10),
)
#: ``/sim state``'s ``squad_orders`` entry.
SQUAD_ORDERS = DocKey("squad_orders", "object", "the squad channel (section 9): its counts, "
                      "each squad's latest order, arrival and blockers", fields=SQUAD_ORDERS_KEYS)


class SquadServer(Server):
    """Serves ``/squads`` and publishes ``/squads/events`` for one stepper.

    Both sockets follow the run's security like every other (docs/reliability.md): with keys,
    ``configure`` makes each a CurveZMQ server before it binds, so only listed clients may send
    orders or subscribe to them.

    Args:
        ctx: ZeroMQ context. stepper: The run's Stepper. bind: Address to bind.
        advertise: Host written into the endpoints (default: bind).
        configure: Called with each socket before it binds (CurveZMQ: ``Guard.configure``).
    """

    def __init__(self, ctx: zmq.Context, stepper, bind: str = "127.0.0.1",
                 advertise: str | None = None, configure=None) -> None:
        super().__init__(ctx, "/squads", SQUAD_COMMANDS, bind, advertise=advertise,
                         configure=configure)
        self.stepper = stepper
        self.events = ctx.socket(zmq.PUB)  # used by this server's thread only
        self.events.setsockopt(zmq.LINGER, 0)
        try:
            if configure is not None:
                configure(self.events)
            port = ports.bind_any(self.events, bind, "/squads/events")
        except BaseException:  # a bind refused, or no port left in --ports
            self.events.close(0)
            self.socket.close(0)
            raise
        self.events_endpoint = f"tcp://{advertise or bind}:{port}"
        self.seq = 0
        self.counts = {"published": 0, "unknown": 0, "refused": 0}
        self._lock = threading.Lock()  # counts are read by /sim's thread
        self._grid: tuple | None = None  # (MapSpec, its planning grid)
        # each squad's latest accepted order, as answered (the board follows between two
        # steps), and the stepper's reset count it belongs to: a reset empties both
        self._latest: dict[str, SquadOrder] = {}
        self._arrivals: dict[str, dict] = {}  # squad -> its arrival at its latest order's end
        self._epoch = 0
        self._last = None  # the snapshot of the step observed before
        self._outbox: deque = deque()  # arrival events for this server's thread to publish
        self.steers = 0  # steer commands taken (shared control): their sequence numbers
        self._steering: dict[str, Steer] = {}  # squad -> its steer not yet on the board
        # protocol 12: one connection steers a squad (net/steerowners.py); closed connections
        # are seen on this server's thread through the socket's monitor
        self.steerers = SteerOwners(stepper.slots, lambda: stepper.snapshot.time)
        self._monitor = self.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._caller = None  # (routing id, frame, descriptor) of the request being served
        # What wakes this server's thread besides a request or a closed connection: an arrival
        # queued by the stepper's hook, or stop(). It sleeps in a poll of the three otherwise
        # (it woke every 20 ms to look: 50 wake-ups a second of a run nobody orders).
        self._woken, self._waker = socket.socketpair()
        for end in (self._woken, self._waker):
            end.setblocking(False)
        self._wake_lock = threading.Lock()  # the waker is written from other threads

    def register(self, names) -> None:
        """Register ``/squads`` (rep) and ``/squads/events`` (pub) at a name server."""
        names.register("/squads", self.endpoint)
        names.register("/squads/events", self.events_endpoint, kind="pub")

    def stop(self, timeout: float = 2.0) -> None:
        never_started = self._thread.ident is None
        self._stop.set()
        self._wake()  # out of its poll now, not at the next safety wake-up
        super().stop(timeout)
        if never_started:
            self.events.close(0)
            self._monitor.close(0)
            self._close_wake()

    def _serve(self) -> None:
        """Sleep until a request, a closed connection, an arrival or stop() wakes the thread;
        then publish what is queued and answer every request waiting."""
        poller = zmq.Poller()
        for source in (self.socket, self._monitor, self._woken):
            poller.register(source, zmq.POLLIN)
        try:
            while not self._stop.is_set():
                if self._woken.fileno() in dict(poller.poll(self.poll_ms)):
                    self._drain_wake()
                self.idle()
                while True:  # every request here now, one receive each
                    try:
                        frames, total = recv_request(self.socket, zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    self._serve_one(frames, total)
        finally:  # on the thread that used them
            self.socket.close(0)
            self.events.close(0)
            self._monitor.close(0)
            self._close_wake()

    def _wake(self) -> None:
        """Wake this server's thread (from any thread; a no-op once it has closed)."""
        with self._wake_lock:
            if self._waker is not None:
                try:
                    self._waker.send(b"!")
                except OSError:
                    pass  # its buffer is full: the thread has wake-ups pending already

    def _drain_wake(self) -> None:
        try:
            while self._woken.recv(4096):
                pass
        except OSError:
            pass  # drained (BlockingIOError)

    def _close_wake(self) -> None:
        with self._wake_lock:  # never closed under a writer: its descriptor could be reused
            self._woken.close()
            if self._waker is not None:
                self._waker.close()
                self._waker = None

    def _serve_one(self, frames: list, total: int) -> None:
        """Note who asks (a steer's owner) before serving the request."""
        try:
            fd = frames[-1].get(zmq.SRCFD)
        except zmq.ZMQError:
            fd = -1
        self._caller = (frames[0].bytes, frames[-1], fd)
        try:
            super()._serve_one(frames, total)
        finally:
            self._caller = None

    #: The server's thread wakes at least this often, ms: a safety net only (what it serves
    #: wakes it: requests, closed connections, arrivals, stop()).
    poll_ms = 1000

    def handle(self, msg: Message, command: Command) -> Message:
        self.idle()
        return getattr(self, f"_{command.name}")(msg)

    def idle(self) -> None:
        """Publish the arrival events noted since, and forget the steering of connections that
        closed (on this server's thread)."""
        self.steerers.forget_closed(self._monitor)
        while self._outbox:
            squad, wire = self._outbox.popleft()
            try:
                self.events.send_multipart([squad.encode(), wire], zmq.NOBLOCK)
            except zmq.ZMQError:
                pass  # no room for a slow subscriber: /sim state squad_orders still has it

    def observe(self, snap) -> None:
        """A stepper hook (on the stepper's thread): note each squad that has arrived at the
        end of its latest order (:func:`coopsim.swarm.game.arrived`, from the robots' poses and
        their speeds since the step before) for ``squad_orders`` and ``/squads/events``."""
        last, self._last = self._last, snap  # snapshots are immutable: kept, not copied
        if not self._latest:  # no order since a start: nothing arrives (read unlocked: a
            return  # dict's truth is atomic; an order given meanwhile is seen next step)
        with self._lock:
            pending = {k: o for k, o in self._current().items()
                       if self._arrivals.get(k, {}).get("seq") != o.seq}
        if not pending or last is None or snap.time <= last.time:
            return
        from ..swarm import game  # scipy and the planner: only for a run that gets orders
        from ..swarm.formations import Formation

        specs = {q.name: q for q in snap.extra.get("squads", ())}
        for name, order in pending.items():
            robots = [r for r in getattr(specs.get(name), "robots", ()) if r in snap.index
                      and r in last.index]
            if order.verb not in game.ARRIVING or not robots:
                continue
            pos = np.array([snap.poses[snap.index[r], :2] for r in robots])
            before = np.array([last.poses[last.index[r], :2] for r in robots])
            speeds = np.hypot(*(pos - before).T) / (snap.time - last.time)
            if game.arrived(order, Formation.of(specs[name]), pos, speeds):
                self._arrive(order, snap, pos.mean(axis=0))

    def _arrive(self, order: SquadOrder, snap, centre) -> None:
        """Note ``order``'s squad as arrived at step ``snap`` and queue its event."""
        x, y = round(float(centre[0]), 4), round(float(centre[1]), 4)
        with self._lock:
            if self._current().get(order.squad) is not order:
                return  # a newer order came meanwhile
            self._arrivals[order.squad] = {"seq": order.seq, "step": snap.step,
                                           "time": round(snap.time, 6), "x": x, "y": y}
        wire = Message(0, f"{order.squad} arrived", 2, (order.seq, snap.step), (x, y)).to_wire()
        self._outbox.append((order.squad, wire))
        self._wake()  # published by the server's thread now

    def state(self) -> dict:
        """The ``squad_orders`` entry of ``/sim state``: the channel's counts (``published``,
        ``unknown``: dropped for naming no squad, ``refused``: failed a check), each squad's
        latest order, its arrival, and the members its in-process drivers say it waits for
        (``blocked``: squad -> {robot: why}); shared control's ``steers`` and ``shared``."""
        with self._lock:
            orders = self._current()
            blocked = self.stepper.snapshot.extra.get("squad_blocked", {})
            return {"squad_orders": {**self.counts, "orders": {
                k: o.describe() for k, o in orders.items()}, "arrived": dict(self._arrivals),
                "blocked": {k: dict(v) for k, v in blocked.items() if k in orders},
                **self._shared_state()}}

    def _shared_state(self) -> dict:
        """Shared control's part of ``squad_orders`` (call under the lock): the steer commands
        taken, and each squad under shared control's latest feedback step, steer and force."""
        return {"steers": self.steers, "steered": steered(self.stepper.snapshot)}

    # -- commands -----------------------------------------------------------------------------

    def _list(self, msg: Message) -> Message:
        squads = self.stepper.snapshot.extra.get("squads", ())
        rows = [f"{s.name} {','.join(s.robots)} {s.formation} {s.spacing:g}" for s in squads]
        return msg.reply("\n".join(rows), params=(len(rows),))

    def _status(self, msg: Message) -> Message:
        if not msg.text:
            with self._lock:
                counts = (self.counts["published"], self.counts["unknown"], self.counts["refused"])
            return msg.reply("published unknown refused", params=counts)
        with self._lock:
            order = self._current().get(msg.text)
        if order is None:
            self._squad(msg.text)  # an unknown name is error 5; a known one has no order yet
            return msg.reply("", params=(0,))
        return msg.reply(order.text, params=(order.seq,), data=order.data)

    def _send(self, msg: Message) -> Message:
        order = parse_order(msg.text, msg.data)
        try:
            spec = self._squad(order.squad)
            self._check(order, spec)
        except ProtocolError as exc:
            self._count("unknown" if exc.code == p.UNKNOWN_NAME else "refused")
            raise
        with self._lock:
            self.seq += 1
            order = replace(order, seq=self.seq)
            self._current()[order.squad] = order
        step = self.stepper.snapshot.step
        # not awaited: a network subscriber should not wait for the stepper's next pause
        self.stepper.call(_post, self.stepper, order)
        wire = Message(0, order.text, 2, (order.seq, step), order.data).to_wire()
        try:
            self.events.send_multipart([order.squad.encode(), wire], zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # no room for a slow subscriber: the board and /squads status still have it
        self._count("published")
        return msg.reply(order.text, params=(order.seq, step), data=order.data)

    def _steer(self, msg: Message) -> Message:
        """A person's velocity for a squad under shared control (docs/in-the-loop.md): posted
        on the board between two steps (not awaited), where the ``shared`` driver reads it.
        Steers arriving faster than the run steps are coalesced (the latest per squad wins):
        at most one post waits on the stepper, however fast a device sends.

        Protocol 14: params ``[2]`` is a person's steer (net/steerowners.py): it takes the
        squad from the connection steering it (error 13 to that one until the person lets
        go); the reply's text then says whom from, ``<squad> (taken from <owner>)``."""
        if msg.params and msg.params[0] not in (0, PERSON):
            raise ProtocolError(p.OUT_OF_RANGE, f"steer takes params [{PERSON}] (a person's "
                                                "steer, as a teleop claim) or none, not "
                                                f"{list(msg.params)}")
        self._shared(msg.text)
        steer = Steer.parse(msg.text, msg.data)  # error 4 before it takes the squad
        # error 11: another connection steers it; 13: a person took it from this one
        person = bool(msg.params) and msg.params[0] == PERSON
        taken = self.steerers.take(msg.text, self._owner(), person)
        with self._lock:
            self.steers += 1
            steer = replace(steer, seq=self.steers)
            queue = not self._steering
            self._steering[steer.squad] = steer
        if queue:
            self.stepper.call(self._post_steers)
        text = f"{msg.text} (taken from {taken})" if taken else msg.text
        return msg.reply(text, params=(steer.seq, self.stepper.snapshot.step))

    def _post_steers(self) -> None:
        """On the stepper thread: the steers taken since the last post onto the board (a new
        immutable mapping: snapshots keep theirs), stamped with the sim time."""
        with self._lock:
            taken, self._steering = self._steering, {}
        sim = self.stepper.sim
        steers = dict(sim.extra.get("steer", {}))
        steers.update({k: replace(v, time=sim.time) for k, v in taken.items()})
        sim.extra["steer"] = MappingProxyType(steers)

    def _release(self, msg: Message) -> Message:
        """Give a squad's steering up (protocol 12): params [1] when this connection steered
        it, [0] when nobody did; error 11 when another connection does (13 when a person took
        it from this one), 5 for no such squad. The squad flies its latest steer until the
        driver's ``hold`` runs out, then hovers; a person's release gives it back to the
        connection it took it from."""
        self._squad(msg.text)
        was = self.steerers.release(msg.text, self._owner().key)
        return msg.reply("released" if was else "was not steered", params=(int(was),))

    def _owner(self):
        """The Owner the request being served comes from (as a robot's: net/robothub.py)."""
        from .hubconns import identify  # the hub's rule: a Curve key's name, or the connection

        return identify(self._caller)

    def _feedback(self, msg: Message) -> Message:
        """The squad's latest feedback force (N) and the step it belongs to."""
        fb = self._shared(msg.text)
        return msg.reply(msg.text, params=(fb.step, fb.seq), data=fb.data)

    def _shared(self, name: str):
        """The latest Feedback of squad ``name``: error 5 for no such squad, 16 for a squad
        no ``shared`` driver flies."""
        fb = self.stepper.snapshot.extra.get("feedback", {}).get(name)
        if fb is None:
            self._squad(name)
            raise ProtocolError(NOT_SHARED, f"squad {name} is not under shared control: its "
                                            "robots host no shared driver (docs/in-the-loop.md)")
        return fb

    def _current(self) -> dict[str, SquadOrder]:
        """The latest orders since the run's last reset (call under the lock)."""
        epoch = self.stepper.layout_key[0]
        if epoch != self._epoch:
            self._latest, self._arrivals, self._epoch = {}, {}, epoch
        return self._latest

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1

    def _squad(self, name: str):
        squads = self.stepper.snapshot.extra.get("squads", ())
        for spec in squads:
            if spec.name == name:
                return spec
        known = ", ".join(s.name for s in squads) or "none"
        raise ProtocolError(p.UNKNOWN_NAME, f"no squad named {name[:40]!r} (squads: {known}); "
                                            "the order was dropped")

    def _check(self, order: SquadOrder, spec) -> None:
        """FAILED (8) with the reason when the squad cannot reach the order's point."""
        if order.point is None:
            return
        from ..swarm import game  # scipy and the planner: only for a run that gets orders
        from ..swarm.errors import SwarmError

        snap = self.stepper.snapshot
        rows = [snap.index[r] for r in spec.robots if r in snap.index]
        if not rows:
            raise ProtocolError(p.FAILED, f"squad {spec.name} has no robot in the run")
        spec_map = snap.extra.get("map")
        if self._grid is None or self._grid[0] is not spec_map:
            self._grid = (spec_map, game.planning_grid(spec_map))
        try:
            game.check_order(self._grid[1], order, np.asarray(snap.poses)[rows, :2])
        except SwarmError as exc:
            raise ProtocolError(p.FAILED, f"{exc}; squad {spec.name} holds its previous "
                                          "order") from None


def _post(stepper, order: SquadOrder) -> int:
    """On the stepper thread: make ``order`` its squad's latest on the board (a new immutable
    mapping: snapshots keep theirs); return the step it was posted after."""
    sim = stepper.sim
    orders = dict(sim.extra.get("orders", {}))
    orders[order.squad] = order
    sim.extra["orders"] = MappingProxyType(orders)
    stepper.refresh()  # readers (a paused run's /sim state too) see it before the next step
    return sim.step


def steered(snap) -> dict:
    """``squad_orders``' ``steered``: each squad under shared control's latest feedback step,
    steer seq and force (N) on ``snap``'s board (a live run's, or a replay's: format 7)."""
    board = snap.extra.get("feedback", {})
    return {k: dict(step=fb.step, seq=fb.seq, force=[round(f, 6) for f in fb.force])
            for k, fb in board.items()}
