"""The stepper's pacing: when the next step is due in wall time, and what it reports of it.

:class:`Pacer` keeps the real-time schedule. Step k is due at t0 + k * dt / speed of wall time.
The stepper waits t_w = t_d - t_n (SwarmSimX) with a precise wait; when t_w < 0 it steps at once
and counts a missed deadline. A step late by more than a whole period re-anchors the schedule
instead of bursting to catch up, so a slow machine runs slower than real time and says so.
speed 0 = as fast as possible. It also counts the run's wall time (running, not paused) for the
real-time factor. :class:`RecentSteps` keeps the steps that tell whether real time is holding
(SwarmSimX warns when a step misses its deadline; coopsim says so when misses become a trend),
and :class:`Stats` is what the stepper reports.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable

from ..model.snapshot import RT_BREAK, realtime_broken  # noqa: F401 -- RT_BREAK: its old home

PACE_SLICE = 0.05  # s: longest pacing wait before queued calls and stop are looked at

# Real time is *broken* (model.snapshot.realtime_broken, the one definition the CLI, /sim state
# and the viewer share) when more than RT_BREAK of the realtime steps paced over the last
# RT_WINDOW seconds missed their deadline (SwarmSimX warns on every miss; one late step in twenty
# is a trend, not a hiccup) and those steps fell behind the speed asked.
RT_WINDOW = 1.0  # s of wall time the share and the recent real-time factor are taken over
#: Fewer steps than this in the run so far, within its first :data:`RT_WINDOW`, make no share:
#: one late start-up step among a handful is not a trend.
RT_MIN_STEPS = 20


@dataclass(frozen=True)
class Stats:
    """How a run is going. wall and rtf count only time spent running (not paused), since the
    start or the last reset; finished says why the run ended ("" while it goes on); waiting
    names the lockstep controllers a step has waited for longer than :data:`STALL` (or says how
    many are still to attach before the first step), stalled for how long, s. late is the share
    of the realtime steps of the last :data:`RT_WINDOW` s that missed their deadline and
    recent_rtf the real-time factor over them (both 0 without such steps)."""

    steps: int
    time: float
    wall: float
    rtf: float
    missed: int
    mode: str
    speed: float
    paused: bool
    attached: tuple[str, ...]
    finished: str = ""
    waiting: tuple[str, ...] = ()
    stalled: float = 0.0
    late: float = 0.0
    recent_rtf: float = 0.0

    @property
    def rt_broken(self) -> bool:
        """True when more than ``RT_BREAK`` of the realtime steps of the last
        :data:`RT_WINDOW` s missed their deadline (``late``) and they fell behind the speed
        asked (``recent_rtf``: sim s per wall s over those steps; see
        :func:`~coopsim.model.snapshot.realtime_broken`)."""
        return realtime_broken(self.late, self.recent_rtf, self.speed)


class RecentSteps:
    """The realtime steps of the last :data:`RT_WINDOW` s of wall time: when each was taken,
    the sim time it started from and whether it was late. The stepper thread notes; any thread
    asks for the figures."""

    def __init__(self) -> None:
        self._steps: deque = deque()  # (wall s, sim time s, late)
        self._first: float | None = None  # wall s of the first step noted since a clear
        self._lock = threading.Lock()

    def note(self, wall: float, time: float, late: bool) -> None:
        """Remember a paced step (wall and sim time, s), forgetting those out of the window."""
        with self._lock:
            self._first = wall if self._first is None else self._first
            self._steps.append((wall, time, late))
            while self._steps[0][0] < wall - RT_WINDOW:
                self._steps.popleft()

    def clear(self) -> None:
        """Forget every step (a reset)."""
        with self._lock:
            self._steps.clear()
            self._first = None

    def figures(self, now: float) -> tuple[float, float]:
        """(share of late steps, real-time factor: sim s per wall s) over the steps of the
        window ending at ``now`` (wall, s); (0, 0) without any. The share stays 0 until a whole
        window has passed since the first step or :data:`RT_MIN_STEPS` steps were taken: a late
        first step or two (start-up, the compiled kernels loading) among a handful is not a
        trend."""
        with self._lock:
            recent = [r for r in self._steps if r[0] >= now - RT_WINDOW]
            settled = self._first is not None and (now - self._first >= RT_WINDOW
                                                   or len(self._steps) >= RT_MIN_STEPS)
        if not recent:
            return 0.0, 0.0
        late = sum(r[2] for r in recent) / len(recent) if settled else 0.0
        span = recent[-1][0] - recent[0][0]
        return late, ((recent[-1][1] - recent[0][1]) / span if span > 0 else 0.0)


class Pacer:
    """The real-time schedule of one stepper, and its wall time (the stepper thread's).

    Args:
        clock: Wall clock (``now``).

    Attributes:
        missed: Realtime steps taken after their deadline since the start or the last reset.
        recent: The realtime steps of the last :data:`RT_WINDOW` s.
    """

    def __init__(self, clock) -> None:
        self.clock = clock
        self.missed = 0
        self.recent = RecentSteps()
        self._deadline = 0.0  # wall s the latest step was due at
        self._wall = 0.0  # wall s run before the current mark
        self._mark: float | None = None  # wall s the current stretch of running started

    @property
    def anchored(self) -> bool:
        """True while wall time is being counted (running, not paused)."""
        return self._mark is not None

    def reanchor(self, counting: bool) -> None:
        """Start the schedule over from now (mode, speed or dt changed, resumed); start
        counting wall time if ``counting`` (running, not paused) and not counting yet."""
        now = self.clock.now()
        self._deadline = now
        if self._mark is None and counting:
            self._mark = now

    def pause_wall(self) -> None:
        """Stop counting wall time (paused, finished, loop ended)."""
        if self._mark is not None:
            self._wall += self.clock.now() - self._mark
            self._mark = None

    def restart(self) -> None:
        """A reset: no step missed, no wall time, no recent step."""
        self.missed = 0
        self._wall = 0.0  # the real-time factor restarts with the sim time
        self._mark = None
        self.recent.clear()

    def wall(self) -> float:
        """Wall time spent running since the start or the last reset, s."""
        return self._wall + (self.clock.now() - self._mark if self._mark is not None else 0.0)

    def pace(self, period: float, sim_time: float, sleep_until: Callable[[float], None],
             count_missed: bool = True) -> bool:
        """Wait for the next step's deadline, ``period`` s of wall time after the last one;
        True when the step should be taken now, False after a slice of a longer wait (calls
        and stop are looked at in between). ``sim_time``: the time the step starts from, s;
        ``count_missed``: a late step counts as missed (realtime; lockstep with a speed does
        not count)."""
        due = self._deadline + period
        now = self.clock.now()
        if due - now > PACE_SLICE:  # slow motion: wait in slices so calls and stop get through
            sleep_until(now + PACE_SLICE)
            return False
        self._deadline = due
        if count_missed:
            self.recent.note(max(now, due), sim_time, due < now)
        if due >= now:
            sleep_until(due)
        else:
            self.missed += count_missed
            if now - due > period:
                self._deadline = self.clock.now()
        return True
