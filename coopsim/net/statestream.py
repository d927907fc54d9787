"""The state stream: PUB sockets publishing every body's pose, for viewers, monitors and replay.

On ``/sim/state`` each message is two frames: the topic ``b"state"`` and one five-field protocol
message; ``/sim/state1`` publishes the same message as one frame, with no topic, so a subscriber
may set ZMQ_CONFLATE (which keeps only the newest message, and takes single frames only)::

    [0, mode, 1, params, data]
    params = [step, layout_version, n_robots, n_objects, n_parts, missed, paused, n_attached,
              n_columns, n_tail, late_permille, recent_rtf_permille (, pose3d_width
              (, object3d_width))]
    data   = [time, rtf, speed, x, y, yaw per robot..., per object..., per part...,
              n_columns values per robot..., n_metrics values
              (, object3d_width values per object) (, pose3d_width values per robot)]

In a 2D world ``n_tail`` is the number of metrics and there are 12 params (protocol 4's message,
byte for byte). In a 3D world (an engine with ``flight``: ``Snapshot.pose3d`` is set) a 13th
param ``pose3d_width`` (5) says how many values per robot the trailing 3D block holds: z (m,
world) and the body-to-world quaternion qw, qx, qy, qz; ``n_tail`` then counts the metrics *and*
that block (n_metrics = n_tail - pose3d_width * n_robots), so a protocol-4 reader, which checks
the data's length against the 12 counts it knows, still reads every planar pose and sees the
block as trailing values past the metrics the state document names. When the snapshot has the
objects' 3D poses too (``Snapshot.object_pose3d``: a cube an arm lifted; protocol 6) a 14th
param ``object3d_width`` (5) says how many values per object a second block holds -- z and the
quaternion of each object, in the order of the objects -- placed between the metrics and the
robots' 3D block and counted in ``n_tail`` (n_metrics = n_tail - pose3d_width * n_robots -
object3d_width * n_objects): a protocol-5 reader takes it for more trailing metrics and still
finds the robots' block at the end.

The per-robot columns are the modules' streamed columns (``columns`` in the layout: with the
built-in modules, the 11 sonar distances); the metrics are the rules' per-run ``metrics``
(``metrics`` in the state document names them: ``monitors.distance``...). Names and shapes are
not repeated every step: when ``layout_version`` changes, a subscriber asks ``/sim`` (command 23,
state) for the layout. Publishing is rate-limited in wall time (default 30 Hz) so a fast lockstep
run does not flood slow subscribers; 0 publishes every step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import zmq

from ..model.plugins import module_columns
from ..model.snapshot import Snapshot, column_values, rule_metrics, wrapped_poses
from . import protocol as p
from .protocol import Message


@dataclass(frozen=True)
class StateFrame:
    """One decoded state message.

    Attributes:
        step, time, layout_version: As in the snapshot.
        mode: ``realtime`` or ``lockstep`` (``playback`` for recordings shown in replay).
        rtf, speed, missed, paused, attached: Run figures.
        late, recent_rtf: Share of the realtime steps of the last second that missed their
            deadline, and the real-time factor over them (0 when the publisher sends neither).
        robots, objects, parts: (n, 3) poses x, y, yaw.
        columns: (n_robots, C) the streamed per-robot columns (names in the layout).
        metrics: (K,) the rules' metrics (names in the state document's ``metrics``).
        pose3d: (n_robots, 7) x, y, z (m, world frame) and the body-to-world quaternion qw,
            qx, qy, qz of every robot in a 3D world; None in a 2D one (and from publishers
            before protocol 5).
        object_pose3d: (n_objects, 7) x, y, z and qw, qx, qy, qz of every object when the
            publisher sends them (protocol 6, a 3D world); else None.
    """

    step: int
    time: float
    layout_version: int
    mode: str
    rtf: float
    speed: float
    missed: int
    paused: bool
    attached: int
    robots: np.ndarray
    objects: np.ndarray
    parts: np.ndarray
    columns: np.ndarray
    metrics: np.ndarray = field(default_factory=lambda: np.zeros(0))
    late: float = 0.0
    recent_rtf: float = 0.0
    pose3d: np.ndarray | None = None
    object_pose3d: np.ndarray | None = None


#: Values per robot in the 3D block: z, qw, qx, qy, qz (x and y are the planar pose's).
POSE3D_WIDTH = 5


def encode_state(snap: Snapshot, mode: str, rtf: float, speed: float, missed: int,
                 paused: bool, attached: int, columns: list | None = None, late: float = 0.0,
                 recent_rtf: float = 0.0) -> Message:
    """Pack a snapshot into the stream's message (``columns``: default, every module's
    streamed columns; ``late`` and ``recent_rtf``: see :class:`StateFrame`). A snapshot with
    ``pose3d`` adds the 3D block and its 13th param; one without is protocol 4's message."""
    columns = module_columns(stream_only=True) if columns is None else columns
    n, m, k = len(snap.robots), len(snap.objects), len(snap.parts)
    metrics = [v for _, v in rule_metrics(snap.rules)]
    block = _pose3d_block(snap.pose3d, n)
    objects3d = getattr(snap, "object_pose3d", None) if snap.pose3d is not None else None
    oblock = _pose3d_block(objects3d, m)
    params = (snap.step, snap.layout_version, n, m, k, missed, int(paused), attached,
              len(columns), len(metrics) + len(oblock) + len(block), round(late * 1000),
              round(min(recent_rtf, 1e9) * 1000))
    if snap.pose3d is not None:
        params += (POSE3D_WIDTH,) if objects3d is None else (POSE3D_WIDTH, POSE3D_WIDTH)
    data = np.concatenate(([snap.time, rtf, speed], wrapped_poses(snap.poses).ravel(),
                           wrapped_poses(snap.object_poses).ravel(),
                           wrapped_poses(snap.part_poses).ravel(),
                           column_values(snap, columns).ravel(), metrics, oblock, block))
    return Message(0, mode, 1, params, tuple(data.tolist()))


