"""The fused step of a world of quadrotors (``rotors``, ``imu``, ``mocap``, ``altimeter``, ``gps``,
``compass``) on an engine that offers a fused side (``aerial``: :meth:`Engine.fused`): one
compiled call a tick runs the rotors (inner loops, mixer, lag, wrench), the engine's step and
its check, and the imu's, mocap's, altimeter's and rotors' readings with their noise
(:mod:`coopsim.sim.fused` chooses it and hands the arrays in and the readings out).

Each phase is the kernel the plain path calls, in the same order, on the same arrays: the
kinds' own kernels (their ``ModuleKernel``: :func:`coopsim.swarm.flight_kernels.rotors_actuate`
and ``rotors_sense``, :func:`coopsim.plugins.modules.flying.imu_sense`, ``mocap_sense``,
``altimeter_sense``), the engine's ``step_rows`` and ``check_rows``, and for the altimeter's
``below`` view in 3D the engine's ``place`` and ``cast`` (what
:func:`coopsim.model.kernel.underside` does through the engine's ``cast3d``); the noise is the
plan's one draw: so a tick gives the plain path's bits (tests/sim/test_fused.py). The ``gps``
and ``compass`` readings are the planar state's columns (numpy's ``arctan2`` made the yaw),
taken after the call. What the pass saves is the Python between the kernels: frames, gathers,
one call per kind per phase.

The engine's kernels reach this module at run time (:func:`bind`: plugins never import
physics); the tick is compiled (or loaded from numba's disk cache) as they do.
"""

from __future__ import annotations

import threading

import numpy as np

from ...model import kernel, noise_kernels
from ...model.compiled import jit, load_pending, warmer
from ...swarm import flight_kernels as fk
from . import flying
from .common import sensing_refusal

#: The kinds the pass computes; ``rotors`` the one that acts.
LABELS = ("rotors", "imu", "mocap", "altimeter", "gps", "compass")
ACTING = "rotors"
AFTER = ("gps", "compass")  # the planar state's columns, in numpy after the tick
PLAIN = ("rotors", *AFTER)  # noiseless here: their noise is not in a kernel
DRAWN = ("imu", "mocap", "altimeter")  # the kinds whose normals the tick draws
WRENCH_NOT_FINITE = -1  # the tick's answer when a rotor's wrench is not finite

# The engine's kernels (AerialFused.kernels), bound before the tick is first compiled or
# loaded: numba reads a kernel's globals when it compiles it.
step_rows = check_rows = place = cast = None
_STATE = {"bound": None, "warm": None}
_LOCK = threading.Lock()


@jit(inline=True)
def _finite(wrench):
    """Whether every value of ``wrench`` is finite (the engine's apply_wrench refuses one
    that is not)."""
    for i in range(len(wrench)):
        for k in range(6):
            if not wrench[i, k] - wrench[i, k] == 0.0:  # NaN or infinite
                return False
    return True


@jit(inline=True)
def _underside(s, rows, reach, below, scene, ray, dist, out):
    """The altimeter's ``below`` view (coopsim.model.kernel.underside) by the engine's
    kernels: from each body's underside along its -z axis to what is below, m, up to
    ``reach``, into ``out`` (n,). ``below`` (n,) each body's origin to its underside, m;
    ``scene`` (local, solids, boxes, first robot row, floor); ``ray`` (n, 7) scratch: origin,
    direction, reach of the cast."""
    local, solids, boxes, start, floor = scene
    for i in range(len(rows)):
        r = rows[i]
        w, x, y, z = s[r, 3], s[r, 4], s[r, 5], s[r, 6]
        ray[i, 0], ray[i, 1], ray[i, 2] = s[r, 0], s[r, 1], s[r, 2]
        ray[i, 3] = -(2 * (x * z + w * y))
        ray[i, 4] = -(2 * (y * z - w * x))
        ray[i, 5] = -(1 - 2 * (x * x + y * y))
        ray[i, 6] = reach[i] + below[i]
    place(local, s, solids, boxes, start)
    cast(ray[:, 0:3], ray[:, 3:6], rows, ray[:, 6], solids, boxes, floor, dist)
    for i in range(len(rows)):
        d, far = dist[i], ray[i, 6]
        if not (d >= 0.0 and d < far):
            d = far
        out[i] = min(max(d - below[i], 0.0), reach[i])


@jit(inline=True)
def _draw(key, start, out):
    """``out`` (n, k) = normals ``start`` .. of the step's draw keyed by ``key``
    (noise_kernels: the plain path's block of the kind, the same bits); none when ``start``
    is < 0 (the kind draws nothing)."""
    if start < 0:
        return
    k = out.shape[1]
    for i in range(out.shape[0]):
        for j in range(k):
            out[i, j] = noise_kernels.normal(key, start + i * k + j)


