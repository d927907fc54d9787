"""The Python client: drive a coopsim robot (or a real one speaking the same protocol).

Needs only pyzmq and msgpack -- no pymunk, no pyglet -- so the same controller runs on a robot's
own computer. Every call has a timeout; every error reply raises :class:`RemoteError` carrying the
protocol's error code and sentence.

Example::

    from coopsim.client import Client
    with Client() as c:                       # name server tcp://127.0.0.1:10000
        bot = c.robot("robot1")
        for _ in bot.loop(steps=1000):        # lockstep: one iteration = one step
            d = bot.sonar.read()
            bot.motors.set_speeds(0.3, 0.3 if min(d[3:8]) > 0.5 else -0.3)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Iterator, Sequence

import zmq

from ..net import protocol as p
from ..model.errors import ProtocolError
from ..net.protocol import Message


class RemoteError(ProtocolError):
    """The server answered with a non-zero error code (see docs/protocol.md)."""


@dataclass(frozen=True)
class StepInfo:
    """What a motor command's reply says: the step it was used in (lockstep) and the sim time."""

    step: int
    time: float
    note: str = ""

    @property
    def lockstep(self) -> bool:
        """True when the simulation runs in lockstep (the reply came after the step)."""
        return self.note.startswith("lockstep")


class Client:
    """A connection to a simulation (or robots) through its name server.

    Args:
        nameserver: Name server endpoint; defaults to $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000.
        timeout: Seconds to wait for any reply.
    """

    def __init__(self, nameserver: str | None = None, timeout: float = 5.0) -> None:
        self.nameserver = nameserver or os.environ.get("COOPSIM_NAMESERVER",
                                                       p.DEFAULT_NAMESERVER)
        self._ctx = zmq.Context()
        self._sockets: dict[str, zmq.Socket] = {}
        self.timeout = timeout
        self._endpoints: dict[str, str] = {}

    @property
    def timeout(self) -> float:
        """Seconds any call waits for its reply."""
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self._timeout = float(seconds)
        for sock in self._sockets.values():
            sock.setsockopt(zmq.RCVTIMEO, max(1, int(self._timeout * 1000)))

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close every socket."""
        for sock in self._sockets.values():
            sock.close(0)
        self._sockets.clear()
        self._ctx.term()

    def request(self, endpoint: str, command: int, text: str = "",
                params: Sequence[int] = (), data: Sequence[float] = ()) -> Message:
        """Send one request to ``endpoint`` and return the reply.

        Raises:
            RemoteError: the reply carries a non-zero error code.
            ProtocolError: no reply within the timeout (code TIMEOUT).
        """
        sock = self._socket(endpoint)
        sock.send(Message(0, text, command, tuple(params), tuple(data)).to_wire())
        try:
            frame = sock.recv()  # the socket's RCVTIMEO is the timeout: one call, no poll
        except zmq.Again:
            raise ProtocolError(p.TIMEOUT,
                                f"no reply from {endpoint} within {self.timeout:g} s") from None
        reply = Message.from_wire(frame, max_bytes=None)
        if reply.error:
            raise RemoteError(reply.error, reply.text)
        return reply

    def lookup(self, name: str) -> str:
        """The endpoint of a port name such as ``/robot1/motors`` (cached)."""
        if name not in self._endpoints:
            self._endpoints[name] = self.request(self.nameserver, 1, name).text
        return self._endpoints[name]

    def names(self, prefix: str = "") -> dict[str, str]:
        """Every registered name (starting with ``prefix``) and its endpoint."""
        text = self.request(self.nameserver, 2, prefix).text
        return dict(line.split(" ", 1) for line in text.splitlines() if line)

    def hello(self, name: str = "/nameserver") -> tuple[int, str]:
        """(protocol version, server name) of the server behind ``name``."""
        endpoint = self.nameserver if name == "/nameserver" else self.lookup(name)
        reply = self.request(endpoint, 0, params=(p.PROTOCOL_VERSION,))
        return reply.params[0], reply.text

    def robot(self, name: str) -> "Robot":
        """A handle on robot ``name`` (one socket serves all its modules)."""
        return Robot(self, name, self.lookup(f"/{name}"))

    def sim(self) -> "Sim":
        """A handle on ``/sim``."""
        return Sim(self, self.lookup("/sim"))

    def _socket(self, endpoint: str) -> zmq.Socket:
        sock = self._sockets.get(endpoint)
        if sock is None:
            sock = self._ctx.socket(zmq.REQ)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.REQ_RELAXED, 1)  # a timed-out request does not wedge the socket
            sock.setsockopt(zmq.REQ_CORRELATE, 1)  # ...and its late reply is discarded
            sock.setsockopt(zmq.RCVTIMEO, max(1, int(self.timeout * 1000)))
            sock.connect(endpoint)
            self._sockets[endpoint] = sock
        return sock


class _Module:
    _READ = 0  # offset of the read command from the module's base id

    def __init__(self, robot: "Robot", base: int) -> None:
        self._robot, self._base = robot, base

    def _call(self, offset: int, text: str = "", data: Sequence[float] = ()) -> Message:
        return self._robot.call(self._base + offset, text, data=data)

    def read(self) -> list[float]:
        """The module's reading from the last completed step (see docs/protocol.md)."""
        return list(self._call(self._READ).data)


class Motors(_Module):
    """Commands 100-103."""

    _READ = 3

    last: StepInfo | None = None

    def set_speeds(self, left: float, right: float) -> StepInfo:
        """Set wheel speeds, m/s. In lockstep this returns after the step that used them."""
        return self._moved(self._call(0, data=(left, right)))

    def set_power(self, left: float, right: float) -> StepInfo:
        """Set normalized power, -100..100 % of motors.max_speed."""
        return self._moved(self._call(1, data=(left, right)))

    def stop(self) -> StepInfo:
        """Both wheels to 0."""
        return self._moved(self._call(2))

    def _moved(self, reply: Message) -> StepInfo:
        self.last = StepInfo(reply.params[0], reply.data[0], reply.text)
        return self.last


