"""What a module kind keeps between steps and the noise it draws: its state schema.

A module class may declare the per-robot state it keeps from one step to the next (an IMU's last
velocity and biases, the rotors' speeds)::

    state_fields = (StateField("v", (3,)), StateField("t"), StateField("bias", (6,)))

and the simulation keeps one :class:`KindState` per kind for it: a float64 array per field of
shape ``(N, *shape)`` indexed by the frame's robot row (like ``frame.pose``), and ``seen``,
False for a robot whose state was never written. A module reads and writes them in place
through ``frame.state(label)`` (and sets ``seen[rows] = True``). The tables persist across
steps, are laid out again by robot name only when the layout changes (a new robot gets the
fields' defaults, ``seen`` False) and start afresh on a reset and a ``restore_layout``
(:mod:`coopsim.sim.states`). This replaces the ``ByName`` boards on ``frame.extra``, which keep
working for modules written before.

A kind may also declare how many standard normal draws it needs per robot row and measured step
(``noise_draws(p)``, :class:`~coopsim.model.module.Module`): the sensing plan then draws the
noise of every kind in one generator call a step and hands each its block
(``frame.normals(label)``, ``frame.uniforms(label)`` for lost data), see
:mod:`coopsim.sim.sensing`. Frames and units as in :mod:`coopsim.model.module`. Nothing here
imports pymunk, zmq or the simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import armviews
from .specs import ZONE_KINDS


@dataclass(frozen=True)
class StateField:
    """One per-robot quantity a module kind keeps between steps.

    Attributes:
        name: The field's name (a key of :attr:`KindState.arrays`).
        shape: The shape of one robot's value (``()``: a scalar, ``(3,)``: a vector).
        default: A robot's value before it is first written (a scalar, or anything that
            broadcasts to ``shape``), in the field's own units.
    """

    name: str
    shape: tuple[int, ...] = ()
    default: float | tuple = 0.0


class KindState:
    """The per-robot state of one module kind, for every robot of the frame (rows as
    ``frame.pose``'s): written in place by the module's ``sense``/``measure``/``actuate``.

    Attributes:
        fields: The kind's :class:`StateField` declarations.
        arrays: Field name -> float64 array (N, *shape).
        seen: (N,) bool: False for a robot whose state was never written (new since the last
            layout, or put back after it diverged); the module sets it True when it writes.
    """

    __slots__ = ("fields", "arrays", "seen", "kernel_args")

    def __init__(self, fields: tuple[StateField, ...], n: int) -> None:
        self.fields = tuple(fields)
        self.arrays = {f.name: fresh(f, n) for f in self.fields}
        self.seen = np.zeros(n, dtype=bool)
        #: The arrays in ``fields`` order, then ``seen``: as a kind's kernels take them
        self.kernel_args = (*self.arrays.values(), self.seen)

    def __len__(self) -> int:
        return len(self.seen)

    def reset_rows(self, rows) -> None:
        """Robots ``rows`` start over from the defaults, as if never seen."""
        for f in self.fields:
            self.arrays[f.name][rows] = f.default
        self.seen[rows] = False

    def taken(self, keep: np.ndarray) -> "KindState":
        """A new table whose row i is this table's row ``keep[i]`` (-1: a new robot, with the
        defaults and ``seen`` False): the layout change's remap."""
        out = KindState(self.fields, len(keep))
        have = keep >= 0
        if have.any():
            for name, arr in self.arrays.items():
                out.arrays[name][have] = arr[keep[have]]
            out.seen[have] = self.seen[keep[have]]
        return out


def _no_fields(label: str) -> tuple[StateField, ...]:
    return ()


#: Module label -> its ``state_fields``: set by the registry (:mod:`coopsim.model.plugins`,
#: which imports the modules' contract: it cannot be imported from there).
fields_of = _no_fields


def fresh(field: StateField, n: int) -> np.ndarray:
    """(n, *shape) float64 filled with ``field``'s default."""
    out = np.empty((n, *field.shape))
    out[...] = field.default
    return out


