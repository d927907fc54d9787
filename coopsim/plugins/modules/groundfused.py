"""The fused step of a world of ground robots (``motors``, ``sonar``, ``target``, ``odometry``,
``gps``, ``compass``, ``bumper``: the ``single`` robot's kinds) on a 2D engine: the motors drive
the engine and the engine steps (on the kinematic engine up to ``kinematic.SMALL_N`` robots one
compiled call, :func:`_act`, with the engine's kernels handed over at run time:
:meth:`~coopsim.physics.engine.Engine.fused`; else the motors' call, the engine's ``drive``
and ``step``), then one compiled call makes every reading with its noise from the planar state,
the sonar's cast inside it while the compiled caster tests every pair (:func:`_sense_cast`, the
caster's kernel handed over at run time: :func:`bind`; plugins import neither the engine nor
the caster). :mod:`coopsim.sim.fused` chooses the pass and hands the readings out.

What it saves is the plain path's Python: the frame, one ``sense``/``measure``/``clip`` a
kind, the noise draw's blocks, the memo of the wheel speeds, the ray geometry, the calls
between the kernels; on the kinematic engine :func:`_act` also checks the robots' health
(the bounds of :mod:`coopsim.model.health`) on the state it leaves. What stays outside the
calls: the health check between the step and the readings on other engines, a cast on the
caster's grid (many pairs) or before the compiled caster serves (the plain path's geometry and
cast) and the bumper's contact flags (the engine's ``contacts``).

Same results: each reading is made by the row functions the kinds' own kernels call on the plain
path (:mod:`.kernels`: the motors' wheel speeds, odometry's midpoint rule, the target's
distances and angles, the sonar's clip, the compass' wrap; noise ``out + z * noise`` as their
kernels add it), and the normals are the plan's draw (:mod:`coopsim.model.noise_kernels`, counter-based, drawn
in the call from the step's key): a step gives the same bits either way
(tests/sim/test_groundfused.py), so the two paths may alternate. The pass refuses (the plan
says why) a kind with a rate or lost readings, noise it does not draw (the target's, odometry's
slip), a kind on some robots only, another kind or actuator, a 3D engine; a step with
``threads.ROWS_MIN`` robots or more gives way to the plain path. Frames and units: world frame;
m, m/s, rad, rad/s, s.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ...model import health as bounds
from ...model import noise_kernels
from ...model.compiled import jit, load_pending, warmer
from ...model.threads import ROWS_MIN, parallel
from . import kernels
from .common import sensing_refusal

#: The kinds the pass computes; ``motors`` the one that acts.
LABELS = ("motors", "sonar", "target", "odometry", "gps", "compass", "bumper")
ACTING = "motors"
NOISY = ("sonar", "gps", "compass")  # the kinds whose noise the call adds (base ``measure``)
#: The readings' widths (the sonar's: its beams; the target's: 2 a target)
WIDTH = {"motors": 4, "odometry": 5, "gps": 2, "compass": 1, "bumper": 2}


@jit(inline=True)
def _noisy(out, key, start, noise):
    """``out`` (n, k) += normals ``start`` .. of the step's draw keyed by ``key`` times each
    row's ``noise`` (Module.measure's ``out + normals * noise[:, None]``); none when
    ``start`` < 0 (the kind draws nothing)."""
    if start < 0:
        return
    k = out.shape[1]
    for i in range(out.shape[0]):
        for j in range(k):
            out[i, j] = out[i, j] + noise_kernels.normal(key, start + i * k + j) * noise[i]


@jit(inline=True)
def _fill(state, heading, dt, driven, prev, contact, par, targets, keys, starts, outs):
    """:func:`_sense`'s readings once the sonar's (``outs[1]``) holds its cast distances: each
    kind's row function of :mod:`.kernels` (the plain path's kernels call the same ones)."""
    motors, sonar, odometry, gps, compass, bumper, target = outs
    key = keys[0]
    axle = par[0]
    for i in range(len(motors)):  # kernels.motors_sense
        motors[i, 0], motors[i, 1] = driven[i, 0], driven[i, 1]
        motors[i, 2], motors[i, 3] = kernels._wheels(state[i, 3], state[i, 4], state[i, 5],
                                                     heading[i, 0], heading[i, 1], axle[i])
    for i in range(len(odometry)):  # kernels.odometry_sense (no slip: the pass draws none)
        kernels._odometry_row(i, state[i, 2], state[i, 3], state[i, 4], state[i, 5],
                              heading[i, 0], heading[i, 1], axle[i], dt, 0.0, 0.0, 0.0, prev,
                              odometry)
    for i in range(len(gps)):
        gps[i, 0], gps[i, 1] = state[i, 0], state[i, 1]
    for i in range(len(compass)):
        compass[i, 0] = state[i, 2]
    for i in range(len(bumper)):
        bumper[i, 0], bumper[i, 1] = contact[i, 0], contact[i, 1]
    _noisy(sonar, key, starts[0], par[2])
    _noisy(gps, key, starts[1], par[3])
    _noisy(compass, key, starts[2], par[4])
    reach = par[1]
    for i in range(len(sonar)):  # kernels.sonar_sense's clip
        for j in range(sonar.shape[1]):
            sonar[i, j] = kernels._clip(sonar[i, j], 0.0, reach[i])
    for i in range(len(compass)):  # kernels.compass_sense's wrap
        compass[i, 0] = kernels._wrap(compass[i, 0])
    for i in range(len(target)):  # kernels.target_sense (no noise: the pass draws none)
        kernels._target_row(i, state[i, 0], state[i, 1], state[i, 2], targets, target)


@jit()
def _sense(state, heading, dt, driven, prev, contact, dist, par, targets, keys, starts, outs):
    """Every reading of a ground world's step from the planar ``state`` (N, 6: x, y, yaw, vx,
    vy, yaw rate) after it, every robot carrying each kind present (a kind absent: its output
    has no rows).

    Args:
        heading: (N, 2) cos, sin of the yaws (the ray geometry's, numpy's bits).
        dt: The step, s.
        driven: (N, 2) the wheel speeds the motors drove this step, m/s.
        prev: (N, 5) odometry's last reading. contact: (N, 2) the engine's contact flags.
        dist: (N, K) the sonar's cast distances, m.
        par: (6, N) per robot: wheel separation (m), the sonar's max_range (m), the sonar's,
            gps' and compass' ``noise``, the chassis radius (m) (:meth:`GroundPass._keep`).
        targets: (T, 2) target positions, m.
        keys: (1,) uint64: this step's noise key (an array: a numpy scalar costs the call
            ~0.3 us to type); starts: (sonar, gps, compass) first normal of
            each in the step's draw, -1: none.
        outs: The readings (motors, sonar, odometry, gps, compass, bumper, target (N, 2T)).
    """
    sonar = outs[1]
    for i in range(len(sonar)):
        for j in range(sonar.shape[1]):
            sonar[i, j] = dist[i, j]
    _fill(state, heading, dt, driven, prev, contact, par, targets, keys, starts, outs)


#: The compiled caster's fan of every robot (:func:`coopsim.raycast.jitcast._fan_robots`),
#: handed over at run time (:func:`bind`: plugins do not import the caster) before
#: :func:`_sense_cast` compiles.
FAN = None


@jit()
def _sense_cast(state, heading, dt, driven, prev, contact, par, targets, keys, starts, outs,
                fan, group, fixed, objects):
    """:func:`_sense` with the sonar's cast in the same call: :data:`FAN` (the caster's own
    kernel, the bits of its call) writes the distances into ``outs[1]`` and ``heading``;
    ``fan`` (K, 2) the angles' cos, sin, ``group`` (N,) int64 the robots' groups, ``fixed``
    and ``objects`` the static and the moving objects' shapes as the caster keeps them."""
    FAN(state, par[5], group, fan, par[1], fixed, objects, heading, outs[1])
    _fill(state, heading, dt, driven, prev, contact, par, targets, keys, starts, outs)