def _pose3d_block(pose3d: np.ndarray | None, n: int) -> np.ndarray:
    """A 3D block: z, qw, qx, qy, qz per body (empty in a 2D world)."""
    if pose3d is None:
        return np.zeros(0)
    return np.asarray(pose3d, dtype=float).reshape(n, 7)[:, 2:].ravel()


def decode_state(msg: Message) -> StateFrame:
    """Unpack a state message (raises ValueError when the counts do not add up; a message
    with 9 params, from before metrics were streamed, has none; one with fewer than 12, no
    real-time figures; one with 13, a 3D block of ``params[12]`` values per robot, of which
    the first five are read; one with 14, before it a block of ``params[13]`` values per
    object, the same way)."""
    if len(msg.params) < 9:
        raise ValueError("a state message has 9 to 14 params")
    step, layout, n, m, k, missed, paused, attached, c = msg.params[:9]
    tail = msg.params[9] if len(msg.params) > 9 else 0
    width = msg.params[12] if len(msg.params) > 12 else 0
    owidth = msg.params[13] if len(msg.params) > 13 else 0
    q = tail - width * n - owidth * m  # the metrics; the 3D blocks follow them
    data = np.asarray(msg.data, dtype=float)
    if min(n, m, k, c, q, width, owidth) < 0 \
            or len(data) != 3 + 3 * (n + m + k) + c * n + tail:
        raise ValueError("state message data length does not match its counts")
    for count, what in ((width, "robot"), (owidth, "object")):
        if 0 < count < POSE3D_WIDTH:
            raise ValueError(f"a state message's 3D block has at least {POSE3D_WIDTH} values "
                             f"per {what}, not {count}")
    cut = np.cumsum([3, 3 * n, 3 * m, 3 * k, c * n, q, owidth * m])
    late, recent = (msg.params[10:12] if len(msg.params) >= 12 else (0, 0))
    robots = data[cut[0]:cut[1]].reshape(n, 3)
    objects = data[cut[1]:cut[2]].reshape(m, 3)
    pose3d = objects3d = None
    if width:
        block = data[cut[6]:].reshape(n, width)[:, :POSE3D_WIDTH]
        pose3d = np.concatenate((robots[:, :2], block), axis=1)
    if owidth:
        block = data[cut[5]:cut[6]].reshape(m, owidth)[:, :POSE3D_WIDTH]
        objects3d = np.concatenate((objects[:, :2], block), axis=1)
    return StateFrame(step, data[0], layout, msg.text, data[1], data[2], missed, bool(paused),
                      attached, robots, objects, data[cut[2]:cut[3]].reshape(k, 3),
                      data[cut[3]:cut[4]].reshape(n, c), data[cut[4]:cut[5]], late / 1000,
                      recent / 1000, pose3d, objects3d)


class StatePublisher:
    """A stepper hook that publishes snapshots on two PUB sockets: ``endpoint`` (``/sim/state``,
    topic frame + message) and ``latest_endpoint`` (``/sim/state1``, the message alone).

    Args:
        ctx: ZeroMQ context.
        stepper: The stepper whose figures go along with each snapshot.
        bind: Address to bind.
        rate: Largest number of messages per second of wall time (0 = every step).
        advertise: Host written into :attr:`endpoint` (default: bind).
        configure: Called with the socket before it binds (CurveZMQ: ``Guard.configure``).
    """

    def __init__(self, ctx: zmq.Context, stepper, bind: str = "127.0.0.1",
                 rate: float = 30.0, advertise: str | None = None, configure=None) -> None:
        self.socket, self.endpoint = _pub(ctx, bind, advertise, configure)
        try:
            self.latest, self.latest_endpoint = _pub(ctx, bind, advertise, configure)
        except zmq.ZMQError:
            self.socket.close(0)  # an open socket would make ctx.term() hang
            raise
        self.stepper = stepper
        self.period = 1.0 / rate if rate > 0 else 0.0
        self._last = 0.0
        self._columns = module_columns(stream_only=True)

    def __call__(self, snap: Snapshot, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.period:
            return
        self._last = now
        st = self.stepper.stats()
        msg = encode_state(snap, st.mode, st.rtf, st.speed, st.missed, st.paused,
                           len(st.attached), self._columns, st.late, st.recent_rtf)
        wire = msg.to_wire()
        for sock, frames in ((self.socket, [p.STATE_TOPIC, wire]), (self.latest, [wire])):
            try:
                sock.send_multipart(frames, zmq.NOBLOCK)
            except zmq.ZMQError:
                pass  # no room for slow subscribers: they get the next one

    def register(self, names) -> None:
        """Register both streams at a name server (kind ``pub``)."""
        names.register("/sim/state", self.endpoint, kind="pub")
        names.register("/sim/state1", self.latest_endpoint, kind="pub")

    def close(self) -> None:
        """Close the sockets."""
        self.socket.close(0)
        self.latest.close(0)


def _pub(ctx: zmq.Context, bind: str, advertise: str | None = None,
         configure=None) -> tuple[zmq.Socket, str]:
    """A bound PUB socket (configured first: CurveZMQ) and the endpoint it advertises."""
    sock = ctx.socket(zmq.PUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, 10)
    try:
        if configure is not None:
            configure(sock)
        port = sock.bind_to_random_port(f"tcp://{bind}")
    except zmq.ZMQError:
        sock.close(0)
        raise
    return sock, f"tcp://{advertise or bind}:{port}"
