"""Geometry the engines share: where an object's bottom is, planar states as 3D rows, and the
ray caster's input (circles and segments, the floor's outline, box corners). Units: m, rad;
the world frame (x, y on the floor, z up)."""

from __future__ import annotations

import numpy as np

from ..model.specs import ObjectSpec


def bottom(spec: ObjectSpec) -> float:
    """Height of an object's lowest point, m: its centre z less half its height (a sphere's:
    half its diameter)."""
    height = spec.size[0] if spec.shape == "sphere" else spec.size[2]
    return spec.position[2] - height / 2


def floats(spec: ObjectSpec) -> bool:
    """True for a 3D object: its bottom is above the floor (by more than 1 mm, so a file's
    rounded heights still stand on it)."""
    return bottom(spec) > 1e-3


def planar_state3d(state: np.ndarray) -> np.ndarray:
    """(N, 13) :data:`STATE3D` rows of (N, 6) planar states (x, y, yaw, vx, vy, yaw rate): on
    the floor, turned about z only."""
    state = np.asarray(state, dtype=float).reshape(-1, 6)
    out = np.zeros((len(state), 13))
    out[:, 0:2] = state[:, 0:2]
    half = state[:, 2] / 2
    out[:, 3] = np.cos(half)
    out[:, 6] = np.sin(half)
    out[:, 7:9] = state[:, 3:5]
    out[:, 12] = state[:, 5]
    return out


def mark_sides(out: np.ndarray, robot: np.ndarray, points: np.ndarray,
                pose: np.ndarray) -> None:
    """Set ``out[robot, 0]`` (front half) or ``out[robot, 1]`` (rear half) to 1.0 for each
    contact point (len(robot), 2) x, y, m, by which side of each robot's heading it lies on
    (``pose``: (N, 3) x, y, yaw; the engines' :meth:`Engine.contacts`)."""
    rel = points - pose[robot, :2]
    yaw = pose[robot, 2]
    ahead = rel[:, 0] * np.cos(yaw) + rel[:, 1] * np.sin(yaw) >= 0
    out[robot[ahead], 0] = 1.0
    out[robot[~ahead], 1] = 1.0


def outline_geometry(half_length: float, half_width: float, objects) -> tuple:
    """Ray-caster input (:func:`as_geometry`) of the floor's four walls and ``objects``
    (ObjectSpecs standing still: boxes as their four edges, cylinders and spheres as circles),
    group 0: the static outline of an engine without its own collision shapes."""
    hl, hw = half_length, half_width
    walls = [(-hl, -hw, hl, -hw), (hl, -hw, hl, hw), (hl, hw, -hl, hw), (-hl, hw, -hl, -hw)]
    circles, segments = [], []
    for s in objects:
        if s.shape == "box":
            c = box_corners(s.position[0], s.position[1], s.yaw, s.size[0], s.size[1])
            segments += [(*c[k], *c[(k + 1) % 4], 0) for k in range(4)]
        else:
            circles.append((s.position[0], s.position[1], s.radius, 0))
    return as_geometry(circles, segments + [(*w, 0) for w in walls])


def as_geometry(circles: list, segments: list):
    """Ray-caster input from lists of (x, y, r, group) and (x1, y1, x2, y2, group) tuples."""
    c = np.array(circles, dtype=float).reshape(-1, 4)
    s = np.array(segments, dtype=float).reshape(-1, 5)
    return c[:, :3], c[:, 3].astype(np.int64), s[:, :4], s[:, 4].astype(np.int64)


def box_corners(cx: float, cy: float, yaw: float, length: float, width: float) -> np.ndarray:
    """(4, 2) corners of a rectangle centred at (cx, cy), turned by yaw, counter-clockwise."""
    c, s = np.cos(yaw), np.sin(yaw)
    local = np.array([(-length, -width), (length, -width), (length, width), (-length, width)]) / 2
    return local @ np.array([[c, s], [-s, c]]) + (cx, cy)
