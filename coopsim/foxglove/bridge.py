"""The live bridge: a Foxglove WebSocket server (the SDK's) publishing a run's or a replay's steps.

The bridge never touches the world: its own thread wakes ``rate`` times a second, takes the
latest immutable snapshot (the stepper's, or the player's) and publishes it; steps in between
are dropped, never queued, so a slow bridge costs frames, not steps. The SDK's server runs its
sockets on its own threads outside the GIL and drops the oldest messages of a client that does
not keep up (``message_backlog_size``); a client that dies or sends garbage is the SDK's to
close. A replay's bridge also answers Foxglove's playback controls (play, pause, speed, seek on
the timeline) by moving the player.
"""

from __future__ import annotations

import logging
import threading
import time

import numpy as np

from ..model.errors import CoopsimError
from . import make_channel, require_sdk
from .arms import SCENE_ARMS, TF_ARMS, ArmScene
from .images import image_messages
from .scans import Scans
from .scenery import LOCAL_MESHES
from .scene import Scene
from .topics import (EVENTS, SCENE_BODIES, SCENE_WORLD, STATE, TF, EventLog, Topic, log_message,
                     metric_messages, pose_topic, state_json)

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
DEFAULT_RATE = 20.0  # Hz
WORLD_EVERY = 1.0  # s between repeats of the still scene (for clients that join later)
# Messages a client may have queued before the oldest are dropped (and control messages, such
# as the advertisements of new channels, before a client that cannot keep up is disconnected).
# Worst case per stalled client: BACKLOG times the largest message (about 1.5 kB per robot).
BACKLOG = 128
STATUS_ID = "coopsim.playback"  # the id of the bridge's status messages (a refused speed)


class LiveSource:
    """A live run's steps: the stepper's snapshot; layouts described on the stepper thread."""

    playback = None

    def __init__(self, stepper) -> None:
        self.stepper = stepper

    def current(self):
        """(snapshot, layout key, time ns): wall-clock time, as Foxglove shows live data."""
        snap, key = self.stepper.view()
        return snap, key, time.time_ns()

    def layout(self) -> tuple:
        """(layout key, layout document, robot name -> module label -> parameter values),
        taken together on the stepper thread."""
        def build():
            world = self.stepper.sim.world
            params = {r.name: {label: dict(values.as_dict()) for label, values in
                               r.modules.items()} for r in world.robots}
            layout = world.describe()
            if getattr(world, "meshes", ()):  # the meshes' local files, for their triangles
                layout[LOCAL_MESHES] = {m.name: m for m in world.meshes}
            return self.stepper.view()[1], layout, params
        return self.stepper.call(build).result(10.0)


class ReplaySource:
    """A replay's steps: the player's snapshot, stamped with its recording time."""

    def __init__(self, player) -> None:
        self.player = player
        rec = player.recording
        self.playback = (round(rec.start * 1e9), round(rec.end * 1e9))

    def current(self):
        frame, snap = self.player.frame, self.player.snapshot
        return snap, snap.layout_version, round(frame.position * 1e9)

    def layout(self) -> tuple:
        """(layout key, layout document, {}): a replay serves no scans (its snapshots hold
        the recorded columns; exports rebuild the scans)."""
        snap = self.player.snapshot
        return snap.layout_version, self.player.layout(), {}