_CAST: dict = {"kernel": None, "warm": None}
_CAST_LOCK = threading.Lock()


def bind(kernel) -> bool:
    """Hand the caster's fan kernel over (:meth:`coopsim.sim.sensing.Sensors.fan_parts`) and
    register :func:`_sense_cast`'s load with the background warm-up the first time; True once
    it is loaded (until then the cast is a call of its own)."""
    if _CAST["kernel"] is kernel:  # bound already: no lock a step
        return _CAST["warm"].ready
    with _CAST_LOCK:
        if _CAST["warm"] is None:
            global FAN
            FAN = kernel
            _CAST["warm"] = warmer(_load_cast)
            load_pending()  # compiled (or loaded) here, before the call that needs it
            _CAST["kernel"] = kernel  # after its warm: the test before the lock reads both
        elif _CAST["kernel"] is not kernel:
            return False
    return _CAST["warm"].ready


#: The engine's small-world drive and step (:attr:`coopsim.physics.kinematic.fused.KERNELS`),
#: handed over at run time (:func:`bind_engine`) before :func:`_act` compiles.
DRIVE = STEP = None


@jit(inline=True)
def _healthy(state, edge) -> bool:
    """:func:`coopsim.model.health.healthy_planar`'s test of every (N, 6) planar row (x, y,
    yaw, vx, vy, yaw rate; NaN fails each) inside the call; ``edge``: the floor's half length
    and half width, the fastest speed and turn rate (m/s, rad/s), the reach beyond the edges
    (m). A bool either way, so the same outcome as its row or array form."""
    hx, hy, fast, beyond = edge[0], edge[1], edge[2], edge[3]
    for i in range(len(state)):
        if not (abs(state[i, 3]) <= fast and abs(state[i, 4]) <= fast
                and abs(state[i, 5]) <= fast and abs(state[i, 0]) - hx <= beyond
                and abs(state[i, 1]) - hy <= beyond and math.isfinite(state[i, 2])):
            return False
    return True


