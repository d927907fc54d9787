"""Inverse kinematics in a bounded budget: a compiled Levenberg-Marquardt solver with joint limits.

:func:`coopsim.model.arm.solve_ik` hands the problem to SciPy's ``least_squares``: exact, but
0.1 s for a point in reach and 1.4-10 s for one out of it (every restart runs to its evaluation
cap in Python), all of it holding the GIL. The ``tool`` module's ``move_to`` and ``ik`` solve
here instead: the same problem (tool point at a position, m, and optionally its frame at a
rotation, weighed ``weight`` m per rad; joints within their limits) by Levenberg-Marquardt with
Marquardt's scaling, the step projected onto the limits (a joint at a limit that the step pushes
outward is held there and the step solved again without it), in a numba kernel compiled with
``nogil``: another thread solving does not take the GIL from the stepper. A point in reach costs
some 20-60 us, one out of it (every restart run to its end) well under 2 ms (docs/performance.md,
``arms.Ik.track_ms``).

The restarts: the angles now, the arm's start, then 22 fixed spreads over the limits; the first
restart that reaches the tolerances wins, else the best fit (position error + 0.1 x angle
error). A point farther from the first joint than the chain stretches is out of every pose's
reach: only the first two restarts run (they find the nearest point as the others would). A
:class:`Budget` bounds a request: at most ``iterations`` LM iterations over all restarts
(``per_seed`` in each) and, when ``seconds`` is set, no further restarts begin after that much
wall time (they run :data:`CHUNK` to a kernel call, so a request costs at most that plus one
call). The iteration cap alone gives the same answer on every machine; the time cap depends on
the machine, so lockstep runs leave it unset (see the ``tool`` module).

Frames and units: the arm's base frame, metres, radians (as :mod:`coopsim.model.arm`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .arm import ArmSpec, IKResult, rpy_matrix
from .compiled import jit

#: Fixed restarts: spreads over the limits, the same in every run (fractions of each range).
SEEDS = np.random.default_rng(34).random((22, 7))
#: Restarts solved in one call of the kernel: the GIL is taken back between calls only (a
#: thread taking it for each restart made the stepper hand it over 24 times a request, each
#: hand-over a wait on a busy machine), and the time cap is looked at between calls.
CHUNK = 8
#: The largest turn of a joint in one iteration, rad: longer steps of the linearised problem
#: ran the joints into their limits, where the search then stalled far from the answer.
MAX_STEP = 0.3


@dataclass(frozen=True)
class Budget:
    """What one inverse kinematics request may spend.

    Attributes:
        iterations: LM iterations over all restarts, at most.
        per_seed: LM iterations of one restart, at most.
        seconds: Wall time after which no further call of :data:`CHUNK` restarts begins, s
            (None: no time cap, the answer is the same on every machine).
        polish: LM iterations more, at most, for the restart that reached the tolerances, to
            converge well inside them (counted in the iterations spent; beyond ``iterations``
            when it is spent).
    """

    iterations: int = 800
    per_seed: int = 40
    seconds: float | None = None
    polish: int = 20


@dataclass(frozen=True)
class Solved(IKResult):
    """An :class:`~coopsim.model.arm.IKResult` with what finding it took.

    Attributes:
        iterations: LM iterations spent (over all restarts tried).
        seeds: Restarts tried.
        cut: True when the budget ended the search before every restart was tried (and none
            had reached the tolerances).
    """

    iterations: int = 0
    seeds: int = 0
    cut: bool = False


_CHAINS: dict[int, tuple] = {}  # id(arm) -> (arm, its constant matrices)


def chain_constants(arm: ArmSpec) -> tuple:
    """The arm's chain as constant arrays: per joint j its turn R_j(q) = A_j + sin(q) B_j +
    cos(q) C_j (its fixed rpy turn, then Rodrigues about its axis), its origin (m, in the
    previous joint's frame) and its axis (own frame); the tool point (m, last joint's frame).

    Returns:
        (A, B, C) each (dof, 3, 3), origins (dof, 3), axes (dof, 3), tool (3,).
    """
    held = _CHAINS.get(id(arm))
    if held is not None and held[0] is arm:
        return held[1]
    a, b, c = [], [], []
    for link in arm.links:
        x, y, z = link.axis
        k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        f = rpy_matrix(link.rpy)
        a.append(f + f @ k @ k)
        b.append(f @ k)
        c.append(-(f @ k @ k))
    out = (np.array(a), np.array(b), np.array(c), np.array([l.origin for l in arm.links],
                                                           dtype=float),
           np.array([l.axis for l in arm.links], dtype=float), np.asarray(arm.tool, float))
    _CHAINS[id(arm)] = (arm, out)
    return out


def solve(arm: ArmSpec, position, rotation, q_now, tol: float, angle_tol: float,
          budget: Budget = Budget(), weight: float = 0.2) -> Solved:
    """Joint angles putting the tool point at ``position`` (m, base frame) and, when given,
    its frame at ``rotation`` (3 x 3, base frame), within the joint limits and the budget.

    Args:
        q_now: (dof,) the angles now, rad: the first restart.
        tol, angle_tol: What counts as reached, m and rad.
        budget: Iterations and time the search may spend.
        weight: Metres an orientation error of one radian weighs as.

    Returns:
        The first restart's fit within the tolerances, else the best one found.
    """
    a, b, c, origins, axes, tool = chain_constants(arm)
    lo, hi, seeds, stretch = _starts(arm)
    want_p = np.ascontiguousarray(position, dtype=float)
    if math.dist(want_p, origins[0]) > stretch + tol:  # beyond any pose: two starts find
        seeds = seeds[:2]  # the nearest point as well as all of them
    oriented = rotation is not None
    want_r = np.ascontiguousarray(rotation, dtype=float) if oriented else _EYE
    seeds[0] = q_now  # the angles now first, then the start and the spreads
    np.clip(seeds, lo, hi, out=seeds)
    start = time.perf_counter()
    best, spent, tried, n = None, 0, 0, len(seeds)
    while tried < n and spent < budget.iterations:
        if budget.seconds is not None and tried and time.perf_counter() - start > budget.seconds:
            break
        last = min(n, tried + CHUNK)
        k, perr, aerr, used, tried = _search(
            a, b, c, origins, axes, tool, lo, hi, want_p, want_r, oriented, float(weight),
            float(tol), float(angle_tol), int(budget.per_seed), int(budget.iterations - spent),
            int(budget.polish), seeds, tried, last)
        spent += used
        score = perr + 0.1 * aerr
        reached = perr <= tol and aerr <= angle_tol
        if best is None or score < best[0] or reached:
            best = (score, seeds[k], perr, aerr)
        if reached:
            break
    _, qb, perr, aerr = best
    ok = perr <= tol and aerr <= angle_tol
    return Solved(qb, perr, aerr, ok, spent, tried, not ok and tried < n)


_EYE = np.eye(3)
_STARTS: dict[int, tuple] = {}  # id(arm) -> (arm, (lo, hi, the restarts))


def _starts(arm: ArmSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The arm's limits (dof,), a fresh (2 + len(SEEDS), dof) array of its restarts (row 0
    free for the angles now, then its start, then the fixed spreads, rad), and the farthest
    the tool point can be from the first joint's origin in any pose (the sum of the links'
    offsets and the tool's, m)."""
    held = _STARTS.get(id(arm))
    if held is None or held[0] is not arm:
        lo, hi = arm.lower, arm.upper
        rows = np.vstack([arm.start, arm.start, lo + SEEDS[:, :arm.dof] * (hi - lo)])
        stretch = sum(math.hypot(*link.origin) for link in arm.links[1:]) \
            + math.hypot(*arm.tool)
        held = _STARTS[id(arm)] = (arm, (lo, hi, rows, stretch))
    lo, hi, rows, stretch = held[1]
    return lo, hi, rows.copy(), stretch


