"""Shared control of a group: a person steers its velocity, the robots keep formation and avoid
obstacles, and the group's repulsion is the force a haptic device renders (pure numpy).

Each robot i of a group of N tracks the velocity set point (m/s, world frame, z up)

    v_i = v_person + k_slot (c + R(heading) o_i - p_i) + k_z (z_ref - z_i) e_z + r_i

capped at ``v_max``: the person's velocity command ``v_person`` (vx, vy, vz), the formation law
of :mod:`coopsim.swarm.formations` (o_i the robot's slot offset in the formation's frame, c the
group's centroid in x, y, so the formation rides along wherever the group is; z_ref the group's
altitude, moved by the person's vz) and the artificial potentials of
:mod:`coopsim.swarm.potentials`: r_i, the sum of

* the obstacles' repulsion ``k_obstacle (1/s - 1/influence) / s^2`` away from the nearest point
  of every object within ``influence`` m of the robot (s the clearance, m): the world's objects,
  a map's walls among them, and the floor's edge walls (:func:`edge_walls`), and
* the neighbours' repulsion, the push part of the potentials' spacing spring,
  ``k_pair (spacing - d)`` away from every other robot nearer than the formation's spacing (d
  the distance, m): members of the group and robots outside it alike.

The **feedback** is ``gain * sum_i r_i`` (N, world frame): the repulsion on the whole group, what
a haptic device renders against the person's hand. The members' mutual pushes cancel in pairs
(Newton's third law), so the feedback holds the obstacles and the robots outside the group;
:func:`group_velocity` also gives the two parts apart. Ground robots are members too: their set
point has no vertical part, and :func:`unicycle` turns it into a differential drive's wheels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


#: Obstacle tables longer than this are screened (:func:`_near`) before the exact geometry.
SCREEN_FROM = 32


@dataclass(frozen=True)
class SharedLaw:
    """Gains and sizes of the group's law (see the module docstring).

    Attributes:
        k_slot: Formation gain, 1/s. k_z: Altitude gain, 1/s.
        k_obstacle: Obstacle repulsion gain, m^3/s. influence: Obstacles act within this
            clearance, m. k_pair: Neighbour push gain, 1/s. spacing: The formation's spacing,
            below which neighbours push apart, m. v_max: Speed cap, m/s.
        gain: Feedback gain, N per m/s of repulsion.
    """

    k_slot: float = 1.0
    k_z: float = 1.5
    k_obstacle: float = 0.05
    influence: float = 0.8
    k_pair: float = 1.0
    spacing: float = 0.6
    v_max: float = 1.0
    gain: float = 1.0


def nearest_points(p: np.ndarray, shapes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The nearest point of every obstacle to every robot, and the obstacles' clearance.

    Args:
        p: (N, 3) robot positions, m, world frame.
        shapes: (M, 8) obstacles, one a row: kind (0 box, 1 vertical cylinder, 2 sphere),
            centre x, y, z (m), yaw (rad), half length, half width, half height (m; a
            cylinder's radius is its half length, a sphere's too).

    Returns:
        (nearest (N, M, 3) m, clearance (N, M) m: distance from the robot to the obstacle's
        surface, 0 inside it).
    """
    kind, c, yaw, half = shapes[:, 0], shapes[:, 1:4], shapes[:, 4], shapes[:, 5:8]
    cos, sin = np.cos(yaw), np.sin(yaw)
    rel = p[:, None, :] - c[None, :, :]
    # into each obstacle's frame (yaw only: worlds' objects stand upright)
    lx = cos * rel[..., 0] + sin * rel[..., 1]
    ly = -sin * rel[..., 0] + cos * rel[..., 1]
    lz = np.clip(rel[..., 2], -half[:, 2], half[:, 2])
    box = np.stack((np.clip(lx, -half[:, 0], half[:, 0]), np.clip(ly, -half[:, 1], half[:, 1]),
                    lz), axis=-1)
    radial = np.hypot(lx, ly)
    scale = np.minimum(1.0, half[:, 0] / np.maximum(radial, 1e-12))
    cyl = np.stack((lx * scale, ly * scale, lz), axis=-1)
    local = np.where((kind == 0)[None, :, None], box, cyl)
    wx = cos * local[..., 0] - sin * local[..., 1]
    wy = sin * local[..., 0] + cos * local[..., 1]
    nearest = c[None, :, :] + np.stack((wx, wy, local[..., 2]), axis=-1)
    dist = np.linalg.norm(rel, axis=-1, keepdims=True)
    sphere = c[None, :, :] + rel * np.minimum(1.0, half[None, :, 0:1] / np.maximum(dist, 1e-12))
    nearest = np.where((kind == 2)[None, :, None], sphere, nearest)
    return nearest, np.linalg.norm(p[:, None, :] - nearest, axis=-1)