@jit()
def _act(commands, max_speed, efficiency, axle, wheels, twist, rows, edge, cmd, mode, driven,
         arrays):
    """The actuators and the engine's step in one call: ``Motors.actuate``'s kernel (the
    wheel speeds ``wheels`` and the chassis' ``twist``, (N, 2)), then the engine's ``drive``
    of robots ``rows`` (:data:`DRIVE` on its ``cmd``, ``mode``, ``driven``) and its ``step``
    (:data:`STEP` on its ``arrays``): the kernels the plain path calls, in its order. Returns
    the health check of the state it left (:func:`_healthy` on ``edge``): True when every
    robot is within the bounds (the sensing phase then checks nothing more)."""
    for i in range(len(wheels)):
        kernels._drive_row(i, commands, max_speed, efficiency, axle, wheels, twist)
    DRIVE(cmd, mode, driven, rows, twist[:, 0], twist[:, 1])
    STEP(cmd, mode, arrays)
    return _healthy(arrays[5], edge)


_ENGINE: dict = {"kernels": None, "warm": None}


def bind_engine(side) -> bool:
    """Hand the engine's fused side over (its ``kernels`` and a ``sample`` of its arrays:
    :class:`coopsim.physics.kinematic.fused.KinematicFused`) and register :func:`_act`'s load
    with the background warm-up the first time; True once it is loaded."""
    if _ENGINE["kernels"] is side.kernels:  # bound already: no lock a step
        return _ENGINE["warm"].ready
    with _CAST_LOCK:
        if _ENGINE["warm"] is None:
            global DRIVE, STEP
            sample = side.sample()
            if sample is None:
                return False
            DRIVE, STEP = side.kernels["drive"], side.kernels["step"]
            _ENGINE["warm"] = warmer(lambda: _load_act(sample))
            load_pending()
            _ENGINE["kernels"] = side.kernels  # after its warm, as bind's
        elif _ENGINE["kernels"] is not side.kernels:
            return False
    return _ENGINE["warm"].ready


def _load_act(sample: tuple) -> None:
    """Compile (or load) :func:`_act` with the motors' arrays and ``sample``, a copy of the
    engine's (``KinematicFused.sample``: their types)."""
    n = len(sample[0])
    _act(np.zeros((n, 2)), np.ones(n), np.ones(n), np.ones(n), np.zeros((n, 2)),
         np.zeros((n, 2)), np.arange(n, dtype=np.int64), np.ones(4), *sample)


