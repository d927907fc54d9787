"""``radio``: range-limited broadcast of small payloads between robots (range and bearing).

A robot sends a payload (``send``, an action: queued at once, transmitted at the next step); at
each step every robot transmits from its queue, in order, as many messages as fit its
``bandwidth`` (bytes per step; the first always goes), and each reaches every other robot with a
radio within the sender's ``range``, except those lost (``loss`` %, drawn per message and
receiver from the run's generator: the same seed loses the same messages). A receiver reads the
messages delivered in the last ``keep`` steps with the sender's name, range and bearing
(``read``). Payloads travel as base64 text (:mod:`coopsim.model.radio`); one over ``max_bytes``
is refused with error 4 and nothing is sent; a full queue (``QUEUE`` messages) refuses with 6.
No occlusion: walls do not stop the radio.

State: the queues live in the simulation's board (``_radio``, reset with the run); the recent
deliveries are published as ``radio`` in each snapshot (immutable), where reads find them.
"""

from __future__ import annotations

from collections import deque
from types import MappingProxyType

import numpy as np

from ...model.commands import NOT_ALLOWED, OUT_OF_RANGE, Command
from ...model.errors import ProtocolError
from ...model.module import Module
from ...model.params import ParamSpec
from ...model.radio import decode
from .common import wrap

QUEUE = 32  # messages a robot may have waiting to be transmitted


class RadioState:
    """The run's radio: send queues by robot name and the recent deliveries.

    Attributes:
        queues: Robot name -> deque of (payload bytes, payload text) waiting to go.
        history: deque of (step, {receiver: ((sender, range, bearing, text), ...)}).
    """

    def __init__(self) -> None:
        self.queues: dict[str, deque] = {}
        self.history: deque = deque()


