"""Image reads (``camera3d`` ``read``): rendered beside the world, within budgets.

Why: a read rendered on the stepper's thread held the world for as long as the render process
took (four clients reading as fast as they could ran the world far below real time), and an
image's size is the client's to choose (four 4096 x 4096 RGB-D reads took 1.4 GB and the run's
real-time factor to 0). So:

* **Beside the world.** In real time, while the stepper's loop runs, the stepper only queues a
  read's render (the view and the state now: a few microseconds) and goes on stepping; the run's
  render process renders it on another core, and the hub answers it (noise, encoding) once the
  pixels are back (:meth:`ImageReads.flush`, on the stepper's thread between two steps). One
  read renders at a time (:data:`RENDERING`), the others wait their turn in the hub; a read is
  served, and its image shows the world, at the step its turn comes. In lockstep, and while
  no loop runs, a read still renders at once (lockstep waits for its controllers anyway).
* **Within budgets** (error 18 ``over budget``, docs/protocol.md): one read's pixels at most
  :data:`READ_BYTES` (3 bytes a pixel for rgb, 4 for depth, 7 for rgbd: the rendered buffers);
  one connection's reads in flight at most :data:`CLIENT_BYTES`, everyone's at most
  :data:`TOTAL_BYTES`. Nothing is queued for a refused read.
* **Memory given back.** After a read larger than :data:`KEEP_BYTES` the render process's shared
  memory is released once nothing is in flight (``Engine.render_trim``): a huge read's megabytes
  are not kept for the next one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Hashable

import zmq

from ..model.commands import OVER_BUDGET
from ..model.errors import ProtocolError, SimulationError
from ..model.images import KEEP_BYTES
from .protocol import Message
from .server import reply_errors

READ_BYTES = 64 << 20  # bytes of one read's pixels (4096 x 4096 rgb fits, rgbd does not)
CLIENT_BYTES = 64 << 20  # bytes of one connection's reads in flight
TOTAL_BYTES = 128 << 20  # bytes of every connection's reads in flight together


#: Reads rendering in the render process at once. Why one: the process renders in turn, and a
#: published camera's image, taken one period after it was queued, waits behind every read
#: queued before it; with one, it waits for one read at most, however many clients read.
RENDERING = 1


@dataclass
class Rendering:
    """A read admitted: served (its render queued) by :meth:`ImageReads.flush` when no other
    read renders, answered once ``job.ready()``.

    Attributes:
        msg: The request. start: ``start()`` -> the module's render job (``ready()``,
            ``finish()`` -> (text, params, data, *frames)), called on the thread that owns
            the World: the image shows the step it is called at. key: The connection it
            counts against. size: Its bytes (the budgets). slot: Its render slot (a small
            integer, reused). job: The job once started, else None.
    """

    msg: Message
    start: Callable[[], object]
    key: Hashable
    size: int
    slot: int
    job: object = None


class ImageReads:
    """The reads in flight of one robot hub and their budgets (the stepper's thread; the
    counts are guarded for :meth:`admit` from a port).

    Args:
        read_bytes, client_bytes, total_bytes: The budgets (bytes; see the module's).
    """

    def __init__(self, read_bytes: int = READ_BYTES, client_bytes: int = CLIENT_BYTES,
                 total_bytes: int = TOTAL_BYTES) -> None:
        self.read_bytes, self.client_bytes, self.total_bytes = \
            read_bytes, client_bytes, total_bytes
        self.pending: list[tuple[list, object, Rendering]] = []  # (envelope, port, rendering)
        self.refused = 0  # reads answered 18
        self._lock = threading.Lock()
        self._flight: dict[Hashable, int] = {}  # connection -> bytes in flight
        self._slots: set[int] = set()
        self._large = False  # a read over KEEP_BYTES since the memory was last released
        self._fd: int | None = None  # the render process's socket while a poller watches it

    def check(self, size: int, what: str) -> None:
        """Error 18 when one read of ``size`` bytes is over the per-read budget."""
        if size > self.read_bytes:
            self.refused += 1
            raise ProtocolError(OVER_BUDGET, f"over budget: {what} is {size} bytes of pixels, "
                                             f"a read may take at most {self.read_bytes}: "
                                             "read a smaller image (width, height) or fewer "
                                             "channels")

    def admit(self, key: Hashable, size: int) -> int:
        """Count a read of ``size`` bytes from connection ``key`` in flight; its render slot.

        Raises:
            ProtocolError: 18 when the connection's or everyone's budget would be exceeded.
        """
        with self._lock:
            mine, total = self._flight.get(key, 0), sum(self._flight.values())
            if mine + size > self.client_bytes or total + size > self.total_bytes:
                self.refused += 1
                held = (f"this connection has {mine} bytes of images in flight (at most "
                        f"{self.client_bytes})" if mine + size > self.client_bytes else
                        f"{total} bytes of images are in flight (at most {self.total_bytes} "
                        "in all)")
                raise ProtocolError(OVER_BUDGET, f"over budget: {held}, this read is {size}; "
                                                 "send it again once an answer came")
            self._flight[key] = mine + size
            slot = next(i for i in range(len(self._slots) + 1) if i not in self._slots)
            self._slots.add(slot)
            self._large = self._large or size > KEEP_BYTES
            return slot

    def answered(self, key: Hashable, size: int, slot: int) -> None:
        """A read admitted with :meth:`admit` was answered (or never queued)."""
        with self._lock:
            left = self._flight.get(key, 0) - size
            if left > 0:
                self._flight[key] = left
            else:
                self._flight.pop(key, None)
            self._slots.discard(slot)

    def watch(self, poller, ms: int, engine) -> int:
        """While reads render, have ``poller`` (the serving thread's) watch the render
        process's socket too, so their images wake it (no polling every millisecond); the
        poll's ms, capped at 50 meanwhile. ``engine``: the World's engine (falsy: not the
        thread that owns the World)."""
        fd = engine.render_fd() if self.pending and engine else None
        if fd != self._fd:
            if self._fd is not None:
                poller.unregister(self._fd)
            if fd is not None:
                poller.register(fd, zmq.POLLIN)
            self._fd = fd
        return min(ms, 50) if self.pending else ms

    def rendered(self, size: int) -> None:
        """An image of ``size`` bytes was rendered at once (lockstep, or no loop running):
        its render memory is given back by the next :meth:`flush` as a later read's is."""
        self._large = self._large or size > KEEP_BYTES

    @property
    def watching(self) -> bool:
        """Whether :meth:`watch` has something to do (reads rendering, or a socket watched)."""
        return bool(self.pending) or self._fd is not None

    @property
    def busy(self) -> bool:
        """Whether :meth:`flush` has something to do (reads to answer, memory to release)."""
        return bool(self.pending) or self._large

    def in_flight(self) -> int:
        """Bytes of reads admitted and not yet answered."""
        with self._lock:
            return sum(self._flight.values())

    def flush(self, send: Callable[[list, Message], None], engine) -> None:
        """Answer the reads whose images are back and start the next ones (the thread that
        owns the World); release the render memory once a large read's is no longer
        needed."""
        keep, rendering = [], 0
        for item in self.pending:
            envelope, port, read = item
            if read.job is None and rendering < RENDERING:
                reply = reply_errors(port.name, read.msg, lambda r=read: _started(r))
                if reply is not None:  # it could not start: answered now
                    self._send(send, envelope, port, read, reply)
                    continue
            if read.job is None or not _ready(read):
                rendering += read.job is not None
                keep.append(item)
                continue
            reply = reply_errors(port.name, read.msg, lambda r=read: r.msg.reply(
                *_fields(r.job.finish())))
            self._send(send, envelope, port, read, reply)
        self.pending = keep  # (in order: a read answered frees its turn for those after it)
        if self._large and not self.pending and engine is not None:
            try:
                self._large = not engine.render_trim(KEEP_BYTES)  # False: a camera renders
            except SimulationError:  # the render process died: its memory went with it
                self._large = False

    def _send(self, send, envelope: list, port, read: Rendering, reply: Message) -> None:
        self.answered(read.key, read.size, read.slot)
        if reply.error:
            port.note_error(reply)
        send(envelope, reply)

    def settle(self, send: Callable[[list, Message], None]) -> None:
        """Answer every read admitted, waiting for its image (the stepper's loop ends: no
        later flush would answer them; the thread that owns the World)."""
        pending, self.pending = self.pending, []
        for envelope, port, read in pending:
            reply = reply_errors(port.name, read.msg, lambda r=read: _settled(r))
            self._send(send, envelope, port, read, reply)


def _started(read: Rendering) -> None:
    """Start ``read``'s render (None: started; an exception: it could not)."""
    read.job = read.start()


def _settled(read: Rendering) -> Message:
    """``read``'s reply, started and waited for now."""
    if read.job is None:
        _started(read)
    return read.msg.reply(*_fields(read.job.finish()))


def _ready(rendering: Rendering) -> bool:
    """Whether a rendering's images are back (or its render process died: then it is
    answered with the error now)."""
    try:
        return rendering.job.ready()
    except SimulationError:
        return True


def _fields(result: tuple) -> tuple:
    text, params, data, *frames = result
    return text, params, data, frames
