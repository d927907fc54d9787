"""Formation control on a sphere's surface with obstacle avoidance, by artificial potentials.

SwarmSimX's real-time study (its Fig. 5) flew N quadrotors that keep a formation on the surface
of a sphere while avoiding obstacles, each with "a standard formation-control plus obstacle-
avoidance algorithm based on artificial potentials" fed by a range sensor that gives the
relative positions of the robots and objects near it. This is that law, vectorised over the N
robots (pure numpy; the sensing that feeds it is :func:`neighbours`):

* a radial spring pulls each robot onto the sphere: ``k_sphere (R - |p - c|) u``, u the unit
  vector from the centre c to p;
* a spacing spring between neighbours (robots within ``sense`` m): each pair pulls together when
  further than ``spacing`` m and pushes apart when nearer, ``k_pair (d - spacing) e`` (e the unit
  vector to the neighbour), summed; only its component along the sphere's tangent plane acts,
  so the pairs spread the robots over the surface rather than off it;
* a repulsion from spherical obstacles within ``influence`` m of their surface,
  ``k_obstacle (1/s - 1/influence) / s^2`` away from the obstacle (s the clearance);
* a damping of the robot's own velocity, ``-k_damp v``.

The sum is a velocity set point (m/s, world frame), capped at ``v_max``; a flight controller
tracks it. Units: m, s, world frame (z up).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SphereLaw:
    """Gains and sizes of the law (see the module docstring).

    Attributes:
        centre: (x, y, z) of the sphere's centre, m. radius: Its radius R, m.
        spacing: Desired distance between neighbours, m. sense: Range of the neighbour
            sensor, m. k_sphere, k_pair, k_obstacle, k_damp: Gains (1/s, 1/s, m^3/s, 1).
        influence: Obstacles act within this clearance, m. v_max: Speed cap, m/s.
    """

    centre: tuple[float, float, float] = (0.0, 0.0, 3.0)
    radius: float = 2.0
    spacing: float = 1.0
    sense: float = 1.6
    k_sphere: float = 1.5
    k_pair: float = 0.6
    k_obstacle: float = 0.05
    k_damp: float = 0.0
    attract: float = 0.1
    influence: float = 0.6
    v_max: float = 1.0


def neighbours(p: np.ndarray, sense: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The range sensor: every ordered pair (i, j) of robots within ``sense`` m of each other.

    A k-d tree finds the pairs (SciPy's, O(N log N)): the N x N distance table it replaced
    cost 90 % of a 1,000-quadrotor step. The pairs come sorted by i, then j, as that table's
    ``nonzero`` gave them, so sums over them add in the same order.

    Args:
        p: (N, 3) positions, m, world frame. sense: Sensor range, m.

    Returns:
        (i, j, rel): the pairs' indices (k,) and rel = p[j] - p[i] (k, 3), m (what robot i's
        sensor reads of robot j, in the world frame).
    """
    from scipy.spatial import cKDTree

    p = np.asarray(p, dtype=float)
    if len(p) < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros((0, 3))
    pairs = cKDTree(p).query_pairs(sense, output_type="ndarray")
    i = np.concatenate((pairs[:, 0], pairs[:, 1])).astype(np.int64)
    j = np.concatenate((pairs[:, 1], pairs[:, 0])).astype(np.int64)
    order = np.lexsort((j, i))
    i, j = i[order], j[order]
    return i, j, p[j] - p[i]


def sphere_velocity(p: np.ndarray, v: np.ndarray, law: SphereLaw,
                    obstacles: np.ndarray | None = None,
                    sensed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                    ) -> np.ndarray:
    """The law's velocity set points.

    Args:
        p, v: (N, 3) positions (m) and velocities (m/s), world frame.
        law: The gains and sizes.
        obstacles: (M, 4) spheres x, y, z, radius (m), or None.
        sensed: :func:`neighbours`' answer, if already cast (else it is cast here).

    Returns:
        (N, 3) velocity set points, m/s, world frame, each at most ``law.v_max`` long.
    """
    centre = np.asarray(law.centre, dtype=float)
    out = p - centre
    r = np.linalg.norm(out, axis=1, keepdims=True)
    u = out / np.maximum(r, 1e-9)
    cmd = law.k_sphere * (law.radius - r) * u - law.k_damp * v
    i, j, rel = sensed if sensed is not None else neighbours(p, law.sense)
    if len(i):
        d = np.linalg.norm(rel, axis=1, keepdims=True)
        # attraction capped at its value at the sensor's edge: the crowd's inner robots are
        # not squeezed by the pull of a whole ring of neighbours
        gap = np.minimum(d - law.spacing, law.attract * (law.sense - law.spacing))
        pull = law.k_pair * np.where(gap > 0, law.attract * gap, gap) * rel / np.maximum(d, 1e-9)
        pair = np.zeros_like(p)
        np.add.at(pair, i, pull)
        cmd += pair - np.sum(pair * u, axis=1, keepdims=True) * u  # tangent part only
    if obstacles is not None and len(obstacles):
        cmd += _repulsion(p, np.asarray(obstacles, dtype=float), law)
    speed = np.linalg.norm(cmd, axis=1, keepdims=True)
    return cmd * np.minimum(1.0, law.v_max / np.maximum(speed, 1e-12))


def _repulsion(p: np.ndarray, obstacles: np.ndarray, law: SphereLaw) -> np.ndarray:
    """(N, 3) push away from the spheres ``obstacles`` (M, 4) within ``law.influence``."""
    rel = p[:, None, :] - obstacles[None, :, :3]
    d = np.linalg.norm(rel, axis=2)
    clear = np.maximum(d - obstacles[None, :, 3], 0.05)
    near = clear < law.influence
    mag = np.where(near, law.k_obstacle * (1.0 / clear - 1.0 / law.influence) / clear ** 2, 0.0)
    return np.einsum("nm,nmk->nk", mag / np.maximum(d, 1e-9), rel)


def sphere_errors(p: np.ndarray, law: SphereLaw) -> tuple[float, float]:
    """(mean |distance to the sphere's surface|, smallest distance between two robots), m: how
    well a formation sits on the sphere and keeps apart."""
    r = np.linalg.norm(p - np.asarray(law.centre), axis=1)
    rel = p[None, :, :] - p[:, None, :]
    d = np.linalg.norm(rel, axis=2)
    np.fill_diagonal(d, np.inf)
    return float(np.mean(np.abs(r - law.radius))), float(d.min()) if len(p) > 1 else np.inf