class Bridge:
    """Serve a source's steps to Foxglove.

    Args:
        source: :class:`LiveSource` or :class:`ReplaySource`.
        host: Address to listen on.
        port: TCP port (0 = any free port).
        rate: Publications per second, Hz.

    Raises:
        CoopsimError: the SDK is not installed, or the port cannot be bound.
    """

    def __init__(self, source, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 rate: float = DEFAULT_RATE) -> None:
        if not rate > 0:
            raise CoopsimError(f"--foxglove-rate must be > 0 Hz, not {rate:g}")
        self.sdk = require_sdk("--foxglove")
        self.source, self.rate = source, float(rate)
        self.context = self.sdk.Context()
        self._listener = _playback(self) if source.playback else None
        self.server = self._serve(host, port)
        self.port = self.server.port
        self.host = host
        self.published = 0  # publications made (steps shown)
        self.errors = 0
        self.busy = 0.0  # s the bridge thread spent publishing (wall time, GIL waits included)
        self.cpu = 0.0  # s of CPU the bridge thread used publishing
        self._channels: dict[str, object] = {}
        self._scene: tuple | None = None  # (layout key, Scene)
        self._poses: list = []  # the SDK channel of each robot's pose, in the Scene's order
        self._scans = Scans({})  # the robots' range finders (foxglove.LaserScan), per layout
        self._images: dict = {}  # robot -> the step of its camera3d image sent last
        self._arms = ArmScene({})  # the robots' 3D arms (links and frames), per layout
        self._events = EventLog()
        self._world_at = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="coopsim-foxglove", daemon=True)

    def _serve(self, host: str, port: int):
        ws = self.sdk.websocket
        caps, kwargs = [], {}
        if self.source.playback:  # a replay's clock is its recording time, not the wall's
            caps += [ws.Capability.Time, ws.Capability.PlaybackControl]
            kwargs = {"playback_time_range": self.source.playback,
                      "server_listener": self._listener}
        try:
            return self.sdk.start_server(name="coopsim", host=host, port=port, capabilities=caps,
                                         context=self.context, message_backlog_size=BACKLOG,
                                         **kwargs)
        except RuntimeError as exc:
            raise CoopsimError(f"cannot serve Foxglove on {host}:{port}: "
                               f"{str(exc).removeprefix('FoxgloveError: ')}") from None

    @property
    def url(self) -> str:
        """The WebSocket URL to open in Foxglove."""
        return f"ws://{self.host}:{self.port}"

    def start(self) -> "Bridge":
        """Start publishing (once; again is a no-op)."""
        if self._thread.ident is None:
            self._advertise()
            self._thread.start()
        return self

    def _advertise(self) -> None:
        """Create the current layout's channels up front, so a client that connects gets
        them in one advertisement rather than one control message per channel."""
        snap, key, _ = self.source.current()
        scene = self._scene_for(snap, key)
        for topic in [SCENE_WORLD, SCENE_BODIES, TF, STATE, EVENTS] + [
                pose_topic(n) for n in scene.robots] + self._scans.topics() + [
                t for t, _ in metric_messages(snap)] + (
                [SCENE_ARMS, TF_ARMS] if self._arms else []):
            self._channel(topic)

    def close(self) -> None:
        """Stop publishing and the server."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5.0)
        self.server.stop()

    def __enter__(self) -> "Bridge":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def resend_world(self) -> None:
        """Send the still scene with the next publication (after a seek)."""
        self._world_at = 0.0

    # -- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        period, last = 1.0 / self.rate, None
        while not self._stop.wait(period):
            try:
                if self._listener is not None:
                    self._listener.announce()
                snap, key, ns = self.source.current()
                if snap is last and time.monotonic() - self._world_at < WORLD_EVERY:
                    continue
                start, cpu = time.perf_counter(), time.thread_time()
                self.publish(snap, key, ns)
                self.busy += time.perf_counter() - start
                self.cpu += time.thread_time() - cpu
                last = snap
            except Exception as exc:  # noqa: BLE001 - the bridge must never take the run down
                self.errors += 1
                if self.errors == 1:
                    log.warning("foxglove bridge: %s", exc)

    def publish(self, snap, key, ns: int) -> None:
        """Publish one step (on the bridge thread)."""
        scene = self._scene_for(snap, key)
        if self._listener is not None:
            self.server.broadcast_time(ns)
        now = time.monotonic()
        if now - self._world_at >= WORLD_EVERY:
            self._world_at = now
            self._log(SCENE_WORLD, lambda: scene.world.fill(np.zeros(0), ns).tobytes(), ns)
        values = scene.values(snap)
        self._log(SCENE_BODIES, lambda: scene.scene.fill(values, ns).tobytes(), ns)
        self._log(TF, lambda: scene.tf.fill(values, ns).tobytes(), ns)
        self._log_poses(scene, values, ns)
        self._log(STATE, lambda: state_json(snap), ns)
        for topic, data in self._scans.messages(
                snap, ns, lambda t: self._channel(t).has_sinks()):  # scans cost: only if wanted
            self._log(topic, lambda d=data: d, ns)
        for topic, data in image_messages(snap, ns, self._images,
                                          lambda t: self._channel(t).has_sinks()):
            self._log(topic, lambda d=data: d, ns)
        if self._arms and (self._channel(SCENE_ARMS).has_sinks()
                           or self._channel(TF_ARMS).has_sinks()):
            for topic, data in self._arms.messages(snap, ns):
                self._log(topic, lambda d=data: d, ns)
        for topic, data in metric_messages(snap):
            self._log(topic, lambda d=data: d, ns)
        for text in self._events.new(snap.rules):
            self._log(EVENTS, lambda t=text: log_message(ns, t), ns, always=True)
        self.published += 1

    def _log_poses(self, scene: Scene, values: np.ndarray, ns: int) -> None:
        """Each robot's PoseInFrame, to the robots someone follows (the SDK's channel
        objects directly: hundreds of topics per step)."""
        wanted = [(base, r) for base, r in zip(self._poses, scene.pose_ranges)
                  if base.has_sinks()]
        if wanted:
            data = scene.poses.fill(values, ns).tobytes()
            for base, (a, b) in wanted:
                base.log(data[a:b], ns, None)

    def _scene_for(self, snap, key) -> Scene:
        if self._scene is None or self._scene[0] != key or not self._scene[1].fits(snap):
            built_key, layout, params = self.source.layout()
            scene = Scene(layout, snap.pose3d is not None,
                          getattr(snap, "object_pose3d", None) is not None)
            self._scans, self._arms = Scans(layout, params), ArmScene(layout)
            self._poses = [self._channel(pose_topic(n)).base for n in scene.robots]
            self._scene = (built_key, scene)
            self._world_at = 0.0
        return self._scene[1]

    def _log(self, topic: Topic, build, ns: int, always: bool = False) -> None:
        """Encode and log one message, only when someone listens (events always: a client
        may subscribe later only to miss them)."""
        channel = self._channel(topic)
        if always or channel.has_sinks():
            channel.log(build(), log_time=ns)

    def _channel(self, topic: Topic):
        channel = self._channels.get(topic.name)
        if channel is None:
            channel = self._channels[topic.name] = make_channel(self.sdk, self.context, topic)
        return channel


def _playback(bridge: Bridge) -> "_Playback":
    """The replay's listener, with the SDK's ``ServerListener`` defaults (no-ops) for every
    callback it does not handle (subscribe, unsubscribe, ...): the SDK calls them all."""
    listener = type("_PlaybackListener", (_Playback, bridge.sdk.websocket.ServerListener), {})
    return listener(bridge)


class _Playback:
    """Foxglove's playback controls moving a replay's player (SDK ``ServerListener``), and the
    player's own changes told to every client: a seek or step made through ``/playback`` (or
    the viewer) is announced as a seek, as one made on Foxglove's timeline is."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.last: tuple | None = None  # (status, speed) last told
        self.jumps = bridge.source.player.jumps  # the player's jumps already told
        self._lock = threading.Lock()  # requests come on the SDK's thread, announce on ours

    def on_playback_control_request(self, request):
        """Seek, set the speed, play or pause; answer with the player's state. A refused speed
        keeps the state and says why in a status message (Foxglove shows it)."""
        ws = self.bridge.sdk.websocket
        player = self.bridge.source.player
        did_seek = request.seek_time is not None
        with self._lock:
            try:
                if did_seek:
                    player.seek(request.seek_time / 1e9)
                    self.bridge.resend_world()
                if request.playback_speed and request.playback_speed != player.speed:
                    player.set_speed(request.playback_speed)
                if request.playback_command == ws.PlaybackCommand.Play:
                    player.play()
                else:
                    player.pause()
            except CoopsimError as exc:  # a speed out of range: keep the state, say why
                log.warning("foxglove playback request refused: %s", exc)
                self.bridge.server.publish_status(
                    f"playback speed {request.playback_speed:g} refused: "
                    f"{getattr(exc, 'text', exc)}; the replay "
                    f"keeps {player.speed:g}x", ws.StatusLevel.Warning, STATUS_ID)
            self.jumps = player.jumps  # this request's own seek is answered, not re-announced
            return self.state(did_seek, request.request_id)

    def state(self, did_seek: bool = False, request_id: str | None = None):
        """The player's state as the SDK's PlaybackState (Ended at the last step)."""
        ws = self.bridge.sdk.websocket
        player = self.bridge.source.player
        frame = player.frame
        if player.playing:
            status = ws.PlaybackStatus.Playing
        elif frame.index == player.recording.frame_count - 1:
            status = ws.PlaybackStatus.Ended
        else:
            status = ws.PlaybackStatus.Paused
        self.last = (status, player.speed)
        return ws.PlaybackState(status=status, current_time=round(frame.position * 1e9),
                                playback_speed=player.speed, did_seek=did_seek,
                                request_id=request_id)

    def announce(self) -> None:
        """Tell every client when the player changed by itself (reached the end, /playback
        paused or played it), so Foxglove's play button follows; a jump made elsewhere (a
        /playback seek or step) goes out with did_seek, so Foxglove drops what it buffered."""
        with self._lock:
            before, jumps = self.last, self.bridge.source.player.jumps
            jumped, self.jumps = jumps != self.jumps, jumps
            state = self.state(did_seek=jumped)
            if jumped:
                self.bridge.resend_world()
            if jumped or self.last != before:
                self.bridge.server.broadcast_playback_state(state)
