"""Formation slots for a squad of n robots, and the robot-to-slot assignment.

Every formation function returns an ``(n, 2)`` array of slot positions, m, world frame, for ``n``
robots ``spacing`` m apart, placed about an ``anchor`` point and facing ``heading`` (rad,
counter-clockwise from +x). In the formation's own frame +x is forward (along the heading) and +y
is to the left.

Anchors:
    * ``line``, ``column``, ``wedge``, ``inverse_wedge``, ``block`` (an addition for large
      squads, not in the paper): the anchor is the slots' centroid, so a
      squad whose centroid follows a path keeps its formation centred on it.
    * ``circle``, ``half_circle``: the anchor is the centre of the circle (the defended object or
      the attacked target).

Radius rule (circle and half circle): by default ``R = n * spacing``, the rule of the swarm-gaming
paper (there, spacing is the robot diameter). It keeps at least ``spacing`` between neighbours for
any n >= 2 (the chord is ``2 n d sin(pi / n)``, which tends to ``2 pi d``), so circles are roomy;
pass ``radius`` to override it (``Squad.defend`` does).

The paper's "half circle" is really a 270 degree arc: its slots sit ``270 / n`` degrees apart. Here
the arc is centred on the side the squad comes from (``heading + pi``), so the 90 degree opening
faces away from the approaching squad, behind the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from .errors import SwarmError

#: Angular extent of the paper's "half circle" formation, rad.
HALF_CIRCLE_ARC = math.radians(270.0)
#: Angle of a wedge's arms from the backward axis, rad (45 degrees: arms at right angles).
WEDGE_HALF_ANGLE = math.pi / 4


def _check(n: int, spacing: float) -> None:
    if n < 1:
        raise SwarmError(f"empty formation: a formation needs at least 1 robot, got n = {n}")
    if not spacing > 0:
        raise SwarmError(f"formation spacing must be > 0 m, got {spacing}")


def _place(local: np.ndarray, anchor: Sequence[float], heading: float) -> np.ndarray:
    """Rotate formation-frame offsets (forward, left), m, by ``heading`` and add ``anchor``."""
    c, s = math.cos(heading), math.sin(heading)
    rot = np.array([[c, -s], [s, c]])
    return local @ rot.T + np.asarray(anchor, dtype=float)


def _centred(local: np.ndarray) -> np.ndarray:
    return local - local.mean(axis=0)


def line(n: int, spacing: float, anchor: Sequence[float] = (0.0, 0.0),
         heading: float = 0.0) -> np.ndarray:
    """Robots abreast on a line perpendicular to the heading, right to left, ``spacing`` m apart.

    Returns:
        (n, 2) slots, m, world frame, centred on ``anchor``.
    """
    _check(n, spacing)
    lateral = spacing * (np.arange(n) - (n - 1) / 2)
    return _place(np.column_stack([np.zeros(n), lateral]), anchor, heading)


def column(n: int, spacing: float, anchor: Sequence[float] = (0.0, 0.0),
           heading: float = 0.0) -> np.ndarray:
    """Robots one behind the other along the heading, front to back, ``spacing`` m apart.

    Returns:
        (n, 2) slots, m, world frame, centred on ``anchor``.
    """
    _check(n, spacing)
    forward = -spacing * (np.arange(n) - (n - 1) / 2)
    return _place(np.column_stack([forward, np.zeros(n)]), anchor, heading)


def block(n: int, spacing: float, anchor: Sequence[float] = (0.0, 0.0),
          heading: float = 0.0) -> np.ndarray:
    """Ranks of ceil(sqrt(n)) robots abreast, one rank behind the other, ``spacing`` m apart
    both ways; the last rank, if short, is centred. Not one of the paper's formations: it keeps
    a large squad compact (a 50-robot wedge would be 15 m wide at 0.6 m spacing).

    Returns:
        (n, 2) slots, m, world frame, front rank first (right to left), centred on ``anchor``.
    """
    _check(n, spacing)
    files = int(math.ceil(math.sqrt(n)))
    rank, file = np.divmod(np.arange(n), files)
    in_rank = np.minimum(files, n - rank * files)  # robots in each robot's rank
    lateral = spacing * (file - (in_rank - 1) / 2)
    return _place(_centred(np.column_stack([-spacing * rank, lateral])), anchor, heading)


def _wedge_local(n: int, spacing: float, half_angle: float) -> np.ndarray:
    """Apex at the origin, arms going backwards: robot k (k >= 1) is ceil(k/2) places down the
    left arm for odd k and the right arm for even k."""
    k = np.arange(n)
    rank = (k + 1) // 2
    side = np.where(k % 2 == 1, 1.0, -1.0)
    return np.column_stack([-rank * spacing * math.cos(half_angle),
                            side * rank * spacing * math.sin(half_angle)])


def wedge(n: int, spacing: float, anchor: Sequence[float] = (0.0, 0.0), heading: float = 0.0,
          half_angle: float = WEDGE_HALF_ANGLE) -> np.ndarray:
    """A V pointing along the heading: one robot at the apex, two diagonal lines trailing back.

    Neighbours on an arm are ``spacing`` m apart; each arm is ``half_angle`` rad off the backward
    axis.

    Returns:
        (n, 2) slots, m, world frame, the apex first, centred on ``anchor``.
    """
    _check(n, spacing)
    return _place(_centred(_wedge_local(n, spacing, half_angle)), anchor, heading)


def inverse_wedge(n: int, spacing: float, anchor: Sequence[float] = (0.0, 0.0),
                  heading: float = 0.0, half_angle: float = WEDGE_HALF_ANGLE) -> np.ndarray:
    """A V opening along the heading: the apex at the rear, the arms reaching forward.

    Returns:
        (n, 2) slots, m, world frame, the apex first, centred on ``anchor``.
    """
    _check(n, spacing)
    local = _wedge_local(n, spacing, half_angle) * np.array([-1.0, 1.0])
    return _place(_centred(local), anchor, heading)


def circle(n: int, spacing: float, anchor: Sequence[float] = (0.0, 0.0), heading: float = 0.0,
           radius: float | None = None) -> np.ndarray:
    """Robots evenly spread on a circle around the anchor, the first one ahead (at ``heading``).

    Args:
        radius: Circle radius, m; None uses the paper's rule ``n * spacing``.

    Returns:
        (n, 2) slots, m, world frame, counter-clockwise.
    """
    _check(n, spacing)
    r = n * spacing if radius is None else float(radius)
    angles = heading + 2 * math.pi * np.arange(n) / n
    return np.asarray(anchor, dtype=float) + r * np.column_stack([np.cos(angles), np.sin(angles)])


def half_circle(n: int, spacing: float, anchor: Sequence[float] = (0.0, 0.0),
                heading: float = 0.0, radius: float | None = None) -> np.ndarray:
    """The paper's attack "half circle": slots ``270 / n`` degrees apart on a 270 degree arc.

    The occupied arc spans ``270 (n - 1) / n`` degrees centred on ``heading + pi`` (the side the
    squad arrives from), so the opening lies beyond the anchor along the heading.

    Args:
        radius: Arc radius, m; None uses the paper's rule ``n * spacing``.

    Returns:
        (n, 2) slots, m, world frame, counter-clockwise.
    """
    _check(n, spacing)
    r = n * spacing if radius is None else float(radius)
    step = HALF_CIRCLE_ARC / n
    angles = heading + math.pi + step * (np.arange(n) - (n - 1) / 2)
    return np.asarray(anchor, dtype=float) + r * np.column_stack([np.cos(angles), np.sin(angles)])


#: Formation name -> slot function ``f(n, spacing, anchor, heading)``.
FORMATIONS: dict[str, Callable[..., np.ndarray]] = {
    "line": line, "column": column, "wedge": wedge, "inverse_wedge": inverse_wedge,
    "circle": circle, "half_circle": half_circle, "block": block,
}


@dataclass(frozen=True)
class Formation:
    """A formation by name, with its spacing (m) and, for circles, an optional radius (m)."""

    name: str = "wedge"
    spacing: float = 0.6
    radius: float | None = None

    def __post_init__(self) -> None:
        if self.name not in FORMATIONS:
            raise SwarmError(f"unknown formation {self.name!r}; known: {', '.join(FORMATIONS)}")
        if not self.spacing > 0:
            raise SwarmError(f"formation spacing must be > 0 m, got {self.spacing}")

    @classmethod
    def of(cls, spec) -> "Formation":
        """The formation of a scenario's squad (a ``SquadSpec``: formation, spacing, radius)."""
        return cls(spec.formation, spec.spacing, spec.radius)

    def slots(self, n: int, anchor: Sequence[float] = (0.0, 0.0),
              heading: float = 0.0) -> np.ndarray:
        """(n, 2) slot positions, m, world frame (see the module docstring for anchors)."""
        f = FORMATIONS[self.name]
        if self.name in ("circle", "half_circle"):
            return f(n, self.spacing, anchor, heading, radius=self.radius)
        return f(n, self.spacing, anchor, heading)

    def offsets(self, n: int) -> np.ndarray:
        """(n, 2) slot offsets in the formation frame (x forward, y left), m."""
        return self.slots(n)