# -- the kernel -----------------------------------------------------------------------------------

@jit(nogil=True, inline=True)
def _residual(a, b, c, origins, axes, tool, q, want_p, want_r, oriented, weight, r, jac):
    """Forward kinematics at ``q``: the residual ``r`` (6,: position error m, then -weight x
    the rotation vector turning the tool frame into the wanted one) and its Jacobian ``jac``
    (6, dof); returns (position error m, angle error rad)."""
    dof = q.shape[0]
    joint_p, joint_w = np.empty((dof, 3)), np.empty((dof, 3))
    rot, pos = _chain(a, b, c, origins, axes, q, joint_p, joint_w)
    tip = np.empty(3)
    for i in range(3):
        tip[i] = pos[i] + rot[i, 0] * tool[0] + rot[i, 1] * tool[1] + rot[i, 2] * tool[2]
        r[i] = tip[i] - want_p[i]
    perr = math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
    for j in range(dof):
        w0, w1, w2 = joint_w[j, 0], joint_w[j, 1], joint_w[j, 2]
        d0, d1, d2 = tip[0] - joint_p[j, 0], tip[1] - joint_p[j, 1], tip[2] - joint_p[j, 2]
        jac[0, j] = w1 * d2 - w2 * d1
        jac[1, j] = w2 * d0 - w0 * d2
        jac[2, j] = w0 * d1 - w1 * d0
        for i in range(3):
            jac[3 + i, j] = weight * joint_w[j, i] if oriented else 0.0
    aerr = 0.0
    r[3] = r[4] = r[5] = 0.0
    if oriented:
        e0, e1, e2 = _rotation_error(rot, want_r)
        aerr = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        r[3], r[4], r[5] = -weight * e0, -weight * e1, -weight * e2
    return perr, aerr


