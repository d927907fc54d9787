"""Who may touch the World: the stepper's thread, and how every other thread gets work to it.

One thread owns the world. While the stepper's loop runs, that is its thread; before the loop
starts (a simulation driven by hand, a run being set up) and after it ends, whoever holds
:attr:`WorldOwner.world_lock`. Any other thread either reads the latest snapshot or hands work
over:

* :meth:`WorldOwner.call` queues ``fn(*args)`` to run on the loop's thread between two steps
  and returns a Future (run at once under the lock when no loop was ever started; refused once a
  started loop has ended);
* :meth:`WorldOwner.run_now` runs it at once when this thread may touch the World (the loop's
  own thread, or any thread while nobody holds the lock), else queues it as :meth:`call` and
  waits for the result. The robot hub (:mod:`coopsim.net.robothub`) uses it for parameter
  changes and actions: it serves from the loop's thread while the loop runs (the hub is the
  loop's :class:`~coopsim.sim.waiter.Waiter`), from its own fallback thread otherwise.

**The hub hand-over.** The waiter is what the loop's thread does while it waits (for a pacing
deadline, for lockstep commands, while paused). The default waits on a condition; the robot hub
installs itself as ``waiter`` and serves the robots' sockets meanwhile. When the loop starts it
takes the waiter first (:meth:`~coopsim.sim.waiter.Waiter.acquire`: the hub's fallback thread
stops serving and the loop's thread serves from then on), then the World; when it ends it gives
the World back, then the waiter (the fallback thread serves again).

**The lock order** (a thread holding a lock further down never waits for one further up):

1. the waiter's serve lock (``RobotHub._lock``): who serves the robots' sockets (the loop's
   thread releases it for a step it lends to the hub's reading thread, and takes it back
   after: ``Waiter.lend``);
2. :attr:`WorldOwner.world_lock`: who touches the World;
3. ``cond`` (the command slots' condition): the queue of calls, the slots, the loop's flags;
4. ``stepped`` (the stepper's): the published snapshot, waiters for a step.

Locks 3 and 4 are held only for a few statements and never while running a queued call.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Callable

from ..model.errors import NotAllowedError
from .waiter import Waiter


class WorldOwner:
    """The call queue and the locks of the thread that owns the World (the stepper's base).

    Args:
        cond: The condition that wakes the loop (shared with the command slots).
    """

    def __init__(self, cond: threading.Condition) -> None:
        self.cond = cond  # wakes the loop: commands, calls and stop
        self.waiter = Waiter(self.cond)  # the network installs one that serves while waiting
        # Held by the loop's thread while it runs, and by calls run in place while it does not:
        # whoever touches the World holds it.
        self.world_lock = threading.RLock()
        self._calls: list[tuple[Callable, tuple, Future]] = []
        self._thread: threading.Thread | None = None
        self._looping = False
        self._closed = False  # a started loop has ended: calls are refused

    @property
    def running(self) -> bool:
        """True while the loop runs (in its own thread or the caller's)."""
        return self._looping

    def call(self, fn: Callable, *args) -> Future:
        """Run ``fn(*args)`` on the stepper thread between two steps; return its Future.

        When the stepper was never started, ``fn`` runs at once in the caller's thread (a
        simulation driven by hand); once a started loop has ended, the call is refused
        (NotAllowedError in the Future).
        """
        future: Future = Future()
        with self.cond:  # under the lock: run() ends its loop under it too, so none is lost
            queued = self.running
            if queued:
                self._calls.append((fn, args, future))
                self.cond.notify_all()
            closed = self._closed
        if queued:
            self.waiter.wake()
        elif closed:
            future.set_exception(NotAllowedError("the simulation has stopped"))
        else:
            with self.world_lock:
                _settle(future, fn, args)
        return future

    def run_now(self, fn: Callable, *args, timeout: float = 5.0):
        """``fn(*args)`` now when this thread may touch the World (the loop's own thread, or
        any thread while the loop holds no lock on it), else queued as :meth:`call`; returns
        its result. The robot hub uses it: it may serve from another thread before the loop
        has taken over."""
        if self.owns_world():
            return fn(*args)
        if self.world_lock.acquire(blocking=False):
            try:
                return fn(*args)
            finally:
                self.world_lock.release()
        return self.call(fn, *args).result(timeout)

    def owns_world(self) -> bool:
        """True on the stepper's own thread while its loop runs (the one thread that may touch
        the World then)."""
        return self.running and self._thread is threading.current_thread()

    def _take_world(self) -> None:
        """The loop starts: the waiter first (the hub hands its serving over), then the World
        (the lock order above)."""
        self.waiter.acquire()
        self.world_lock.acquire()

    def _run_calls(self) -> None:
        if not self._calls:  # the usual (once a loop): a call queued now is run next time
            return
        with self.cond:
            calls, self._calls = self._calls, []
        for fn, args, future in calls:
            _settle(future, fn, args)


def _settle(future: Future, fn: Callable, args: tuple) -> None:
    try:
        future.set_result(fn(*args))
    except Exception as exc:  # noqa: BLE001 -- handed to the caller through the Future
        future.set_exception(exc)