def obstacle_push(p: np.ndarray, shapes: np.ndarray, law: SharedLaw) -> np.ndarray:
    """(N, 3) the obstacles' repulsion on each robot, m/s (the potentials' law on the nearest
    points of ``shapes``, see :func:`nearest_points`). Shapes whose footprint's circle lies
    beyond ``influence`` of every robot push nothing and are left out first (a map's
    thousands of walls cost one distance each; a few shapes are taken whole)."""
    if not len(shapes) or not len(p):
        return np.zeros((len(p), 3))
    if len(shapes) > SCREEN_FROM:
        shapes = _near(p, shapes, law.influence)
        if not len(shapes):
            return np.zeros((len(p), 3))
    nearest, clear = nearest_points(p, shapes)
    away = p[:, None, :] - nearest
    s = np.maximum(clear, 0.05)  # inside or touching: the push of 5 cm, not infinity
    mag = np.where(clear < law.influence,
                   law.k_obstacle * (1.0 / s - 1.0 / law.influence) / s ** 2, 0.0)
    return np.einsum("nm,nmk->nk", mag / np.maximum(clear, 1e-9), away)


def _near(p: np.ndarray, shapes: np.ndarray, influence: float) -> np.ndarray:
    """The rows of ``shapes`` whose footprint's circle (centre x, y; radius the half length and
    width's hypotenuse, m) comes within ``influence`` m of some robot at ``p`` in the plane:
    the only ones that can push (a cheap screen before the exact geometry)."""
    reach = np.hypot(p[:, None, 0] - shapes[None, :, 1], p[:, None, 1] - shapes[None, :, 2])
    near = (reach - np.hypot(shapes[:, 5], shapes[:, 6])[None, :] < influence).any(axis=0)
    return shapes if near.all() else shapes[near]


def neighbour_push(p: np.ndarray, others: np.ndarray, law: SharedLaw) -> np.ndarray:
    """(N, 3) the neighbours' push on each robot, m/s: ``k_pair (spacing - d)`` away from every
    robot of ``p`` and of ``others`` ((K, 3), robots outside the group) nearer than
    ``law.spacing``."""
    every = np.concatenate((p, others)) if len(others) else p
    rel = p[:, None, :] - every[None, :, :]
    d = np.linalg.norm(rel, axis=-1)
    d[np.arange(len(p)), np.arange(len(p))] = np.inf  # not itself
    mag = np.where(d < law.spacing, law.k_pair * (law.spacing - d), 0.0)
    return np.einsum("nk,nkj->nj", mag / np.maximum(d, 1e-9), rel)


