"""The per-kind state tables a simulation keeps for its modules (:mod:`coopsim.model.kernel`).

One :class:`~coopsim.model.kernel.KindState` per module kind that declares ``state_fields``,
made when the kind first asks for it (``frame.state(label)``), every robot's row in world order.
The tables are laid out again, matched by robot name, only when the layout changes (a robot
kept keeps its state, a new one gets the defaults with ``seen`` False); a reset and a
``restore_layout`` start from new tables. A robot the simulation puts back after it diverged
starts over (:meth:`StateTables.restart`, called by :mod:`coopsim.sim.health` like every
board's). Only the stepper thread touches them.
"""

from __future__ import annotations

import numpy as np

from ..model.kernel import KindState
from ..model.plugins import MODULES


class StateTables:
    """Module label -> :class:`~coopsim.model.kernel.KindState`, for the robots ``names``.

    Args:
        names: The robots' network names, in row order.
    """

    def __init__(self, names: tuple[str, ...] = ()) -> None:
        self.names = tuple(names)
        self._index = {n: i for i, n in enumerate(self.names)}
        self.kinds: dict[str, KindState] = {}

    def get(self, label: str) -> KindState:
        """The state table of module ``label`` (made on first use from its ``state_fields``).

        Raises:
            RegistryError: no module of that label is registered.
        """
        table = self.kinds.get(label)
        if table is None:
            fields = getattr(MODULES.get(label), "state_fields", ())
            table = self.kinds[label] = KindState(fields, len(self.names))
        return table

    def layout(self, names: tuple[str, ...]) -> None:
        """Lay every table out for the robots ``names``, kept by name (nothing happens when
        they are the same names in the same order)."""
        names = tuple(names)
        if names == self.names:
            return
        keep = np.array([self._index.get(n, -1) for n in names], dtype=np.int64)
        self.kinds = {label: table.taken(keep) for label, table in self.kinds.items()}
        self.names = names
        self._index = {n: i for i, n in enumerate(names)}

    def restart(self, names) -> None:
        """Robots ``names`` start over from the defaults, as if never seen (a robot put back
        after it diverged)."""
        rows = [self._index[n] for n in names if n in self._index]
        if rows:
            for table in self.kinds.values():
                table.reset_rows(rows)
