"""The range-sensing machinery the ``sonar``, ``lidar`` and ``proximity`` modules share.

A range sensor is a fan of beams: ``beams`` rays spread evenly over a field of view ``fov``
centred on the sensor's axis, cast from its mounting point. The sonar is one configuration of it
(11 beams over 180 degrees, cast from the chassis centre and measured from the chassis edge);
a lidar another (any beam count and field of view, measured from the mounting point, with a
minimum range, Gaussian noise and per-beam dropout). Every cast goes through the sensing
geometry's fan cast (``frame.geometry.cast_fan``: one compiled kernel for all robots of a
configuration), so walls, objects, other robots and a map's static geometry are all seen.

Frames and units: angles in radians from the robot's heading, counter-clockwise (+ = left);
mounting offsets in the robot's frame (x ahead, y to the left), m.
"""

from __future__ import annotations

import math

import numpy as np

FULL = 2.0 * math.pi


def beam_angles(beams: int, fov: float, yaw: float = 0.0) -> np.ndarray:
    """Angles of ``beams`` beams spread over ``fov`` rad about ``yaw`` rad, right to left.

    A full circle (fov >= 2 pi) does not repeat its first beam: 360 beams over 360 degrees are
    1 degree apart, starting straight behind (-180 degrees), as a ROS ``LaserScan``'s
    angle_min = -pi. One beam looks along ``yaw``.

    Returns:
        (beams,) float64 angles, rad.
    """
    beams = int(beams)
    if beams == 1:
        return np.array([float(yaw)])
    if fov >= FULL - 1e-9:
        return yaw - math.pi + np.arange(beams) * (FULL / beams)
    return yaw + np.linspace(-fov / 2.0, fov / 2.0, beams)


def increment(beams: int, fov: float) -> float:
    """Angle between neighbouring beams of :func:`beam_angles`, rad (0 for one beam)."""
    beams = int(beams)
    if beams == 1:
        return 0.0
    return FULL / beams if fov >= FULL - 1e-9 else fov / (beams - 1)


def mount_points(pose: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """World-frame (x, y) of points (dx, dy) m given in each robot's frame; pose (n, 3)."""
    c, s = np.cos(pose[:, 2]), np.sin(pose[:, 2])
    return np.column_stack((pose[:, 0] + c * dx - s * dy, pose[:, 1] + s * dx + c * dy))


def configurations(*columns: np.ndarray) -> list[tuple[tuple, np.ndarray]]:
    """Group rows by equal values of ``columns`` (each (n,)): [(values, indices)], in order of
    first appearance (deterministic). Rows of one group share one beam layout, one cast."""
    if not len(columns) or not len(columns[0]):
        return []
    keys = np.column_stack(columns)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")
    return [(tuple(keys[first[g]].tolist()), np.nonzero(inverse == g)[0]) for g in order]


def cast_mounted(frame, rows: np.ndarray, angles: np.ndarray, reach: np.ndarray,
                 dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """Distances from mounting points (dx, dy) (robot frame, m) of robots ``rows`` along
    ``angles`` (rad from the heading), capped at ``reach`` (len(rows),) m.

    Returns:
        (len(rows), len(angles)) distances from the mounting point, m; ``reach`` where nothing
        is within it. The robot's own assembly is not seen.
    """
    origins = mount_points(frame.pose[rows], dx, dy)
    return frame.geometry.cast_fan(rows, angles, reach, origins=origins,
                                   edge=np.zeros(len(rows)))


def noisy(dist: np.ndarray, std: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``dist`` (n, k) plus Gaussian noise of std ``std`` (n,) per value; no draw when every
    std is 0 (the run's random stream is then untouched)."""
    if dist.size and std.any():
        return dist + rng.standard_normal(dist.shape) * std[:, None]
    return dist


def dropped(shape: tuple, percent: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """Mask (n, k) of the values lost, each with chance ``percent`` (n,) %; None (and no draw)
    when every chance is 0."""
    if not percent.any() or not shape[0] * shape[1]:
        return None
    return rng.random(shape) * 100.0 < percent[:, None]
