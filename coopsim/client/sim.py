"""Typed helpers for ``/sim`` and ``/playback`` (docs/protocol.md sections 4 and 7).

Every command has a method named after it; each returns the reply decoded (a dict for the status
layouts, name -> pose maps for the lists). ``call(id, ...)`` sends anything else.
"""

from __future__ import annotations

import json
from typing import Sequence

from ..net.protocol import Message

Pose = tuple[float, float, float]


class _Server:
    def __init__(self, client, endpoint: str) -> None:
        self.client, self.endpoint = client, endpoint

    def call(self, command: int, text: str = "", params: Sequence[int] = (),
             data: Sequence[float] = ()) -> Message:
        """Send any command of this server by id."""
        return self.client.request(self.endpoint, command, text, params, data)


def _poses(reply: Message) -> dict[str, Pose]:
    names = reply.text.splitlines()
    return {n: tuple(reply.data[3 * i:3 * i + 3]) for i, n in enumerate(names)}


def _body(name: str, kind: str, data: Sequence[float], color) -> tuple[str, list, list]:
    return f"{name} {kind}", list(color or ()), [float(v) for v in data]


class Sim(_Server):
    """``/sim``: time, mode and what is in the world. Poses are (x m, y m, yaw rad)."""

    def status(self) -> dict:
        """step, paused, mode_index, missed, robots, attached, time (s), dt (s), speed, rtf,
        wall (s), lease (s), mode."""
        return _status(self.call(1))

    def pause(self) -> dict:
        """Pause stepping; returns the status."""
        return _status(self.call(2))

    def resume(self) -> dict:
        """Resume stepping; returns the status."""
        return _status(self.call(3))

    def step(self, n: int = 1) -> dict:
        """Take ``n`` (1..1,000,000) steps while paused; returns the status after them."""
        return _status(self.call(4, params=(n,)))

    def reset(self) -> dict:
        """Back to the scenario and its seed; returns the status."""
        return _status(self.call(5))

    def set_mode(self, mode: str) -> dict:
        """``realtime`` or ``lockstep``; returns the status."""
        return _status(self.call(6, mode))

    def set_speed(self, factor: float) -> dict:
        """Real-time speed factor, 0..1000 (0 = as fast as possible); returns the status."""
        return _status(self.call(7, data=(factor,)))

    def set_dt(self, dt: float) -> dict:
        """Physics step from the next step on, s; returns the status."""
        return _status(self.call(8, data=(dt,)))

    def set_lease(self, seconds: float) -> dict:
        """Lockstep lease, s of wall time; returns the status."""
        return _status(self.call(9, data=(seconds,)))

    def robots(self) -> dict[str, Pose]:
        """Robot name -> pose."""
        return _poses(self.call(10))

    def objects(self) -> dict[str, Pose]:
        """Object name -> pose."""
        return _poses(self.call(11))

    def targets(self) -> list[tuple[str, tuple[float, float, float]]]:
        """(colour, (x, y, z)) per target, in the order the target module reports."""
        r = self.call(12)
        return [(c, tuple(r.data[3 * i:3 * i + 3])) for i, c in enumerate(r.text.splitlines())]

    def insert_object(self, name: str, shape: str, size: Sequence[float],
                      position: Sequence[float], yaw: float = 0.0, mass: float = 0.0,
                      color=None) -> dict[str, Pose]:
        """Add a box, cylinder or sphere: size (l, w, h) m, position (x, y, z) m, yaw rad, mass
        kg (0 = static), colour (R, G, B); returns the objects."""
        text, params, data = _body(name, shape, [*size, *position, yaw, mass], color)
        return _poses(self.call(13, text, params, data))

    def update_object(self, name: str, shape: str, size: Sequence[float],
                      position: Sequence[float], yaw: float = 0.0, mass: float = 0.0,
                      color=None) -> dict[str, Pose]:
        """Replace an object (same arguments as :meth:`insert_object`); returns the objects."""
        text, params, data = _body(name, shape, [*size, *position, yaw, mass], color)
        return _poses(self.call(14, text, params, data))

    def remove_object(self, name: str) -> dict[str, Pose]:
        """Remove an object; returns the objects."""
        return _poses(self.call(15, name))

    def insert_robot(self, name: str, type: str, position: Sequence[float], yaw: float = 0.0,
                     color=None) -> dict[str, Pose]:
        """Add a robot section of a type (``coopsim list``); returns the robots."""
        text, params, data = _body(name, type, [*position, yaw], color)
        return _poses(self.call(16, text, params, data))

    def update_robot(self, name: str, type: str, position: Sequence[float], yaw: float = 0.0,
                     color=None) -> dict[str, Pose]:
        """Re-place (or re-type) a robot section; it keeps its endpoint. Returns the robots."""
        text, params, data = _body(name, type, [*position, yaw], color)
        return _poses(self.call(17, text, params, data))

    def remove_robot(self, name: str) -> dict[str, Pose]:
        """Remove a robot section (all its robots); returns the robots."""
        return _poses(self.call(18, name))

    def insert_target(self, color: str, position: Sequence[float]) -> int:
        """Add a target of a colour name at (x, y, z) m; returns its index."""
        return self.call(19, color, data=list(position)).params[0]

    def update_target(self, index: int, color: str, position: Sequence[float]) -> list:
        """Replace target ``index``; returns the targets."""
        self.call(20, color, params=(index,), data=list(position))
        return self.targets()

    def remove_target(self, index: int) -> list:
        """Remove target ``index``; returns the targets."""
        self.call(21, params=(index,))
        return self.targets()

    def load(self, path: str) -> dict:
        """Load a .scenario or .world from the simulator's data folders; returns the status."""
        return _status(self.call(22, path))

    def state(self) -> dict:
        """The whole state (layout, poses, figures) as a dict (docs/protocol.md)."""
        return json.loads(self.call(23).text)

    def detach(self, robot: str) -> bool:
        """Detach a robot's controller from lockstep; True if it was attached."""
        return bool(self.call(24, robot).params[0])

    def set_param(self, robot: str, module: str, name: str, value):
        """Set a module (or ``driver``) parameter of a robot; returns the stored value."""
        if isinstance(value, str):
            return self.call(25, f"{robot} {module}.{name} {value}").text.rsplit(" ", 1)[1]
        return self.call(25, f"{robot} {module}.{name}", data=(value,)).data[0]

    def record(self, on: bool = True, path: str = "") -> str:
        """Start (or stop) recording; returns the file."""
        return self.call(26, path, params=(int(on),)).text


