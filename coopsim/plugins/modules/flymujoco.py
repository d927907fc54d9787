"""The fused step of a world of quadrotors on an engine whose step stays its own (``mujoco``:
MuJoCo's ``mj_step`` is not a kernel a compiled tick can call): the pass runs around it.

The flying kinds name this pass after :class:`~coopsim.plugins.modules.flyfused.FlightPass`
(``fused_pass``); it takes a world of ``rotors``, ``imu``, ``mocap`` and ``altimeter`` (and
``gps``, ``compass``) on an engine that says so (``flies_around``) and makes the step in three
calls instead of one per kind and phase: the rotors' kernel
(:func:`coopsim.swarm.flight_kernels.rotors_actuate`, the plain path's call) and the engine's
wrench and step, then, after the altimeter's ``below`` view in 3D (the plain path's
:func:`coopsim.model.kernel.underside`, through the engine's cast), one compiled call for the
kinds' readings (their kernels: ``rotors_sense``, :func:`.flying.imu_sense`, ``mocap_sense``,
``altimeter_sense``) with their noise drawn inside it (the counter-based normals of the step's
key). The same kernels on the same arrays in the same order: a step gives the plain path's
bits (tests/sim/test_flymujoco.py).

Frames and units: world frame (z up), metres, seconds, radians; STATE3D rows (N, 13).
"""

from __future__ import annotations

import numpy as np

from ...model import kernel
from ...model.compiled import jit, load_pending, warmer
from ...swarm import flight_kernels as fk
from . import flying
from .flyfused import ACTING, FlightPass, _draw, kinds

_KEY0 = np.uint64(0)  # the key of a step without noise (nothing is drawn)
_STATE: dict = {"warm": None}  # the call's warm-up, registered by the first pass built (warm())


@jit(counted=False)
def _readings(s, clock, noise, rotor, imu, mocap, alti):
    """The step's readings after the engine's step, into the ``out`` arrays of each tuple.

    Args:
        s: (N, 13) STATE3D rows after the step. clock: (2,) sim time after it and the step, s.
        noise: (key uint64, the imu's, mocap's and altimeter's first normal in the step's
            draw (-1: none), (n, 0) normals and (0,) uniforms for the kinds that draw none).
        rotor: (rows, params, state, dt (1,) s, out): ``rotors_sense``'s.
        imu: (rows, params, state, normals, out): ``flying.imu_sense``'s.
        mocap: (rows, params, normals, out): ``flying.mocap_sense``'s.
        alti: (rows, params, normals, below, out): ``flying.altimeter_sense``'s, ``below``
            its view (empty: the floor).
    """
    key, istart, mstart, astart, none, no_u = noise
    rrows, rpar, rstate, rdt, rout = rotor
    fk.rotors_sense((s, rdt), rrows, rpar, rstate, none, no_u, rout, rout)
    irows, ipar, istate, inormals, iout = imu
    mrows, mpar, mnormals, mout = mocap
    arows, apar, anormals, below, aout = alti
    _draw(key, istart, inormals)
    _draw(key, mstart, mnormals)
    _draw(key, astart, anormals)
    flying.imu_sense((s, clock), irows, ipar, istate, inormals, no_u, iout, iout)
    flying.mocap_sense((s,), mrows, mpar, (), mnormals, no_u, mout, mout)
    flying.altimeter_sense((s, below), arows, apar, (), anormals, no_u, aout, aout)


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
        """The rotors' kernel on the state at the step's start (``Rotors.actuate``'s call),
        the wrench to the engine and the engine's step. True: the step stays fused."""
        engine, rows = self.engine, self.rotor_rows
        table = sim.commands[ACTING]
        carried = np.empty((len(rows), 9))
        step = _read_only(np.full(1, float(sim.dt)))  # the kind's dt view
        fk.rotors_actuate((_read_only(engine.state3d()), step), rows, self.rpar,
                          sim.states.get(ACTING).kernel_args,
                          table if self.every else table[rows], carried, self.wrench)
        role = self.module.kernel_drive
        getattr(engine, role[0])(rows, *kernel.drive_parts(role, self.wrench))
        engine.step(sim.dt)
        sim.actuated[ACTING] = carried
        return True

    def measure(self, sim, state) -> dict:
        """The pass's kinds' readings of this step (label -> (n, width)), with their noise
        (``state``, the planar one, is not read: the kinds read the full state)."""
        key, layout = sim.sensors.key(sim.params, sim.world, sim.rng)
        rows = self.rows
        out = {ACTING: np.empty((len(rows[ACTING]), 5)), "imu": np.empty((len(rows["imu"]), 6)),
               "mocap": np.empty((len(rows["mocap"]), 7)),
               "altimeter": np.empty((len(rows["altimeter"]), 1))}
        s = _read_only(self.engine.state3d())
        below = (_read_only(kernel.underside(s, rows["altimeter"], self.reach, self.engine))
                 if self.casts3d else _NO_BELOW)
        inormals, mnormals, anormals, *starts = self._blocks(layout)
        noise = (np.uint64(key), *starts) if key is not None else (_KEY0, -1, -1, -1)
        par, states = self.par, sim.states
        _readings(s, np.array((float(sim.time), float(sim.dt))),
                  (*noise, _NO_NORMALS, _NO_UNIFORMS),
                  (self.rotor_rows, self.rpar, states.get(ACTING).kernel_args,
                   _read_only(np.full(1, float(sim.dt))), out[ACTING]),
                  (rows["imu"], par["imu"], states.get("imu").kernel_args, inormals, out["imu"]),
                  (rows["mocap"], par["mocap"], mnormals, out["mocap"]),
                  (rows["altimeter"], par["altimeter"], anormals, below, out["altimeter"]))
        return out


_NO_BELOW = np.zeros(0)
_NO_BELOW.setflags(write=False)  # as the core's views are
_NO_NORMALS = np.zeros((0, 0))
_NO_UNIFORMS = np.zeros(0)


def _read_only(state: np.ndarray) -> np.ndarray:
    """``state`` made read-only, as the frames hand the engine's state to the kernels (the
    kernels' compiled signature)."""
    state.setflags(write=False)
    return state


def _load() -> None:
    """Compile (or load from numba's cache) :func:`_readings` with one quadrotor."""
    s, rows, one, none = np.zeros((1, 13)), np.zeros(1, np.int64), np.zeros(1), np.zeros((0, 0))
    s[0, 3] = 1.0
    par = {k: _read_only(np.zeros((1, w))) for k, w in (("rotors", 11), ("imu", 6),
                                                         ("mocap", 4), ("altimeter", 4))}
    imu = (rows, par["imu"], (np.zeros((1, 3)), one.copy(), np.zeros((1, 6)),
                              np.zeros(1, bool)), none, np.zeros((1, 6)))
    mocap = (rows, par["mocap"], none, np.zeros((1, 7)))
    for below in (_read_only(one.copy()), _NO_BELOW):
        alti = (rows, par["altimeter"], none, below, np.zeros((1, 1)))
        _readings(_read_only(s), np.array((0.002, 0.002)), (_KEY0, -1, -1, -1, none, _NO_UNIFORMS),
                  (rows, par["rotors"], (np.zeros((1, 4)), np.zeros(1, bool)),
                   _read_only(np.full(1, 0.002)), np.zeros((1, 5))),
                  imu, mocap, alti)


def warm():
    """The call's warm-up (:func:`coopsim.model.compiled.warmer`), registered and loaded the
    first time."""
    if _STATE["warm"] is None:
        _STATE["warm"] = warmer(_load)
        load_pending()
    return _STATE["warm"]
