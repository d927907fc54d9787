"""How the stepper thread waits: on its condition variable, or serving the network while it waits.

Between steps the stepper waits (for the next deadline, for lockstep commands, while paused).
A :class:`Waiter` decides what that waiting does. The default waits on the stepper's condition
variable. The network layer installs one that serves the robots' sockets while waiting
(coopsim.net.robothub), so requests are answered by the thread that owns the world, with no
hand-off between threads.
"""

from __future__ import annotations

import threading
from typing import Callable


class Waiter:
    """The default waiter: the stepper's condition variable.

    Args:
        cond: The condition the stepper's callers notify (queued calls, stop, commands).
    """

    def __init__(self, cond: threading.Condition) -> None:
        self.cond = cond

    def wait(self, timeout: float, predicate: Callable[[], bool]) -> bool:
        """Return when ``predicate()`` holds or ``timeout`` s have passed: whether it holds."""
        with self.cond:
            return bool(self.cond.wait_for(predicate, timeout))

    def poll(self) -> None:
        """Serve whatever is waiting, without waiting (between steps run as fast as possible)."""

    def wake(self) -> None:
        """Make a wait look at its predicate again (any thread)."""
        with self.cond:
            self.cond.notify_all()

    def stepped(self) -> None:
        """A step (or a reset or refresh) was published."""

    def lend(self, last_tick: float) -> bool:
        """The stepper's thread is about to take a step (the previous one took ``last_tick``
        s of CPU time): a waiter that serves may let another thread answer read-only requests from the
        latest snapshot while it runs, and returns True; :meth:`take_back` follows the
        step. The default serves nothing: False."""
        return False

    def take_back(self) -> None:
        """After a step :meth:`lend` returned True for: the stepper's thread serves again (it
        first answers what the other thread left for it)."""

    def acquire(self) -> None:
        """The stepper's loop starts: from now on its thread does the waiting."""

    def release(self) -> None:
        """The stepper's loop ended."""

    @property
    def sleeps(self) -> bool:
        """True when pacing may simply sleep (nothing needs serving meanwhile)."""
        return True
