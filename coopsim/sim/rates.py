"""Sensor update rates: which robots' readings are due this step, and when each was taken.

Every sensor module declares a ``rate`` parameter (Hz; 0 = every step). A robot whose rate is
``r`` measures every ``k = max(1, round(1 / (r * dt)))`` steps and holds its reading in between
(Gazebo's and Webots' per-sensor update rates). The robots carrying a module are staggered: the
i-th of them (in robot order) measures at the steps where ``(step + i) % k == 0``, so a swarm's
5 Hz lidars at dt 0.02 (k = 10) fire a tenth of them each step instead of all in one. A robot
that has never measured (a new run, an inserted robot) measures at once.

The step (and time) each reading was taken is kept per module and robot and published on the
simulation's board as ``taken`` (:class:`Taken`): only modules with some rate above 0 appear,
so runs without rates publish nothing new.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

import numpy as np


@dataclass(frozen=True)
class Taken:
    """When the held readings were taken (immutable: it travels in snapshots).

    Attributes:
        steps: Module label -> (N,) read-only step of each robot's reading (robot order of the
            snapshot; -1 for never, NaN-free).
        times: Module label -> (N,) read-only simulated time of each, s.
    """

    steps: Mapping[str, np.ndarray]
    times: Mapping[str, np.ndarray]


def period(rate: np.ndarray, dt: float) -> np.ndarray:
    """Steps between two measurements for rates ``rate`` (Hz, 0 = every step) at step ``dt``."""
    with np.errstate(divide="ignore"):
        k = np.where(rate > 0, np.round(1.0 / (np.maximum(rate, 1e-300) * dt)), 1.0)
    return np.maximum(k, 1.0).astype(np.int64)


class Rates:
    """Keeps, per module, the step and time every robot's reading was taken."""

    def __init__(self) -> None:
        self.steps: dict[str, np.ndarray] = {}
        self.times: dict[str, np.ndarray] = {}
        self._names: tuple[str, ...] = ()
        self._periods: dict[str, tuple] = {}  # label -> (rate array, dt, periods, uniform k)
        self._fresh: set[str] = set()  # labels some robot of which may never have measured

    def remap(self, names: tuple[str, ...]) -> None:
        """Lay the records out for the robots ``names`` (kept by name over a layout change)."""
        if names == self._names:
            return
        old = {n: i for i, n in enumerate(self._names)}
        keep = np.array([old.get(n, -1) for n in names], dtype=np.int64)
        for label in list(self.steps):
            steps, times = np.full(len(names), -1, np.int64), np.zeros(len(names))
            have = keep >= 0
            steps[have], times[have] = self.steps[label][keep[have]], self.times[label][keep[have]]
            self.steps[label], self.times[label] = steps, times
        self._fresh.update(self.steps)
        self._names = names

    def due(self, label: str, values: Mapping, rows: np.ndarray, step: int,
            dt: float) -> np.ndarray | slice | None:
        """Which of ``rows`` measure ``label`` this step: None when all of them do (no
        ``rate``, or every rate 0: the usual case costs nothing), else a mask over ``rows``
        or, when they share one period k and all have measured before, the slice of every
        k-th from ``(-step) % k`` on (the same robots as the mask, found without looking at
        the others: a swarm's 10 Hz sonars cost nothing per robot not due)."""
        rate = values.get("rate")
        zero = getattr(values, "zero", ())
        if rate is None or "rate" in zero or not rate.any():
            return None
        k, uniform = self._period(label, rate, dt)
        steps = self.steps.get(label)
        if steps is None:
            steps = self.steps[label] = np.full(len(self._names), -1, np.int64)
            self.times[label] = np.zeros(len(self._names))
            self._fresh.add(label)
        if uniform and label not in self._fresh:
            return slice((-step) % uniform, None, uniform)
        mask = ((step + np.arange(len(rows))) % k == 0) | (steps[rows] < 0)
        self._fresh.discard(label)  # every robot that never measured does now (mark)
        return mask

    def _period(self, label: str, rate: np.ndarray, dt: float) -> tuple[np.ndarray, int]:
        """(periods of ``rate`` at ``dt``, their common value or 0), kept while the parameter
        arrays (rebuilt on every change, never written) and dt stay."""
        kept = self._periods.get(label)
        if kept is None or kept[0] is not rate or kept[1] != dt:
            k = period(rate, dt)
            uniform = int(k[0]) if len(k) and (k == k[0]).all() else 0
            kept = self._periods[label] = (rate, dt, k, uniform)
        return kept[2], kept[3]

    def mark(self, label: str, rows: np.ndarray, step: int, time: float) -> None:
        """Note that robots ``rows`` measured ``label`` at ``step`` (``time`` s)."""
        if label in self.steps:
            self.steps[label][rows] = step
            self.times[label][rows] = time

    def published(self) -> Taken | None:
        """A frozen copy for the board, or None when no module has a rate."""
        if not self.steps:
            return None
        steps, times = {}, {}
        for label in self.steps:
            steps[label], times[label] = self.steps[label].copy(), self.times[label].copy()
            steps[label].flags.writeable = times[label].flags.writeable = False
        return Taken(MappingProxyType(steps), MappingProxyType(times))
