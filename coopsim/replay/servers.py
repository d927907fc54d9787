"""``coopsim replay``: a playback process that looks like a live run on the network.

It serves the same name server, the same state stream on ``/sim/state`` (mode text
``playback``) and a read-only ``/sim`` that answers status, list and state requests exactly as a
live one does, so a viewer cannot tell a recording from a run. Commands that would change the
world are refused with NOT_ALLOWED; pause, resume, step, set_speed and reset on ``/sim`` drive the
playback (reset rewinds to the start). ``/playback`` adds play, pause, seek, step +-N, speed
(negative plays backwards) and a status with position and duration. The playback itself is a
:class:`~coopsim.replay.player.Player`.
"""

from __future__ import annotations

import json

import zmq

from ..net import protocol as p
from ..model.errors import CoopsimError, NotAllowedError, ProtocolError
from ..model.snapshot import rule_metrics
from ..net.nameserver import NameServer
from ..net.security import (ServerKeys, advertised_host, child_env, guarded,
                            require_keys)
from .player import MODE, MODE_INDEX, Player
from ..net.protocol import Command, Message
from ..recording.reader import Recording
from ..net.server import Server
from ..model.limits import MAX_STEPS
from ..net.simserver import list_objects, list_robots, list_targets
from ..net.squads import steered
from ..net.statestream import StatePublisher


# -- servers --------------------------------------------------------------------------------------

class ReplaySimServer(Server):
    """A read-only ``/sim`` over a :class:`Player`: same replies as the live one.

    Args:
        ctx: ZeroMQ context.
        player: The playback.
        bind: Address to bind.
    """

    #: /sim commands that drive the playback instead of the simulation.
    _PLAYBACK = ("status", "pause", "resume", "step", "reset", "set_speed", "list_robots",
                 "list_objects", "list_targets", "state")

    def __init__(self, ctx: zmq.Context, player: Player, bind: str = "127.0.0.1",
                 **on) -> None:
        super().__init__(ctx, "/sim", p.SIM_COMMANDS, bind, **on)
        self.player = player

    def handle(self, msg: Message, command: Command) -> Message:
        if command.name not in self._PLAYBACK:
            raise NotAllowedError(
                f"{command.name} is not allowed in playback: this is a recording and cannot be "
                "changed (use /playback to move in time)")
        return getattr(self, f"_{command.name}")(msg)

    def _status(self, msg: Message) -> Message:
        st = self.player.stats()
        params = (st.steps, int(st.paused), MODE_INDEX, 0, len(self.player.snapshot.robots), 0)
        data = (st.time, self.player.dt, st.speed, st.rtf, st.wall, 0.0)
        return msg.reply(MODE, params=params, data=data)

    def _pause(self, msg: Message) -> Message:
        self.player.pause()
        return self._status(msg)

    def _resume(self, msg: Message) -> Message:
        self.player.play()
        return self._status(msg)

    def _step(self, msg: Message) -> Message:
        n = msg.params[0] if msg.params else 1
        if not 1 <= n <= MAX_STEPS:
            raise ProtocolError(p.OUT_OF_RANGE, f"step count must be 1..{MAX_STEPS}, not {n}")
        self.player.step(n)
        return self._status(msg)

    def _reset(self, msg: Message) -> Message:
        self.player.seek(self.player.recording.start)
        return self._status(msg)

    def _set_speed(self, msg: Message) -> Message:
        self.player.set_speed(msg.data[0])
        return self._status(msg)

    def _list_robots(self, msg: Message) -> Message:
        return list_robots(msg, self.player.snapshot)

    def _list_objects(self, msg: Message) -> Message:
        return list_objects(msg, self.player.snapshot)

    def _list_targets(self, msg: Message) -> Message:
        return list_targets(msg, self.player.snapshot)

    def _state(self, msg: Message) -> Message:
        state = self.player.layout()
        st = self.player.stats()
        rec = self.player.recording
        state.update(step=st.steps, time=st.time, dt=self.player.dt, mode=MODE, paused=st.paused,
                     speed=st.speed, rtf=st.rtf, missed=0, error=self.player.error,
                     finished="", waiting_for=[], stalled=0.0, recording="", recording_error="",
                     attached=[], owners={}, realtime=dict(broken=False, late=0.0, rtf=0.0),
                     seed=rec.seed,
                     scenario=rec.meta.get("scenario_path"),
                     rules=dict(self.player.snapshot.rules),
                     metrics=[n for n, _ in rule_metrics(self.player.snapshot.rules)],
                     engine_warnings=[],  # a replay steps no engine
                     # a replay serves no /squads: it takes no squad order; the feedback
                     # recorded (format 7) is shown as the live run showed it
                     squad_orders=dict(published=0, unknown=0, refused=0, orders={},
                                       arrived={}, steers=0,
                                       steered=steered(self.player.snapshot)))
        return msg.reply(json.dumps(state), params=(st.steps, state["layout_version"]))


