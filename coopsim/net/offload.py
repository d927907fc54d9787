"""Work the robot hub hands off the stepper thread: the inverse kinematics of ``tool.move_to``
and ``tool.ik`` in real time.

Solved on the stepper thread, one request stalled the run for as long as it took (SciPy took
1.4-10 s for a point out of reach: the real-time factor fell to 0). In real time the hub now
takes what a request needs from the world (an :class:`~coopsim.model.capabilities.Offloaded`
module's ``prepare``, on the stepper thread), queues its ``run`` here, and goes on stepping; a
thread of this pool solves it (the kernel releases the GIL: coopsim.model.ikkernel) and wakes
the hub, which finishes the request (``finish``, on the stepper thread: a ``move_to`` starts its
move from the next step) and sends the reply. One thread still owns the World.

Bounds (docs/protocol.md, *Tool*): at most :data:`SHARE` requests of one connection in flight
(more: error 12 ``busy``, nothing queued), at most :data:`QUEUE` in all, and each solve stops
starting restarts after :data:`SECONDS` of wall time besides its iteration budget. In lockstep
the hub does not offload: the request is solved between two steps with the iteration budget
alone, so its answer is the same bits on every machine.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Hashable

from ..model.commands import BUSY
from ..model.errors import ProtocolError

SHARE = 4  # requests of one connection in flight at once, at most
QUEUE = 64  # requests in flight from every connection together, at most
SECONDS = 0.02  # s of wall time after which a solve begins no further restart


class Offload:
    """A worker thread solving queued jobs in turn, with each connection's share bounded.

    Args:
        wake: Called (on the worker's thread) after each job: wakes the serving thread.
        share: Jobs of one connection in flight, at most.
        queue: Jobs in flight in all, at most.
        seconds: The wall-time cap handed to each job's ``prepare``.
    """

    def __init__(self, wake: Callable[[], None], share: int = SHARE, queue: int = QUEUE,
                 seconds: float = SECONDS) -> None:
        self.wake, self.share, self.queue, self.seconds = wake, share, queue, seconds
        self._cond = threading.Condition()
        self._flight: dict[Hashable, int] = {}  # connection -> its jobs not yet answered
        # one solver thread, started with the first job: jobs are solved in turn
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="coopsim-solver")
        self._closed = False

    def admit(self, key: Hashable) -> None:
        """Count one more job of connection ``key`` in flight.

        Raises:
            ProtocolError: 12 (``busy``) when the connection's share or the queue is full.
        """
        with self._cond:
            mine, total = self._flight.get(key, 0), sum(self._flight.values())
            if mine >= self.share or total >= self.queue:
                held = (f"this connection has {mine} requests in flight (at most {self.share})"
                        if mine >= self.share else
                        f"{total} requests are in flight (at most {self.queue} in all)")
                raise ProtocolError(BUSY, f"busy: {held}; send it again once an answer came")
            self._flight[key] = mine + 1

    def answered(self, key: Hashable) -> None:
        """A job of connection ``key`` was answered (or never queued): it leaves its share."""
        with self._cond:
            left = self._flight.get(key, 0) - 1
            if left > 0:
                self._flight[key] = left
            else:
                self._flight.pop(key, None)

    def submit(self, run: Callable[[], object]) -> Future:
        """Queue ``run()`` (admitted first); its Future holds the result or the exception,
        and the serving thread is woken once it is done."""
        with self._cond:
            if self._closed:
                raise ProtocolError(BUSY, "busy: the server is shutting down")
            future = self._pool.submit(run)
        future.add_done_callback(lambda _: self.wake())
        return future

    def in_flight(self) -> int:
        """Jobs admitted and not yet answered."""
        with self._cond:
            return sum(self._flight.values())

    def close(self) -> None:
        """Stop the worker (jobs still queued are dropped: their replies are never sent)."""
        with self._cond:
            self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
