"""Batched 2D ray casting in numba-compiled loops.

Why compiled loops: a numpy caster spends its time building and filtering arrays of (ray,
shape) candidate pairs, ~35 ms for the 110,000 sonar rays of 10,000 robots. Compiled loops need
no pair arrays: each ray walks the grid cells it crosses, nearest
first, tests the shapes there, and stops once the next cell starts beyond its nearest hit.

1. Grid (:mod:`coopsim.raycast.jitgrid`): the shapes binned into square cells, in CSR layout;
   static shapes once (:meth:`JitRayCaster.set_static`), moving ones every cast, on the static
   grid's geometry if they fit in it: the two grids are then merged cell by cell and a ray
   walks one.
2. Walk (:mod:`coopsim.raycast.jitwalk`): an Amanatides-Woo DDA from the ray's origin until the
   next cell starts beyond the best hit so far. Rounding may make it skip a cell the ray grazes,
   or put a computed hit slightly off its shape (~1e-8 x the coordinates' magnitude for a
   near-tangent circle): every shape is padded by ``pad = jitgrid.REL x`` the grid's magnitude,
   far more than either, so the cell reached at the hit distance holds the shape. A ray from
   beyond ~3 grid sizes could need more: it tests every shape of the grid (never so in a
   simulation, whose rays start within its walls).
3. Hits: exact float64 formulas (:mod:`coopsim.raycast.jitgrid`) and a minimum.

Conventions (world frame, metres): a circle is hit where
the ray enters it, 0 if the origin is strictly inside; a segment where the ray crosses it,
endpoints included; a segment parallel to the ray or of zero length never; a ray never hits a
shape of its own non-zero group; nothing hit gives exactly max_range. This is pymunk's
``segment_query_first`` with radius 0, except that pymunk ignores a circle containing the
start and a segment whose line passes through the start.

Threads: one ``prange`` kernel on numba's default threading layer, with the threads the
project's policy gives (:mod:`coopsim.model.threads`; casts of fewer than ``PARALLEL_MIN`` rays
run on the calling thread); each robot's (ray's) distances are its own row: the same bits for any
count.
Kernels compile once and are cached on disk (:mod:`coopsim.model.compiled`).
"""

from __future__ import annotations

import math

import numpy as np

from ..model.compiled import jit as _jit
from ..model.compiled import prange, warmer
from ..model.kernel import read_only
from ..model.threads import by_rows, kernel_threads, parallel
from .jitfan import FAN_BLOCK, fan_gather
from .jitgrid import build, circle_hit, combine, segment_hit
from .jitwalk import fan_dir, trace

def warm_allocator() -> None:
    """Frees an 8 MB block: glibc malloc then raises its mmap and trim thresholds, so a cast's
    temporaries reuse heap pages instead of page-faulting afresh (~1 ms a cast in our VM)."""
    np.empty(1 << 20)


def as_array(a, cols: int, name: str) -> np.ndarray:
    """Returns ``a`` as a finite float64 (N, cols) array; None gives (0, cols)."""
    out = np.zeros((0, cols)) if a is None else np.asarray(a, dtype=np.float64)
    out = out.reshape(0, cols) if out.size == 0 else out
    if out.ndim != 2 or out.shape[1] != cols or not np.isfinite(out).all():
        raise ValueError(f"{name} must be a finite (N, {cols}) array, got shape {out.shape}")
    return out


def as_groups(g, n: int, name: str) -> np.ndarray:
    """Returns the (n,) int64 group array, zeros (no group) when ``g`` is None."""
    out = np.zeros(n, dtype=np.int64) if g is None else np.asarray(g, dtype=np.int64).ravel()
    if out.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {out.shape}")
    return out


# Grid cell side, m: about 0.7 x the sonar's rays (2.2 m). Measured on the 11,000-robot swarm's
# sonar (benchmarks/jitcast_bench.py geometry): 1.5 m 6.0 ms, 1 m 7.6 ms, 2 m 8.7 ms, 3 m 9.0 ms.
CELL_SIZE = 1.5
GATHER = True  # fans: every robot's rays against the shapes around it (jitfan.py), not walks
_ALL_PAIRS = 16384  # fan casts with up to this many (ray, shape) pairs test them all
PARALLEL_MIN = 4096  # rays from which the threads pay (how many: coopsim.model.threads)
_CHUNK = 512  # rows (robots or rays) a thread takes at a time: as fast as a static split


