"""A condition variable that says whether a thread waits on it.

The stepper publishes a step and the hub leaves a command many thousand times a second; most
of the time nobody waits on either (a run nobody watches; the hub serving on the waiting thread
itself), and ``notify_all`` then still costs a Python call and its checks. CPython's
``threading.Condition`` keeps its waiters in a private attribute; this class counts them itself
so that a notifier can skip the call without reading it.
"""

from __future__ import annotations

import threading


class WatchedCondition(threading.Condition):
    """``threading.Condition`` with ``waiting``: how many threads are inside :meth:`wait` (and
    so :meth:`wait_for`), changed and read only under the condition's lock.

    A thread notified but not yet running again still counts, so a notifier may call
    ``notify_all`` once too often; it never skips a thread that waits.
    """

    def __init__(self, lock=None) -> None:
        super().__init__(lock)
        self.waiting = 0

    def wait(self, timeout: float | None = None) -> bool:
        """As ``threading.Condition.wait`` (the lock held on entry and on return)."""
        self.waiting += 1
        try:
            return super().wait(timeout)
        finally:  # Condition.wait takes the lock back before it returns or raises
            self.waiting -= 1