class Target(_Module):
    """Commands 300-301: distance (m) and relative angle (rad) to each target."""

    def read_all(self) -> dict[str, tuple[float, float]]:
        """Colour -> (distance, angle) for every target (the first of each colour)."""
        reply = self._call(0)
        colors = reply.text.split(",") if reply.text else []
        out: dict[str, tuple[float, float]] = {}
        for i, color in enumerate(colors):
            out.setdefault(color, (reply.data[2 * i], reply.data[2 * i + 1]))
        return out

    def read_color(self, color: str) -> tuple[float, float]:
        """(distance, angle) to the first target of ``color``."""
        d = self._call(1, color).data
        return d[0], d[1]


class Odometry(_Module):
    """Commands 400-401."""

    def reset(self) -> None:
        """Restart odometry at (0, 0, 0)."""
        self._call(1)


class Robot:
    """A robot's modules, each an attribute: motors, sonar, target, odometry, gps, compass,
    bumper, support (team2 only)."""

    def __init__(self, client: Client, name: str, endpoint: str) -> None:
        self.client, self.name, self.endpoint = client, name, endpoint
        self.motors = Motors(self, 100)
        self.sonar = _Module(self, 200)
        self.target = Target(self, 300)
        self.odometry = Odometry(self, 400)
        self.gps = _Module(self, 500)
        self.compass = _Module(self, 600)
        self.bumper = _Module(self, 700)
        self.support = _Module(self, 800)

    def call(self, command: int, text: str = "", params: Sequence[int] = (),
             data: Sequence[float] = ()) -> Message:
        """Send any robot command (see docs/protocol.md)."""
        return self.client.request(self.endpoint, command, text, params, data)

    def modules(self) -> list[str]:
        """Labels of the robot's modules."""
        return self.call(1).text.split(",")

    def detach(self) -> None:
        """Leave lockstep: the simulation stops waiting for this controller."""
        self.call(2)

    def get_param(self, module: str, name: str) -> float:
        """Current value of a module parameter."""
        return self.call(12, f"{module}.{name}").data[0]

    def set_param(self, module: str, name: str, value: float) -> float:
        """Set a module parameter; returns the stored value (errors if out of [min, max])."""
        return self.call(13, f"{module}.{name}", data=(value,)).data[0]

    def params(self, module: str) -> dict[str, float]:
        """Every parameter of a module and its value."""
        reply = self.call(10, module)
        return dict(zip(reply.text.splitlines(), reply.data))

    def loop(self, steps: int | None = None, period: float = 0.05) -> Iterator[int]:
        """Control loop helper: yields 0, 1, 2...; send one motor command per iteration.

        In lockstep each iteration is one simulation step (the motor reply comes after the step).
        In real time (or on a real robot) iterations are paced to ``period`` s of wall time.
        On leaving the loop (end, break or exception) the robot is stopped and detached, so the
        simulation does not wait for a controller that has finished.
        """
        i = 0
        try:
            while steps is None or i < steps:
                started = time.monotonic()
                yield i
                i += 1
                last = self.motors.last
                if last is None or not last.lockstep:
                    time.sleep(max(0.0, period - (time.monotonic() - started)))
        finally:
            try:
                self.motors.stop()
                self.detach()
            except ProtocolError:
                pass  # the simulation is gone; nothing to detach from


class Sim:
    """``/sim`` commands (see docs/protocol.md for every reply's layout)."""

    def __init__(self, client: Client, endpoint: str) -> None:
        self.client, self.endpoint = client, endpoint

    def call(self, command: int, text: str = "", params: Sequence[int] = (),
             data: Sequence[float] = ()) -> Message:
        """Send any /sim command."""
        return self.client.request(self.endpoint, command, text, params, data)

    def status(self) -> dict:
        """step, paused, mode, missed, robots, attached, time, dt, speed, rtf, wall, lease."""
        r = self.call(1)
        keys = ("step", "paused", "mode_index", "missed", "robots", "attached")
        out = dict(zip(keys, r.params))
        out.update(zip(("time", "dt", "speed", "rtf", "wall", "lease"), r.data))
        out["mode"] = r.text
        return out

    def pause(self) -> None:
        """Pause stepping."""
        self.call(2)

    def resume(self) -> None:
        """Resume stepping."""
        self.call(3)

    def step(self, n: int = 1) -> None:
        """Take n steps while paused."""
        self.call(4, params=(n,))

    def reset(self) -> None:
        """Back to the scenario and its seed."""
        self.call(5)

    def set_mode(self, mode: str) -> None:
        """``realtime`` or ``lockstep``."""
        self.call(6, mode)

    def set_speed(self, factor: float) -> None:
        """Real-time speed factor (0 = as fast as possible)."""
        self.call(7, data=(factor,))

    def robots(self) -> dict[str, tuple[float, float, float]]:
        """Robot name -> (x, y, yaw)."""
        r = self.call(10)
        return {n: tuple(r.data[3 * i:3 * i + 3]) for i, n in enumerate(r.text.splitlines())}

    def objects(self) -> dict[str, tuple[float, float, float]]:
        """Object name -> (x, y, yaw)."""
        r = self.call(11)
        return {n: tuple(r.data[3 * i:3 * i + 3]) for i, n in enumerate(r.text.splitlines())}

    def state(self) -> dict:
        """The whole state (layout, poses, figures) as a dict."""
        import json

        return json.loads(self.call(23).text)
