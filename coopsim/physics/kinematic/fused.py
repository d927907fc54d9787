"""The ``kinematic`` engine's side of a fused step (:mod:`coopsim.sim.fused`): its small
worlds' compiled drive and step (:mod:`coopsim.physics.kinematic.small`) and their arrays,
handed to a pass that runs the actuators and the step in one compiled call.

A pass (a module plugin's: :mod:`coopsim.plugins.modules.groundfused`) cannot import the
engine's kernels (the layers: plugins never import physics), so it takes them from
:attr:`KinematicFused.kernels` and compiles its call around them at run time. It steps the
engine through :meth:`KinematicFused.step`, which keeps the engine's bookkeeping (the layout
applied, the static grid, the carried objects) as :meth:`KinematicEngine.step` does: the same
kernels in the same order, so the same bits, and a step taken either way leaves the engine
alike (the two paths may alternate from one step to the next).
"""

from __future__ import annotations

import numpy as np

from . import small

#: What a pass calls inside its compiled call: the engine's ``drive`` and ``step`` of a small
#: world (``drive_small(cmd, mode, driven, rows, forward, turn)``, ``step_arrays(cmd, mode,
#: arrays)``, ``arrays`` the last of :meth:`KinematicFused.arrays`).
KERNELS = {"drive": small.drive_small, "step": small.step_arrays}


class KinematicFused:
    """One kinematic engine's fused side (:meth:`KinematicEngine.fused`).

    Args:
        engine: The engine (its numba backend).
        small_n: Robots up to which the engine steps in one compiled call (``SMALL_N``).
    """

    kernels = KERNELS

    def __init__(self, engine, small_n: int) -> None:
        self.engine = engine
        self.small_n = small_n

    def arrays(self, dt: float) -> tuple | None:
        """For a step of ``dt`` s, the layout applied: (cmd, mode, driven: ``drive_small``'s
        first arguments; then ``step_small``'s other than ``cmd, mode``, one tuple, as
        :meth:`KinematicEngine.step` hands them: pos, buf, yaw, heading, radius, state,
        contact, moved, flag, rows, static grid, half sizes, dt, limits); None when the
        engine steps otherwise (no robot, more than ``small_n``)."""
        e = self.engine
        e._sync()
        n = len(e.pos)
        if not n or n > self.small_n:
            return None
        return e.cmd, e.mode, e.driven, (e.pos, e._buf, e.yaw, e.heading, e.radius, e.state,
                                         e.contact, e._moved, e._flag, e._rows,
                                         e._static_grid(), e._half, float(dt), e._limits)

    def contacts(self) -> np.ndarray:
        """The engine's own (N, 2) contact flags of the last step, not copied: what
        :meth:`KinematicEngine.contacts` copies, for a pass that copies them into its readings
        inside its call."""
        self.engine._sync()
        return self.engine.contact

    def stepped(self) -> None:
        """After a pass's call drove and stepped the engine: the carried objects moved with
        their robots (the end of :meth:`KinematicEngine.step`)."""
        self.engine._carry()

    def sample(self) -> tuple | None:
        """A copy of :meth:`arrays` now, for a pass to compile its call with the types a step
        hands it (None without robots)."""
        arrays = self.arrays(0.01)
        return None if arrays is None else _copied(arrays)


def _copied(value):
    """``value`` with every array in it copied (tuples of arrays kept tuples)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    return value