def assign(positions: np.ndarray, slots: np.ndarray, squared: bool = False) -> np.ndarray:
    """Give each robot a slot so that the total straight-line distance is minimal.

    With ``squared`` the total of the squared distances is minimal instead: the long trips
    are shortened at the cost of the short ones, and robots driving to their slots at once
    cross each other's way less (CAPT, Turpin et al. 2014: collision free when they arrive
    together and starts and slots are far enough apart).

    Args:
        positions: (n, 2) robot positions, m.
        slots: (k, 2) slot positions, m, k >= n.

    Returns:
        (n,) int array: ``result[i]`` is the slot of robot i (all different).

    Raises:
        SwarmError: no robots, or fewer slots than robots.
    """
    positions = np.asarray(positions, dtype=float).reshape(-1, 2)
    slots = np.asarray(slots, dtype=float).reshape(-1, 2)
    if len(positions) == 0:
        raise SwarmError("empty squad: nothing to assign (0 robots)")
    if len(slots) < len(positions):
        raise SwarmError(f"{len(positions)} robots but only {len(slots)} slots")
    cost = np.linalg.norm(positions[:, None, :] - slots[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(cost ** 2 if squared else cost)
    out = np.empty(len(positions), dtype=int)
    out[rows] = cols
    return out


def shape_error(positions: np.ndarray, offsets: np.ndarray, heading: float) -> np.ndarray:
    """Each robot's distance (m) from its slot when the formation (``offsets``, (n, 2) slots
    in its own frame) is fitted to ``positions`` ((n, 2), m) as a rigid shape: from each of
    eight start headings (``heading`` rad and every 45 degrees round), robots are matched to
    slots (least total distance) and the turn and shift that fit best are taken, twice; the
    best fit wins."""
    p = positions - positions.mean(axis=0)
    f = offsets - offsets.mean(axis=0)
    best = None
    for k in range(8):
        err = _fit(p, f, heading + k * math.pi / 4)
        if best is None or float(np.square(err).sum()) < float(np.square(best).sum()):
            best = err
    return best


def _fit(p: np.ndarray, f: np.ndarray, theta: float) -> np.ndarray:
    """The errors of one fit of centred slots ``f`` to centred positions ``p`` from a start
    heading ``theta`` (rad)."""
    for _ in range(2):
        c, s = math.cos(theta), math.sin(theta)
        placed = f @ np.array([[c, s], [-s, c]])
        cost = np.hypot(p[:, None, 0] - placed[None, :, 0], p[:, None, 1] - placed[None, :, 1])
        rows, cols = linear_sum_assignment(cost)
        a, b = f[cols], p[rows]
        theta = math.atan2(float((a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]).sum()),
                           float((a * b).sum()))
    c, s = math.cos(theta), math.sin(theta)
    fitted = f[cols] @ np.array([[c, s], [-s, c]])
    out = np.empty(len(p))
    out[rows] = np.hypot(*(p[rows] - fitted).T)
    return out