def _status(r: Message) -> dict:
    keys = ("step", "paused", "mode_index", "missed", "robots", "attached")
    out = dict(zip(keys, r.params))
    out.update(zip(("time", "dt", "speed", "rtf", "wall", "lease"), r.data))
    out["mode"] = r.text
    return out


class Playback(_Server):
    """``/playback`` of a replay. Every method returns the status: text, playing, index,
    count, step, position (s), duration (s), speed, start (s), end (s)."""

    def status(self) -> dict:
        """Where the playback is."""
        return _playback(self.call(1))

    def play(self) -> dict:
        """Play from here (from the other end when at the end)."""
        return _playback(self.call(2))

    def pause(self) -> dict:
        """Stop at the step shown."""
        return _playback(self.call(3))

    def seek(self, position: float) -> dict:
        """Show the last recorded step at or before ``position`` s (clamped; text says so)."""
        return _playback(self.call(4, data=(position,)))

    def step(self, n: int) -> dict:
        """Pause and move ``n`` recorded steps (negative: back)."""
        return _playback(self.call(5, params=(n,)))

    def set_speed(self, factor: float) -> dict:
        """Playback speed, 0.01 <= |factor| <= 1000 (negative plays backwards)."""
        return _playback(self.call(6, data=(factor,)))


def _playback(r: Message) -> dict:
    out = {"text": r.text}
    out.update(zip(("playing", "index", "count", "step"), r.params))
    out["playing"] = bool(out.get("playing"))
    out.update(zip(("position", "duration", "speed", "start", "end"), r.data))
    return out
