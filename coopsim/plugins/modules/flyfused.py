"""The fused step of a world of quadrotors (``rotors``, ``imu``, ``mocap``, ``altimeter``, ``gps``,
``compass``) on an engine that offers a fused side (``aerial``: :meth:`Engine.fused`): one
compiled call a tick runs the rotors (inner loops, mixer, lag, wrench), the engine's step and
its check, and the imu's, mocap's, altimeter's and rotors' readings with their noise
(:mod:`coopsim.sim.fused` chooses it and hands the arrays in and the readings out).

Each phase is the kernel the plain path calls, in the same order, on the same arrays
(:func:`coopsim.swarm.flight_kernels.rotor_row`, the engine's ``step_rows``
and ``check_rows``, :func:`coopsim.plugins.modules.flying.imu`, ``mocap``, ``altimeter``, the
engine's ``place`` and ``cast`` for the altimeter in 3D, then ``ranging3d.underside``'s and
``Altimeter.clip``'s caps), and the noise is the plan's one draw: so a tick gives the plain
path's bits (tests/sim/test_fused.py). The ``gps`` and ``compass`` readings are the planar
state's columns (numpy's ``arctan2`` made the yaw), taken after the call. What the pass saves
is the Python between the kernels: frames, gathers, one call per kind per phase.

The engine's kernels reach this module at run time (:func:`bind`: plugins never import
physics); the tick is compiled (or loaded from numba's disk cache) as they do.
"""

from __future__ import annotations

import threading

import numpy as np

from ...model import noise_kernels
from ...model.compiled import jit, load_pending, warmer
from . import flying
from .common import sensing_refusal

#: The kinds the pass computes; ``rotors`` the one that acts.
LABELS = ("rotors", "imu", "mocap", "altimeter", "gps", "compass")
ACTING = "rotors"
AFTER = ("gps", "compass")  # the planar state's columns, in numpy after the tick
PLAIN = ("rotors", "altimeter", *AFTER)  # noiseless here: their noise is not in a kernel
WRENCH_NOT_FINITE = -1  # the tick's answer when a rotor's wrench is not finite

# The engine's kernels (AerialFused.kernels) and coopsim.swarm.flight_kernels (the swarm
# library loads only when something flies), bound before the tick is first compiled or
# loaded: numba reads a kernel's globals when it compiles it.
step_rows = check_rows = place = cast = fk = None
_STATE = {"bound": None, "warm": None}
_LOCK = threading.Lock()


@jit(inline=True)
def _rotors(s, rows, c, par, dt, speeds, seen, out, wrench):
    """flight_kernels.rotors on ``s`` (the state at the step's start); False when a wrench
    is not finite (the engine's apply_wrench refuses it)."""
    for i in range(len(rows)):
        fk.rotor_row(i, s, rows, c, par, dt, speeds, seen, out, wrench)
    for i in range(len(rows)):
        for k in range(6):
            if not wrench[i, k] - wrench[i, k] == 0.0:  # NaN or infinite
                return False
    return True


@jit(inline=True)
def _rotor_reading(speeds, par, out):
    """Rotors.sense: the speeds (rad/s) and the thrust kf sum(w^2) (N), numpy's sum of four
    left to right."""
    for i in range(len(out)):
        total = speeds[i, 0] * speeds[i, 0]
        for k in range(1, 4):
            total += speeds[i, k] * speeds[i, k]
        for k in range(4):
            out[i, k] = speeds[i, k]
        out[i, 4] = par[i, fk.KF] * total


@jit(inline=True)
def _altimeter(s, rows, reach, below, scene, ray, dist, out):
    """ranging3d.underside then Altimeter.clip: from each body's underside along its -z axis
    to what is below, m. ``scene`` (local, solids, boxes, first robot row, floor); ``ray``
    the cast's scratch: origins (n, 3), directions (n, 3) and reaches (n,), each contiguous
    (the types :func:`coopsim.physics.aerial.raykernel.cast` is loaded with: a strided view
    would compile a second version of it, 15 s of CPU)."""
    local, solids, boxes, start, floor = scene
    pnt, vec, reach_far = ray
    for i in range(len(rows)):
        r = rows[i]
        w, x, y, z = s[r, 3], s[r, 4], s[r, 5], s[r, 6]
        pnt[i, 0], pnt[i, 1], pnt[i, 2] = s[r, 0], s[r, 1], s[r, 2]
        vec[i, 0] = -(2 * (x * z + w * y))
        vec[i, 1] = -(2 * (y * z - w * x))
        vec[i, 2] = -(1 - 2 * (x * x + y * y))
        reach_far[i] = reach[i] + below[i]
    place(local, s, solids, boxes, start)
    cast(pnt, vec, rows, reach_far, solids, boxes, floor, dist)
    for i in range(len(rows)):
        d, far = dist[i], reach_far[i]
        if not (d >= 0.0 and d < far):
            d = far
        v = min(max(d - below[i], 0.0), reach[i])
        out[i, 0] = min(max(v, 0.0), reach[i])


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