def _tick(engine, clock, noise, rotors, imu, mocap, alti):
    """One tick (compiled by :func:`_compile`): the rotors on the state at the step's start,
    the engine's step and check, then, when no row diverged, the readings. Returns the rows
    that diverged (nothing is read then: the caller measures after containing them) or
    :data:`WRENCH_NOT_FINITE` (nothing stepped).

    Args:
        engine: (s, start, wrench, cmd, param, kind, half, dt, bad, what): the engine's step
            (aerial.kernels.step's arrays).
        clock: (2,) sim time after the step and the step, s (the kinds' ``clock`` view).
        noise: (key uint64, the imu's first normal in the step's draw, the mocap's, the
            altimeter's (-1: none), (n, 0) normals and (0,) uniforms for the kinds that draw
            none): the normals are drawn into the kinds' blocks.
        rotors: (rows, params, state, dt (1,) s, commands, carried out, wrench scratch,
            reading): the kind's ``rotors_actuate`` and ``rotors_sense`` arguments.
        imu: (rows, params, state, normals, out): ``flying.imu_sense``'s.
        mocap: (rows, params, normals, out): ``flying.mocap_sense``'s.
        alti: (rows, params, normals, reach, cast3d, below, scene, ray, dist, view, out):
            with ``cast3d`` its ``below`` view (:func:`_underside` into ``view``), else
            ``view`` is empty (the floor); then ``flying.altimeter_sense``.
    """
    s, start, wrench, cmd, param, kind, half, dt, bad, what = engine
    key, istart, mstart, astart, none, no_u = noise
    rrows, rpar, rstate, rdt, rcmd, rout, rwrench, rread = rotors
    fk.rotors_actuate((start, rdt), rrows, rpar, rstate, rcmd, rout, rwrench)
    if not _finite(rwrench):
        return WRENCH_NOT_FINITE
    for i in range(len(rrows)):
        for k in range(6):
            wrench[rrows[i], k] = rwrench[i, k]
    step_rows(s, wrench, cmd, param, kind, half, dt, start)
    n = check_rows(s, half, bad, what, start)
    if n:
        return n
    fk.rotors_sense((s, rdt), rrows, rpar, rstate, none, no_u, rread, rread)
    irows, ipar, istate, inormals, iout = imu
    mrows, mpar, mnormals, mout = mocap
    _draw(key, istart, inormals)
    _draw(key, mstart, mnormals)
    flying.imu_sense((s, clock), irows, ipar, istate, inormals, no_u, iout, iout)
    flying.mocap_sense((s,), mrows, mpar, (), mnormals, no_u, mout, mout)
    arows, apar, anormals, reach, cast3d, below, scene, ray, dist, view, aout = alti
    if cast3d:
        _underside(s, arows, reach, below, scene, ray, dist, view)
    _draw(key, astart, anormals)
    flying.altimeter_sense((s, view), arows, apar, (), anormals, no_u, aout, aout)
    return 0


def bind(kernels: dict) -> bool:
    """Hand the engine's kernels (``AerialFused.kernels``) over and load the tick (compiled
    or from numba's cache: :func:`coopsim.model.compiled.warmer`) the first time; True once
    it is loaded (False: another engine's kernels were bound)."""
    with _LOCK:
        if _STATE["warm"] is None:
            g = globals()
            for name in ("step_rows", "check_rows", "place", "cast"):
                g[name] = kernels[name]
            _STATE["bound"], _STATE["warm"] = kernels, warmer(_load)
            load_pending()
        elif _STATE["bound"] is not kernels:
            return False  # another engine's kernels: this process compiled the first's
    return _STATE["warm"].ready


def wait(timeout: float = 600.0) -> bool:
    """Whether the tick is loaded (after :func:`bind`); ``timeout`` is not used (the load is
    synchronous)."""
    warm = _STATE["warm"]
    load_pending()
    return warm is not None and warm.ready


TICK = jit(counted=False)(_tick)  # (compiled.jit: no array made)


def _load() -> None:
    """Compile (or load from numba's cache) :data:`TICK` with one quadrotor."""
    TICK(*_sample())


