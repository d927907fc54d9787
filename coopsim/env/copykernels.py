"""The compiled per-copy step of the ``copies`` batch backend (:mod:`coopsim.env.copies`).

One call steps every copy of a batch: ``prange`` over the copies, each iteration taking its copy
whole, in the order a tick of the simulation takes one world once its actuators have driven the
engine (the acting kind's own ``kernel_actuate`` and the engine's own ``drive``, run by
:mod:`coopsim.env.copies` before this call): the ``kinematic`` engine's step (the copy's
substeps, chosen from the copy's own fastest robot; the arc motion; Jacobi resolution passes
until none moves a robot, at most ``ITERATIONS``; the report), then the fan of the kind reading
``ranges`` (its ``kernel_beams``, cast from the centre against the template's static grid and the
copy's other chassis, less the radius, within max_range: the kernel contract's ``ranges`` view,
which the kind's own ``kernel_sense`` reads after this call) and the forward speed a task term
reads.

The per-robot bodies are the engine's and the ray caster's own inline functions
(:func:`~coopsim.physics.kinematic.kernels.move_robot`, ``pair_push``, ``static_push``,
``floor_clamp``, ``finish_robot``; :func:`~coopsim.raycast.jitfan.fan_rays`, ``fan_grids``,
``fan_circles``: public, documented inline functions), so
the model is the engine's: what differs from one world holding every copy is the robot pairs
(a copy's A robots tested brute force, in row order, instead of a grid's cell order) and the
substep count (per copy instead of the whole world's fastest robot).

Determinism: copy c reads the shared template arrays (static grids, limits) and writes only
its own rows c A .. c A + A - 1 of every per-robot array: no write is shared, no reduction
crosses copies, so the result is the same bits for any thread count.

Frames and units: each copy's own frame (the template scenario's world frame), m, rad, s.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.compiled import jit, prange, warmer
from ..physics.kinematic.kernels import (NONE, finish_robot, floor_clamp, move_robot,
                                         pair_push, static_push)
from ..raycast.jitfan import fan_circles, fan_grids, fan_rays

# limits rows (float64): smallest positive radius (m), SUBSTEP_REACH (radii), MAX_SUBSTEPS,
# ITERATIONS, dt (s)
RMIN, REACH, MAX_SUB, ITER, DT = range(5)


@jit(inline=True)
def _substeps(lo, hi, cmd, mode, limits):
    """The copy's substeps: its fastest robot moves at most REACH of the smallest radius in
    one (the engine's rule over one copy's robots)."""
    if limits[RMIN] <= 0.0:
        return 1
    top = 0.0
    for i in range(lo, hi):
        if mode[i] != NONE:
            top = max(top, abs(cmd[i, 0]) + abs(cmd[i, 1]))
    reach = top * limits[DT] / (limits[REACH] * limits[RMIN])
    return max(1, int(math.ceil(min(reach, limits[MAX_SUB]))))


@jit(inline=True)
def _pairs(i, lo, hi, pos, radius, heading, contact):
    """Robot i's push (m) from the other robots of its copy (rows lo .. hi - 1): half of each
    overlap along the line of centres, away (the engine's ``_pairs`` over one copy)."""
    x, y, ax, ay, hit = pos[i, 0], pos[i, 1], 0.0, 0.0, False
    for j in range(lo, hi):
        px, py, pushed = pair_push(i, j, x, y, pos, radius, heading, contact)
        if pushed:
            ax -= px
            ay -= py
            hit = True
    return ax, ay, hit


@jit(inline=True)
def _resolve(lo, hi, pos, buf, radius, heading, static, half, contact, iterations):
    """Jacobi passes over the copy's robots until none moves one (at most ``iterations``):
    pushed by the others, out of the static shapes, onto the floor (the engine's order)."""
    shapes, kinds, sgeom, sstart, sentries = static
    for _ in range(iterations):
        moved = False
        for i in range(lo, hi):
            ax, ay, pushed = _pairs(i, lo, hi, pos, radius, heading, contact)
            x, y = pos[i, 0] + ax, pos[i, 1] + ay
            x, y, kept = static_push(i, x, y, radius[i], heading, shapes, kinds, sgeom,
                                     sstart, sentries, contact)
            x, y, clamped = floor_clamp(i, x, y, radius[i], half, heading, contact)
            buf[i, 0], buf[i, 1] = x, y
            moved = moved or pushed or kept or clamped
        for i in range(lo, hi):
            pos[i, 0], pos[i, 1] = buf[i, 0], buf[i, 1]
        if not moved:
            break


@jit(inline=True)
def _sonar(n, lo, hi, pos, sight, angles, reach, radius, group, grids, cdata, dirs, sonar):
    """Robot n's fan (its copy's frame): rays from the centre against the static grid and the
    copy's chassis (its own skipped by group), less the radius, clipped to [0, max_range]."""
    mr, rn, en, back = fan_rays(n, sight, angles, dirs, reach, radius, sonar)
    fan_grids(n, pos, sight, back, grids, group, mr, dirs, sonar)
    fan_circles(n, pos[n, 0], pos[n, 1], mr, group[n], lo, hi, cdata, group, dirs, sonar,
                sight[n, 0], sight[n, 1], back)
    for k in range(sonar.shape[1]):
        v = rn if sonar[n, k] >= mr else sonar[n, k] - en
        if not math.isnan(v):  # np.clip's ternaries
            v = v if v > 0.0 else 0.0
            v = v if v < rn else rn
        sonar[n, k] = v


@jit(parallel=True)
def step_copies(agents, pos, buf, start, yaw, heading, cmd, mode, state, contact, radius,
                static, half, limits, move, cast, angles, reach, group, grids, sight, cdata,
                dirs, ranges, forward):
    """One step of every copy (see the module), its engine commands ``cmd`` (N, 3) and
    ``mode`` (N,) already driven. Per-robot arrays have K x ``agents`` rows, copy by copy:
    pos/buf/start (N, 2), yaw (N,), heading (N, 2) the engine's cos/sin, state (N, 6),
    contact (N, 2), the template's radius, reach (the fan kind's max_range, m) and group,
    tiled (N,); the sensing scratch sight (N, 2) (cos, sin of the yaw), cdata (N, 3), dirs
    (N, 2, B); outputs ranges (N, B) m (when ``cast``) and forward (N,) m/s. ``static``: the
    template engine's static grid, ``half`` its floor's half extents, ``grids`` the caster's
    static grid set, ``angles`` (B, 2) the beams' (cos, sin). ``move`` False: sense only (a
    reset's observation: nothing moved)."""
    copies = len(pos) // agents
    for cu in prange(copies):
        _copy(np.int64(cu), agents, pos, buf, start, yaw, heading, cmd, mode, state, contact,
              radius, static, half, limits, move, cast, angles, reach, group, grids, sight,
              cdata, dirs, ranges, forward)


@jit(counted=False)
def _copy(c, agents, pos, buf, start, yaw, heading, cmd, mode, state, contact, radius, static,
          half, limits, move, cast, angles, reach, group, grids, sight, cdata, dirs, ranges,
          forward):
    """Copy ``c``'s step (:func:`step_copies`' loop body, ``c`` int64: prange's index is
    unsigned). A serial kernel of its own, not inlined in the parallel loop: numba's parallel
    passes then analyse a loop of one call instead of the whole step (compiling the kernel took
    59 s of CPU; the same operations in the same order, so the same bits). No array made and
    none counted (``counted=False``): the call costs no reference count a copy."""
    lo, hi = c * agents, c * agents + agents
    if move:
        _physics(lo, hi, pos, buf, start, yaw, heading, cmd, mode, state, contact, radius,
                 static, half, limits)
    for i in range(lo, hi):
        sight[i, 0], sight[i, 1] = math.cos(yaw[i]), math.sin(yaw[i])
        cdata[i, 0], cdata[i, 1], cdata[i, 2] = pos[i, 0], pos[i, 1], radius[i]
        forward[i] = state[i, 3] * sight[i, 0] + state[i, 4] * sight[i, 1]
    if cast:
        for i in range(lo, hi):
            _sonar(i, lo, hi, pos, sight, angles, reach, radius, group, grids, cdata, dirs,
                   ranges)


@jit(inline=True)
def _physics(lo, hi, pos, buf, start, yaw, heading, cmd, mode, state, contact, radius, static,
             half, limits):
    """The copy's engine step (rows lo .. hi - 1)."""
    dt, iterations = limits[DT], int(limits[ITER])
    for i in range(lo, hi):
        start[i, 0], start[i, 1] = pos[i, 0], pos[i, 1]
        contact[i, 0], contact[i, 1] = 0.0, 0.0
    n = _substeps(lo, hi, cmd, mode, limits)
    h = dt / n
    for _ in range(n):
        for i in range(lo, hi):
            move_robot(i, pos, yaw, cmd, mode, h, heading)
        _resolve(lo, hi, pos, buf, radius, heading, static, half, contact, iterations)
    for i in range(lo, hi):
        finish_robot(i, pos, start, yaw, cmd, mode, dt, state)


def _warm_inputs(copies: int = 2, agents: int = 1) -> tuple:
    """Arguments of :func:`step_copies` for a tiny batch with the types a real one has (one
    robot a copy on an empty 4 x 4 m floor): calling it compiles, or loads, the kernel."""
    from ..physics.kinematic.engine import static_grid
    from ..raycast.jitcast import static_grids

    n, beams = copies * agents, 11
    half = np.array([2.0, 2.0])
    static = static_grid(np.zeros((0, 6)), np.zeros(0, np.int64), half, 0.3)
    grids = static_grids(np.zeros((0, 3)), np.zeros((0, 4)), np.zeros(0, np.int64),
                         np.zeros(0, np.int64))
    f2 = lambda: np.zeros((n, 2))  # noqa: E731
    ones = np.ones(n)
    heading = f2()
    heading[:, 0] = 1.0
    limits = np.array([0.2, 0.5, 16.0, 32.0, 0.05])
    angles = np.column_stack((np.cos(np.linspace(-1.5, 1.5, beams)),
                              np.sin(np.linspace(-1.5, 1.5, beams))))
    return (agents, np.full((n, 2), 0.3), f2(), f2(), np.zeros(n), heading, np.zeros((n, 3)),
            np.zeros(n, np.int64), np.zeros((n, 6)), f2(), ones * 0.2, static, half, limits,
            True, True, angles, ones * 2.0, np.arange(1, n + 1, dtype=np.int64), grids, f2(),
            np.zeros((n, 3)), np.zeros((n, 2, beams)), np.zeros((n, beams)), np.zeros(n))


def _load() -> None:
    """Compile (or load) :func:`step_copies` (:func:`coopsim.model.compiled.warmer`)."""
    step_copies(*_warm_inputs())


WARM = warmer(_load)