def wait() -> bool:
    """Whether a call was bound (:func:`bind`, :func:`bind_engine`: loaded as it is)."""
    warms = [w for w in (_CAST["warm"], _ENGINE["warm"]) if w is not None]
    load_pending()
    return bool(warms) and all(w.ready for w in warms)


def _sample(frozen: bool) -> tuple:
    """:func:`_sense_cast`'s arguments for one robot and one target up to ``outs`` (state,
    heading, dt, driven, prev, contact, par, targets, keys, starts, outs) as a step
    gives them: the sealed readings read-only, the state the engine's copy or a read-only
    view (``frozen``)."""
    state, prev = np.zeros((1, 6)), np.zeros((1, 5))
    state.flags.writeable = not frozen
    prev.flags.writeable = False
    outs = (np.zeros((1, 4)), np.zeros((1, 11)), np.zeros((1, 5)), np.zeros((1, 2)),
            np.zeros((1, 1)), np.zeros((1, 2)), np.zeros((1, 2)))
    return (state, np.zeros((1, 2)), 0.1, np.zeros((1, 2)), prev, np.zeros((1, 2)),
            np.ones((6, 1)), np.zeros((1, 2)), np.ones(1, np.uint64), np.full(3, -1, np.int64),
            outs)


def _load() -> None:
    """Compile (or load from numba's cache) :func:`_sense` with one robot and one target."""
    for frozen in (False, True):  # the engine's copy of the state, or a read-only view
        args = _sample(frozen)
        _sense(*args[:6], np.zeros((1, 11)), *args[6:])


def _load_cast() -> None:
    """Compile (or load) :func:`_sense_cast` with the shapes' arrays as the caster keeps
    them (:meth:`coopsim.sim.sensing.Sensors.fan_parts`)."""
    circles, segments = np.zeros((0, 3)), np.zeros((0, 4))
    groups = np.zeros(0, np.int64)
    for frozen in (False, True):
        _sense_cast(*_sample(frozen), np.ones((11, 2)), np.zeros(1, np.int64),
                    (circles, groups, segments, groups), (circles, segments, groups, groups))


#: Ready once the background warm-up has loaded :func:`_sense`.
WARM = warmer(_load)