def _sample() -> tuple:
    """Arguments of one quadrotor's tick (its types as a world's)."""
    one, rows = np.zeros(1), np.zeros(1, np.int64)
    s = np.zeros((1, 13))
    s[0, 3] = 1.0
    rpar = _frozen(np.array([[0.027, 0.046, 2.22e-8, 1.3e-10, 0.07, 2500.0, 1.6e-5, 1.6e-5,
                              2.9e-5, 60.0, 12.0]]))
    param = np.array([[0.027, 1.6e-5, 1.6e-5, 2.9e-5, 0.01, 0.07, 1.0]])
    engine = (s.copy(), s.copy(), np.zeros((1, 6)), np.zeros((1, 3)), param,
              np.full(1, 3, np.int64), np.full(2, 5.0), 0.002, np.zeros(1, np.int64), one.copy())
    rotors = (rows, rpar, (np.zeros((1, 4)), np.zeros(1, bool)), np.full(1, 0.002),
              np.zeros((1, 9)), np.zeros((1, 9)), np.zeros((1, 6)), np.zeros((1, 5)))
    imu = (rows, _frozen(np.zeros((1, 6))),
           (np.zeros((1, 3)), one.copy(), np.zeros((1, 6)), np.zeros(1, bool)),
           np.zeros((0, 0)), np.zeros((1, 6)))
    mocap = (rows, _frozen(np.zeros((1, 4))), np.zeros((0, 0)), np.zeros((1, 7)))
    alti = (rows, _frozen(np.full((1, 4), 4.0)), np.zeros((0, 0)), one + 4.0, True, one.copy(),
            _NO_SCENE, np.zeros((1, 7)), one.copy(), one.copy(), np.zeros((1, 1)))
    noise = (np.uint64(1), -1, -1, -1, _NO_NORMALS, _NO_UNIFORMS)
    return engine, np.array([0.002, 0.002]), noise, rotors, imu, mocap, alti


def _frozen(arr: np.ndarray) -> np.ndarray:
    """``arr`` made read-only (as the kinds' parameter matrices are)."""
    arr.setflags(write=False)
    return arr


class FlightPass:
    """One plan's fused pass over a world of quadrotors (chosen by :mod:`coopsim.sim.fused`
    through the ``fused`` attribute of every kind it computes).

    Args:
        rotors: The acting entry (label, module, rows, values, every) of ``rotors``.
        sensing: Label -> the sensing plan's entry of each kind (coopsim.sim.sensing).
        side: The engine's fused side (:meth:`Engine.fused`).
        casts3d: Whether the altimeter casts against the 3D scene (``ranging3d.active``).
    """

    labels, acting = LABELS, ACTING

    def __init__(self, rotors, sensing: dict, side, casts3d: bool) -> None:
        self.side = side
        bind(side.kernels)  # the tick loads in the background from now
        self._tables(rotors, sensing, casts3d, side.below)

    def _tables(self, rotors, sensing: dict, casts3d: bool, below) -> None:
        """The rows, parameter matrices and scratch of the plan's entries (``below(rows)``:
        each robot's origin to its underside, m, the engine's)."""
        self.casts3d = casts3d
        self.rows = {label: np.ascontiguousarray(entry[2], dtype=np.int64)
                     for label, entry in sensing.items()}
        self.rotor_rows = np.ascontiguousarray(rotors[2], dtype=np.int64)
        self.every = rotors[4]
        self.module = rotors[1]  # the acting kind (its kernel_drive: the engine's role)
        # the kinds' parameter matrices: the plain path's (coopsim.model.kernel)
        self.rpar = kernel.param_matrix(rotors[1], rotors[3])
        self.par = {label: kernel.param_matrix(sensing[label][1], sensing[label][3])
                    for label in ("imu", "mocap", "altimeter")}
        self.reach = np.array(sensing["altimeter"][3]["max_range"], dtype=float)
        arows = self.rows["altimeter"]
        self.below = below(arows) if casts3d else np.zeros(len(arows))
        self.after = tuple(sensing[k] for k in AFTER if k in sensing)
        n = len(self.rotor_rows)
        self._scratch: dict = {}
        self._layout, self._kept = None, ()
        self.wrench, self.ray, self.dist = np.empty((n, 6)), np.empty((len(arows), 7)), \
            np.empty(len(arows))
        # the altimeter's below view: made by the tick in 3D, else empty (the floor)
        self.view = np.empty(len(arows) if casts3d else 0)

    @classmethod
    def build(cls, acting: tuple, sensing: tuple, engine, casts3d: bool):
        """The pass for a plan's ``acting`` and ``sensing`` entries on ``engine``, or None
        and why not (one sentence)."""
        side = engine.fused()
        if side is None:
            return None, f"engine '{engine.label}' has no fused step"
        by, why = kinds(acting, sensing)
        return (None, why) if why else (cls(acting[0], by, side, casts3d), "")

    def ready(self) -> bool:
        """Whether this step may take the pass: its tick loaded (:func:`bind`) and the
        engine's side ready (no held robot, a serial step)."""
        return bind(self.side.kernels) and self.side.ready()

    def run(self, states, commands, key: int | None, layout: tuple, time: float, dt: float):
        """One tick: (the rotors' commands as carried out (n, 9), readings by label), the
        readings None when a row diverged (the engine put it back; nothing was read).

        Args:
            states: The simulation's state tables (coopsim.sim.states).
            commands: The ``rotors`` command table (N, 9).
            key: This step's noise key, None for no noise; layout: the draw's
                (coopsim.sim.sensing.noise_layout): where the imu's and mocap's normals are.
            time: Sim time after the step, s. dt: The step, s.

        Raises:
            SimulationError: a rotor's wrench is not finite (the engine's sentence).
        """
        rows, rn = self.rows, len(self.rotor_rows)
        cmd = commands if self.every else commands[self.rotor_rows]
        out = {ACTING: np.empty((len(rows[ACTING]), 5)), "imu": np.empty((len(rows["imu"]), 6)),
               "mocap": np.empty((len(rows["mocap"]), 7)),
               "altimeter": np.empty((len(rows["altimeter"]), 1))}
        carried = np.empty((rn, 9))
        rotors = (self.rotor_rows, self.rpar, states.get(ACTING).kernel_args,
                  np.full(1, float(dt)), cmd, carried, self.wrench, out[ACTING])
        inormals, mnormals, anormals, *starts = self._blocks(layout)
        par = self.par
        imu = (rows["imu"], par["imu"], states.get("imu").kernel_args, inormals, out["imu"])
        mocap = (rows["mocap"], par["mocap"], mnormals, out["mocap"])
        noise = (np.uint64(key), *starts) if key is not None else (_KEY0, -1, -1, -1)
        noise = (*noise, _NO_NORMALS, _NO_UNIFORMS)
        scene = self.side.scene() if self.casts3d else _NO_SCENE
        alti = (rows["altimeter"], par["altimeter"], anormals, self.reach, self.casts3d,
                self.below, scene, self.ray, self.dist, self.view, out["altimeter"])
        clock = np.array((float(time), float(dt)))
        n = self.side.step(dt, lambda *engine: TICK(engine, clock, noise, rotors, imu, mocap,
                                                        alti))
        if n == WRENCH_NOT_FINITE:  # the engine's refusal, as the plain path hands it over
            role = self.module.kernel_drive
            getattr(self.side.engine, role[0])(self.rotor_rows,
                                               *kernel.drive_parts(role, self.wrench))
        return carried, None if n else out

    def _blocks(self, layout: tuple) -> tuple:
        """(the scratch normals of each kind of :data:`DRAWN`, then each one's first normal in
        the step's draw) for ``layout``, kept while the plan keeps it."""
        if self._layout is not layout:
            self._kept = (*(self._normals(k, layout) for k in DRAWN),
                          *(self._start(k, layout) for k in DRAWN))
            self._layout = layout
        return self._kept

    def _normals(self, label: str, layout: tuple) -> np.ndarray:
        """Kind ``label``'s (rows, k) scratch for its normals in ``layout``'s draw, kept
        while the shape is (the tick fills it; nothing outside reads it)."""
        part = _part(layout, label)
        shape = (part[1], part[2]) if part is not None and part[4] else (0, 0)
        block = self._scratch.get(label)
        if block is None or block.shape != shape:
            block = self._scratch[label] = np.zeros(shape)
        return block

    @staticmethod
    def _start(label: str, layout: tuple) -> int:
        """Kind ``label``'s first normal in the step's draw, -1 when it draws none."""
        part = _part(layout, label)
        return part[3] if part is not None and part[4] else -1


