"""Clocks: the stepper's source of wall time, passed in so tests and benchmarks can swap them."""

from __future__ import annotations

import time

# s: the last stretch of a wait is spun, since sleep() overshoots (~0.1 ms typically here). Kept
# short: the spin holds the GIL, so a robot's reply waits for it (docs/performance.md).
_SPIN = 0.00025


class WallClock:
    """The monotonic wall clock with a precise wait (coarse sleep, then a short spin)."""

    def now(self) -> float:
        """Seconds since an arbitrary fixed point (monotonic)."""
        return time.perf_counter()

    def sleep_until(self, deadline: float) -> None:
        """Return at ``deadline`` (as given by :meth:`now`), to within a few microseconds."""
        remaining = deadline - time.perf_counter()
        if remaining > _SPIN:
            time.sleep(remaining - _SPIN)
        while time.perf_counter() < deadline:
            pass


class ManualClock:
    """A clock that only moves when told to; ``sleep_until`` jumps to the deadline at once."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start

    def now(self) -> float:
        """The current manual time, s."""
        return self.t

    def sleep_until(self, deadline: float) -> None:
        """Advance the clock to ``deadline`` if it lies ahead."""
        self.t = max(self.t, deadline)

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        self.t += seconds