@_jit(inline=True)
def _one_ray(ox, oy, dx, dy, mr, rg, grids):
    """Distance (m) to the first shape of the grid set hit by the ray from (ox, oy) along
    (dx, dy) (made unit here; zero stays zero), of length ``mr``."""
    norm = math.sqrt(dx * dx + dy * dy)
    dx, dy = (dx / norm, dy / norm) if norm != 0.0 else (dx, dy)
    # Inverse components for the walk; one below 1e-150 moves the ray by far less than the
    # padding over any length the DDA serves (see jitwalk.trace), so it counts as none.
    ix = 1.0 / dx if abs(dx) >= 1e-150 else 0.0
    iy = 1.0 / dy if abs(dy) >= 1e-150 else 0.0
    best = mr
    for g in range(len(grids[0])):
        best = trace(grids, g, ox, oy, dx, dy, ix, iy, mr, rg, best)
    return best


@_jit(inline=True)
def _row(n, o, d, fan, angles, reach, edge, rg, grids, out):
    """Fills row n of ``out`` (N, K): rays from o[n] (world frame, m) along d[n] (K = 1), or
    for a ``fan`` along the heading d[n] = (cos, sin) turned by the angles of (cos, sin)
    ``angles`` (K, 2), reach reach[n] + edge[n] and give min(reach[n], distance - edge[n])
    (m): a Sonar reading from the chassis edge; edge 0: the distance. ``reach``, ``edge``
    (1,): alike for all rows."""
    rn, en = reach[n if len(reach) > 1 else 0], edge[n if len(edge) > 1 else 0]
    mr = rn + en
    for k in range(out.shape[1]):
        dx, dy = fan_dir(d, n, angles, k, fan)
        dist = _one_ray(o[n, 0], o[n, 1], dx, dy, mr, rg[n], grids)
        out[n, k] = rn if dist >= mr else dist - en


@_jit(inline=True)
def _nearest_circle(best, x, y, dx, dy, mr, g, circles, groups):
    """``best`` lowered to the nearest hit of ``circles`` (C, 3) not of group ``g``, m."""
    for e in range(len(circles)):
        if g == 0 or groups[e] != g:
            best = min(best, circle_hit(x, y, dx, dy, mr, circles[e, 0], circles[e, 1],
                                        circles[e, 2]))
    return best


@_jit(inline=True)
def _nearest_segment(best, x, y, dx, dy, mr, g, segments, groups, ends):
    """``best`` lowered to the nearest hit of ``segments`` (S, 4) not of group ``g``, m: rows
    [x1, y1, x2 - x1, y2 - y1], or [x1, y1, x2, y2] when ``ends`` (the difference taken here,
    the same subtraction :func:`_flat` makes)."""
    for e in range(len(segments)):
        if g == 0 or groups[e] != g:
            ex, ey = segments[e, 2], segments[e, 3]
            if ends:
                ex, ey = ex - segments[e, 0], ey - segments[e, 1]
            best = min(best, segment_hit(x, y, dx, dy, mr, segments[e, 0], segments[e, 1],
                                         ex, ey))
    return best


@_jit(inline=True)
def _pairs_row(n, o, d, angles, reach, edge, rg, fixed, moving, chassis, out):
    """Row n of :func:`_fan_all_pairs` (see there), with the circles ``chassis`` = (centres
    (M, >= 2), radii (M,), groups (M,)) tested after the moving ones."""
    fc, fcg, fs, fsg = fixed
    mc, ms, mcg, msg = moving
    cs, cr, cg = chassis
    rn, en, g = reach[n], edge[n], rg[n]
    mr = rn + en
    x, y = o[n, 0], o[n, 1]
    for k in range(out.shape[1]):
        dx, dy = fan_dir(d, n, angles, k, True)
        norm = math.sqrt(dx * dx + dy * dy)  # as _one_ray: unit, zero stays zero
        dx, dy = (dx / norm, dy / norm) if norm != 0.0 else (dx, dy)
        best = _nearest_circle(mr, x, y, dx, dy, mr, g, fc, fcg)
        best = _nearest_circle(best, x, y, dx, dy, mr, g, mc, mcg)
        for e in range(len(cr)):  # as _nearest_circle's rows
            if g == 0 or cg[e] != g:
                best = min(best, circle_hit(x, y, dx, dy, mr, cs[e, 0], cs[e, 1], cr[e]))
        best = _nearest_segment(best, x, y, dx, dy, mr, g, fs, fsg, False)
        best = _nearest_segment(best, x, y, dx, dy, mr, g, ms, msg, True)
        out[n, k] = rn if best >= mr else best - en


