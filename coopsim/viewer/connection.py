"""The viewer's link to a simulation or replay: name server, ``/sim`` requests, the state stream.

One background thread owns every ZeroMQ socket (sockets are not thread-safe), so the window's
thread never blocks on the network: it submits requests and gets :class:`Future` objects, and it
reads the latest state frame, layout and playback figures from attributes the thread replaces
whole. When the simulation goes away the link says so (``connected`` False) and keeps asking the
name server until it answers again, then looks every name up afresh (new ports after a restart).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Sequence

import zmq

from ..net import protocol as p
from ..model.errors import ProtocolError
from ..net.protocol import Message
from ..net.security import ClientKeys
from ..net.statestream import StateFrame, decode_wire

log = logging.getLogger(__name__)

_NAMES = {c.name: c.id for c in p.NAME_COMMANDS.values()}
_SIM = {c.name: c.id for c in p.SIM_COMMANDS.values()}
_PLAYBACK = {c.name: c.id for c in p.PLAYBACK_COMMANDS.values()}

REQUEST_TIMEOUT = 3.0  # s for an ordinary request (a load gets LOAD_TIMEOUT)
LOAD_TIMEOUT = 15.0  # s for a load or reset: /sim itself waits up to 10 s for the stepper
PROBE_TIMEOUT = 0.5  # s for the liveness and reconnection probes
SILENCE = 1.0  # s without a state frame before the link probes /sim
RETRY = 0.5  # s between reconnection attempts
PLAYBACK_POLL = 0.2  # s between /playback status requests
RUN_POLL = 1.0  # s between /sim state requests for the run's state (finished, recording...)
#: State document keys the status bar shows (read when present: newer servers add some).
RUN_KEYS = ("finished", "error", "recording", "waiting_for", "recorder_error")
#: The run figures of the state document, for a window with no state frame yet (a stalled or
#: finished run publishes none): name -> type.
RUN_FIGURES = {"step": int, "time": float, "mode": str, "paused": bool, "speed": float,
               "rtf": float, "missed": int}
#: Where a recorder's failure may be reported (the first one holding a sentence wins).
_RECORDER_ERROR_KEYS = ("recorder_error", "recording_error", "record_error")
_POLL_MS = 30  # how long the thread waits on the stream before looking at its queue


@dataclass(frozen=True)
class Playback:
    """What ``/playback`` status says (params [playing, frame index, frame count, step], data
    [position, duration, speed, start, end]; see docs/protocol.md).

    Attributes:
        position: Recording time of the frame shown, s.
        duration: Length of the recording, s.
        playing: True while playing.
        speed: Playback speed factor (negative plays backwards).
        start, end: Recording times of the first and last frame, s.
    """

    position: float
    duration: float
    playing: bool = False
    speed: float = 1.0
    start: float = 0.0
    end: float = 0.0


@dataclass
class _Request:
    service: str
    command: int
    text: str
    params: tuple[int, ...]
    data: tuple[float, ...]
    timeout: float
    future: Future
    refresh: bool


def unpack_reply(frame: bytes) -> Message:
    """Decode a reply or stream frame (no size limit: a large swarm's layout is large)."""
    return Message.from_wire(frame, max_bytes=None)


class Link:
    """A live connection to whatever serves ``/sim`` behind a name server.

    Args:
        nameserver: Name server endpoint, e.g. ``tcp://127.0.0.1:10000``.
        keys: CurveZMQ client keys for a run started with ``--keys`` (None: no Curve).

    Attributes (read from any thread; each is replaced whole by the link's thread):
        nameserver: The endpoint currently followed.
        connected: True while the simulation answers.
        frame: The latest :class:`StateFrame`, or None.
        layout: The latest ``/sim`` state document (dict), or None.
        playback: :class:`Playback` when the name server has ``/playback`` (a replay), else None.
        run: The run's state from the latest state document (:func:`run_state`): why it
            finished, why it stopped, the file it records to, who it waits for, a recorder
            error; refreshed every :data:`RUN_POLL` s and after every change.
        error: The last connection problem, as a sentence ("" when connected).
    """

    def __init__(self, nameserver: str, keys: ClientKeys | None = None) -> None:
        self.nameserver = nameserver
        self.keys = keys
        self.connected = False
        self.frame: StateFrame | None = None
        self.layout: dict | None = None
        self.playback: Playback | None = None
        self.run: dict = {}
        self.error = "connecting"
        self.generation = 0  # counts (re)connections, so the window can refit on a new world
        self._heard = 0.0  # monotonic time the simulation was last heard from
        self._polled = 0.0  # monotonic time of the last /playback status
        self._run_polled = 0.0  # monotonic time of the last /sim state for the run's state
        self._asked_for, self._asked_at = -1, 0.0  # last layout version fetched for, and when
        self._queue: queue.Queue[_Request] = queue.Queue()
        self._stop = threading.Event()
        self._switch: tuple[str, ClientKeys | None] | None = None
        self._ctx = zmq.Context()
        self._sockets: dict[str, zmq.Socket] = {}
        self._endpoints: dict[str, str] = {}
        self._sub: zmq.Socket | None = None
        self._thread = threading.Thread(target=self._run, name="coopsim-viewer-link", daemon=True)

    # -- the window's side --------------------------------------------------------------------

    def start(self) -> "Link":
        """Start the link's thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread and close every socket."""
        self._stop.set()
        self._thread.join(3.0)
        self._ctx.term()

    def submit(self, service: str, command: int, text: str = "", params: Sequence[int] = (),
               data: Sequence[float] = (), timeout: float = REQUEST_TIMEOUT,
               refresh: bool = False) -> Future:
        """Queue one request to ``service`` (``/sim`` or ``/playback``).

        Args:
            refresh: Fetch the layout again once the request succeeded (after a change to the
                world, so the window shows it even when no state frame follows).

        Returns:
            A Future resolving to the reply :class:`Message`, or failing with ProtocolError (an
            error reply, a timeout, or no connection).
        """
        future: Future = Future()
        self._queue.put(_Request(service, command, text, tuple(int(v) for v in params),
                                 tuple(float(v) for v in data), timeout, future, refresh))
        return future

    def switch(self, nameserver: str, keys: ClientKeys | None = None) -> None:
        """Follow another name server (a replay, or back to the live run) with its keys."""
        self._switch = (nameserver, keys)

    # -- the link's thread --------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    self._loop_once()
                except zmq.ContextTerminated:
                    return  # close() while a request was waiting
                except Exception:  # noqa: BLE001 -- a bug must not freeze the window
                    log.exception("viewer link: starting over")
                    self._drop("internal error (see the log)")
                    self._stop.wait(RETRY)
        finally:
            self._close_sockets()

    def _loop_once(self) -> None:
        if self._switch is not None:
            (self.nameserver, self.keys), self._switch = self._switch, None
            self._drop("switching")
        if not self.connected and not self._connect():
            self._fail_queue()
            self._stop.wait(RETRY)
            return
        self._serve_once()

    def _serve_once(self) -> None:
        self._drain_stream()
        self._serve_queue()
        frame, layout = self.frame, self.layout
        stale = frame is not None and (layout is None or
                                       layout.get("layout_version") != frame.layout_version)
        # ask once per new version, then at most every RETRY s (a frame may lag the layout)
        if stale and (frame.layout_version != self._asked_for
                      or time.monotonic() - self._asked_at >= RETRY):
            self._asked_for, self._asked_at = frame.layout_version, time.monotonic()
            self._fetch_layout()
        if self.playback is not None and time.monotonic() - self._polled >= PLAYBACK_POLL:
            self._poll_playback()
        if time.monotonic() - self._run_polled >= RUN_POLL:
            self._fetch_layout(always=False)
        if time.monotonic() - self._heard >= SILENCE:
            self._probe()

    def _connect(self) -> bool:
        """Look every name up; True when /sim answers."""
        self._close_sockets()
        try:
            self._request(self.nameserver, _NAMES["hello"], params=(p.PROTOCOL_VERSION,),
                          timeout=PROBE_TIMEOUT)
            names = self._names()
            if "/sim" not in names:
                raise ProtocolError(p.UNKNOWN_NAME, "the name server has no /sim")
            self._endpoints = names
            self._take_state(json.loads(self._call("/sim", _SIM["state"]).text), always=True)
        except ProtocolError as exc:
            self._drop(exc.text)
            return False
        except ValueError:
            self._drop("/sim state is not a JSON document")
            return False
        self._subscribe(names.get("/sim/state"))
        self.playback = Playback(0.0, 0.0) if "/playback" in names else None
        self._polled = 0.0
        self._heard = time.monotonic()
        self.frame = None
        self.error = ""
        self.generation += 1
        self.connected = True
        return True

    def _names(self) -> dict[str, str]:
        text = self._request(self.nameserver, _NAMES["list"], timeout=PROBE_TIMEOUT).text
        return dict(line.split(" ", 1) for line in text.splitlines() if " " in line)

    def _subscribe(self, endpoint: str | None) -> None:
        if endpoint is None:
            return  # no stream: the window shows the layout's poses, fetched after each change
        sub = self._ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.RCVHWM, 4)  # the viewer only wants the latest frame
        sub.setsockopt(zmq.SUBSCRIBE, p.STATE_TOPIC)
        if self.keys is not None:
            self.keys.apply(sub)
        sub.connect(endpoint)
        self._sub = sub

    def _drain_stream(self) -> None:
        if self._sub is None:
            self._stop.wait(_POLL_MS / 1000)
            return
        latest = None
        if self._sub.poll(_POLL_MS):
            while True:
                try:
                    latest = self._sub.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
        if latest is None or len(latest) != 2:
            return
        try:
            self.frame = decode_wire(latest[1])
            self._heard = time.monotonic()
        except (ProtocolError, ValueError):
            pass  # a malformed frame is skipped; the next one replaces it

    def _serve_queue(self) -> None:
        while True:
            try:
                req = self._queue.get_nowait()
            except queue.Empty:
                return
            if req.future.set_running_or_notify_cancel():
                try:
                    reply = self._call(req.service, req.command, req.text, req.params,
                                       req.data, req.timeout)
                    if req.refresh:
                        self._fetch_layout()
                    req.future.set_result(reply)
                except ProtocolError as exc:
                    req.future.set_exception(exc)
                    if exc.code == p.TIMEOUT:
                        self._heard = 0.0  # check at once whether the simulation is still there
            if not self.connected:
                return

    def _fetch_layout(self, always: bool = True) -> None:
        """Ask /sim for its state document; keep the layout only when it is new (``always``:
        take it anyway), the run's state every time."""
        self._run_polled = time.monotonic()
        try:
            self._take_state(json.loads(self._call("/sim", _SIM["state"]).text), always)
        except (ProtocolError, ValueError) as exc:
            self._note_failure(exc)

    def _take_state(self, state: dict, always: bool) -> None:
        self.run = run_state(state)
        old = self.layout
        # the same layout version keeps the old document, so the window does not rebuild
        if always or old is None or old.get("layout_version") != state.get("layout_version"):
            self.layout = state

    def _poll_playback(self) -> None:
        self._polled = time.monotonic()
        try:
            reply = self._call("/playback", _PLAYBACK["status"], timeout=PROBE_TIMEOUT)
        except ProtocolError as exc:
            self._note_failure(exc)
            return
        self.playback = parse_playback(reply)

    def _probe(self) -> None:
        """No frame for a while: ask /sim whether it is there (paused runs publish slowly)."""
        try:
            self._call("/sim", _SIM["status"], timeout=PROBE_TIMEOUT)
        except ProtocolError as exc:
            self._note_failure(exc)
            return
        self._heard = time.monotonic()

    def _note_failure(self, exc: Exception) -> None:
        if isinstance(exc, ProtocolError) and exc.code == p.TIMEOUT:
            self._drop(exc.text)

    def _drop(self, why: str) -> None:
        self.connected = False
        self.error = why
        self._close_sockets()

    def _fail_queue(self) -> None:
        while True:
            try:
                req = self._queue.get_nowait()
            except queue.Empty:
                return
            req.future.set_exception(ProtocolError(p.TIMEOUT, f"not connected ({self.error})"))

    # -- sockets ------------------------------------------------------------------------------

    def _call(self, service: str, command: int, text: str = "", params: Sequence[int] = (),
              data: Sequence[float] = (), timeout: float = REQUEST_TIMEOUT) -> Message:
        endpoint = self._endpoints.get(service)
        if endpoint is None:
            raise ProtocolError(p.UNKNOWN_NAME, f"{self.nameserver} has no {service}")
        return self._request(endpoint, command, text, params, data, timeout)

    def _request(self, endpoint: str, command: int, text: str = "", params: Sequence[int] = (),
                 data: Sequence[float] = (), timeout: float = REQUEST_TIMEOUT) -> Message:
        sock = self._socket(endpoint)
        try:  # SNDTIMEO: a connection refused at the CurveZMQ handshake leaves nowhere to send
            sock.send(Message(0, text, command, tuple(params), tuple(data)).to_wire())
        except zmq.Again:
            self._sockets.pop(endpoint).close(0)
            raise ProtocolError(p.TIMEOUT, f"no connection to {endpoint} (refused at the "
                                           "CurveZMQ handshake?)") from None
        if not sock.poll(int(timeout * 1000)):
            # a REQ socket whose reply never came is useless: the next request gets a new one
            self._sockets.pop(endpoint).close(0)
            raise ProtocolError(p.TIMEOUT, f"no reply from {endpoint} within {timeout:g} s")
        reply = unpack_reply(sock.recv())
        if reply.error:
            raise ProtocolError(reply.error, reply.text)
        return reply

    def _socket(self, endpoint: str) -> zmq.Socket:
        sock = self._sockets.get(endpoint)
        if sock is None:
            sock = self._ctx.socket(zmq.REQ)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDTIMEO, int(PROBE_TIMEOUT * 1000))
            if self.keys is not None:
                self.keys.apply(sock)
            try:
                sock.connect(endpoint)
            except zmq.ZMQError as exc:
                sock.close(0)
                raise ProtocolError(p.FAILED, f"cannot connect to {endpoint!r}: {exc}") from None
            self._sockets[endpoint] = sock
        return sock

    def _close_sockets(self) -> None:
        for sock in self._sockets.values():
            sock.close(0)
        self._sockets.clear()
        if self._sub is not None:
            self._sub.close(0)
            self._sub = None


