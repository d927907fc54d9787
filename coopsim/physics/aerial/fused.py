"""The ``aerial`` engine's side of a fused step (:mod:`coopsim.sim.fused`): its compiled step's
parts and arrays, handed to a pass that runs the whole tick in one compiled call.

A pass (a module plugin's, e.g. :mod:`coopsim.plugins.modules.flyfused`) cannot import the
engine's kernels (the layers: plugins never import physics), so it takes them from
:attr:`AerialFused.kernels` and compiles its tick around them at run time. It then steps the
engine through :meth:`AerialFused.step`, which keeps the engine's bookkeeping (its two state
buffers, the rows it put back) as :meth:`AerialEngine.step` does, so that a step taken either
way leaves the engine alike and the two paths may alternate from one step to the next.
"""

from __future__ import annotations

import numpy as np

from ...model.health import Divergence, why
from ...model.threads import parallel
from . import kernels as ak
from . import raykernel as ark

#: What a pass calls inside its compiled tick: the rows' step and check (serial), and the
#: robots' solids placed and the rays cast against the scene (aerial.rays).
KERNELS = {"step_rows": ak.step_rows, "check_rows": ak.check_rows, "place": ark.place,
           "cast": ark.cast}


class AerialFused:
    """One aerial engine's fused side (:meth:`AerialEngine.fused`).

    Args:
        engine: The engine (its numba backend).
    """

    kernels = KERNELS
    free = ak.FREE

    def __init__(self, engine) -> None:
        self.engine = engine

    def ready(self) -> bool:
        """Whether this step may be fused: no external robot held and a serial step (from
        ``aerial.kernels.PARALLEL_MIN`` rows on numba's threads share the plain step, which
        gives the same bits)."""
        e = self.engine
        e._sync()
        return e._held is None and not parallel(len(e.state), ak.PARALLEL_MIN)

    def step(self, dt: float, call) -> int:
        """One step through ``call(s, start, wrench, cmd, param, kind, half, dt, bad, what)``
        (the pass's compiled tick, returning the rows that diverged, or < 0 when it stepped
        nothing); the engine's bookkeeping as in :meth:`AerialEngine.step`. Returns what
        ``call`` did."""
        e = self.engine
        e._diverged = ()
        e._read = (None, None)
        if not len(e.state):
            return 0
        e._start, e.state = e.state, e._start
        n = call(e.state, e._start, e.wrench, e.cmd, e.param, e.kind, e._half, float(dt),
                 e._bad, e._what)
        if n < 0:  # nothing stepped: the state at the step's start is the state again
            e._start, e.state = e.state, e._start
        elif n:
            rows = np.flatnonzero(e._bad)
            e.cmd[rows], e.wrench[rows] = 0.0, 0.0
            e._diverged = tuple(
                Divergence(k, f"robot {e._bodies[k].name}",
                           why(int(e._bad[k]), float(e._what[k]))) for k in rows.tolist())
        return n

    def scene(self) -> tuple:
        """The ray scene's tables for this layout (aerial.rays.Scene.unplaced): (local, solids,
        boxes, the first robot row of ``solids``, floor); the tick places the robots' rows
        (``place``) on the state it stepped to."""
        e = self.engine
        return (*e._scene.unplaced(e._objects, e._bodies), e._scene.floor)

    def below(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows),) from each robot's origin down to its underside, m (>= 0 for a body
        whose solids reach below its origin): the ``below`` view's offset
        (model/kernel.underside)."""
        return np.ascontiguousarray(-self.engine.chassis_extent(rows)[:, 0])