class PlaybackServer(Server):
    """``/playback``: play, pause, seek, step, speed and status (see docs/protocol.md).

    Every reply has the status layout: text a sentence, params [playing (1/0), frame index,
    frame count, sim step], data [position s, duration s, speed, start s, end s].
    """

    def __init__(self, ctx: zmq.Context, player: Player, bind: str = "127.0.0.1",
                 **on) -> None:
        super().__init__(ctx, "/playback", p.PLAYBACK_COMMANDS, bind, **on)
        self.player = player

    def handle(self, msg: Message, command: Command) -> Message:
        player = self.player
        text = None
        if command.name == "play":
            text = player.play()
        elif command.name == "pause":
            player.pause()
        elif command.name == "seek":
            text = player.seek(msg.data[0])
        elif command.name == "step":
            text = player.step(msg.params[0])
        elif command.name == "set_speed":
            player.set_speed(msg.data[0])
        return self.status(msg, text)

    def status(self, msg: Message, text: str | None = None) -> Message:
        """The status reply, with ``text`` (or the playback state) in the text field."""
        rec = self.player.recording
        frame, paused, speed, state = self.player.status()
        return msg.reply(text or state,
                         params=(int(not paused), frame.index, rec.frame_count, frame.step),
                         data=(frame.position, rec.end - rec.start, speed, rec.start, rec.end))


# -- the process ----------------------------------------------------------------------------------

class Replay:
    """Everything ``coopsim replay`` serves; use as a context manager.

    Args:
        path: The recording.
        bind: Address every server binds.
        port: Name-server port (0 = any free port).
        speed: Playback speed factor; paused: start paused; exit_at_end: finish at either end.
        start: Position to start at, s (default: the first frame).
        publish_rate: State messages per second of wall time (0 = every update).
        keys: Keys folder (``coopsim keys``): every server is a CurveZMQ server.
        insecure: Allow a bind beyond loopback without keys.
        advertise: Host in the endpoints the name server hands out (default: bind).

    Raises:
        SecurityError: a bind beyond loopback without keys (or insecure); bad keys.
    """

    def __init__(self, path: str, bind: str = "127.0.0.1", port: int = 10000,
                 speed: float = 1.0, paused: bool = False, exit_at_end: bool = False,
                 start: float | None = None, publish_rate: float = 30.0,
                 keys: str | None = None, insecure: bool = False,
                 advertise: str | None = None) -> None:
        require_keys(bind, keys, insecure)
        self._keys = ServerKeys.load(keys) if keys else None
        self._advertise = advertised_host(bind, advertise)
        self.recording = Recording(path)
        try:
            self.player = Player(self.recording, speed, paused, exit_at_end)
            if start is not None:
                self.player.seek(start)
        except ProtocolError as exc:  # a bad --speed: say it plainly, without the error code
            self.recording.close()
            raise CoopsimError(exc.text) from None
        except BaseException:  # no readable step before the damage, Ctrl-C while checking
            self.recording.close()
            raise
        self._bind, self._port, self._rate = bind, port, publish_rate
        self.ctx: zmq.Context | None = None
        self.guard = None
        self._servers: list[Server] = []
        self.publisher: StatePublisher | None = None

    def __enter__(self) -> "Replay":
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        self.ctx = zmq.Context()
        self.guard = guarded(self.ctx, self._keys)  # before the first bind
        on = {"advertise": self._advertise,
              "configure": self.guard.configure if self.guard else None}
        self.names = NameServer(self.ctx, self._bind, self._port, **on)
        sim = ReplaySimServer(self.ctx, self.player, self._bind, **on)
        playback = PlaybackServer(self.ctx, self.player, self._bind, **on)
        self.publisher = StatePublisher(self.ctx, self.player, self._bind, self._rate, **on)
        self.names.register("/sim", sim.endpoint)
        self.publisher.register(self.names)
        self.names.register("/playback", playback.endpoint)
        self._servers = [self.names, sim, playback]
        for server in self._servers:
            server.start()
        self.player.publish = self.publisher
        self.player.start()

    @property
    def endpoint(self) -> str:
        """The name server's endpoint."""
        return self.names.endpoint

    def client_env(self) -> dict[str, str]:
        """The environment of a client this process starts (its viewer): the replay's own
        CurveZMQ keys when it has keys, and no key variables otherwise."""
        return child_env(self.guard.local_env() if self.guard is not None else None)

    def close(self) -> None:
        """Stop the player and the servers; close the file."""
        self.player.stop()
        for server in self._servers:
            server.stop()
        self._servers = []
        if self.publisher is not None:
            self.publisher.close()
            self.publisher = None
        if self.guard is not None:  # after every Curve server has closed
            self.guard.close()
            self.guard = None
        if self.ctx is not None:
            self.ctx.term()
            self.ctx = None
        self.recording.close()
