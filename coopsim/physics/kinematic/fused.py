"""The ``kinematic`` engine's side of a fused step (:mod:`coopsim.sim.fused`): its small
worlds' compiled drive and step (:mod:`coopsim.physics.kinematic.small`) and their arrays,
handed to a pass that runs the actuators and the step in one compiled call.

The composed step (:mod:`coopsim.sim.compose`) does not import the engine's kernels (the
layers: the simulation never imports physics): it takes them from :attr:`KinematicFused.kernels`
and names them in the call it composes; after the call :meth:`KinematicFused.stepped` keeps
the engine's bookkeeping (the carried objects; the layout applied and the static grid before
it, :meth:`KinematicFused.arrays`) as :meth:`KinematicEngine.step` does: the same
kernels in the same order, so the same bits, and a step taken either way leaves the engine
alike (the two paths may alternate from one step to the next).
"""

from __future__ import annotations

import numpy as np

from . import small

#: What a composed call calls: a kernel for each drive role an acting kind hands the engine
#: (``kernel_drive``: ``drive`` (n, 2) forward speed, turn rate; ``set_velocity`` (n, 3) world
#: vx, vy, yaw rate), ``role(engine, rows, drive)``, and ``step(engine, edge)`` of a small
#: world (:func:`~coopsim.physics.kinematic.small.drive_rows`,
#: :func:`~coopsim.physics.kinematic.small.velocity_rows`,
#: :func:`~coopsim.physics.kinematic.small.step_checked`), ``engine`` :meth:`KinematicFused.arrays`.
KERNELS = {"drive": small.drive_rows, "set_velocity": small.velocity_rows,
           "step": small.step_checked}


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

    def acting(self, arrays: tuple) -> tuple:
        """(planar state (N, 6), contacts (N, 2)) the acting kinds read: the engine's own
        arrays in ``arrays`` (:meth:`arrays`), not copied."""
        return arrays[3][5], arrays[3][6]

    def contacts(self) -> np.ndarray:
        """The engine's own (N, 2) contact flags of the last step, not copied: what
        :meth:`KinematicEngine.contacts` copies, for a pass that copies them into its readings
        inside its call."""
        self.engine._sync()
        return self.engine.contact

    def stepped(self, result: int) -> bool:
        """After a call that drove and stepped the engine (``result``: its ``step``'s): the
        carried objects moved with their robots (the end of :meth:`KinematicEngine.step`).
        Returns whether every robot is within the health check's bounds (the call checked
        them)."""
        self.engine._carry()
        return bool(result)

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
