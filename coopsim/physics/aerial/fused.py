"""The ``aerial`` engine's side of a composed step (:mod:`coopsim.sim.compose`): its drive,
step and ``below`` cast as kernels, and their arrays, handed to the call that runs the module
kinds' kernels and the engine's step in one compiled call.

The composed step does not import the engine's kernels (the layers: the simulation never
imports physics): it takes them from :attr:`AerialFused.kernels` and names them in the call it
composes. After the call, :meth:`AerialFused.stepped` keeps the engine's bookkeeping (its two
state buffers, the rows it put back) as :meth:`AerialEngine.step` does: the same kernels in the
same order, so the same bits, and a step taken either way leaves the engine alike (the two
paths may alternate from one step to the next).
"""

from __future__ import annotations

import numpy as np

from ...model.health import Divergence, why
from ...model.threads import parallel
from . import kernels as ak
from . import raykernel as ark

#: What a composed call calls: ``apply_wrench(engine, rows, drive)`` (the drive role of an
#: acting kind's ``kernel_drive``: its (n, 6) wrench into the engine's, False when not
#: finite), ``step(engine, edge)`` (every row's step and check: how many diverged),
#: ``below(state3d, rows, reach, offsets, scene, ray, dist, out)`` (the ``below`` view cast
#: against :meth:`AerialFused.scene`); ``engine`` is :meth:`AerialFused.arrays`.
KERNELS = {"apply_wrench": ak.wrench_rows, "step": ak.step_checked, "below": ark.underside}


class AerialFused:
    """One aerial engine's side of a composed step (:meth:`AerialEngine.fused`).

    Args:
        engine: The engine (its numba backend).
    """

    kernels = KERNELS

    def __init__(self, engine) -> None:
        self.engine = engine

    def arrays(self, dt: float) -> tuple | None:
        """For a step of ``dt`` s, the layout applied: (the state written, the state at the
        step's start, wrench, cmd, param, kind, half sizes, dt, bad, what: ``step_rows``'s and
        ``check_rows``'s arrays); None when the engine steps otherwise (no robot, an external
        robot held, or rows enough for numba's threads: ``aerial.kernels.PARALLEL_MIN``,
        the same bits). Nothing changes until :meth:`stepped`."""
        e = self.engine
        e._sync()
        n = len(e.state)
        if not n or e._held is not None or parallel(n, ak.PARALLEL_MIN):
            return None
        return (e._start, e.state, e.wrench, e.cmd, e.param, e.kind, e._half, float(dt),
                e._bad, e._what)

    def acting(self, arrays: tuple) -> tuple:
        """(planar state, contacts) the acting kinds read from ``arrays``: None each (read as
        on any engine: the state the last sensing phase read; no contacts)."""
        return None, None

    def stepped(self, result: int) -> bool:
        """After a call that drove and stepped on :meth:`arrays` (``result``: the rows that
        diverged, < 0 when nothing stepped): the engine's bookkeeping as in
        :meth:`AerialEngine.step`. Returns False (the engine checks its rows itself:
        ``checks_health``)."""
        if result < 0:
            return False
        e = self.engine
        e._diverged = ()
        e._read = (None, None)
        e._start, e.state = e.state, e._start
        if result:
            rows = np.flatnonzero(e._bad)
            e.cmd[rows], e.wrench[rows] = 0.0, 0.0
            e._diverged = tuple(
                Divergence(k, f"robot {e._bodies[k].name}",
                           why(int(e._bad[k]), float(e._what[k]))) for k in rows.tolist())
        return False

    def contacts(self) -> np.ndarray:
        """(N, 2) zeros: no contacts (:meth:`AerialEngine.contacts`)."""
        return self.engine.contacts(None)

    def scene(self) -> tuple:
        """The ray scene's tables for this layout (aerial.rays.Scene.unplaced): (local, solids,
        boxes, the first robot row of ``solids``, floor); the ``below`` kernel places the
        robots' rows on the state it reads."""
        e = self.engine
        e._sync()
        return (*e._scene.unplaced(e._objects, e._bodies), e._scene.floor)

    def below(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows),) from each robot's origin down to its underside, m (>= 0 for a body
        whose solids reach below its origin): the ``below`` view's offset
        (model/kernel.underside)."""
        return np.ascontiguousarray(-self.engine.chassis_extent(rows)[:, 0])
