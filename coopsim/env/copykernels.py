"""The compiled per-copy step of the ``copies`` batch backend (:mod:`coopsim.env.copies`).

One call steps every copy of a batch: ``prange`` over blocks of :data:`BLOCK` copies, each
copy in the order a tick of the simulation takes one world once its
actuators have driven the engine (the acting kind's own ``kernel_actuate`` and the engine's own
``drive``, run by :mod:`coopsim.env.copies` before this call): the ``kinematic`` engine's own
small-world step (:func:`~coopsim.physics.kinematic.small.step_rows`, what a world of up to
``SMALL_N`` robots steps with on all its rows) on the copy's rows, its scratch the batch's
(each copy's rows of it; the robot grid's starts, one row a block; one call steps a block's
copies), then the fan of the kind
reading ``ranges`` (its ``kernel_beams``, cast from the centre against the template's static
grid and the copy's other chassis, less the radius, within max_range: the kernel contract's
``ranges`` view, which the kind's own ``kernel_sense`` reads after this call) and the forward
speed a task term reads.

The copy's motion is therefore the engine's code on the copy's rows: copy c stepped with some
commands is the same bits as the template world run alone with them. The fan is cast by the
ray caster's own kernel (:func:`~coopsim.raycast.jitfan.fan_rows`): from the centre, less the
radius, clipped to [0, max_range].

Determinism: copy c reads the shared template arrays (static grids, limits) and writes only
its own rows c A .. c A + A - 1 of every per-robot array (and its block's grid row, which a
copy writes before reading): no write is shared, no reduction crosses copies, so the result is
the same bits for any thread count.

Frames and units: each copy's own frame (the template scenario's world frame), m, rad, s.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.compiled import jit, prange, warmer
from ..physics.kinematic.small import step_rows
from ..raycast.jitfan import fan_rows

BLOCK = 16  # copies a call of the per-copy kernel steps (numba's threads take whole blocks)


@jit(parallel=True)
def step_copies(agents, pos, buf, yaw, heading, cmd, mode, state, contact, radius, moved, flag,
                rows, scratch, gstart, static, half, dt, limits, move, cast, angles, reach,
                group, grids, sight, cdata, dirs, ranges, forward):
    """One step of every copy (see the module), its engine commands ``cmd`` (N, 3) and
    ``mode`` (N,) already driven. Per-robot arrays have K x ``agents`` rows, copy by copy:
    pos/buf (N, 2), yaw (N,), heading (N, 2) the engine's cos/sin, state (N, 6), contact
    (N, 2), the template's radius, reach (the fan kind's max_range, m) and group, tiled (N,);
    the engine's pass scratch moved/flag (N,) uint8 (zeros), rows (N,) int64 (0 .. N - 1),
    ``scratch`` (:func:`~coopsim.physics.kinematic.small.scratch_arrays` of N) and ``gstart``
    (ceil(K / BLOCK), agents + 65) int64 (a block's robot grid, each copy's in turn); the
    sensing scratch sight (N, 2) (cos, sin of the yaw), cdata (N, 3), dirs (N, 2, B); outputs
    ranges (N, B) m (when ``cast``) and forward (N,) m/s. ``static``, ``half``, ``limits``: the
    template engine's static grid, floor half extents and step_rows' limits
    (:meth:`~coopsim.physics.engine.Engine.copy_template`); ``dt`` s; ``grids`` the caster's
    static grid set, ``angles`` (B, 2) the beams' (cos, sin).
    ``move`` False: sense only (a reset's observation: nothing moved)."""
    copies = len(pos) // agents
    for bu in prange((copies + BLOCK - 1) // BLOCK):
        c0 = np.int64(bu) * BLOCK
        _copies(c0, min(c0 + BLOCK, copies), agents, pos, buf, yaw, heading, cmd, mode, state,
                contact, radius, moved, flag, rows, scratch, gstart, static, half, dt, limits,
                move, cast, angles, reach, group, grids, sight, cdata, dirs, ranges, forward)


@jit(counted=False)
def _copies(c0, c1, agents, pos, buf, yaw, heading, cmd, mode, state, contact, radius, moved,
            flag, rows, scratch, gstart, static, half, dt, limits, move, cast, angles, reach,
            group, grids, sight, cdata, dirs, ranges, forward):
    """Copies ``c0`` .. ``c1`` - 1 (:func:`step_copies`' loop body, int64: prange's index is
    unsigned): the engine's :func:`~coopsim.physics.kinematic.small.step_rows` on each copy's
    rows of the batch's arrays (one call for the block), then each copy's fan
    (:func:`~coopsim.raycast.jitfan.fan_rows`, one call for the block: a copy reads and writes
    only its own rows, the same bits as a copy stepped and sensed whole in turn). A serial
    kernel of its own, not inlined in the parallel loop: numba's
    parallel passes then analyse a loop of one call instead of the whole step; a block of
    copies a call, as the call's entry (its ~30 arguments' fields, the inlined step's frame)
    costs more than a copy of one robot. No array made and none counted (``counted=False``)."""
    if move:  # every copy of the block stepped, each as a world of its own
        step_rows(c0, c1, agents, pos, buf, yaw, cmd, mode, heading, radius, state, contact,
                  moved, flag, rows, static, half, dt, limits, scratch, gstart[c0 // BLOCK])
    for i in range(c0 * agents, c1 * agents):
        sight[i, 0], sight[i, 1] = math.cos(yaw[i]), math.sin(yaw[i])
        cdata[i, 0], cdata[i, 1], cdata[i, 2] = pos[i, 0], pos[i, 1], radius[i]
        forward[i] = state[i, 3] * sight[i, 0] + state[i, 4] * sight[i, 1]
    if cast:  # each robot against its own copy's chassis: its run of ``agents`` rows
        fan_rows(c0 * agents, c1 * agents, pos, sight, angles, reach, radius, group, grids,
                 dirs, ranges, rows[:0], agents, cdata, group, np.bool_(True))


def _warm_inputs(copies: int = 2, agents: int = 1) -> tuple:
    """Arguments of :func:`step_copies` for a tiny batch with the types a real one has (one
    robot a copy on an empty 4 x 4 m floor): calling it compiles, or loads, the kernel."""
    from ..physics.kinematic.engine import static_grid
    from ..physics.kinematic.small import scratch_arrays
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
    limits = (0.2, 0.2, 0.5, 16.0, 3.0, 32.0)
    rows = np.arange(n, dtype=np.int64)
    u8 = lambda: np.zeros(n, np.uint8)  # noqa: E731
    angles = np.column_stack((np.cos(np.linspace(-1.5, 1.5, beams)),
                              np.sin(np.linspace(-1.5, 1.5, beams))))
    return (agents, np.full((n, 2), 0.3), f2(), np.zeros(n), heading, np.zeros((n, 3)),
            np.zeros(n, np.int64), np.zeros((n, 6)), f2(), ones * 0.2, u8(), u8(), rows,
            scratch_arrays(n), np.zeros((-(-copies // BLOCK), agents + 65), np.int64), static,
            half, 0.05, limits, True, True, angles, ones * 2.0,
            np.arange(1, n + 1, dtype=np.int64), grids, f2(),
            np.zeros((n, 3)), np.zeros((n, 2, beams)), np.zeros((n, beams)), np.zeros(n))


def _load() -> None:
    """Compile (or load) :func:`step_copies` (:func:`coopsim.model.compiled.warmer`)."""
    step_copies(*_warm_inputs())


WARM = warmer(_load)
