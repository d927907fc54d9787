"""The fused step of a world of quadrotors on an engine whose step stays its own (``mujoco``:
MuJoCo's ``mj_step`` is not a kernel a compiled tick can call): the pass runs around it.

The flying kinds name this pass after :class:`~coopsim.plugins.modules.flyfused.FlightPass`
(``fused_pass``); it takes a world of ``rotors``, ``imu``, ``mocap`` and ``altimeter`` (and
``gps``, ``compass``) on an engine that says so (``flies_around``) and makes the step in three
calls instead of one per kind and phase: the rotors' compiled step (:func:`coopsim.swarm.flight_kernels.rotors`, the plain
path's call) and the engine's wrench and step, then one compiled call for the rotors', imu's
and mocap's readings with their noise drawn inside it (the plain path's kernels:
:func:`.flying.imu`, :func:`.flying.mocap`, the counter-based normals of the step's key) and
the altimeter's ray, then the engine's 3D cast and the altimeter's caps (numpy's, as
``ranging3d.underside`` and ``Altimeter.clip`` take them). The same kernels on the same
arrays in the same order: a step gives the plain path's bits (tests/sim/test_flymujoco.py).

Frames and units: world frame (z up), metres, seconds, radians; STATE3D rows (N, 13).
"""

from __future__ import annotations

import numpy as np

from ...model.compiled import jit, load_pending, warmer
from . import flying
from .flyfused import ACTING, FlightPass, _draw, _rotor_reading, bind_flight, kinds

_KEY0 = np.uint64(0)  # the key of a step without noise (nothing is drawn)
# coopsim.swarm.flight_kernels (the swarm library loads only when something flies), bound here
# and in flyfused (whose helpers the call inlines) before the call is first compiled or loaded
# (numba reads a kernel's globals then), and the call's warm-up, registered by the first pass
# built (warm())
fk = None
_STATE: dict = {"warm": None}


@jit(counted=False)
def _readings(s, time, dt, noise, rotor, imu, mocap, alti):
    """The step's readings after the engine's step, into the ``out`` arrays of each tuple.

    Args:
        s: (N, 13) STATE3D rows after the step. time: Sim time after it, s. dt: The step, s.
        noise: (key uint64, the imu's first normal in the step's draw, the mocap's; -1:
            none).
        rotor: (speeds (n, 4) rad/s after the lag, par (n, 11) ROTOR_PARAMS, out (n, 5)):
            ``Rotors.sense``'s speeds and thrust (flyfused's ``_rotor_reading``).
        imu: (rows, last_v, last_t, bias, seen, par, cols, normals, out): flying.imu's.
        mocap: (rows, par, cols, normals, out): flying.mocap's.
        alti: (rows, reach, cast3d, origin (n, 3), down (n, 1, 3), out (n, 1)): with
            ``cast3d`` the ray of ``ranging3d.underside`` (from the origin along the body's -z
            axis, cast by the caller), else flying.altimeter's floor range, capped.
    """
    speeds, rpar, rout = rotor
    _rotor_reading(speeds, rpar, rout)
    key, istart, mstart = noise
    irows, last_v, last_t, bias, iseen, ipar, icols, inormals, iout = imu
    mrows, mpar, mcols, mnormals, mout = mocap
    _draw(key, istart, inormals)
    _draw(key, mstart, mnormals)
    flying.imu(s, irows, time, dt, last_v, last_t, bias, iseen, ipar, icols, inormals, iout)
    flying.mocap(s, mrows, mpar, mcols, mnormals, mout)
    arows, reach, cast3d, origin, down, aout = alti
    if cast3d:
        for i in range(len(arows)):
            r = arows[i]
            w, x, y, z = s[r, 3], s[r, 4], s[r, 5], s[r, 6]
            origin[i, 0], origin[i, 1], origin[i, 2] = s[r, 0], s[r, 1], s[r, 2]
            down[i, 0, 0] = -(2 * (x * z + w * y))
            down[i, 0, 1] = -(2 * (y * z - w * x))
            down[i, 0, 2] = -(1 - 2 * (x * x + y * y))
    else:
        flying.altimeter(s, arows, reach, aout)
        for i in range(len(arows)):
            aout[i, 0] = min(max(aout[i, 0], 0.0), reach[i])


