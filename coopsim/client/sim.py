"""Typed helpers for ``/sim`` and ``/playback`` (docs/protocol.md sections 4 and 7).

Every command has a method named after it (the list commands also have short names:
``robots()`` is ``list_robots()``); each returns the reply decoded (a dict for the status
layouts, name -> pose maps for the lists). ``call(id, ...)`` sends anything else. An error reply
raises :class:`~coopsim.client.RemoteError` with the protocol's code (``exc.code``) and sentence
(``exc.text``); no reply within the client's timeout raises ProtocolError with code 9.
"""

from __future__ import annotations

import json
from typing import Sequence

from ..net.protocol import PROTOCOL_VERSION, Message

Pose = tuple[float, float, float]


class _Server:
    def __init__(self, client, endpoint: str) -> None:
        self.client, self.endpoint = client, endpoint

    def call(self, command: int, text: str = "", params: Sequence[int] = (),
             data: Sequence[float] = ()) -> Message:
        """Send any command of this server by id; returns the reply :class:`Message`."""
        return self.client.request(self.endpoint, command, text, params, data)

    def hello(self) -> tuple[int, str]:
        """(protocol version, server name), e.g. ``(2, "/sim")`` (command 0); RemoteError code 7
        when the server speaks another protocol version."""
        reply = self.call(0, params=(PROTOCOL_VERSION,))
        return reply.params[0], reply.text


def _fields(reply: Message) -> tuple:
    return reply.params, reply.data


def _poses(reply: Message) -> dict[str, Pose]:
    names = reply.text.splitlines()
    return {n: tuple(reply.data[3 * i:3 * i + 3]) for i, n in enumerate(names)}


def _targets(reply: Message) -> list[tuple[str, tuple[float, float, float]]]:
    return [(c, tuple(reply.data[3 * i:3 * i + 3]))
            for i, c in enumerate(reply.text.splitlines())]


def _body(name: str, kind: str, data: Sequence[float], color) -> tuple[str, list, list]:
    return f"{name} {kind}", list(color or ()), [float(v) for v in data]


class Sim(_Server):
    """``/sim``: time, mode and what is in the world. Poses are (x m, y m, yaw rad)."""

    def mesh(self, name: str):
        """Protocol 11: a mesh's triangles, ``name`` a world mesh's (``MESH_1``) or ``"ROBOT
        FILE"`` (a robot's mesh file basename, as its ``links`` visuals give it): (V, 3)
        vertices (the file's frame and units) and (T, 3) vertex indices, at most
        :data:`~coopsim.model.meshwire.MAX_TRIANGLES` (decimated beyond)."""
        from ..model.meshwire import parse_reply

        verts, faces, _ = parse_reply(*_fields(self.call(27, name)))
        return verts, faces

    def status(self) -> dict:
        """The run's figures: step, paused (0/1), mode_index (0 realtime, 1 lockstep, 2
        playback), missed (deadlines), robots, attached (controllers), time (s), dt (s), speed,
        rtf (real-time factor), wall (s), lease (s), mode (text)."""
        return _status(self.call(1))

    def pause(self) -> dict:
        """Pause stepping; returns the status."""
        return _status(self.call(2))

    def resume(self) -> dict:
        """Resume stepping; returns the status. RemoteError code 6 once the run has finished
        (:meth:`reset` starts it over)."""
        return _status(self.call(3))

    def step(self, n: int = 1) -> dict:
        """Take ``n`` (1..1,000,000) steps while paused; returns the status after them (after
        10 s at most). RemoteError code 6 once the run has finished."""
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
        """Physics step from the next step on, 0.0005..0.1 s; returns the status."""
        return _status(self.call(8, data=(dt,)))

    def set_lease(self, seconds: float) -> dict:
        """Lockstep lease, 0.05..60 s (a silent controller is detached, and loses its robot, after
        it); returns the status."""
        return _status(self.call(9, data=(seconds,)))

    def list_robots(self) -> dict[str, Pose]:
        """Robot name -> pose (x m, y m, yaw rad in (-pi, pi]), in row order (command 10)."""
        return _poses(self.call(10))

    def list_objects(self) -> dict[str, Pose]:
        """Object name -> pose (x m, y m, yaw rad in (-pi, pi]) (command 11)."""
        return _poses(self.call(11))

    def list_targets(self) -> list[tuple[str, tuple[float, float, float]]]:
        """(colour, (x, y, z) m) per target, in the order the target module reports (command
        12)."""
        return _targets(self.call(12))

    robots, objects, targets = list_robots, list_objects, list_targets  # the short names

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
                     color=None, external: dict | None = None) -> dict[str, Pose]:
        """Add a robot section of a type (``coopsim list``); returns the robots.

        Args:
            external: Protocol 11: make it an external robot with these ``external`` settings
                (``{"stale": 0.5, "max_rate": 200}``: s, Hz...; ``{}`` for the defaults),
                docs/in-the-loop.md. None: a simulated robot.
        """
        text, params, data = _body(name, type, [*position, yaw], color)
        if external is not None:
            text += " external" + "".join(f" {k} {v:g}" for k, v in external.items())
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
        """Replace target ``index`` (colour name, (x, y, z) m); returns the targets."""
        return _targets(self.call(20, color, params=(index,), data=list(position)))

    def remove_target(self, index: int) -> list:
        """Remove target ``index``; returns the targets."""
        return _targets(self.call(21, params=(index,)))

    def load(self, path: str) -> dict:
        """Load a .scenario or .world file on the simulator's machine (relative to its working
        folder); returns the status. RemoteError code 8 with ``path:line: what is wrong`` for a
        bad file (nothing changes)."""
        return _status(self.call(22, path))

    def state(self) -> dict:
        """The state document (layout, poses, run figures, ``finished``, ``recording``...) as
        a dict (docs/protocol.md section 4, command 23)."""
        return json.loads(self.call(23).text)

    def detach(self, robot: str) -> bool:
        """Detach a robot's controller from lockstep; True if it was attached, False if not.
        RemoteError code 5 for a name that is no robot."""
        return bool(self.call(24, robot).params[0])

    def set_param(self, robot: str, module: str, name: str, value):
        """Set a module (or ``driver``) parameter of a robot to a number or, for a word
        parameter, a str; returns the stored value. RemoteError code 4 outside its range, 5 for
        an unknown robot, module or parameter."""
        if isinstance(value, str):
            return self.call(25, f"{robot} {module}.{name} {value}").text.rsplit(" ", 1)[1]
        return self.call(25, f"{robot} {module}.{name}", data=(value,)).data[0]

    def record(self, on: bool = True, path: str = "") -> str:
        """Start (``on``) or stop recording; returns the file (``path`` on the simulator's
        machine, default ``recordings/<scenario>-<UTC time>.mcap``). Starting while recording
        returns the current file. RemoteError code 6 in a replay."""
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
        """Where the playback is (command 1)."""
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
        """Playback speed, 0.01 <= |factor| <= 1000 (negative plays backwards); RemoteError
        code 4 outside that range."""
        return _playback(self.call(6, data=(factor,)))


def _playback(r: Message) -> dict:
    out = {"text": r.text}
    out.update(zip(("playing", "index", "count", "step"), r.params))
    out["playing"] = bool(out.get("playing"))
    out.update(zip(("position", "duration", "speed", "start", "end"), r.data))
    return out