def kinds(acting: tuple, sensing: tuple) -> tuple[dict, str]:
    """(label -> sensing entry, "") when a flying pass computes a plan's ``acting`` and
    ``sensing`` kinds, else ({}, why not: one sentence)."""
    for entry in acting:
        if entry[0] != ACTING:
            return {}, f"module '{entry[0]}' has no kernel"
    for entry in sensing:
        why = sensing_refusal(entry, LABELS, not entry[5] and entry[0] in PLAIN)
        if why:
            return {}, why
    by = {entry[0]: entry for entry in sensing}
    missing = [k for k in LABELS if k not in AFTER and k not in by] + \
        ([] if len(acting) == 1 else [ACTING])
    if missing:
        return {}, f"module '{missing[0]}' is missing (the pass flies rotors, imu, mocap " \
                   f"and altimeter together)"
    return by, ""


_NO_SCENE = (np.zeros((0, 10)), np.zeros((0, 17)), np.zeros((0, 6)), 0, np.zeros(2))
_KEY0 = np.uint64(0)  # the key of a step without noise (nothing is drawn)
_NO_NORMALS = np.zeros((0, 0))  # a kind that draws no normals
_NO_UNIFORMS = np.zeros(0)  # nor uniforms (the pass takes no kind that loses readings)


def _part(layout: tuple, label: str):
    """Kind ``label``'s part (label, rows, k, first normal, count, ...) of a step's draw
    (coopsim.sim.sensing.noise_layout), or None."""
    for part in layout[2]:
        if part[0] == label:
            return part
    return None