def group_velocity(p: np.ndarray, offsets: np.ndarray, heading: float, v_person,
                   z_ref, shapes: np.ndarray, others: np.ndarray, law: SharedLaw,
                   ground: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The group's velocity set points and the repulsion on it.

    Args:
        p: (N, 3) the members' positions, m, world frame.
        offsets: (N, 2) each member's slot in the formation's frame (x forward, y left), m.
        heading: The formation's heading, rad (counter-clockwise from +x).
        v_person: (vx, vy, vz) the person's velocity command, m/s, world frame.
        z_ref: The group's altitude, m (or (N,) one per member).
        shapes: (M, 8) the obstacles (:func:`nearest_points`). others: (K, 3) robots outside
            the group, m.
        law: Gains and sizes.
        ground: (N,) True for members that drive on the floor: their set point has no
            vertical part (before the cap), they neither climb nor sink; None: all fly.

    Returns:
        (v_set (N, 3) m/s capped at ``law.v_max``; obstacles (3,) and neighbours (3,): the
        summed repulsion of each kind on the group, m/s; times ``law.gain`` they are the
        feedback force, N).
    """
    c, s = math.cos(heading), math.sin(heading)
    slots = p[:, :2].mean(axis=0) + offsets @ np.array([[c, s], [-s, c]])
    obstacles = obstacle_push(p, shapes, law)
    neighbours = neighbour_push(p, others, law)
    v = np.zeros_like(p)
    v[:] = np.asarray(v_person, dtype=float)[:3]
    v[:, :2] += law.k_slot * (slots - p[:, :2])
    v[:, 2] += law.k_z * (z_ref - p[:, 2])
    v += obstacles + neighbours
    if ground is not None:
        v[ground, 2] = 0.0
    speed = np.linalg.norm(v, axis=1, keepdims=True)
    v *= np.minimum(1.0, law.v_max / np.maximum(speed, 1e-12))
    return v, obstacles.sum(axis=0), neighbours.sum(axis=0)


def edge_walls(length: float, width: float, thick: float = 0.1) -> np.ndarray:
    """(4, 8) obstacle rows of the floor's edge walls (:func:`nearest_points`): boxes ``thick``
    m thick whose inner faces are the edges of a ``length`` x ``width`` m floor centred on the
    origin, as tall as any flight (their nearest point is level with the robot)."""
    hl, hw, t = length / 2.0, width / 2.0, thick / 2.0
    tall = 1e4
    return np.array([(0, hl + t, 0.0, 0.0, 0.0, t, hw + thick, tall),
                     (0, -hl - t, 0.0, 0.0, 0.0, t, hw + thick, tall),
                     (0, 0.0, hw + t, 0.0, 0.0, hl + thick, t, tall),
                     (0, 0.0, -hw - t, 0.0, 0.0, hl + thick, t, tall)], dtype=float)


def unicycle(v: np.ndarray, yaw: np.ndarray, k_heading: float, axle: np.ndarray,
             top: np.ndarray) -> np.ndarray:
    """(N, 2) left, right wheel speeds (m/s) taking differential drives along planar
    velocity set points ``v`` ((N, >= 2) m/s, world frame) from headings ``yaw`` (rad): turn
    at ``k_heading`` (1/s) times the heading error towards the set point's direction, forward
    at the set point's speed along the nose (none while it points more than 90 degrees away:
    turn first); both wheels scaled down together where one would exceed ``top`` (m/s), which
    keeps the curvature. ``axle``: the wheels' distance, m. A set point under 1 mm/s: still."""
    speed = np.hypot(v[:, 0], v[:, 1])
    error = (np.arctan2(v[:, 1], v[:, 0]) - yaw + np.pi) % (2.0 * np.pi) - np.pi
    moving = speed > 1e-3
    forward = np.where(moving, speed * np.maximum(np.cos(error), 0.0), 0.0)
    turn = np.where(moving, k_heading * error, 0.0)
    out = np.column_stack((forward - turn * axle / 2.0, forward + turn * axle / 2.0))
    peak = np.abs(out).max(axis=1)
    return out * np.minimum(1.0, top / np.maximum(peak, 1e-12))[:, None]


def shapes_of(specs, poses: np.ndarray) -> np.ndarray:
    """(M, 8) obstacle rows (:func:`nearest_points`) of a world's objects.

    Args:
        specs: ObjectSpecs (shape, size (length, width, height) m). poses: (M, >= 3) their
            x, y, yaw now (the snapshot's ``object_poses``; z from the spec: the objects of a
            flying arena stand on the floor or hang still).
    """
    kinds = {"box": 0, "cylinder": 1, "sphere": 2}
    rows = np.zeros((len(specs), 8))
    for k, spec in enumerate(specs):
        length, width, height = spec.size
        rows[k] = (kinds.get(spec.shape, 0), poses[k][0], poses[k][1], spec.position[2],
                   poses[k][2], length / 2, width / 2,
                   length / 2 if spec.shape == "sphere" else height / 2)
    return rows