def _tick(engine, rotors, time, noise, imu, mocap, alti):
    """One tick (compiled by :func:`_compile`): the rotors on the state at the step's start,
    the engine's step and check, then, when no row diverged, the readings. Returns the rows
    that diverged (nothing is read then: the caller measures after containing them) or
    :data:`WRENCH_NOT_FINITE` (nothing stepped).

    Args:
        engine: (s, start, wrench, cmd, param, kind, half, dt, bad, what): the engine's step
            (aerial.kernels.step's arrays).
        rotors: (rows, commands, par, speeds, seen, out, wrench scratch, reading).
        time: Sim time after the step, s.
        noise: (key uint64, the imu's first normal in the step's draw, the mocap's; -1:
            none): the normals are drawn into ``imu``'s and ``mocap``'s blocks.
        imu: (rows, last_v, last_t, bias, seen, par, cols, normals, out): flying.imu's.
        mocap: (rows, par, cols, normals, out): flying.mocap's.
        alti: (rows, reach, cast3d, below, scene, ray, dist, out): see :func:`_altimeter`;
            without ``cast3d`` flying.altimeter's floor range, capped.
    """
    s, start, wrench, cmd, param, kind, half, dt, bad, what = engine
    rrows, rcmd, rpar, speeds, rseen, rout, rwrench, rread = rotors
    if not _rotors(start, rrows, rcmd, rpar, dt, speeds, rseen, rout, rwrench):
        return WRENCH_NOT_FINITE
    for i in range(len(rrows)):
        for k in range(6):
            wrench[rrows[i], k] = rwrench[i, k]
    step_rows(s, wrench, cmd, param, kind, half, dt, start)
    n = check_rows(s, half, bad, what, start)
    if n:
        return n
    _rotor_reading(rout, rpar, rread)
    irows, last_v, last_t, bias, iseen, ipar, icols, inormals, iout = imu
    mrows, mpar, mcols, mnormals, mout = mocap
    key, istart, mstart = noise
    _draw(key, istart, inormals)
    _draw(key, mstart, mnormals)
    flying.imu(s, irows, time, dt, last_v, last_t, bias, iseen, ipar, icols, inormals, iout)
    flying.mocap(s, mrows, mpar, mcols, mnormals, mout)
    arows, reach, cast3d, below, scene, ray, dist, aout = alti
    if cast3d:
        _altimeter(s, arows, reach, below, scene, ray, dist, aout)
    else:
        flying.altimeter(s, arows, reach, aout)
        for i in range(len(arows)):
            aout[i, 0] = min(max(aout[i, 0], 0.0), reach[i])
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
            bind_flight()
            _STATE["bound"], _STATE["warm"] = kernels, warmer(_load)
            load_pending()
        elif _STATE["bound"] is not kernels:
            return False  # another engine's kernels: this process compiled the first's
    return _STATE["warm"].ready


def _flight_kernels():
    """coopsim.swarm.flight_kernels, imported when first needed."""
    from ...swarm import flight_kernels

    return flight_kernels


def bind_flight():
    """Bind :data:`fk` (coopsim.swarm.flight_kernels) and return it: before a kernel that
    inlines this module's helpers is compiled (the tick, flymujoco's readings call)."""
    global fk
    fk = _flight_kernels()
    return fk


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
    one, rows, none = np.zeros(1), np.zeros(1, np.int64), np.zeros((0, 0))
    s = np.zeros((1, 13))
    s[0, 3] = 1.0
    par = np.array([[0.027, 0.046, 2.22e-8, 1.3e-10, 2500.0, 1.6e-5, 1.6e-5, 2.9e-5, 60.0,
                     12.0, 0.07]])
    param = np.array([[0.027, 1.6e-5, 1.6e-5, 2.9e-5, 0.01, 0.07, 1.0]])
    engine = (s.copy(), s.copy(), np.zeros((1, 6)), np.zeros((1, 3)), param,
              np.full(1, 3, np.int64), np.full(2, 5.0), 0.002, np.zeros(1, np.int64), one.copy())
    rotors = (rows, np.zeros((1, 9)), par, np.zeros((1, 4)), np.zeros(1, bool),
              np.zeros((1, 4)), np.zeros((1, 6)), np.zeros((1, 5)))
    imu = (rows, np.zeros((1, 3)), one.copy(), np.zeros((1, 6)), np.zeros(1, bool),
           np.zeros((1, 4)), np.full(4, -1, np.int64), none, np.zeros((1, 6)))
    mocap = (rows, np.zeros((1, 2)), np.full(2, -1, np.int64), none, np.zeros((1, 7)))
    alti = (rows, one + 4.0, True, one.copy(), _NO_SCENE, _ray(1), one.copy(),
            np.zeros((1, 1)))
    return engine, rotors, 0.002, (np.uint64(1), -1, -1), imu, mocap, alti