def normals(frame, label: str, rows: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """(len(rows), k) standard normals for module ``label``: the plan's block for this step
    (``frame.normals(label)``) when it drew one of that shape, else ``k`` fresh draws a row from
    ``rng`` (a frame built outside the sensing plan: a test's, a batched copy's)."""
    block = frame.normals(label) if hasattr(frame, "normals") else None
    if block is not None and block.shape == (len(rows), k):
        return block
    return rng.standard_normal((len(rows), k))


def uniforms(frame, label: str, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(len(rows),) uniform draws in [0, 1) for the lost data of module ``label``: the plan's
    block (``frame.uniforms(label)``) when it drew one, else fresh draws from ``rng``."""
    block = frame.uniforms(label) if hasattr(frame, "uniforms") else None
    if block is not None and len(block) == len(rows):
        return block
    return rng.random(len(rows))


# -- a kind's compiled kernels (the ModuleKernel capability) -----------------------------------

#: The frame arrays a kind's kernels may read (``kernel_views``), read-only: ``pose`` (N, 3) x, y,
#: yaw (m, rad, world frame); ``velocity`` (N, 3) vx, vy (m/s, world frame), yaw rate (rad/s);
#: ``state3d`` (N, 13) on a 3D engine ((0, 13) on a 2D one); ``radius``, ``axle`` (N,) m;
#: ``group`` (N,) int64; ``contact`` (N, 2) float64 the engine's contact flags of the last step
#: (1.0 where the chassis touches something at its front / rear half): every robot's rows,
#: indexed by ``rows[k]``. Not by rows: ``dt`` (1,) float64 the step, s; ``targets`` (T, 2)
#: float64 the targets' positions, m, world frame; ``ranges`` (len(rows), K) float64 the fan of
#: a kind declaring ``kernel_beams`` (its K beams' angles from the heading, rad,
#: counter-clockwise) and a ``max_range`` parameter: each beam's distance from the chassis edge,
#: m, cast from the centre against everything but the robot's own parts, ``max_range`` where
#: nothing is nearer (the 2D geometry's ``cast_fan``, or the 3D cast on an engine casting in
#: 3D), indexed by ``k``, not ``rows[k]``. The views the core computes for one kind
#: (``clock``, ``full_state``, ``below``) are :data:`COMPUTED`'s.
VIEWS = ("pose", "velocity", "state3d", "radius", "axle", "group", "contact", "dt", "targets",
         "ranges")
#: What a composed call (coopsim.sim.compose) is handed in place of a view none of its kinds
#: reads: a number, not an empty array of the view's type. Every array handed to a compiled
#: call is typed and unpacked at each call (arm views alone are eleven); a generated call
#: that named such a view would not compile.
UNREAD = 0
_NO_3D = np.zeros((0, 13))
_NO_3D.setflags(write=False)
_NO_UNIFORMS = np.zeros(0)
_NO_UNIFORMS.setflags(write=False)

#: (whether a frame casts in 3D, the 3D fan ``(frame, rows, angles, reach)``): set by
#: :mod:`coopsim.plugins.modules.ranging3d` when it is imported (the model imports no plugin);
#: None until then (every frame casts in the floor slice).
FAN3D: list = [None]


def views_of(frame, names: tuple, module=None, rows=None, p=None) -> tuple:
    """The frame arrays ``names`` (of :data:`VIEWS`) as a kind's kernel takes them, read-only:
    ``ranges`` needs the kind (``module``: its ``kernel_beams``), its ``rows`` and parameter
    arrays ``p`` (its ``max_range``); so do the views the core computes for one kind
    (:data:`COMPUTED`)."""
    out = []
    for name in names:
        made = COMPUTED.get(name)
        if made is not None:
            value = made(frame, module, rows, p)
        elif name == "ranges":
            value = ranges(frame, module, rows, p)
        elif name == "contact":
            value = read_only(frame.contacts)
        elif name == "dt":
            value = np.full(1, float(frame.dt))
            value.setflags(write=False)
        elif name == "targets":
            value = read_only(np.asarray(frame.targets, dtype=float).reshape(-1, 2))
        else:
            value = getattr(frame, name)
            value = _NO_3D if value is None and name == "state3d" else read_only(value)
        out.append(value)
    return tuple(out)


def ranges(frame, module, rows, p) -> np.ndarray:
    """The ``ranges`` view: (len(rows), K) distances, m, from each robot's chassis edge along
    ``module.kernel_beams`` (rad from the heading), within its ``max_range`` (``p``), m."""
    angles = _beams(module)
    reach = p["max_range"]
    found = FAN3D[0]
    if found is not None and found[0](frame):  # from its real 3D pose (mujoco, aerial)
        return read_only(found[1](frame, rows, angles, reach))
    # cast from the centre (own chassis skipped by group), less the radius: a ray starting on
    # the chassis edge would begin inside a wall the robot is pressed into
    return read_only(frame.geometry.cast_fan(rows, angles, reach))


def _beams(module, _kept: dict = {}) -> np.ndarray:  # noqa: B006 -- the kinds' angles
    """``module.kernel_beams`` as a float64 array, made once a kind."""
    found = _kept.get(module)
    if found is None:
        found = _kept[module] = np.array(module.kernel_beams, dtype=float)
        found.setflags(write=False)
    return found


def param_matrix(module, p) -> np.ndarray:
    """(len(rows), P) float64: the parameter arrays ``p`` of ``module``'s robots as its kernels
    take them, one column per entry of ``module.params`` in order (a parameter that is not a
    number: NaN), read-only."""
    return _bound(module, p)[0]


def _bound(module, p) -> tuple:
    """(the :func:`param_matrix`, the normals a robot ``measure`` draws (its ``noise_draws``,
    else the reading's width, -1, while its ``noise`` is non-zero somewhere, else 0), whether
    it draws a uniform for lost data, an empty (len(rows), 0) block): worked out once and kept
    on ``p`` (the plan's arrays live as long as its parameter table)."""
    kept = getattr(p, "_kernel", None)
    if kept is not None and kept[0] is module:
        return kept[1]
    n = len(next(iter(p.values()))) if p else 0
    matrix = np.full((n, len(module.params)), np.nan)
    for j, spec in enumerate(module.params):
        value = p.get(spec.name)
        if value is not None and np.asarray(value).dtype.kind in "biuf":
            matrix[:, j] = value
    matrix.setflags(write=False)
    declared = getattr(module.noise_draws, "__func__", None) is not _BASE_DRAWS[0]
    k = int(module.noise_draws(p)) if declared else (-1 if _declared(p, "noise") else 0)
    none = np.zeros((n, 0))
    none.setflags(write=False)
    found = (matrix, k, _declared(p, "lost"), none)
    try:
        p._kernel = (module, found)
    except AttributeError:  # a plain dict (a frame built outside the simulation): not kept
        pass
    return found


def state_of(module, frame) -> tuple:
    """``module``'s state table as its kernels take it: the arrays in ``state_fields`` order,
    then ``seen``; () for a kind that keeps none."""
    if not module.state_fields:
        return ()
    return frame.state(module.label).kernel_args


def sense_by_kernel(module, sense, frame, rows, p, prev, rng, noisy: bool) -> np.ndarray:
    """``module``'s reading of robots ``rows`` by its compiled ``sense`` (``kernel_sense``):
    with its noise and lost data when ``noisy`` (the plan's blocks of this step, else draws
    from ``rng`` in the base ``measure``'s order), else none (its noiseless ``sense``)."""
    n = len(rows)
    out = np.empty((n, prev.shape[1]))
    if not n:
        return out
    matrix, k, lossy, z = _bound(module, p)
    # every array the kernel only reads is read-only (one compiled version for all callers)
    if noisy and k:
        z = read_only(normals(frame, module.label, rows, prev.shape[1] if k < 0 else k, rng))
    u = (read_only(uniforms(frame, module.label, rows, rng)) if noisy and lossy
         else _NO_UNIFORMS)
    sense(views_of(frame, module.kernel_views, module, rows, p), rows, matrix,
          state_of(module, frame), z, u, read_only(prev), out)
    return out


def read_only(arr: np.ndarray) -> np.ndarray:
    """``arr``, or a read-only view of it (its owner may still write it). What every caller
    hands a kernel as an array the kernel only reads (a frame's views, commands): numba
    compiles a version of a kernel for each way an argument is typed, writable or not."""
    if arr.flags.writeable:
        arr = arr.view()
        arr.flags.writeable = False
    return arr


def actuate_by_kernel(module, actuate, role: tuple, frame, rows, p, commands) -> np.ndarray:
    """``module``'s actuation of robots ``rows`` by its compiled ``actuate``
    (``kernel_actuate``): what it computes for the engine (``kernel_drive``: the role, a
    :class:`~coopsim.model.module.PhysicsAccess` method taking ``rows`` and the drive's
    parts, :func:`drive_parts`) handed over (the engine's refusal, a
    :class:`~coopsim.model.errors.SimulationError`, raised from there); returns what it keeps
    as actuated (len(rows), command fields)."""
    n = len(rows)
    out = np.empty((n, len(module.command_fields)))
    drive = np.empty((n, drive_width(role)))
    actuate(views_of(frame, module.kernel_views, module, rows, p), rows, _bound(module, p)[0],
            state_of(module, frame), commands, out, drive)
    if role:
        getattr(frame.physics, role[0])(rows, *drive_parts(role, drive))
    return out


def _declared(p, name: str) -> bool:
    """Whether parameter ``name`` is declared and non-zero for some robot (``p.zero``)."""
    if name not in p:
        return False
    zero = getattr(p, "zero", None)
    return name not in zero if zero is not None else bool(np.asarray(p[name]).any())


#: Module.noise_draws' base function, set by coopsim.model.module (which imports this module).
_BASE_DRAWS: list = [None]


# -- the views the core computes for one kind, and a drive handed over in blocks -------------
# (the flying kinds' part of the contract: imu, mocap, altimeter and rotors)

def _clock(frame, module, rows, p) -> np.ndarray:
    """``clock``: (2,) the time of the step measured (s, ``frame.time``) and its length
    (s, ``frame.dt``), read-only."""
    out = np.array((float(frame.time), float(frame.dt)))
    out.setflags(write=False)
    return out


def floor_state(pose: np.ndarray, velocity: np.ndarray) -> np.ndarray:
    """(N, 13) STATE3D columns (x, y, z m; quaternion w, x, y, z body to world; vx, vy, vz m/s
    world frame; wx, wy, wz rad/s body frame) of bodies on the floor, from their planar
    ``pose`` (N, 3) and ``velocity`` (N, 3): z 0, turned about z only."""
    out = np.zeros((len(pose), 13))
    out[:, 0:2], out[:, 3], out[:, 6] = pose[:, :2], np.cos(pose[:, 2] / 2), np.sin(pose[:, 2] / 2)
    out[:, 7:9], out[:, 12] = velocity[:, :2], velocity[:, 2]
    return out


def _full_state(frame, module, rows, p) -> np.ndarray:
    """``full_state``: (N, 13) every robot's STATE3D: ``frame.state3d`` on an engine with the
    ``flight`` feature, else the planar state on the floor (:func:`floor_state`, made once a
    frame), read-only."""
    if frame.state3d is not None:
        return read_only(frame.state3d)
    memo = getattr(frame, "memo", None)
    made = memo.get("kernel.full_state") if memo is not None else None
    if made is None:
        made = floor_state(frame.pose, frame.velocity)
        made.setflags(write=False)
        if memo is not None:
            memo["kernel.full_state"] = made
    return made


_NO_BELOW = np.zeros(0)
_NO_BELOW.setflags(write=False)


def _below(frame, module, rows, p) -> np.ndarray:
    """``below``: (len(rows),) from each body's underside along its -z axis to what is below,
    m, up to the kind's ``max_range`` parameter (:func:`underside`), read-only, on an engine
    that casts rays in 3D; else (0,) (the kernel works the floor out itself)."""
    physics = getattr(frame, "physics", None)
    if frame.state3d is None or getattr(physics, "casts3d", None) is None \
            or not physics.casts3d():
        return _NO_BELOW
    out = underside(frame.state3d, rows, np.asarray(p["max_range"], dtype=float), physics)
    out.setflags(write=False)
    return out


def underside(state3d: np.ndarray, rows: np.ndarray, reach: np.ndarray, physics) -> np.ndarray:
    """(len(rows),) distances from the underside of each chassis along its body -z axis to
    whatever is below (the floor, an object, another robot), m; ``reach`` (len(rows),) where
    nothing is within it, 0 where the underside touches or sinks into it.

    Cast from the body's origin (its own geoms are not seen) by ``physics.cast3d`` and measured
    from the underside (``physics.chassis_extent``): a quadrotor resting on the floor has its
    underside a hair below the floor's plane, where a ray would start past the floor and see
    nothing. ``state3d``: every robot's (N, 13) STATE3D."""
    state = state3d[rows]
    w, x, y, z = state[:, 3], state[:, 4], state[:, 5], state[:, 6]
    below = -physics.chassis_extent(rows)[:, 0]  # (n,): origin to underside, m
    # (n, 3): the body's -z axis in the world, the last column of its rotation, alone
    # (np.array and minimum/maximum: np.stack's and np.clip's wrappers cost more than the
    # arithmetic for a few robots)
    down = -np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)]).T
    dist = physics.cast3d(rows, state[:, :3], down[:, None, :], reach + below)
    return np.minimum(np.maximum(dist[:, 0] - below, 0.0), reach)


def zone_view(spec, _kept: list = [(None, None)]) -> tuple:  # noqa: B006 -- the last map's
    """The ``zones`` view of map ``spec`` (a :class:`~coopsim.model.specs.MapSpec`, or None):
    (a (E, 2), b (E, 2) each edge of every zone's outline from a to b, m, world frame; zone
    (E,) int64 the zone of each edge, in file order; kind (Z,) float64 each zone's code, 1 +
    its index in :data:`~coopsim.model.specs.ZONE_KINDS` (1 water, 2 border, 3 nogo)),
    read-only; empty arrays without zones. Made once a map (a new one with each layout)."""
    last, made = _kept[0]
    if last is spec and made is not None:
        return made
    zones = spec.zones if spec is not None else ()
    a = [np.asarray(z.polygon, dtype=float) for z in zones]
    made = (np.vstack(a) if a else np.zeros((0, 2)),
            np.vstack([np.roll(v, -1, axis=0) for v in a]) if a else np.zeros((0, 2)),
            np.repeat(np.arange(len(a), dtype=np.int64), [len(v) for v in a]),
            np.array([ZONE_KINDS.index(z.kind) + 1 for z in zones], dtype=float))
    for arr in made:
        arr.setflags(write=False)
    _kept[0] = (spec, made)  # one assignment: another world's thread sees both or neither
    return made


def _zones(frame, module, rows, p) -> tuple:
    """``zones``: :func:`zone_view` of the frame's map (``frame.extra["map"]``)."""
    return zone_view((getattr(frame, "extra", None) or {}).get("map"))


def _arm_views(frame, name: str) -> object:
    """The arm kinds' view ``name`` (:mod:`coopsim.model.armviews`) of every robot of
    ``frame``, made once a frame (``arm`` and ``wrench`` read through ``frame.physics``)."""
    memo = getattr(frame, "memo", None)
    key = "kernel." + name
    found = memo.get(key) if memo is not None else None
    if found is None:
        names = frame.names or tuple(range(len(frame.pose)))
        found = armviews.views(frame.physics, names, (name,),
                               (getattr(frame, "extra", None) or {}).get("held"),
                               getattr(frame, "objects", ()))[armviews.NAMES.index(name)]
        if memo is not None:
            memo[key] = found
    return found


#: The views the core computes for one kind before its kernel runs, beyond the frame's arrays
#: (name -> maker(frame, module, rows, p)): ``clock`` (2,) float64 the time of the step (s)
#: and its length dt (s); ``full_state`` (N, 13) every robot's STATE3D, the planar state on
#: the floor on a 2D engine (:func:`floor_state`); ``below`` (len(rows),) m from each body's
#: underside down its -z axis to what is below, up to the kind's ``max_range`` parameter
#: (:func:`underside`), (0,) on an engine that does not cast rays in 3D -- indexed by k, not
#: by ``rows[k]``; the arm kinds' ``arm``, ``arm_chain``, ``wrench`` and ``held``, a row per
#: robot (:mod:`coopsim.model.armviews`); ``zones`` the scenario's no-go zones' outlines, a
#: tuple (a (E, 2), b (E, 2), zone (E,) int64, kind (Z,) float64: :func:`zone_view`). Every
#: one read-only.
COMPUTED = {"clock": _clock, "full_state": _full_state, "below": _below, "zones": _zones,
            **{name: (lambda frame, module, rows, p, name=name: _arm_views(frame, name))
               for name in armviews.NAMES}}
VIEWS = (*VIEWS, *COMPUTED)


def drive_width(role: tuple) -> int:
    """The columns of a kind's ``drive`` for its ``kernel_drive`` ``role`` (0 for none)."""
    if not role:
        return 0
    cols = role[1]
    return sum(cols) if isinstance(cols, tuple) else int(cols)


def drive_parts(role: tuple, drive: np.ndarray) -> tuple:
    """What the engine's role method takes after ``rows``: one (n,) array a column of
    ``drive`` when ``role[1]`` is a count (``("drive", 2)``: forward speed, yaw rate), else
    blocks of the widths it lists (``("apply_wrench", (3, 3))``: force (n, 3) N, torque
    (n, 3) N m, body frame)."""
    cols = role[1]
    if not isinstance(cols, tuple):
        return tuple(drive.T)
    parts, at = [], 0
    for width in cols:
        parts.append(drive[:, at:at + width])
        at += width
    return tuple(parts)
