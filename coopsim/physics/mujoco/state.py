"""Numpy helpers of the ``mujoco`` engine (:mod:`coopsim.physics.mujoco.engine`): the state
rows it reports, the body outlines the 2D ray caster sees, and contact sides. Nothing here
imports MuJoCo; every function takes plain arrays.

Frames and units: world frame (z up), metres, radians, seconds; quaternions (w, x, y, z) turn
the body frame into the world frame. A free joint's coordinates are MuJoCo's: position and
quaternion (7), then linear velocity in the world frame and angular velocity in the body frame
(6); a ground robot's are x, y, yaw and their rates (3 + 3).
"""

from __future__ import annotations

import numpy as np

from ..shapes import box_corners, mark_sides

FEW = 8  # bodies up to which a state row or a wrench is worked out on floats, one by one


def rotations(quat: np.ndarray) -> np.ndarray:
    """(n, 3, 3) body-to-world rotation matrices of (n, 4) unit quaternions (w, x, y, z)."""
    w, x, y, z = quat[:, 0], quat[:, 1], quat[:, 2], quat[:, 3]
    out = np.empty((len(quat), 3, 3))
    out[:, 0, 0] = 1 - 2 * (y * y + z * z)
    out[:, 0, 1] = 2 * (x * y - w * z)
    out[:, 0, 2] = 2 * (x * z + w * y)
    out[:, 1, 0] = 2 * (x * y + w * z)
    out[:, 1, 1] = 1 - 2 * (x * x + z * z)
    out[:, 1, 2] = 2 * (y * z - w * x)
    out[:, 2, 0] = 2 * (x * z - w * y)
    out[:, 2, 1] = 2 * (y * z + w * x)
    out[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return out


def turn(w, x, y, z, vx, vy, vz) -> tuple:
    """A body-frame vector (vx, vy, vz) in the world frame, by the unit quaternion (w, x, y, z):
    :func:`rotations`' matrix times it, its entries as there and each sum left to right, on
    floats (a few bodies, one by one) and on (n,) arrays alike, the same bits."""
    return ((1 - 2 * (y * y + z * z)) * vx + 2 * (x * y - w * z) * vy + 2 * (x * z + w * y) * vz,
            2 * (x * y + w * z) * vx + (1 - 2 * (x * x + z * z)) * vy + 2 * (y * z - w * x) * vz,
            turn_z(w, x, y, z, vx, vy, vz))


def turn_z(w, x, y, z, vx, vy, vz):
    """The world-frame z component of :func:`turn` alone (floats or arrays)."""
    return 2 * (x * z - w * y) * vx + 2 * (y * z + w * x) * vy + (1 - 2 * (x * x + y * y)) * vz


def yaw_of(quat: np.ndarray) -> np.ndarray:
    """(n,) heading (rad) of (n, 4) quaternions: the angle of the body's x axis projected on the
    floor, counter-clockwise from +x."""
    return yaw(quat[:, 0], quat[:, 1], quat[:, 2], quat[:, 3])


def yaw(w, x, y, z):
    """:func:`yaw_of` of one quaternion's floats (a numpy float) or of (n,) arrays: numpy's
    arctan2 both ways (math.atan2's bits differ from it)."""
    return np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def state3d(qpos: np.ndarray, qvel: np.ndarray, qadr: np.ndarray, dadr: np.ndarray,
            free: np.ndarray, z: np.ndarray, static: np.ndarray | None = None,
            fixed: np.ndarray | None = None) -> np.ndarray:
    """(N, 13) :data:`~coopsim.physics.engine.STATE3D` rows of robots whose joints start at
    ``qadr`` (positions) and ``dadr`` (velocities): free bodies from their free joint, ground
    robots (``free`` False) from x, y, yaw at height ``z`` (m), level; ``static`` rows (a
    pedestal welded to the world, no joints) at ``fixed`` (N, 4) x, y, yaw, z, still."""
    return RobotStates(qadr, dadr, free, z, static, fixed).full(qpos, qvel)


class RobotStates:
    """:func:`state3d` and :func:`planar` of one layout's robots, their index arrays gathered
    once and the rows that never move (static) worked out once: a step reads only the rows
    with joints (the same bits: the same operations on each row).

    Args: as :func:`state3d`'s, less the state.
    """

    def __init__(self, qadr: np.ndarray, dadr: np.ndarray, free: np.ndarray, z: np.ndarray,
                 static: np.ndarray | None = None, fixed: np.ndarray | None = None) -> None:
        n = len(qadr)
        free = np.asarray(free, dtype=bool)
        still = np.zeros(n, dtype=bool) if static is None else np.asarray(static, dtype=bool)
        self.f, self.g = np.flatnonzero(free), np.flatnonzero(~free & ~still)
        self.fq, self.fd = qadr[self.f, None] + np.arange(7), dadr[self.f, None] + np.arange(6)
        self.gq, self.gd, self.gz = qadr[self.g], dadr[self.g], z[self.g]
        self.moving = np.flatnonzero(~still)
        self.still_full = np.zeros((n, 13))
        s = np.flatnonzero(still)
        if len(s):
            out = self.still_full
            out[s, 0], out[s, 1], out[s, 2] = fixed[s, 0], fixed[s, 1], fixed[s, 3]
            out[s, 3], out[s, 6] = np.cos(fixed[s, 2] / 2), np.sin(fixed[s, 2] / 2)
        self.still_planar = planar(self.still_full)  # the moving rows are overwritten

    def full(self, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """(N, 13) the robots' full states now."""
        out = self.still_full.copy()
        f, g = self.f, self.g
        if len(f):
            out[f, 0:7] = qpos[self.fq]
            out[f, 7:13] = qvel[self.fd]
        if len(g):
            q, d = self.gq, self.gd
            out[g, 0], out[g, 1], out[g, 2] = qpos[q], qpos[q + 1], self.gz
            half = qpos[q + 2] / 2
            out[g, 3], out[g, 6] = np.cos(half), np.sin(half)
            out[g, 7], out[g, 8], out[g, 12] = qvel[d], qvel[d + 1], qvel[d + 2]
        return out

    def planar(self, full: np.ndarray) -> np.ndarray:
        """(N, 6) :func:`planar` of :meth:`full`'s rows (the still rows' worked out once; a
        few moving rows one by one on floats: numpy's call costs more than their arithmetic,
        the same bits)."""
        out = self.still_planar.copy()
        if len(self.moving) > FEW:
            out[self.moving] = planar(full[self.moving])
            return out
        for row in self.moving.tolist():
            x, y, _, qw, qx, qy, qz, vx, vy, _, wx, wy, wz = full[row].tolist()
            out[row] = (x, y, float(yaw(qw, qx, qy, qz)), vx, vy,
                        turn_z(qw, qx, qy, qz, wx, wy, wz))
        return out


def planar(state: np.ndarray) -> np.ndarray:
    """(N, 6) x, y, yaw, vx, vy, yaw rate of (N, 13) full states: the heading of the body's x
    axis on the floor and the world-frame z component of the angular velocity."""
    out = np.empty((len(state), 6))
    out[:, 0:2] = state[:, 0:2]
    out[:, 2] = yaw_of(state[:, 3:7])
    out[:, 3:5] = state[:, 7:9]
    w, x, y, z = state[:, 3:7].T
    out[:, 5] = turn_z(w, x, y, z, state[:, 10], state[:, 11], state[:, 12])  # (R w_body)_z
    return out


def contact_sides(bodies: np.ndarray, points: np.ndarray, row_of_body: np.ndarray,
                  pose: np.ndarray, n: int) -> np.ndarray:
    """(n, 2) 1.0 where a robot touches something at its front / rear half.

    Args:
        bodies: (C, 2) body ids of each contact's two geoms.
        points: (C, 2) the contacts' x, y, m.
        row_of_body: Body id -> robot row (-1: not a robot's chassis).
        pose: (n, 3) x, y, yaw of the robots.
        n: Number of robots.
    """
    out = np.zeros((n, 2))
    for column in (0, 1):
        rows = row_of_body[bodies[:, column]]
        hit = rows >= 0
        if not hit.any():
            continue
        mark_sides(out, rows[hit], points[hit], pose)
    return out


def outline(shapes: tuple, x: float, y: float, yaw: float, group: int, circles: list,
            segments: list) -> None:
    """Append a body's floor projection to the ray caster's lists: circles (x, y, r, group)
    and the four edges (x1, y1, x2, y2, group) of each box, the body at (x, y, yaw).

    Args:
        shapes: ("circle", r, ox, oy) and ("box", length, width, ox, oy) in the body's frame.
    """
    c, s = np.cos(yaw), np.sin(yaw)
    for shape in shapes:
        ox, oy = shape[-2], shape[-1]
        cx, cy = x + c * ox - s * oy, y + s * ox + c * oy
        if shape[0] == "circle":
            circles.append((cx, cy, shape[1], group))
            continue
        pts = box_corners(cx, cy, yaw, shape[1], shape[2]).tolist()
        for a, b in zip(pts, pts[1:] + pts[:1]):
            segments.append((a[0], a[1], b[0], b[1], group))


def wall_boxes(length: float, width: float, thickness: float) -> list:
    """Centre (x, y) and half sizes (hx, hy) of the four walls just outside a floor ``length``
    by ``width`` m: their inner faces are its edges."""
    hl, hw, t = length / 2, width / 2, thickness
    return [((0.0, -hw - t / 2), (hl + t, t / 2)), ((0.0, hw + t / 2), (hl + t, t / 2)),
            ((-hl - t / 2, 0.0), (t / 2, hw)), ((hl + t / 2, 0.0), (t / 2, hw))]


def wall_segments(length: float, width: float, thickness: float) -> list:
    """The walls' outlines (x1, y1, x2, y2, 0) for the ray caster, as pymunk's boundary."""
    segments: list = []
    for (cx, cy), (hx, hy) in wall_boxes(length, width, thickness):
        outline((("box", 2 * hx, 2 * hy, 0.0, 0.0),), cx, cy, 0.0, 0, [], segments)
    return segments
