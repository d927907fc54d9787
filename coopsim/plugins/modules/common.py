"""Parameter declarations and helpers several built-in modules share."""

from __future__ import annotations

import numpy as np

from ...model.params import ParamSpec
from ...model.snapshot import wrap_angle

try:  # the ufunc np.clip ends in for float bounds: the same values without its Python wrapper
    from numpy._core.umath import clip  # numpy >= 2
except ImportError:  # pragma: no cover -- numpy 1.x
    from numpy.core.umath import clip  # noqa: F401

_NOISE = "std of Gaussian noise added to each value"
_LOST = "chance that a step's reading is lost and the previous one is kept"


def noise(unit: str, hi: float) -> ParamSpec:
    """The ``noise`` parameter (std of additive Gaussian noise, in ``unit``)."""
    return ParamSpec("noise", "float", f"{_NOISE}, {unit}", 0.0, 0.0, hi, unit)


def lost() -> ParamSpec:
    """The ``lost`` parameter (% of steps whose reading is dropped)."""
    return ParamSpec("lost", "float", f"{_LOST}, %", 0.0, 0.0, 100.0, "%")


def rate() -> ParamSpec:
    """The ``rate`` parameter every sensor module has (coopsim.sim.rates): updates per second,
    Hz; 0 = every step. A reading is held between updates; robots are staggered."""
    return ParamSpec("rate", "float", "updates per second (0: every step); the reading is held "
                     "in between", 0.0, 0.0, 10000.0, "Hz")


def wrap(angle: np.ndarray) -> np.ndarray:
    """Angles wrapped to (-pi, pi], rad (the one convention: coopsim.model.snapshot)."""
    return wrap_angle(angle)


def taken_since(snap, label: str, names, after: int) -> tuple[list[str], list[int]]:
    """Of robots ``names`` (those holding a reading of module ``label``), the ones whose
    reading was taken after step ``after``, and the step each was taken at (the snapshot's
    ``taken`` board, coopsim.sim.rates; without it every reading is this step's). What a
    module updating at its own rate records (``Recordable.record``)."""
    taken = snap.extra.get("taken")
    steps = taken.steps.get(label) if taken is not None else None
    out, when = [], []
    for name in names:
        row = snap.index.get(name)
        step = snap.step if steps is None or row is None else int(steps[row])
        if step > after:
            out.append(name)
            when.append(step)
    return out, when


class ByName:
    """Per-robot state a module keeps on the run's board between steps (a sensor's bias, the
    last velocity it saw), as arrays addressed by robot name: robots come and go with the
    layout, rows move, names stay. ``defaults`` names each array and its value for a robot not
    seen before (a 1-D row, or a scalar).

    The old way, kept working for modules written before: a module now declares
    ``state_fields`` and reads ``frame.state(label)`` (coopsim.model.kernel), tables by row
    that the simulation lays out by name only when the layout changes, with no gather or
    scatter a step."""

    def __init__(self, **defaults) -> None:
        self.defaults = {k: np.asarray(v, dtype=float) for k, v in defaults.items()}
        self.index: dict[str, int] = {}
        self.arrays = {k: np.zeros((0, *v.shape)) for k, v in self.defaults.items()}
        self._where: tuple = (None, -1, None)  # names object, robots known, their places

    def _places(self, names) -> np.ndarray:
        """Where ``names`` sit in the arrays (-1: not seen); the same names object as last time
        (a frame's, every step until the layout changes) is not looked up by name again."""
        last, known, where = self._where
        if names is not last or known != len(self.index):
            where = np.array([self.index.get(n, -1) for n in names], dtype=np.int64)
            self._where = (names, len(self.index), where)
        return where

    def get(self, names) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """(name -> (len(names), ...) copies, (len(names),) True where the robot was seen)."""
        where = self._places(names)
        seen = where >= 0
        if seen.all():  # every robot known (every step but the first): one gather each
            return {k: self.arrays[k][where] for k in self.defaults}, seen
        out = {}
        for k, default in self.defaults.items():
            a = np.broadcast_to(default, (len(names), *default.shape)).copy()
            a[seen] = self.arrays[k][where[seen]]
            out[k] = a
        return out, seen

    def put(self, names, values: dict[str, np.ndarray]) -> None:
        """Store ``values`` (name -> (len(names), ...)) for robots ``names``."""
        where = self._places(names)
        new = [n for n, w in zip(names, where) if w < 0] if (where < 0).any() else []
        if new:
            for n in new:
                self.index[n] = len(self.index)
            for k, default in self.defaults.items():
                grown = np.broadcast_to(default, (len(new), *default.shape))
                self.arrays[k] = np.concatenate((self.arrays[k], grown))
        where = self._places(names)
        for k, v in values.items():
            self.arrays[k][where] = v

    def restart(self, names) -> None:
        """Robots ``names`` start over from the defaults, as if never seen (a robot the
        simulation put back after it diverged: coopsim.sim.health)."""
        for name in names:
            k = self.index.get(name)
            if k is not None:
                for key, default in self.defaults.items():
                    self.arrays[key][k] = default


def row_names(frame, rows) -> tuple:
    """The network names of robots ``rows`` (their rows when the frame has no names)."""
    names = frame.names
    if not names:
        return tuple(np.asarray(rows).tolist())
    if len(rows) == len(names):  # rows are ascending and distinct: every robot, in order
        return names  # (a swarm's step): the frame's own tuple, no copy, no look
    return tuple(names[r] for r in rows)
