"""The squad event channel from a client: send orders to ``/squads``, subscribe to
``/squads/events`` (docs/protocol.md section 9)."""

from __future__ import annotations

import sys
import time

import zmq

from ..model.commands import TELEOPERATED
from ..model.errors import ProtocolError
from ..model.orders import SquadOrder, parse_order
from ..model.steering import Feedback
from ..net.protocol import Message
from .connection import Client
from .robot import TELEOP_POLL

PERSON = 2  # steer params [2]: a person's steer (protocol 14), as a teleop claim's [2]


class Squads:
    """``/squads`` of a run.

    Args:
        client: The connection.
    """

    def __init__(self, client: Client) -> None:
        self.client = client
        self.endpoint = client.lookup("/squads", "rep")

    def send(self, squad: str, verb: str, point=None, formation: str = "",
             radius: float | None = None) -> SquadOrder:
        """Send an order; returns it with the sequence number the server gave it.

        Raises:
            RemoteError: 5 no such squad (dropped), 3/4/5 a malformed order, 8 unreachable
                (the squad holds its previous order).
        """
        order = SquadOrder(squad, verb, tuple(point) if point is not None else None, formation,
                           radius)
        reply = self.client.request(self.endpoint, 2, order.text, data=order.data)
        return SquadOrder(squad, verb, order.point, formation, radius, reply.params[0])

    #: A steer refused because a person took the squad from this connection (error 13)
    #: waits, trying again every :data:`~coopsim.client.robot.TELEOP_POLL` s, until the
    #: squad is given back, then goes through (one line on stderr says so), as a robot's
    #: motion command does; False: it raises the RemoteError.
    wait_while_teleoperated = True

    def steer(self, squad: str, vx: float, vy: float, vz: float = 0.0,
              yaw_rate: float = 0.0, person: bool = False) -> tuple[int, int]:
        """Steer a squad under shared control (docs/in-the-loop.md): its velocity, m/s, world
        frame, and the formation's turn, rad/s. It holds the ``shared`` driver's ``hold`` s:
        send it again (at the rate a hand moves) to keep going.

        Args:
            person: A person's steer (protocol 14, params [2]: ``coopsim teleop --group``):
                it takes the squad from the connection steering it, which has it back when
                this one releases it, disconnects or stays silent for the lease.

        Returns:
            (the command's sequence number, the step it was taken after).

        Raises:
            RemoteError: 5 no such squad, 16 not under shared control, 4 beyond the limits,
                11 another connection steers it (protocol 12; the text names it), 13 a
                person took it from this connection (only with ``wait_while_teleoperated``
                False).
        """
        told = False
        while True:
            try:
                reply = self.client.request(self.endpoint, 4, squad, (PERSON,) if person else (),
                                            (vx, vy, vz, yaw_rate))
                return int(reply.params[0]), int(reply.params[1])
            except ProtocolError as exc:
                if exc.code != TELEOPERATED or not self.wait_while_teleoperated:
                    raise
                if not told:
                    print(f"coopsim: {exc.text}; waiting", file=sys.stderr, flush=True)
                    told = True
                time.sleep(TELEOP_POLL)

    def release(self, squad: str) -> bool:
        """Give up steering ``squad`` (protocol 12: one connection steers a squad at a time);
        True when this connection steered it.

        Raises:
            RemoteError: 11 another connection steers it (13: a person took it from this
                one), 5 no such squad.
        """
        return bool(self.client.request(self.endpoint, 6, squad).params[0])

    def feedback(self, squad: str) -> Feedback:
        """The squad's latest feedback force (N, world frame) and the step it belongs to.

        Raises:
            RemoteError: 5 no such squad, 16 not under shared control.
        """
        reply = self.client.request(self.endpoint, 5, squad)
        return Feedback.of_wire(squad, reply.params, reply.data)

    def list(self) -> dict[str, dict]:
        """Squad name -> {robots, formation, spacing}."""
        out = {}
        for line in self.client.request(self.endpoint, 1).text.splitlines():
            name, robots, formation, spacing = line.split()
            out[name] = {"robots": robots.split(","), "formation": formation,
                         "spacing": float(spacing)}
        return out

    def counts(self) -> dict[str, int]:
        """{published, unknown, refused}: the channel's counts so far."""
        reply = self.client.request(self.endpoint, 3)
        return dict(zip(("published", "unknown", "refused"), reply.params))


class Subscription:
    """Orders published on ``/squads/events`` for some squads, as SquadOrders, and the
    squads' arrivals (docs/protocol.md section 9).

    Args:
        client: The connection. squads: The squads' names (all orders: empty).

    Attributes:
        arrivals: Every arrival event received by :meth:`poll`, oldest first: ``{squad, seq,
            step, x, y}`` (the order's sequence number, the step it was seen at, the squad's
            centre there, m).
    """

    def __init__(self, client: Client, squads=()) -> None:
        self.squads = set(squads)
        self.arrivals: list[dict] = []
        self.socket = client._ctx.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        for name in self.squads or {""}:
            self.socket.setsockopt(zmq.SUBSCRIBE, name.encode())
        if client.keys is not None:
            client.keys.apply(self.socket)  # a run with --keys: a Curve client, as every socket
        self.socket.connect(client.lookup("/squads/events", "pub"))
        # closing the client closes it too: an open socket would keep the client's context
        # term() waiting for ever (as the client's own state streams, connection.py)
        self._client = client
        client._streams.add(self.socket)  # noqa: SLF001 -- the client's own registry

    def poll(self, timeout: float = 0.0) -> list[SquadOrder]:
        """The orders received so far (waiting up to ``timeout`` s for the first)."""
        out = []
        while self.socket.poll(int(timeout * 1000)):
            timeout = 0.0
            topic, frame = self.socket.recv_multipart()[:2]
            if self.squads and topic.decode(errors="replace") not in self.squads:
                continue  # a longer name sharing a subscribed prefix
            msg = Message.from_wire(frame, max_bytes=None)
            words = msg.text.split()
            if len(words) == 2 and words[1] == "arrived" and len(msg.params) == 2 and \
                    len(msg.data) == 2:
                self.arrivals.append(dict(squad=words[0], seq=int(msg.params[0]),
                                          step=int(msg.params[1]), x=msg.data[0],
                                          y=msg.data[1]))
                continue
            try:
                out.append(parse_order(msg.text, msg.data, msg.params[0] if msg.params else 0))
            except ProtocolError:
                continue
        return out

    def close(self) -> None:
        """Close the subscription (closing its client closes it too)."""
        self.socket.close(0)
        self._client._streams.discard(self.socket)  # noqa: SLF001


__all__ = ["Squads", "Subscription"]
