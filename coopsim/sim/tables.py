"""The tables a simulation keeps by robot row: the robots' shapes (:class:`RobotTable`), the
modules' parameters (:class:`ParamTable`, :class:`ParamArrays`) and their command tables
(:class:`CommandTables`); :mod:`coopsim.sim.sensing` re-exports them."""

from __future__ import annotations

import numpy as np

from ..model.plugins import MODULES


class RobotTable:
    """Per-robot constants as arrays, rebuilt when the layout changes: chassis ``radius`` (m),
    wheel ``axle`` (m), sensing ``group``, and the row of each ``name``."""

    def __init__(self) -> None:
        self.version = -1
        self.names: tuple[str, ...] = ()
        self.index: dict[str, int] = {}
        self.radius = self.axle = np.zeros(0)
        self.group = np.zeros(0, dtype=np.int64)

    def refresh(self, world) -> bool:
        """Re-gather if the layout changed; return whether it did."""
        if world.layout_version == self.version:
            return False
        robots = world.robots
        self.names = tuple(r.name for r in robots)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.radius = np.array([r.radius for r in robots], dtype=float)
        self.axle = np.array([r.axle for r in robots], dtype=float)
        self.group = np.array([r.group for r in robots], dtype=np.int64)
        self.version = world.layout_version
        return True


class ParamTable:
    """Per-robot parameter arrays for every module, rebuilt when the layout or a value changes.

    Attributes:
        modules: (label, module class) of every registered module.
        rows: Module label -> indices of the robots carrying it.
        values: Module label -> parameter name -> values aligned with ``rows``.
    """

    def __init__(self) -> None:
        self.key: tuple[int, int] = (-1, -1)
        self.modules: list = []
        self.rows: dict[str, np.ndarray] = {}
        self.values: dict[str, dict[str, np.ndarray]] = {}

    def refresh(self, world) -> None:
        """Re-gather the arrays if needed (key: layout version, parameter epoch)."""
        key = (world.layout_version, world.param_epoch)
        if key == self.key:
            return
        self.rows, self.values = {}, {}
        self.modules = list(MODULES.items())  # (label, module), as of this layout
        for label, module in self.modules:
            carriers = [(i, r.modules[label]) for i, r in enumerate(world.robots)
                        if label in r.modules]
            if not carriers:  # most registered modules, at every reset: shared
                self.rows[label], self.values[label] = _carried_by_nobody(label, module)
                continue
            self.rows[label] = np.array([i for i, _ in carriers], dtype=np.int64)
            self.values[label] = ParamArrays({
                spec.name: np.array([v[spec.name] for _, v in carriers], dtype=float)
                for spec in module.params}, bool(carriers))
        self.key = key


_NOBODY: dict = {}  # (label, module) -> the rows and values of a module no robot carries


def _carried_by_nobody(label: str, module) -> tuple:
    """The empty rows and parameter arrays of ``module`` when no robot carries it, made once
    (an empty array holds nothing to write: sharing it is safe). A reset lays out every
    registered module's table again; most are carried by nobody (~0.2 ms a reset)."""
    key = (label, module)
    made = _NOBODY.get(key)
    if made is None:
        made = _NOBODY[key] = (np.zeros(0, dtype=np.int64), ParamArrays(
            {spec.name: np.zeros(0) for spec in module.params}, False))
    return made


class ParamArrays(dict):
    """Parameter name -> values of one module for its robots, and ``zero``: the names whose
    values are all 0 (:meth:`Module.measure` then skips noise and lost data without looking)."""

    def __init__(self, values: dict, some: bool = True) -> None:
        super().__init__(values)  # some=False: the arrays are empty (nobody carries it)
        self.zero = frozenset(k for k, v in values.items() if not some or not v.any())


class CommandTables(dict):
    """Module label -> its commands of every robot, (robots, command fields) float64; it notes
    the labels whose tables were handed out (``touched``: looked up, iterated with values, set).

    Why: a snapshot holds a read-only copy of every table, and most modules with commands are
    carried by no robot of a world (a table of zeros as wide as the module's commands: 67
    columns for ``joints``). A table nobody looked up since the last snapshot still holds
    that snapshot's bits, so the next one shares its copy (:meth:`Simulation._snapshot`): at
    10,000 robots the copies had cost ~10 % of a step. Every write starts with a look-up
    (``sim.commands[label][rows] = ...``); iterating labels alone hands out no table. Code
    that kept a table from an earlier step and wrote into it would go unseen: look it up
    again (every writer in coopsim does, in the same expression as the write).
    """

    def __init__(self, tables=()) -> None:
        super().__init__(tables)
        self.touched = set(self)  # new tables: no snapshot holds their bits yet

    def __getitem__(self, label: str) -> np.ndarray:
        self.touched.add(label)
        return dict.__getitem__(self, label)

    def __setitem__(self, label: str, table: np.ndarray) -> None:
        self.touched.add(label)
        dict.__setitem__(self, label, table)

    def __iter__(self):  # overridden, so that dict(tables) and {**tables} look tables up
        return dict.__iter__(self)

    def get(self, label: str, default=None):
        self.touched.add(label)
        return dict.get(self, label, default)

    def values(self):
        self.touched.update(dict.keys(self))
        return dict.values(self)

    def items(self):
        self.touched.update(dict.keys(self))
        return dict.items(self)

    def setdefault(self, label: str, default=None):
        self.touched.add(label)
        return dict.setdefault(self, label, default)

    def update(self, *args, **kwargs) -> None:
        new = dict(*args, **kwargs)
        self.touched.update(new)
        dict.update(self, new)

    def copy(self) -> dict:
        return dict(self.items())

    def __reduce__(self):  # a pickled (or deep-copied) table set: every table touched
        return (CommandTables, (dict(dict.items(self)),))