def _ray(n: int) -> tuple:
    """The altimeter cast's scratch for ``n`` robots (:func:`_altimeter`)."""
    return np.empty((n, 3)), np.empty((n, 3)), np.empty(n)


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
        self.rpar = flying.matrix(rotors[3], _flight_kernels().ROTOR_PARAMS)
        (_, imu, _, imu_p, *_), (_, mocap, _, mocap_p, *_) = sensing["imu"], sensing["mocap"]
        self.ipar = flying.matrix(imu_p, imu.KERNEL_PARAMS)
        self.icols = flying.columns(imu_p, imu.NOISE)[0]
        self.mpar = flying.matrix(mocap_p, mocap.NOISE)
        self.mcols = flying.columns(mocap_p, mocap.NOISE)[0]
        self.reach = np.array(sensing["altimeter"][3]["max_range"], dtype=float)
        arows = self.rows["altimeter"]
        self.below = below(arows) if casts3d else np.zeros(len(arows))
        self.after = tuple(sensing[k] for k in AFTER if k in sensing)
        n = len(self.rotor_rows)
        self._scratch: dict = {}
        self._layout, self._kept = None, ()
        self.wrench, self.ray, self.dist = np.empty((n, 6)), _ray(len(arows)), \
            np.empty(len(arows))

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
        """One tick: (rotor speeds (n, 4) rad/s, readings by label), the readings None when
        a row diverged (the engine put it back; nothing was read).

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
        rot, imu = states.get(ACTING), states.get("imu")
        cmd = commands if self.every else commands[self.rotor_rows]
        out = {ACTING: np.empty((len(rows[ACTING]), 5)), "imu": np.empty((len(rows["imu"]), 6)),
               "mocap": np.empty((len(rows["mocap"]), 7)),
               "altimeter": np.empty((len(rows["altimeter"]), 1))}
        speeds = np.empty((rn, 4))
        rotors = (self.rotor_rows, cmd, self.rpar, rot.arrays["speeds"], rot.seen, speeds,
                  self.wrench, out[ACTING])
        inormals, mnormals, istart, mstart = self._blocks(layout)
        imu_args = (rows["imu"], imu.arrays["v"], imu.arrays["t"], imu.arrays["bias"], imu.seen,
                    self.ipar, self.icols, inormals, out["imu"])
        mocap = (rows["mocap"], self.mpar, self.mcols, mnormals, out["mocap"])
        noise = (np.uint64(key), istart, mstart) if key is not None else (_KEY0, -1, -1)
        scene = self.side.scene() if self.casts3d else _NO_SCENE
        alti = (rows["altimeter"], self.reach, self.casts3d, self.below, scene, self.ray,
                self.dist, out["altimeter"])
        n = self.side.step(dt, lambda *engine: TICK(engine, rotors, time, noise, imu_args, mocap,
                                                        alti))
        if n == WRENCH_NOT_FINITE:
            self.side.engine.apply_wrench(self.rotor_rows, self.wrench[:, :3], self.wrench[:, 3:])
        return speeds, None if n else out

    def _blocks(self, layout: tuple) -> tuple:
        """(the imu's scratch normals, the mocap's, the imu's first normal in the step's
        draw, the mocap's) for ``layout``, kept while the plan keeps it."""
        if self._layout is not layout:
            self._kept = (self._normals("imu", layout), self._normals("mocap", layout),
                          self._start("imu", layout), self._start("mocap", layout))
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


def _part(layout: tuple, label: str):
    """Kind ``label``'s part (label, rows, k, first normal, count, ...) of a step's draw
    (coopsim.sim.sensing.noise_layout), or None."""
    for part in layout[2]:
        if part[0] == label:
            return part
    return None