@_jit()
def _fan_all_pairs(o, d, angles, reach, edge, rg, fixed, moving, out):
    """:func:`_rows` for a ``fan`` by testing every (ray, shape) pair: for a few robots in a
    small world, cheaper than building and merging grids. ``fixed`` = the static shapes as
    :func:`_flat` keeps them (circles (C, 3), their groups, segments (S, 4) [x1, y1, x2 - x1,
    y2 - y1], their groups), ``moving`` = this cast's (segments as [x1, y1, x2, y2]); world
    frame, m. Static circles, moving ones, static segments, moving ones: the order of the
    minimum over one concatenated set, so the same bits."""
    for n in range(len(out)):
        _pairs_row(n, o, d, angles, reach, edge, rg, fixed, moving, (o, edge[:0], rg[:0]),
                   out)


@_jit()
def _fan_robots(state, radius, rg, angles, reach, fixed, objects, heading, out):
    """Every robot's fan (a sonar's, from its chassis edge) by :func:`_fan_all_pairs`'s tests,
    its shapes read where they are: the static ones (``fixed``, as :func:`_flat` keeps them),
    the moving objects' (``objects`` = circles, segments [x1, y1, x2, y2], their groups) and
    every robot's chassis circle from its planar ``state`` (N, >= 3: x, y, yaw) and ``radius``
    (N,), m, of group ``rg`` (N,). Static circles, the objects' circles, the chassis, static
    segments, the objects' segments: :meth:`Sensors.geometry`'s moving set (objects, then
    chassis) in :func:`_fan_all_pairs`' order, so the same bits. Also fills ``heading`` (N, 2)
    with cos, sin of the yaws (:func:`_robot_shape`'s: numpy's bits)."""
    for n in range(len(out)):
        heading[n, 0], heading[n, 1] = math.cos(state[n, 2]), math.sin(state[n, 2])
    for n in range(len(out)):
        _pairs_row(n, state, heading, angles, reach, radius, rg, fixed, objects,
                   (state, radius, rg), out)


#: The kernel that casts every robot's fan by testing every pair, for the composed call that
#: casts inside itself (coopsim.sim.sensing.Sensors.fan_parts): the same bits as the grid's.
fan_robots_kernel = _fan_robots


@_jit(parallel=True)
def _rows(o, d, fan, angles, reach, edge, rg, grids, out):
    """Every row of ``out`` (see :func:`_row`), shared among numba's threads. Also serves the
    small casts (on one thread): without ``prange``, numba increfs and decrefs the arrays
    around every inlined call, which made a serial kernel 3.5 x slower."""
    for n in prange(len(out)):
        _row(np.int64(n), o, d, fan, angles, reach, edge, rg, grids, out)  # prange's: unsigned


# --- Python side ----------------------------------------------------------------------------

_NO_GEOM = np.zeros(10)  # geom row of a grid without cells
_NO_ANGLES = np.zeros((1, 2))  # the fan angles of a plain cast (unused)
_NO_EDGE = np.zeros(1)  # a plain cast's rays start at their origin
_NO_ROWS, _NO_CIRCLES = np.empty(0, np.int64), np.empty((0, 3))  # a fan with no copies


def contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous writable array: the one layout the kernels are compiled for."""
    return a if a.flags.c_contiguous and a.flags.writeable else np.array(a, order="C")


def checked_shapes(circles, segments, circle_group, segment_group) -> tuple:
    """Validated circles (C, 3) [x, y, r] and segments (S, 4) [x1, y1, x2, y2] (m) and their
    int64 groups (0: none; None: all 0), C-contiguous.

    Raises:
        ValueError: an array of the wrong width, a negative radius, groups of the wrong length.
    """
    c, s = as_array(circles, 3, "circles"), as_array(segments, 4, "segments")
    if (c[:, 2] < 0).any():
        raise ValueError("circle radii must be non-negative")
    return (contiguous(c), contiguous(s),
            contiguous(as_groups(circle_group, len(c), "circle_group")),
            contiguous(as_groups(segment_group, len(s), "segment_group")))


def _flat(shapes: tuple) -> tuple:
    """Shapes for :func:`_fan_all_pairs`: circles, their groups, segments as [x1, y1, x2 - x1,
    y2 - y1] and their groups (all C-contiguous)."""
    c, s, cg, sg = shapes
    segs = s.copy()
    segs[:, 2:] -= segs[:, :2]
    return c, cg, contiguous(segs), sg


def _grid(shapes: tuple, cell_size: float, like=_NO_GEOM, least: int = 1 << 12,
          many: bool = False) -> tuple:
    """The one-grid set of :func:`checked_shapes`' output, on geom row ``like`` if it holds
    them. A cap of ``least`` cells, or 64 per shape, keeps the build linear in the shape
    count; ``many``: on the threads (within :func:`coopsim.model.threads.kernel_threads`)."""
    c, s, cg, sg = shapes
    cap = max(least, min(1 << 20, 64 * (len(c) + len(s))))
    return build(c, cg, s, sg, cell_size, float(cap), like, many)


def static_grids(circles, segments, circle_group, segment_group, cell_size: float = CELL_SIZE,
                 least: int = 1 << 12) -> tuple:
    """The one-grid set of static shapes that a fan kernel reads (the ``grids`` of
    :func:`coopsim.raycast.jitfan.fan_grids`): circles (C, 3) [x, y, r] and segments (S, 4)
    [x1, y1, x2, y2], world frame (or a copy's frame), m, and their int groups (0: none),
    binned on square cells of ``cell_size`` m, at least ``least`` cells (or 64 per shape).

    Raises:
        ValueError: a shape array of the wrong width, a negative radius, groups of the wrong
            length.
    """
    return _grid(checked_shapes(circles, segments, circle_group, segment_group), cell_size,
                 least=least)


class JitRayCaster:
    """Casts many 2D rays against circles and line segments at once, in compiled loops.

    Static shapes are given once to :meth:`set_static`, moving shapes to every :meth:`cast`;
    both are hit alike.

    Attributes:
        cell_size: Side of the grid cells, m.
    """

    def __init__(self, cell_size: float = CELL_SIZE) -> None:
        """Creates a caster with no static shapes.

        Args:
            cell_size: Side of the grid cells, m. Changes the speed only (see CELL_SIZE).
        """
        if not (np.isfinite(cell_size) and cell_size > 0):
            raise ValueError(f"cell_size must be a positive number of metres, got {cell_size}")
        self.cell_size = float(cell_size)
        self.set_static()
        warm_allocator()  # a large cast's output then reuses heap pages

    def set_static(self, circles=None, segments=None, circle_group=None,
                   segment_group=None) -> None:
        """Replaces the static shapes, tested by every later :meth:`cast`.

        Args:
            circles: (C, 3) [x, y, radius], world frame, m; None for none.
            segments: (S, 4) [x1, y1, x2, y2], world frame, m; None for none.
            circle_group: (C,) int groups, 0 = none; None for all 0.
            segment_group: (S,) int groups, 0 = none; None for all 0.
        """
        # Up to 65,536 cells, more than a moving grid's cap: moving shapes within are binned
        # on this geometry, so a few walls must not set the cell size for 10,000 robots.
        shapes = checked_shapes(circles, segments, circle_group, segment_group)
        many = parallel(len(shapes[0]), PARALLEL_MIN)
        with kernel_threads(len(shapes[0]), PARALLEL_MIN, _CHUNK):
            self._static = _grid(shapes, self.cell_size, least=1 << 16, many=many)
        self._flat = _flat(shapes)

    def cast(self, origins, directions, max_range, circles, segments, ray_group=None,
             circle_group=None, segment_group=None) -> np.ndarray:
        """Distance from each ray's origin to the first shape it hits.

        Args:
            origins: (R, 2) ray starts, world frame, m.
            directions: (R, 2) ray directions, world frame; unit expected (normalised here).
            max_range: Scalar or (R,) finite, non-negative ray lengths, m.
            circles: (C, 3) [x, y, radius] moving circles, world frame, m, or None.
            segments: (S, 4) [x1, y1, x2, y2] moving segments, world frame, m, or None.
            ray_group: (R,) int; a ray never hits a shape of its own non-zero group.
            circle_group: (C,) int groups of ``circles``, 0 = none.
            segment_group: (S,) int groups of ``segments``, 0 = none.

        Returns:
            (R,) float64 distances in [0, max_range], m; exactly max_range when nothing is hit.
        """
        o, d = as_array(origins, 2, "origins"), as_array(directions, 2, "directions")
        if d.shape != o.shape:
            raise ValueError(f"directions shape {d.shape} differs from origins {o.shape}")
        mr = np.asarray(max_range, dtype=np.float64)  # a scalar stays one value: (1,)
        mr = np.array(mr.reshape(1) if mr.ndim == 0 else np.broadcast_to(mr, len(o)))
        if not (np.isfinite(mr).all() and (mr >= 0).all()):
            raise ValueError("max_range must be finite and non-negative")
        rg = contiguous(as_groups(ray_group, len(o), "ray_group"))
        return self._run(contiguous(o), contiguous(d), False, _NO_ANGLES, mr, _NO_EDGE, rg,
                         (circles, segments, circle_group, segment_group), 1).reshape(len(o))

    def fan(self, poses, heading, fan, max_range, radius, groups, moving) -> np.ndarray:
        """:func:`sonar_distances` in one kernel, for inputs checked by the caller: C-contiguous
        float64 ``poses`` (N, 3), ``heading`` (N, 2) and ``fan`` (K, 2) the (cos, sin) of the
        yaws and of the angles, ``max_range`` and ``radius`` (N,), int64 ``groups`` (N,);
        ``moving`` = (circles (C, 3), segments (S, 4), their int64 groups), as
        :func:`checked_shapes` returns them. A few rays in a small world test every pair
        (:data:`_ALL_PAIRS`), more walk the grid."""
        n, k = len(poses), len(fan)
        shapes = len(moving[0]) + len(moving[1]) + len(self._flat[0]) + len(self._flat[2])
        if n * k * shapes <= _ALL_PAIRS:
            out = np.empty((n, k))
            _fan_all_pairs(poses, heading, fan, max_range, radius, groups, self._flat, moving,
                           out)
            return out
        return self._run(poses, heading, True, fan, max_range, radius, groups, moving, k)

    def robots_pairs(self, n: int, k: int, objects: tuple) -> tuple | None:
        """The static shapes as :data:`fan_robots_kernel` takes them (``fixed``) when it
        casts ``k`` rays from each of ``n`` robots among ``objects`` by testing every pair,
        else None (the grid serves)."""
        flat = self._flat
        shapes = len(objects[0]) + n + len(objects[1]) + len(flat[0]) + len(flat[2])
        return flat if n * k * shapes <= _ALL_PAIRS else None

    def _run(self, o, d, fan, angles, reach, edge, rg, moving, k) -> np.ndarray:
        """Bins the ``moving`` shapes (circles, segments, their groups) on the static grid's
        geometry if they fit (robots within static walls: one grid to walk), merges the two
        grids, runs :func:`_rows` (see :func:`_row`), or for a ``fan``
        :func:`coopsim.raycast.jitfan.fan_gather` (the same distances); returns (N, k), m."""
        out = np.empty((len(o), k))
        # Rows handed out in chunks, so that when another process holds a core, the threads
        # still running take over the rows of the one preempted.
        many = parallel(out.size, PARALLEL_MIN)  # else no parallel launch (~3 us each)
        gather = fan and GATHER  # its loop's rows are blocks of FAN_BLOCK robots
        with kernel_threads(out.size, PARALLEL_MIN, _CHUNK // FAN_BLOCK if gather else _CHUNK):
            grids = combine(self._static, _grid(moving if fan else checked_shapes(*moving),
                                                self.cell_size, self._static[0][0],
                                                many=many), many)
            if gather:  # no copies: no circle runs
                fan_gather(o, d, angles, reach, edge, rg, grids, out, _NO_ROWS, np.int64(0),
                           _NO_CIRCLES, _NO_ROWS)
            else:
                _rows(o, d, fan, angles, reach, edge, rg, grids, out)
        return out


def make_caster(cell_size: float = CELL_SIZE) -> "JitRayCaster":
    """A ray caster (:class:`JitRayCaster`) with grid cells of side ``cell_size``, m."""
    return JitRayCaster(cell_size)


@_jit(inline=True)
def _robot_shape(i, pose, radius, circles, heading):
    circles[i, 0], circles[i, 1], circles[i, 2] = pose[i, 0], pose[i, 1], radius[i]
    heading[i, 0], heading[i, 1] = math.cos(pose[i, 2]), math.sin(pose[i, 2])


@_jit()
def _robot_shapes(pose, radius, circles, heading):
    """For every robot's ``pose`` (N, 3) x, y (m), yaw (rad) and ``radius`` (N,) m:
    ``circles`` (N, 3) = its chassis circle [x, y, r] and ``heading`` (N, 2) = cos, sin of its
    yaw (numba's are numpy's, bit for bit): a sensing step's robot shapes in one call."""
    for i in range(len(pose)):
        _robot_shape(i, pose, radius, circles, heading)


@_jit(parallel=True)
def _robot_shapes_threads(pose, radius, circles, heading):
    """:func:`_robot_shapes` on the threads (a swarm's)."""
    for i in prange(len(pose)):
        _robot_shape(np.int64(i), pose, radius, circles, heading)


#: :func:`_robot_shapes`, on the threads for a swarm (coopsim.model.threads.by_rows).
robot_shapes = by_rows(_robot_shapes, _robot_shapes_threads)


def fan_directions(yaw: np.ndarray, angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin) columns of ``yaw`` (N,) and of ``angles`` (K,), rad: the inputs of a fan cast.

    The caster turns the heading (cos, sin) by each angle's (cos, sin) with four products."""
    return (np.column_stack((np.cos(yaw), np.sin(yaw))),
            np.column_stack((np.cos(angles), np.sin(angles))))


def sonar_distances(caster, poses, radius, angles, max_range, groups, circles, circle_group,
                    segments, segment_group) -> np.ndarray:
    """Every robot's distance readings as :class:`coopsim.modules.Sonar` computes them: rays
    from the robot's centre (its own chassis skipped by group) at heading + angle, of length
    max_range + radius, less the radius; exactly max_range when nothing is within it.

    Args:
        caster: A :class:`JitRayCaster`, its static shapes set.
        poses: (N, 3) x, y (m) and yaw (rad) of the robots, world frame.
        radius: (N,) chassis radii, m.
        angles: (K,) sensor angles from the heading, rad, counter-clockwise.
        max_range: (N,) largest distance measured, m.
        groups: (N,) each robot's group.
        circles, circle_group, segments, segment_group: Moving shapes, as for ``cast``.

    Returns:
        (N, K) float64 distances, m.
    """
    p, rad = as_array(poses, 3, "poses"), as_array(np.reshape(radius, (-1, 1)), 1, "radius")[:, 0]
    reach = as_array(np.reshape(max_range, (-1, 1)), 1, "max_range")[:, 0]
    a = as_array(np.reshape(angles, (-1, 1)), 1, "angles")[:, 0]
    if not len(p) == len(rad) == len(reach) or ((reach + rad) < 0).any():
        raise ValueError("poses, radius and max_range must have as many rows, and "
                         "max_range + radius must be non-negative")
    heading, fan = fan_directions(p[:, 2], a)
    g = as_groups(groups, len(p), "groups")
    moving = (circles, segments, circle_group, segment_group)
    return caster.fan(contiguous(p), heading, fan, contiguous(reach), contiguous(rad),
                      contiguous(g), checked_shapes(*moving))


def _load() -> None:
    """Compile (or load) the caster's kernels with a run's argument types
    (:func:`coopsim.model.compiled.warmer`)."""
    caster = JitRayCaster()
    caster.set_static(np.array([[3.0, 0.0, 0.5]]), np.array([[-5.0, -5.0, 5.0, -5.0]]))
    caster.cast(np.zeros((2, 2)), np.array([[1.0, 0.0], [0.0, 1.0]]), 2.0,
                np.array([[0.0, 1.0, 0.2]]), None, np.array([1, 2]), np.array([1]))
    for n in (1, 2):  # a robot's pose row is contiguous, several robots' a strided view
        robot_shapes(read_only(np.zeros((n, 6))[:, :3]), np.ones(n), np.empty((n, 3)),
                     np.empty((n, 2)))  # every caller's pose is read-only
    for n in (1, 200):  # all pairs, then the grid
        poses = np.column_stack((np.linspace(-4, 4, n), np.zeros(n), np.zeros(n)))
        circles = np.column_stack((poses[:, :2], np.full(n, 0.2)))
        sonar_distances(caster, poses, np.full(n, 0.2), np.linspace(-1.5, 1.5, 11),
                        np.full(n, 2.0), np.arange(1, n + 1), circles, np.arange(1, n + 1),
                        None, None)
    fan = np.column_stack((np.cos([-0.5, 0.5]), np.sin([-0.5, 0.5])))
    objects = checked_shapes(np.zeros((1, 3)), None, np.ones(1), None)
    # a small ground world's fan, as the composed call casts it: the state read-only
    _fan_robots(read_only(np.zeros((1, 6))), np.full(1, 0.2), np.ones(1, np.int64), fan,
                np.full(1, 2.0), caster.robots_pairs(1, 2, objects), objects, np.empty((1, 2)),
                np.empty((1, 2)))


WARM = warmer(_load)