def run_state(state: dict) -> dict:
    """The run's state in a ``/sim`` state document: :data:`RUN_KEYS` that it holds, each as
    the document says (``finished``, ``error``, ``recording``, ``recorder_error``: sentences
    or paths, "" when none; ``waiting_for``: robot names), the :data:`RUN_FIGURES` and the
    number of ``attached`` controllers, and the rules' fields (``rules``). Keys a server does
    not send are absent, and malformed ones are dropped: the window shows what it can."""
    out = {}
    for key in RUN_KEYS:
        value = state.get(key)
        if key == "waiting_for":
            if isinstance(value, list):
                out[key] = [str(v) for v in value]
        elif key == "recorder_error":
            found = [state[k] for k in _RECORDER_ERROR_KEYS if isinstance(state.get(k), str)]
            if found:
                out[key] = next((v for v in found if v), "")
        elif isinstance(value, str):
            out[key] = value
    for key, kind in RUN_FIGURES.items():
        value = state.get(key)
        if isinstance(value, (int, float, str)) and isinstance(value, bool) == (kind is bool):
            try:
                out[key] = kind(value)
            except ValueError:
                pass
    if isinstance(state.get("attached"), list):
        out["attached"] = len(state["attached"])
    if isinstance(state.get("owners"), dict):  # robots a controller drives, in either mode
        out["driven"] = len(state["owners"])
    if isinstance(state.get("rules"), dict):
        out["rules"] = state["rules"]  # games draw from them (flags, score): viewer/game.py
    robots = (state.get("external") or {}).get("robots") if isinstance(
        state.get("external"), dict) else None
    if isinstance(robots, dict):  # protocol 10: external robots whose poses stopped coming
        out["stale"] = [str(n) for n, r in robots.items()
                        if isinstance(r, dict) and r.get("status") == "stale"]
    return out


def parse_playback(reply: Message) -> Playback:
    """Read a ``/playback`` status reply (older servers may send fewer data items)."""
    position, duration, speed, start, end = (list(reply.data) + [0.0] * 5)[:5]
    if len(reply.data) < 3:
        speed = 1.0
    if len(reply.data) < 5:
        start, end = 0.0, duration
    playing = bool(reply.params[0]) if reply.params else False
    return Playback(position, duration, playing, speed, start, end)