@jit(nogil=True, inline=True)
def _chain(a, b, c, origins, axes, q, joint_p, joint_w):
    """The last joint's frame at ``q`` (its turn 3 x 3 and origin, m, base frame); each joint's
    origin into ``joint_p`` and axis into ``joint_w`` (dof, 3). 3 x 3 products by hand: numba's
    ``@`` calls BLAS, whose call costs more than the product."""
    rot, turn, nxt = np.eye(3), np.empty((3, 3)), np.empty((3, 3))
    pos = np.zeros(3)
    for j in range(q.shape[0]):
        sj, cj = math.sin(q[j]), math.cos(q[j])
        for i in range(3):
            pos[i] += rot[i, 0] * origins[j, 0] + rot[i, 1] * origins[j, 1] \
                + rot[i, 2] * origins[j, 2]
            for k in range(3):
                turn[i, k] = a[j, i, k] + sj * b[j, i, k] + cj * c[j, i, k]
        for i in range(3):
            for k in range(3):
                nxt[i, k] = rot[i, 0] * turn[0, k] + rot[i, 1] * turn[1, k] \
                    + rot[i, 2] * turn[2, k]
        rot[:, :] = nxt
        for i in range(3):
            joint_p[j, i] = pos[i]
            joint_w[j, i] = rot[i, 0] * axes[j, 0] + rot[i, 1] * axes[j, 1] \
                + rot[i, 2] * axes[j, 2]
    return rot, pos


@jit(nogil=True, inline=True)
def _rotation_error(have, want):
    """The rotation vector (rad, three floats) turning ``have`` into ``want``, as
    :func:`coopsim.model.arm.rotation_error`."""
    m = np.empty((3, 3))
    for i in range(3):
        for k in range(3):
            m[i, k] = want[i, 0] * have[k, 0] + want[i, 1] * have[k, 1] + want[i, 2] * have[k, 2]
    angle = math.acos(max(-1.0, min(1.0, (m[0, 0] + m[1, 1] + m[2, 2] - 1.0) / 2.0)))
    v0, v1, v2 = m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]
    if angle < 1e-9:
        return v0 / 2.0, v1 / 2.0, v2 / 2.0
    if math.pi - angle < 1e-6:  # half a turn: the axis from the symmetric part
        return (math.sqrt(max((m[0, 0] + 1.0) / 2.0, 0.0)) * angle,
                math.sqrt(max((m[1, 1] + 1.0) / 2.0, 0.0)) * angle,
                math.sqrt(max((m[2, 2] + 1.0) / 2.0, 0.0)) * angle)
    f = angle / (2.0 * math.sin(angle))
    return v0 * f, v1 * f, v2 * f


@jit(nogil=True, inline=True)
def _step(jac, r, lam, free, dq):
    """The damped step dq (dof,) of the joints marked ``free``: (J'J + lam diag(J'J + 1e-9))
    dq = -J'r, by Cholesky (held joints get 0)."""
    dof = dq.shape[0]
    m = np.zeros((dof, dof))
    g = np.zeros(dof)
    for i in range(dof):
        if not free[i]:
            m[i, i] = 1.0
            continue
        for k in range(dof):
            if free[k]:
                s = 0.0
                for row in range(6):
                    s += jac[row, i] * jac[row, k]
                m[i, k] = s
        s = 0.0
        for row in range(6):
            s -= jac[row, i] * r[row]
        g[i] = s
    for i in range(dof):
        if free[i]:
            m[i, i] += lam * (m[i, i] + 1e-9)
    low = np.zeros((dof, dof))  # Cholesky: m = L L'
    for i in range(dof):
        for k in range(i + 1):
            s = m[i, k]
            for t in range(k):
                s -= low[i, t] * low[k, t]
            low[i, k] = math.sqrt(max(s, 1e-300)) if i == k else s / low[k, k]
    y = np.zeros(dof)
    for i in range(dof):
        s = g[i]
        for t in range(i):
            s -= low[i, t] * y[t]
        y[i] = s / low[i, i]
    for i in range(dof - 1, -1, -1):
        s = y[i]
        for t in range(i + 1, dof):
            s -= low[t, i] * dq[t]
        dq[i] = s / low[i, i]


@jit(nogil=True, inline=True)
def _bounded_step(jac, r, lam, free, q, lo, hi, dq):
    """The damped step ``dq`` from ``q``, the joints at a limit that it pushes outward held
    there (and the step solved again without them); returns its largest turn, rad."""
    dof = q.shape[0]
    free[:] = True
    for _ in range(dof):
        _step(jac, r, lam, free, dq)
        held = False
        for i in range(dof):
            if free[i] and ((q[i] <= lo[i] and dq[i] < 0.0) or (q[i] >= hi[i] and dq[i] > 0.0)):
                free[i] = False
                held = True
        if not held:
            break
    big = 0.0
    for i in range(dof):
        big = max(big, abs(dq[i]))
    return big


