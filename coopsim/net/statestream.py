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

The per-robot columns are the streamed columns of the modules some robot of the world carries
(protocol 8: ``Snapshot.extra["carried"]`` names those modules; ``columns`` in the state
document names the columns; a 2D swarm of sonar robots streams the 11 sonar distances and no
arm angles or LED colours); the metrics are the rules' per-run ``metrics`` (``metrics`` in the
state document names them: ``monitors.distance``...). Names and shapes are not repeated every
step: when ``layout_version`` changes (and with it, maybe, the columns), a subscriber asks
``/sim`` (command 23, state) for the layout. The message is built from the snapshot's arrays
with one copy per block and per module, and packed by numpy (:func:`pack_message`), with no
loop over robots. Publishing is rate-limited in wall time (default 30 Hz) so a fast lockstep
run does not flood slow subscribers; 0 publishes every step. The sockets are XPUB (PUB to a
subscriber, which sees no difference): subscriptions arrive as messages, so a run nobody
subscribes to builds no message at all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import msgpack
import numpy as np
import zmq

from ..model.plugins import CARRIED, snapshot_columns
from ..model.snapshot import Snapshot, rule_metrics, wrapped_poses
from . import ports
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
        column_names: The names of ``columns``' columns, from the state document of the
            frame's ``layout_version`` (protocol 8: they change with the layout), when the
            reader knows them (the Python client's ``subscribe_state`` fills them in); else
            None.
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
    column_names: tuple[str, ...] | None = None

    def column(self, name: str) -> np.ndarray:
        """(n_robots,) the values of the column ``name`` (NaN for a robot without its module).

        Raises:
            KeyError: the frame's column names are unknown, or the stream carries no such
                column in this layout (a world none of whose robots carries its module).
        """
        if self.column_names is None or name not in self.column_names:
            raise KeyError(f"no column {name!r} in this frame (layout {self.layout_version}: "
                           f"{', '.join(self.column_names or ()) or 'none known'})")
        return self.columns[:, self.column_names.index(name)]


#: Values per robot in the 3D block: z, qw, qx, qy, qz (x and y are the planar pose's).
POSE3D_WIDTH = 5


@dataclass(frozen=True)
class StreamColumns:
    """The per-robot columns of one world's stream, laid out once per layout.

    Attributes:
        names: The columns' names, in stream order (``/sim state`` ``columns``).
        groups: (module label, source table ``reading``/``command``, the fields it takes
            (an int array), first column, end column) per module: one copy per module a step.
    """

    names: tuple[str, ...]
    groups: tuple[tuple[str, str, np.ndarray, int, int], ...]

    @classmethod
    def of(cls, columns) -> "StreamColumns":
        """The layout of ``columns``: (module label, Column) pairs, as
        :func:`~coopsim.model.plugins.stream_columns` gives them."""
        groups: list = []
        for k, (label, col) in enumerate(columns):
            if groups and groups[-1][:2] == (label, col.source):
                groups[-1][2].append(col.field)
            else:
                groups.append((label, col.source, [col.field], k))
        return cls(tuple(c.name for _, c in columns),
                   tuple((label, source, np.array(fields, dtype=np.intp), k, k + len(fields))
                         for label, source, fields, k in groups))

    def fill(self, out: np.ndarray, snap: Snapshot) -> None:
        """Write every robot's columns of ``snap`` into ``out`` ((N, C), NaN where a robot
        lacks the module, or the snapshot the module's table)."""
        out[:] = np.nan
        n = len(out)
        for label, source, fields, a, b in self.groups:
            table = (snap.readings if source == "reading" else snap.commands).get(label)
            if table is not None and table.shape[0] == n and table.ndim == 2:
                ok = fields < table.shape[1]
                out[:, a:b][:, ok] = table[:, fields[ok]]


def _columns(columns, snap: Snapshot) -> StreamColumns:
    if isinstance(columns, StreamColumns):
        return columns
    return StreamColumns.of(snapshot_columns(snap) if columns is None else columns)


def state_arrays(snap: Snapshot, mode: str, rtf: float, speed: float, missed: int,
                 paused: bool, attached: int, columns=None, late: float = 0.0,
                 recent_rtf: float = 0.0) -> tuple[tuple[int, ...], np.ndarray]:
    """The state message's params and its data as one float64 array, built with one copy per
    block (no loop over robots). ``columns``: a :class:`StreamColumns`, (label, Column) pairs,
    or None for the columns of the modules the snapshot's world carries (protocol 8)."""
    plan = _columns(columns, snap)
    n, m, k, c = len(snap.robots), len(snap.objects), len(snap.parts), len(plan.names)
    metrics = [v for _, v in rule_metrics(snap.rules)]
    block = _pose3d_block(snap.pose3d, n)
    objects3d = getattr(snap, "object_pose3d", None) if snap.pose3d is not None else None
    oblock = _pose3d_block(objects3d, m)
    params = (snap.step, snap.layout_version, n, m, k, missed, int(paused), attached, c,
              len(metrics) + len(oblock) + len(block), round(late * 1000),
              round(min(recent_rtf, 1e9) * 1000))
    if snap.pose3d is not None:
        params += (POSE3D_WIDTH,) if objects3d is None else (POSE3D_WIDTH, POSE3D_WIDTH)
    cut = np.cumsum([3, 3 * n, 3 * m, 3 * k, c * n, len(metrics), len(oblock), len(block)])
    data = np.empty(cut[-1])
    data[:3] = (snap.time, rtf, speed)
    for (a, b), poses in zip(zip(cut[:3], cut[1:4]),
                             (snap.poses, snap.object_poses, snap.part_poses)):
        data[a:b] = wrapped_poses(poses).ravel()
    plan.fill(data[cut[3]:cut[4]].reshape(n, c), snap)
    data[cut[4]:cut[5]], data[cut[5]:cut[6]], data[cut[6]:] = metrics, oblock, block
    return params, data


def encode_state(snap: Snapshot, mode: str, rtf: float, speed: float, missed: int,
                 paused: bool, attached: int, columns=None, late: float = 0.0,
                 recent_rtf: float = 0.0) -> Message:
    """Pack a snapshot into the stream's message (``columns``: see :func:`state_arrays`;
    ``late`` and ``recent_rtf``: see :class:`StateFrame`). A snapshot with ``pose3d`` adds the
    3D block and its 13th param; one without is protocol 4's message."""
    params, data = state_arrays(snap, mode, rtf, speed, missed, paused, attached, columns,
                                late, recent_rtf)
    return Message(0, mode, 1, params, tuple(data.tolist()))


def pack_message(error: int, text: str, command: int, params, data: np.ndarray) -> bytes:
    """``Message(error, text, command, params, data).to_wire()``, byte for byte, with the
    data packed by numpy: msgpack's float64 is the byte 0xcb and 8 big-endian bytes."""
    head = bytearray(msgpack.packb([error, text, command, list(params)], use_bin_type=True))
    head[0] = 0x95  # the five-item array (packb wrote four)
    size = len(data)
    if size < 16:
        head.append(0x90 | size)
    else:
        head += (b"\xdc" + size.to_bytes(2, "big") if size < 65536
                 else b"\xdd" + size.to_bytes(4, "big"))
    body = np.empty((size, 9), dtype=np.uint8)
    body[:, 0] = 0xCB
    body[:, 1:] = np.asarray(data, dtype=">f8").reshape(size, 1).view(np.uint8)
    return bytes(head) + body.tobytes()


def pack_state(snap: Snapshot, mode: str, rtf: float, speed: float, missed: int,
               paused: bool, attached: int, columns=None, late: float = 0.0,
               recent_rtf: float = 0.0) -> bytes:
    """:func:`encode_state`'s message on the wire (``to_wire()``'s bytes), packed by numpy."""
    params, data = state_arrays(snap, mode, rtf, speed, missed, paused, attached, columns,
                                late, recent_rtf)
    return pack_message(0, mode, 1, params, data)


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


def decode_wire(frame: bytes) -> StateFrame:
    """:func:`decode_state` of a state message's bytes (no size limit), its data read by
    numpy when every value is a msgpack float64 (as servers send them), else through
    :meth:`Message.from_wire`.

    Raises:
        ValueError: the counts do not add up. BadMessage: no five-item message.
    """
    unpacker = msgpack.Unpacker(raw=False, max_buffer_size=max(len(frame), 1 << 20))
    unpacker.feed(frame)
    try:
        if unpacker.read_array_header() == 5:
            head = [unpacker.unpack() for _ in range(4)]
            size = unpacker.read_array_header()
            start = unpacker.tell()
            body = np.frombuffer(frame, dtype=np.uint8, offset=start)
            if _is_head(head) and len(body) == 9 * size and (body[::9] == 0xCB).all():
                data = body.reshape(size, 9)[:, 1:].copy().view(">f8").ravel()
                return decode_state(Message(head[0], head[1], head[2], tuple(head[3]),
                                            data.astype(float)))
    except (ValueError, msgpack.UnpackException):
        pass  # not what a server sends: the generic path says what is wrong
    return decode_state(Message.from_wire(frame, max_bytes=None))


def _is_head(head: list) -> bool:
    """Whether error, text, command and params are typed as a message's must be."""
    error, text, command, params = head
    ints = [error, command, *params] if isinstance(params, list) else None
    return isinstance(text, str) and ints is not None and all(
        type(v) is int for v in ints)


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
        except BaseException:  # a bind refused, or no port left in --ports
            self.socket.close(0)  # an open socket would make ctx.term() hang
            raise
        self.stepper = stepper
        self.period = 1.0 / rate if rate > 0 else 0.0
        self._last = 0.0
        self._plan: tuple = (None, None)  # (the modules carried, their StreamColumns)
        self._topics: dict = {self.socket: set(), self.latest: set()}  # subscribed, per socket

    def columns(self, snap: Snapshot) -> StreamColumns:
        """The columns the stream carries with ``snap``: those of the modules its world's
        robots carry (protocol 8), laid out again only when they change."""
        carried = snap.extra.get(CARRIED)
        if self._plan[0] != carried or self._plan[1] is None:
            self._plan = (carried, StreamColumns.of(snapshot_columns(snap)))
        return self._plan[1]

    def __call__(self, snap: Snapshot, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.period:
            return
        self._last = now
        if not self.listened():
            return  # nobody subscribes: no message is built
        st = self.stepper.stats()
        wire = pack_state(snap, st.mode, st.rtf, st.speed, st.missed, st.paused,
                          len(st.attached), self.columns(snap), st.late, st.recent_rtf)
        for sock, frames in ((self.socket, [p.STATE_TOPIC, wire]), (self.latest, [wire])):
            try:
                sock.send_multipart(frames, zmq.NOBLOCK)
            except zmq.ZMQError:
                pass  # no room for slow subscribers: they get the next one

    def listened(self) -> bool:
        """Whether anyone subscribes to either stream now. An XPUB socket hands up the
        first subscription to a topic (``1`` + topic) and, when its last subscriber leaves
        or its connection closes, the unsubscription (``0`` + topic): read here, without
        waiting."""
        for sock, topics in self._topics.items():
            while sock.getsockopt(zmq.EVENTS) & zmq.POLLIN:
                try:
                    note = sock.recv(zmq.NOBLOCK)
                except zmq.ZMQError:
                    break
                if note[:1] == b"\x01":
                    topics.add(note[1:])
                elif note[:1] == b"\x00":
                    topics.discard(note[1:])
        return any(self._topics.values())

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
    """A bound XPUB socket (configured first: CurveZMQ) and the endpoint it advertises: a
    PUB that also says who subscribes (:meth:`StatePublisher.listened`)."""
    sock = ctx.socket(zmq.XPUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, 10)
    try:
        if configure is not None:
            configure(sock)
        port = ports.bind_any(sock, bind, "a state stream")
    except BaseException:  # a bind refused, or no port left in --ports
        sock.close(0)
        raise
    return sock, f"tcp://{advertise or bind}:{port}"