class Radio(Module):
    """Broadcast to robots in range; read what arrived with range and bearing.

    A range-and-bearing radio, as swarm robots carry: a robot broadcasts a small payload and
    every other robot with a radio within the sender's ``range`` receives it with the sender's
    name, the distance between their centres (m) and the sender's bearing from its own heading
    (rad, + to the left). Walls do not stop it. Payloads are opaque bytes up to ``max_bytes``;
    coopsim's clients put a msgpack value in them (``coopsim.model.radio``: ``pack``,
    ``unpack``, ``Inbox``).

    At every step each robot transmits its queue in order while the bytes sent this step stay
    within its ``bandwidth`` (the first message always goes), so a burst spreads over steps.
    Each transmitted message reaches each receiver in range unless lost: ``loss`` % per message
    and receiver, drawn from the run's seeded generator (the same seed loses the same messages;
    no draw while ``loss`` is 0). ``Inbox(bot).poll()`` reads each message once on either host.

    Reading: received (messages delivered to it this step), sent (messages it transmitted this
    step), queued (waiting to go), lost (deliveries to it lost this step).

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``send`` (930): request text = the payload, standard base64 (RFC 4648, padded) of at most
      ``radio.max_bytes`` bytes; reply an action: text ``queued N bytes (K waiting)``; error 4
      (not base64, or over ``max_bytes``) or 6 (32 messages already waiting): nothing is sent
    - ``read`` (931): request text = a step number (optional); reply the messages delivered
      after that step (none given: at the latest step) and kept (the last ``radio.keep``
      steps): text one line per message, ``<sender> <base64 payload>``; data three values per
      message, ``[range m, bearing rad, step delivered]`` (bearing of the sender from the
      receiver's heading, + = left); params ``[step]`` as every read; error 4 for a text that
      is no integer
    """

    label = "radio"
    description = ("broadcast small payloads to robots within range; read them with the "
                   "sender's name, range (m) and bearing (rad)")
    params = (
        ParamSpec("range", "float", "farthest receiver of this robot's messages, m", 3.0, 0.0,
                  1000.0, "m"),
        ParamSpec("loss", "float", "chance that a message does not reach a receiver, %", 0.0,
                  0.0, 100.0, "%"),
        ParamSpec("bandwidth", "int", "bytes of payload this robot transmits per step", 512, 1,
                  1_000_000, "B/step"),
        ParamSpec("max_bytes", "int", "largest payload accepted by send, bytes", 128, 1, 4096,
                  "B"),
        ParamSpec("keep", "int", "steps a delivered message stays readable", 50, 1, 10_000,
                  "steps"),
    )
    commands = (
        Command(930, "send", "radio", text="req", kind="action",
                doc="queue a payload (text: base64) for broadcast at the next step; text: "
                    "'queued N bytes (K waiting)'"),
        Command(931, "read", "radio", text="opt", kind="read",
                doc="messages delivered after the step in text (none: the latest step only): "
                    "text lines '<sender> <base64>', data: range (m), bearing (rad), step "
                    "per message"),
    )
    fields = ("received", "sent", "queued", "lost")

    @classmethod
    def act(cls, command, sim, robot, msg):
        try:
            payload = decode(msg.text)
        except ValueError as exc:
            raise ProtocolError(OUT_OF_RANGE, f"radio send: {exc}; nothing was sent") from None
        limit = int(sim.world.robot(robot).modules["radio"]["max_bytes"])
        if len(payload) > limit:
            raise ProtocolError(OUT_OF_RANGE, f"radio send: a payload of {len(payload)} bytes is "
                                              f"over max_bytes = {limit}; nothing was sent")
        state = sim.extra.setdefault("_radio", RadioState())
        queue = state.queues.setdefault(robot, deque())
        if len(queue) >= QUEUE:
            raise ProtocolError(NOT_ALLOWED, f"radio send: {QUEUE} messages are already waiting "
                                             "(the bandwidth is used up); nothing was sent")
        queue.append((len(payload), msg.text))
        return f"queued {len(payload)} bytes ({len(queue)} waiting)"

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        out = np.zeros((len(rows), 4))
        state = frame.extra.get("_radio")
        if state is None:
            return out
        names = [frame.names[r] for r in rows]
        carriers = set(names)
        for name in [n for n in state.queues if n not in carriers]:
            del state.queues[name]  # its robot is gone (or lost its radio)
        inbox: dict[str, list] = {}
        for i in [i for i, n in enumerate(names) if state.queues.get(n)]:
            _transmit(frame, rows, p, i, names, state.queues[names[i]], inbox, out, rng)
        for i, name in enumerate(names):
            out[i, 0] = len(inbox.get(name, ()))
            out[i, 2] = len(state.queues.get(name, ()))
        state.queues = {n: q for n, q in state.queues.items() if q}
        state.history.append((frame.step, MappingProxyType(
            {n: tuple(v) for n, v in inbox.items()})))
        oldest = frame.step - int(p["keep"].max())
        while state.history and state.history[0][0] <= oldest:
            state.history.popleft()
        frame.extra["radio"] = tuple(state.history)
        return out

    @classmethod
    def answer_robot(cls, command, robot, row, text, snap):
        try:
            since = int(text) if text else snap.step - 1
        except ValueError:
            raise ProtocolError(OUT_OF_RANGE, f"radio read: text must be a step number (read "
                                              f"what was delivered after it), not {text[:40]!r}") \
                from None
        lines, data = [], []
        for step, inbox in snap.extra.get("radio", ()):
            if step > since:
                for sender, distance, bearing, payload in inbox.get(robot, ()):
                    lines.append(f"{sender} {payload}")
                    data += [distance, bearing, step]
        return "\n".join(lines), data


def _transmit(frame, rows, p, i, names, queue, inbox, out, rng) -> None:
    """Send what robot ``i`` (index into ``rows``) may this step; deliver and count it."""
    pos = frame.pose[rows, :2]
    dist = np.hypot(pos[:, 0] - pos[i, 0], pos[:, 1] - pos[i, 1])
    reach = dist <= p["range"][i]
    reach[i] = False
    used, budget, loss = 0, int(p["bandwidth"][i]), float(p["loss"][i])
    while queue and (used == 0 or used + queue[0][0] <= budget):
        size, text = queue.popleft()
        used += size
        out[i, 1] += 1
        to = np.nonzero(reach)[0]
        if loss > 0 and len(to):  # no draw without loss: loss-free runs keep their stream
            dropped = rng.random(len(to)) * 100.0 < loss
            out[to[dropped], 3] += 1
            to = to[~dropped]
        yaw = frame.pose[rows[to], 2]
        bearing = wrap(np.arctan2(pos[i, 1] - pos[to, 1], pos[i, 0] - pos[to, 0]) - yaw)
        for j, d, b in zip(to.tolist(), dist[to].tolist(), np.atleast_1d(bearing).tolist()):
            inbox.setdefault(names[j], []).append((names[i], d, b, text))
