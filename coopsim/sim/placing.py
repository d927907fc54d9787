"""The placement check of a world on an engine that refuses bodies started inside each other,
inside static geometry or below the floor (``Engine.strict_placement``: mujoco), over
:mod:`coopsim.model.placement`'s geometry.

At load every object and robot section is checked against those built before it, at the poses
their specs give (what ``coopsim check`` does with ``file:line``, for worlds built in code or
loaded over the network). While the world runs, an insertion (``/sim insert_object``,
``insert_robot``, their updates, a timed ``insert``) is checked against every body where it is
now (a tilted body taken level at its centre), in one numpy pass, before anything is built.
Only the stepper thread calls it, as it does the world.
"""

from __future__ import annotations

import numpy as np

from ..model.errors import SimulationError
from ..model.placement import ORIGIN, X, Y, YAW, Solids, clash, first_problem, moved


class Placements:
    """The solids of every object and robot section of one world, and the bodies they move
    with.

    Args:
        engine: The world's engine (its ``poses3d`` tells where the bodies are now).
    """

    def __init__(self, engine) -> None:
        self.engine = engine
        # key -> (label, solids as built (N, WIDTH), the engine handle each row moves with,
        # (N, 4) x, y, z, yaw of that body's origin when built)
        self._items: dict[tuple[str, str], tuple[str, np.ndarray, list, np.ndarray]] = {}

    def add(self, key: tuple[str, str], label: str, rows: np.ndarray, handles: list,
            start: np.ndarray) -> None:
        """Note what was built for ``key`` (``("object", name)``, ``("robot", section)``)."""
        self._items[key] = (label, rows, handles, np.asarray(start, dtype=float).reshape(-1, 4))

    def add_object(self, name: str, rows: np.ndarray, handle) -> None:
        """Note the solid of object ``name`` and its engine handle (its origin: its centre)."""
        self.add(("object", name), f"object {name}", rows, [handle] * len(rows),
                 np.column_stack([rows[:, X], rows[:, Y], rows[:, ORIGIN], rows[:, YAW]]))

    def add_assembly(self, section: str, label: str, rows: np.ndarray, assembly,
                     handles) -> None:
        """Note the solids of robot section ``section`` (``assembly_rows(assembly)``: one
        per shape, body by body) and the engine's ``handles`` of its bodies."""
        bodies = [(handles.bodies[b.key], b) for b in assembly.bodies for _ in b.shapes]
        self.add(("robot", section), label, rows, [h for h, _ in bodies],
                 [(*b.position, b.z, b.yaw) for _, b in bodies])

    def remove(self, key: tuple[str, str]) -> None:
        self._items.pop(key, None)

    def check_loaded(self) -> None:
        """Raise SimulationError at the first item, in the order built, that starts below the
        floor or inside one built before it (at the poses their specs give)."""
        solids = Solids()
        for label, rows, _, _ in self._items.values():
            solids.add(label, rows)
        problem = first_problem(solids)
        if problem is not None:
            raise SimulationError(problem.reason)

    def check_new(self, label: str, rows: np.ndarray, but: tuple[str, str] | None = None) -> None:
        """Raise SimulationError when solids ``rows`` may not start among the bodies where they
        are now (``but``: the key of an item to leave out, the one being replaced)."""
        why = clash(rows, label, self._now(but))
        if why:
            raise SimulationError(why)

    def _now(self, but: tuple[str, str] | None) -> Solids:
        """Every item's solids where its bodies are now."""
        items = [item for key, item in self._items.items() if key != but]
        solids = Solids()
        if not items:
            return solids
        handles = [h for _, _, hs, _ in items for h in hs]
        unique = {id(h): h for h in handles}
        index = {key: k for k, key in enumerate(unique)}
        pose = self.engine.poses3d(list(unique.values()))[[index[id(h)] for h in handles]]
        now = np.column_stack([pose[:, :3], 2 * np.arctan2(pose[:, 6], pose[:, 3])])
        placed = moved(np.concatenate([r for _, r, _, _ in items]), np.concatenate(
            [s for _, _, _, s in items]), now)
        at = 0
        for label, rows, _, _ in items:
            solids.add(label, placed[at:at + len(rows)])
            at += len(rows)
        return solids