class GroundPass:
    """One plan's fused pass over a world of ground robots (chosen by :mod:`coopsim.sim.fused`
    through the ``fused_pass`` of every kind it computes).

    Args:
        motors: The acting entry (label, module, rows, values, every) of ``motors``.
        sensing: Label -> the sensing plan's entry of each kind (coopsim.sim.sensing).
        angles: The sonar's beam angles from the heading (11,), rad.
    """

    acting = ACTING
    after = ()  # every reading is made by the pass

    def __init__(self, motors, sensing: dict, angles: np.ndarray) -> None:
        self.rows = motors[2]
        self.values = motors[3]
        self.sensing = sensing
        self.reach = (np.array(sensing["sonar"][3]["max_range"], dtype=float)
                      if "sonar" in sensing else _NONE1)
        self.angles = angles
        self.fan = np.column_stack((np.cos(angles), np.sin(angles)))  # as the casters turn
        self._kept: tuple = (None, None)  # what measure takes from the layout (_keep)
        self._side = None  # the engine's fused side when this step's physics took its call
        self._bound = None  # the engine's fused side once its call is loaded (bind_engine)
        self._keys = np.zeros(1, np.uint64)  # the step's noise key, as _sense takes it
        self._edge = (None, np.zeros(4))  # (the floor, _healthy's bounds on it)
        self._twist = np.empty((len(self.rows), 2))  # scratch: the chassis' speeds, m/s, rad/s

    @classmethod
    def build(cls, acting: tuple, sensing: tuple, engine, casts3d: bool):
        """The pass for a plan's ``acting`` and ``sensing`` entries on ``engine``, or None
        and why not (one sentence)."""
        if casts3d or "flight" in engine.features:
            return None, f"engine '{engine.label}' senses in 3D"
        if len(acting) != 1 or acting[0][0] != ACTING or not acting[0][4]:
            label = next((e[0] for e in acting if e[0] != ACTING), ACTING)
            return None, f"module '{label}' is not driven by every robot's motors only"
        for entry in sensing:
            why = sensing_refusal(entry, LABELS, entry[7] and entry[0] not in NOISY)
            if why:
                return None, why
        by = {entry[0]: entry for entry in sensing}
        if ACTING not in by:
            return None, "module 'motors' does not sense"
        sonar = by.get("sonar")  # its beam angles, the same floats as sonar.ANGLES
        angles = np.array(sonar[1].copy_angles if sonar is not None else (), dtype=float)
        side = engine.fused()
        if side is not None:  # its one call loaded from the start, not from the first step
            bind_engine(side)
        return cls(acting[0], by, angles), ""

    def ready(self) -> bool:
        """Whether this step may take the pass: few enough robots for one thread (from
        ``threads.ROWS_MIN`` rows the plain path's kernels share them among numba's threads:
        the same bits)."""
        return len(self.rows) < ROWS_MIN or not parallel(len(self.rows), ROWS_MIN)

    def physics(self, sim) -> bool:
        """The actuators and the engine's step (``Motors.actuate``'s kernel, the engine's
        ``drive`` and ``step``): one compiled call where the engine hands its small world's
        kernels over (:meth:`~coopsim.physics.engine.Engine.fused`), else a call each; the
        readings are made at :meth:`measure`, on the state the health check passed. True:
        the step stays fused."""
        n, p = len(self.rows), self.values
        # read, never written here: not marked touched (CommandTables), so the snapshot shares
        # the last one's copy of the table instead of copying it again each step
        table = dict.__getitem__(sim.commands, ACTING)
        wheels, twist = np.empty((n, 2)), self._twist  # the wheels' speeds kept (actuated)
        engine = sim.world.engine
        side = engine.fused()
        bound = side is not None and (side is self._bound or bind_engine(side))
        arrays = side.arrays(sim.dt) if bound else None
        self._bound = side if bound else None  # once loaded, loaded for good: no ask a step
        self._side = side if arrays is not None else None  # its contacts read at measure
        edge = self._edge
        if edge[0] is not sim.world.floor:
            edge = self._bounds(sim.world.floor)
        if arrays is not None:  # True: every robot within the bounds, checked in the call
            sim.health.vouched = _act(table, p["max_speed"], p["efficiency"], sim.robots.axle,
                                      wheels, twist, self.rows, edge[1], *arrays)
            side.stepped()
        else:  # the serial kernels straight away: ready() holds the rows under ROWS_MIN
            kernels.drive.serial(table, p["max_speed"], p["efficiency"], sim.robots.axle,
                                 wheels, twist)
            engine.drive(self.rows, twist[:, 0], twist[:, 1])
            engine.step(sim.dt)
        sim.actuated[ACTING] = wheels
        kept = sim.states.get(ACTING)  # the wheels driven, as Motors.actuate's kernel keeps them
        kept.arrays["driven"][self.rows] = wheels
        kept.seen[self.rows] = True
        return True

    def _bounds(self, floor) -> tuple:
        """(``floor``, :func:`_healthy`'s ``edge`` on it), kept: made once a floor."""
        self._edge = (floor, np.array([floor.length / 2, floor.width / 2,
                                       min(bounds.MAX_SPEED, bounds.MAX_RATE), bounds.BEYOND]))
        return self._edge

    def measure(self, sim, state: np.ndarray) -> dict:
        """Every kind's reading of this step from the planar ``state`` (N, 6) after it, with
        its noise: label -> (N, width), as the plain sensing phase makes them."""
        world, sensors = sim.world, sim.sensors
        key, layout = sensors.key(sim.params, world, sim.rng)
        prev = sensors.carried(world)["odometry"]
        n = len(state)
        kept = self._kept
        if kept[0] is not layout or kept[1] != (world.layout_version, n):
            kept = self._keep(sim, layout, n)
        _, _, labels, shapes, targets, heading, starts, par = kept
        if labels is _OUTS:  # every kind carried: one fresh array each
            outs = tuple(map(np.empty, shapes))
        else:
            outs = tuple([np.empty(shape) if type(shape) is tuple else shape for shape in shapes])
        if "bumper" not in self.sensing:
            contact = _NONE
        elif self._side is not None:  # the engine's flags: the kernel copies them as they are
            contact = self._side.contacts()
        else:
            contact = world.engine.contacts(state[:, :3])
        keys = self._keys
        keys[0] = 0 if key is None else key
        # sonar: its cast inside the one call when the compiled caster tests every pair
        parts = sensors.fan_parts(world, n, len(self.fan)) if len(self.fan) else None
        if parts is not None and bind(parts[0]):
            _sense_cast(state, heading, sim.dt, sim.actuated[ACTING], prev, contact, par,
                        targets, keys, starts, outs, self.fan, sim.robots.group,
                        parts[1], parts[2])
        else:
            dist, heading = self._cast(sim, state, heading)
            _sense(state, heading, sim.dt, sim.actuated[ACTING], prev, contact, dist, par,
                   targets, keys, starts, outs)
        motors, sonar, odometry, gps, compass, bumper, target = outs
        if labels is _OUTS:  # a dict display: less than half dict(zip())'s cost
            return {"motors": motors, "sonar": sonar, "odometry": odometry, "gps": gps,
                    "compass": compass, "bumper": bumper, "target": target}
        outs = (motors, sonar, odometry, gps, compass, bumper, target)
        return {label: outs[k] for label, k in labels}

    def _cast(self, sim, state: np.ndarray, heading: np.ndarray) -> tuple:
        """(the sonar's (N, K) distances, m, or none; the yaws' (cos, sin)) by a call of its
        own: the compiled caster's for many pairs (the chassis read from the state), or the
        numpy caster's geometry and cast (the same bits)."""
        if not len(self.fan):  # as the geometry makes it: numpy's cos and sin
            np.cos(state[:, 2], out=heading[:, 0])
            np.sin(state[:, 2], out=heading[:, 1])
            return _NONE, heading
        world, sensors, robots = sim.world, sim.sensors, sim.robots
        dist = sensors.fan_robots(world, state, robots, self.fan, self.reach, heading)
        if dist is not None:
            return dist, heading
        geometry = sensors.geometry(world, state[:, :3], robots.radius, robots.group)
        return geometry.cast_fan(self.rows, self.angles, self.reach), geometry.heading

    def _keep(self, sim, layout: tuple, n: int) -> tuple:
        """What :meth:`measure` takes from the layout: the readings' shapes in
        :func:`_sense`'s order (absent kinds: an empty array, shared), the targets, scratch
        (headings), the noise blocks' starts and the rows' parameters (:func:`_sense`'s
        ``par``)."""
        by, world = self.sensing, sim.world
        targets = sim.sensors.targets(world) if "target" in by else _NO_TARGETS
        width = dict(WIDTH, sonar=len(self.angles))
        width["target"] = 2 * len(targets)
        shapes = [((n, width[label]) if label in by else np.empty((0, width[label])))
                  for label in _OUTS]
        starts, noises = self._noise(layout)
        par = np.zeros((6, n))
        par[0], par[5] = sim.robots.axle, sim.robots.radius
        if len(self.reach):
            par[1] = self.reach
        for k, noise in enumerate(noises):
            if len(noise):
                par[2 + k] = noise
        self._kept = (layout, (world.layout_version, n),
                      _OUTS if all(label in by for label in _OUTS) else
                      tuple((label, k) for k, label in enumerate(_OUTS) if label in by),
                      tuple(shapes), targets, np.empty((n, 2)), starts, par)
        return self._kept

    def _noise(self, layout: tuple) -> tuple:
        """((sonar, gps, compass) first normal in ``layout``'s draw, -1: none; their
        ``noise`` parameters)."""
        starts = np.full(3, -1, np.int64)
        noises = []
        for k, label in enumerate(NOISY):
            part = next((p for p in layout[2] if p[0] == label), None)
            if part is not None and part[4]:
                starts[k] = part[3]
            entry = self.sensing.get(label)
            noises.append(np.array(entry[3]["noise"], dtype=float)
                          if entry is not None else _NONE1)
        return starts, noises


_NONE = np.zeros((0, 2))
_NONE1 = np.zeros(0)
#: :func:`_sense`'s readings, in the order it takes them
_OUTS = ("motors", "sonar", "odometry", "gps", "compass", "bumper", "target")
_NO_TARGETS = np.zeros((0, 2))
