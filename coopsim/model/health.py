"""When a body has diverged: the sane bounds of a body's state, one sentence per way out of them.

A step that leaves a body's state non-finite, or beyond the bounds below, has diverged (a force
or torque far too large for the body's mass and inertia: ``rotors.kf 0.01``, a 10^5 rad/s
propeller; bodies stuck inside each other). No robot in coopsim reaches these bounds on
purpose: a Crazyflie flies at a few m/s and turns at a few rad/s, an arm's joints at a few
rad/s. The engines check their bodies after every step (``mujoco`` after every MuJoCo substep,
``aerial`` inside its compiled kernel) and put a diverged one back where it was at the start of
that step, at rest (:meth:`~coopsim.physics.engine.Engine.diverged` says which);
:mod:`coopsim.sim.health` then names, stops and marks the robot. docs/reliability.md states
the contract.

The bounds, world frame (z up, the floor at z = 0 centred on the origin):

* every coordinate finite;
* speed: each component of a body's linear velocity within +-:data:`MAX_SPEED` m/s;
* angular rate: each component of its angular velocity (a joint's rate) within
  +-:data:`MAX_RATE` rad/s;
* altitude: z within [-:data:`DEPTH`, :data:`CEILING`] m;
* world bounds: x and y within :data:`BEYOND` m of the floor's edges.

Frames and units: metres, seconds, radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .compiled import jit

MAX_SPEED = 1000.0  # m/s: three times the speed of sound
MAX_RATE = 1000.0  # rad/s: 160 turns a second
CEILING = 10_000.0  # m above the floor
DEPTH = 10.0  # m below the floor: deeper, a body has fallen through it
BEYOND = 10_000.0  # m beyond the floor's edges, horizontally

#: Reason codes (0: healthy), in the order they are tested.
OK, NONFINITE, SPEED, RATE, ALTITUDE, OUTSIDE = range(6)


def why(code: int, value: float) -> str:
    """The sentence for reason ``code`` and the offending ``value`` (m/s, rad/s or m)."""
    if code == NONFINITE:
        return "its state went non-finite (NaN or infinite)"
    if code == SPEED:
        return f"its speed reached {value:.6g} m/s, beyond the bound of {MAX_SPEED:g} m/s"
    if code == RATE:
        return (f"its angular rate reached {value:.6g} rad/s, beyond the bound of "
                f"{MAX_RATE:g} rad/s")
    if code == ALTITUDE:
        return (f"its altitude reached z = {value:.6g} m, outside the bounds [-{DEPTH:g}, "
                f"{CEILING:g}] m")
    return (f"it went {value:.6g} m beyond the floor's edges, outside the bound of "
            f"{BEYOND:g} m")


def classify(state: np.ndarray, half: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Reason codes and offending values of (N, 13) STATE3D rows
    (:data:`coopsim.physics.engine.STATE3D`), vectorised.

    Args:
        state: Position (m), quaternion, linear velocity (m/s), angular velocity (rad/s).
        half: The floor's half length and half width, m.

    Returns:
        ((N,) int codes, (N,) float values): the first bound each row breaks (:data:`OK`: none)
        and its value (the largest speed or rate component, z, or |x| or |y|).
    """
    state = np.asarray(state, dtype=float).reshape(-1, 13)
    code, value = np.zeros(len(state), np.int64), np.zeros(len(state))
    if not len(state):
        return code, value
    with np.errstate(invalid="ignore"):
        speed = np.abs(state[:, 7:10]).max(axis=1)
        rate = np.abs(state[:, 10:13]).max(axis=1)
        z = state[:, 2]
        reach = np.maximum(np.abs(state[:, 0]) - half[0], np.abs(state[:, 1]) - half[1])
        tests = ((~np.isfinite(state).all(axis=1), np.zeros(len(state))),
                 (~(speed <= MAX_SPEED), speed), (~(rate <= MAX_RATE), rate),
                 (~((z >= -DEPTH) & (z <= CEILING)), z), (~(reach <= BEYOND), reach))
    for k, (bad, what) in reversed(list(enumerate(tests, start=1))):  # the first one wins
        code[bad], value[bad] = k, what[bad]
    return code, value


def healthy_planar(state: np.ndarray, half: tuple[float, float]) -> bool:
    """True when every (N, 6) planar row (x, y, yaw, vx, vy, yaw rate) is within the bounds
    (a cheap first test: a pass over the velocities, one over each coordinate; NaN fails every
    test); :func:`classify` then says which row broke which."""
    if not len(state):
        return True
    if len(state) <= _FEW:  # a few rows: Python's floats cost less than five numpy passes
        return _few_healthy(state.tolist(), half)
    if not np.abs(state[:, 3:6]).max() <= min(MAX_SPEED, MAX_RATE):
        return False
    # each coordinate on its own: Python's max(a, nan) is a, so a NaN y would pass a max
    return (np.abs(state[:, 0]).max() - half[0] <= BEYOND
            and np.abs(state[:, 1]).max() - half[1] <= BEYOND
            and math.isfinite(float(state[:, 2].sum())))


_FEW = 16  # rows up to which healthy_planar tests row by row


def planar_edge(floor) -> np.ndarray:
    """(4,) :func:`healthy_rows`' bounds on ``floor`` (a FloorSpec): its half length and half
    width, m; the fastest speed and turn rate, m/s and rad/s; the reach beyond its edges, m."""
    return np.array([floor.length / 2, floor.width / 2, min(MAX_SPEED, MAX_RATE), BEYOND])


@jit(inline=True)
def healthy_rows(state, edge) -> bool:
    """:func:`healthy_planar`'s test of every (N, 6) planar row (x, y, yaw, vx, vy, yaw rate;
    NaN fails each) inside a compiled call, ``edge`` from :func:`planar_edge`: the same
    outcome as its row or array form."""
    hx, hy, fast, beyond = edge[0], edge[1], edge[2], edge[3]
    for i in range(len(state)):
        if not (abs(state[i, 3]) <= fast and abs(state[i, 4]) <= fast
                and abs(state[i, 5]) <= fast and abs(state[i, 0]) - hx <= beyond
                and abs(state[i, 1]) - hy <= beyond and math.isfinite(state[i, 2])):
            return False
    return True


def _few_healthy(rows: list, half: tuple[float, float]) -> bool:
    """:func:`healthy_planar` over a few rows as lists (the same tests; NaN fails each)."""
    fast = min(MAX_SPEED, MAX_RATE)
    for x, y, yaw, vx, vy, w in rows:
        if not (abs(vx) <= fast and abs(vy) <= fast and abs(w) <= fast
                and abs(x) - half[0] <= BEYOND and abs(y) - half[1] <= BEYOND
                and math.isfinite(yaw)):
            return False
    return True


@dataclass(frozen=True)
class Divergence:
    """One body a step found diverged and put back (:meth:`Engine.diverged
    <coopsim.physics.engine.Engine.diverged>`).

    Attributes:
        row: The robot's row (robot order), or -1 for a body that is no robot's (an object).
        label: What it is, for the log (``robot cf1``, ``object box2``).
        why: The sentence of :func:`why`.
    """

    row: int
    label: str
    why: str