class AroundPass(FlightPass):
    """:class:`FlightPass`'s tables and noise blocks, its step made around the engine's own
    (:mod:`coopsim.sim.fused` calls :meth:`physics`, then :meth:`measure` on the state the
    health check passed).

    Args:
        rotors: The acting entry (label, module, rows, values, every) of ``rotors``.
        sensing: Label -> the sensing plan's entry of each kind (coopsim.sim.sensing).
        engine: The engine (``state3d``, ``apply_wrench``, ``step``, ``cast3d``,
            ``chassis_extent``: its public calls only).
        casts3d: Whether the altimeter casts against the 3D scene (``ranging3d.active``).
    """

    def __init__(self, rotors, sensing: dict, engine, casts3d: bool) -> None:
        self.engine = engine
        warm()  # the call is loaded (compiled once) here
        self._tables(rotors, sensing, casts3d,
                     lambda rows: -engine.chassis_extent(rows)[:, 0])
        n = len(self.rows["altimeter"])
        # ranging3d.underside's and Altimeter.clip's operands, as they make them
        self.floor_below, self.cap = self.below[:, None], self.reach[:, None]
        self.far = self.reach + self.below
        self.origin, self.down = np.empty((n, 3)), np.empty((n, 1, 3))

    @classmethod
    def build(cls, acting: tuple, sensing: tuple, engine, casts3d: bool):
        """The pass for a plan's ``acting`` and ``sensing`` entries on ``engine``, or None
        and why not (one sentence; the kinds' refusal first, as :class:`FlightPass` says it
        too when tried before this pass on another engine)."""
        by, why = kinds(acting, sensing)
        if why:
            return None, why
        if not getattr(engine, "flies_around", False):
            return None, f"engine '{engine.label}' has no fused step"
        return cls(acting[0], by, engine, casts3d), ""

    def ready(self) -> bool:
        """Whether this step may take the pass: its call loaded (:func:`warm`)."""
        return _STATE["warm"].ready

    def physics(self, sim) -> bool:
        """The rotors' step on the state at the step's start (``Rotors.actuate``'s compiled
        call), the wrench to the engine and the engine's step. True: the step stays fused."""
        engine, rows = self.engine, self.rotor_rows
        table = sim.commands[ACTING]
        rot = sim.states.get(ACTING)
        speeds = np.empty((len(rows), 4))
        fk.rotors(_read_only(engine.state3d()), rows, table if self.every else table[rows],
                  self.rpar, float(sim.dt), rot.arrays["speeds"], rot.seen, speeds,
                  self.wrench)
        engine.apply_wrench(rows, self.wrench[:, :3], self.wrench[:, 3:])
        engine.step(sim.dt)
        sim.actuated[ACTING] = speeds
        return True

    def measure(self, sim, state) -> dict:
        """The pass's kinds' readings of this step (label -> (n, width)), with their noise
        (``state``, the planar one, is not read: the kinds read the full state)."""
        key, layout = sim.sensors.key(sim.params, sim.world, sim.rng)
        rows = self.rows
        out = {ACTING: np.empty((len(rows[ACTING]), 5)), "imu": np.empty((len(rows["imu"]), 6)),
               "mocap": np.empty((len(rows["mocap"]), 7)),
               "altimeter": np.empty((len(rows["altimeter"]), 1))}
        imu = sim.states.get("imu")
        inormals, mnormals, istart, mstart = self._blocks(layout)
        noise = (np.uint64(key), istart, mstart) if key is not None else (_KEY0, -1, -1)
        _readings(_read_only(self.engine.state3d()), float(sim.time), float(sim.dt), noise,
                  (sim.actuated[ACTING], self.rpar, out[ACTING]),
                  (rows["imu"], imu.arrays["v"], imu.arrays["t"], imu.arrays["bias"], imu.seen,
                   self.ipar, self.icols, inormals, out["imu"]),
                  (rows["mocap"], self.mpar, self.mcols, mnormals, out["mocap"]),
                  (rows["altimeter"], self.reach, self.casts3d, self.origin, self.down,
                   out["altimeter"]))
        if self.casts3d:  # ranging3d.underside's cast and caps, then Altimeter.clip's
            dist = self.engine.cast3d(rows["altimeter"], self.origin, self.down, self.far)
            out["altimeter"] = np.clip(np.minimum(np.maximum(dist - self.floor_below, 0.0),
                                                  self.cap), 0.0, self.cap)
        return out


def _read_only(state: np.ndarray) -> np.ndarray:
    """``state`` made read-only, as the frames hand the engine's state to the kernels (the
    kernels' compiled signature)."""
    state.setflags(write=False)
    return state


def _load() -> None:
    """Compile (or load from numba's cache) :func:`_readings` with one quadrotor."""
    s, rows, one, none = np.zeros((1, 13)), np.zeros(1, np.int64), np.zeros(1), np.zeros((0, 0))
    s[0, 3] = 1.0
    imu = (rows, np.zeros((1, 3)), one.copy(), np.zeros((1, 6)), np.zeros(1, bool),
           np.zeros((1, 4)), np.full(4, -1, np.int64), none, np.zeros((1, 6)))
    mocap = (rows, np.zeros((1, 2)), np.full(2, -1, np.int64), none, np.zeros((1, 7)))
    alti = (rows, one + 4.0, True, np.zeros((1, 3)), np.zeros((1, 1, 3)), np.zeros((1, 1)))
    _readings(_read_only(s), 0.002, 0.002, (_KEY0, -1, -1),
              (np.zeros((1, 4)), np.zeros((1, 11)), np.zeros((1, 5))), imu, mocap, alti)


def warm():
    """The call's warm-up (:func:`coopsim.model.compiled.warmer`), registered and loaded the
    first time, :data:`fk` bound before it."""
    global fk
    if _STATE["warm"] is None:
        fk = bind_flight()
        _STATE["warm"] = warmer(_load)
        load_pending()
    return _STATE["warm"]