@jit(nogil=True)
def _lm(a, b, c, origins, axes, tool, lo, hi, want_p, want_r, oriented, weight, done_p,
        done_a, cap, q):
    """Levenberg-Marquardt from ``q`` (dof,), rad, kept within [lo, hi]; ``q`` ends at the best
    angles. Stops at ``cap`` iterations, when both errors are within ``done_p`` m and
    ``done_a`` rad, or when no step lowers the cost any more.

    Returns:
        (position error m, angle error rad, iterations spent).
    """
    dof = q.shape[0]
    r, jac = np.zeros(6), np.zeros((6, dof))
    r2, jac2 = np.zeros(6), np.zeros((6, dof))
    trial, dq = np.empty(dof), np.empty(dof)
    free = np.ones(dof, dtype=np.bool_)
    perr, aerr = _residual(a, b, c, origins, axes, tool, q, want_p, want_r, oriented, weight,
                           r, jac)
    cost = np.dot(r, r)
    lam = 1e-3
    used = 0
    while used < cap and not (perr <= done_p and aerr <= done_a) and lam < 1e10:
        used += 1
        for _ in range(60):  # a trust region: damp more until no joint turns past MAX_STEP
            big = _bounded_step(jac, r, lam, free, q, lo, hi, dq)
            if big <= MAX_STEP:
                break
            lam *= 4.0
        scale = min(1.0, MAX_STEP / big) if big > 0.0 else 1.0
        for i in range(dof):
            trial[i] = min(hi[i], max(lo[i], q[i] + scale * dq[i]))
        p2, a2 = _residual(a, b, c, origins, axes, tool, trial, want_p, want_r, oriented,
                           weight, r2, jac2)
        cost2 = np.dot(r2, r2)
        if cost2 < cost:
            shrink = cost - cost2
            q[:] = trial
            r[:], jac[:, :] = r2, jac2
            perr, aerr, cost = p2, a2, cost2
            lam = max(lam * 0.3, 1e-12)
            if shrink <= 1e-10 * cost2 + 1e-30:  # converged where it cannot reach
                break
        else:
            lam *= 4.0
    return perr, aerr, used


@jit(nogil=True)
def _search(a, b, c, origins, axes, tool, lo, hi, want_p, want_r, oriented, weight, tol,
            angle_tol, per_seed, left, polish, seeds, first, last):
    """:func:`_lm` from the restarts ``seeds[first:last]`` in turn (each row solved in place),
    until one reaches ``tol`` m and ``angle_tol`` rad (then ``polish`` iterations more, at
    most, converge it) or ``left`` iterations are spent.

    Returns:
        (the row of the best fit: the one that reached, else the lowest position error + 0.1 x
        angle error; its position error m; its angle error rad; iterations spent; the row after
        the last one tried).
    """
    best, best_score, best_p, best_a, spent, k = first, np.inf, np.inf, np.inf, 0, first
    while k < last and spent < left:
        cap = min(per_seed, left - spent)
        perr, aerr, used = _lm(a, b, c, origins, axes, tool, lo, hi, want_p, want_r,
                               oriented, weight, tol * 1e-3, angle_tol * 1e-3, cap, seeds[k])
        spent += used
        score = perr + 0.1 * aerr
        if score < best_score:
            best, best_score, best_p, best_a = k, score, perr, aerr
        if perr <= tol and aerr <= angle_tol:  # reached: this one, whatever the scores
            if used == cap:  # stopped by its cap, not converged: a few iterations more
                perr, aerr, more = _lm(a, b, c, origins, axes, tool, lo, hi, want_p, want_r,
                                       oriented, weight, tol * 1e-3, angle_tol * 1e-3, polish,
                                       seeds[k])
                spent += more
            return k, perr, aerr, spent, k + 1
        k += 1
    return best, best_p, best_a, spent, k


def load() -> None:
    """Compile (or load from numba's cache) the kernel with a small arm (the loader the arm
    kinds register: :func:`coopsim.model.compiled.warmer`)."""
    from .arm import LinkSpec  # noqa: PLC0415

    arm = ArmSpec("warm", (LinkSpec("j1", (0.0, 0.0, 0.3)), LinkSpec("j2", (0.0, 0.0, 0.3),
                                                                      axis=(0.0, 1.0, 0.0))),
                  tool=(0.0, 0.0, 0.2))
    solve(arm, (0.2, 0.0, 0.5), np.eye(3), arm.start, 1e-3, 1e-2, Budget(4, 2))

