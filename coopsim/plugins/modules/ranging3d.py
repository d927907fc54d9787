"""Range sensing in 3D: the ``sonar``, ``lidar``, ``proximity`` and ``altimeter`` of a robot in
a world on an engine that casts rays against its 3D geometry (``mujoco``, ``aerial``).

There each sensor casts from its real pose: the robot's position and attitude (a quadrotor's
roll and pitch tilt its beams), at the height of its chassis, against everything in 3D (a wall
lower than the sensor is flown over, a tilted lidar's beams meet the floor), skipping the
robot's own geoms; on ``aerial`` likewise against its 3D geometry
(:mod:`coopsim.physics.aerial.rays`). On the 2D engines (``pymunk``, ``kinematic``) the modules
cast in the floor slice as before (:mod:`.ranging`), bit for bit.

Frames and units: beams are given in the robot's body frame (x ahead, y to the left, z up) as
an azimuth (rad from x, counter-clockwise) and an elevation (rad above the x-y plane); a sensor
sits at the middle height of its chassis (the body's own geoms, MuJoCo's bounding boxes) plus
its mounting offset, m. Distances in m.
"""

from __future__ import annotations

import numpy as np

from ...model import kernel
from ...model.snapshot import quat_matrices


def active(frame) -> bool:
    """Whether ``frame``'s world casts in 3D (its engine has 3D ray casting)."""
    if frame.state3d is None:
        return False
    physics = frame.__dict__.get("physics")
    return physics is not None and getattr(physics, "casts3d", None) is not None \
        and physics.casts3d()


def rotations(quat: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotation matrices of (n, 4) unit quaternions w, x, y, z (body to world)."""
    return quat_matrices(quat)


def elevations(channels: int, vfov: float) -> np.ndarray:
    """(channels,) elevation angles, rad, spread evenly over ``vfov`` rad about the horizontal
    plane of the sensor, lowest first; one channel looks level."""
    if int(channels) <= 1:
        return np.zeros(1)
    return np.linspace(-vfov / 2.0, vfov / 2.0, int(channels))


def directions(azimuth: np.ndarray, elevation: np.ndarray) -> np.ndarray:
    """(len(elevation) * len(azimuth), 3) body-frame unit vectors, channel after channel (each
    channel a sweep of ``azimuth``, right to left)."""
    ce, se = np.cos(elevation)[:, None], np.sin(elevation)[:, None]
    out = np.empty((len(elevation), len(azimuth), 3))
    out[..., 0] = ce * np.cos(azimuth)[None, :]
    out[..., 1] = ce * np.sin(azimuth)[None, :]
    out[..., 2] = se
    return out.reshape(-1, 3)


def cast(frame, rows: np.ndarray, local: np.ndarray, reach: np.ndarray,
         mount: np.ndarray | None = None) -> np.ndarray:
    """Distances from each robot's sensor along body-frame directions ``local`` (k, 3).

    Args:
        frame: The step's frame (3D: :func:`active`).
        rows: (n,) robot rows.
        local: (k, 3) unit directions, body frame.
        reach: (n,) farthest distance, m.
        mount: (n, 3) the sensor's offset from the chassis's middle, body frame, m (None: 0).

    Returns:
        (n, k) distances from the sensor, m; ``reach`` where nothing is within it.
    """
    state = frame.state3d[rows]
    rot = rotations(state[:, 3:7])
    offset = np.zeros((len(rows), 3)) if mount is None else np.array(mount, dtype=float)
    offset[:, 2] += frame.physics.chassis_extent(rows).mean(axis=1)
    origins = state[:, :3] + np.einsum("nij,nj->ni", rot, offset)
    world = local @ rot.transpose(0, 2, 1)  # (n, k, 3); einsum was 13x slower here
    return frame.physics.cast3d(rows, origins, world, np.asarray(reach, dtype=float))


def fan(frame, rows: np.ndarray, angles: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """The sonar's and the proximity sensors' cast in 3D: distances from the chassis edge
    (its ``radius``) along level body-frame ``angles`` (rad from the heading), from the
    chassis's middle, capped at ``reach`` (n,) m; shape (n, len(angles))."""
    radius = frame.radius[rows]
    dist = cast(frame, rows, directions(np.asarray(angles, float), np.zeros(1)),
                np.asarray(reach, float) + radius)
    return np.clip(dist - radius[:, None], 0.0, np.asarray(reach, float)[:, None])


kernel.FAN3D[0] = (active, fan)  # the kernel contract's ``ranges`` view on a 3D engine


def underside(frame, rows: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """The altimeter's cast: (n, 1) distances from the underside of each chassis along its
    body -z axis to whatever is below (the floor, an object, another robot), m; ``reach``
    where nothing is within it, 0 where the underside touches or sinks into it.

    Cast from the body's origin (its own geoms are not seen) and measured from the underside:
    a quadrotor resting on the floor has its underside a hair below the floor's plane, where
    a ray would start past the floor and see nothing."""
    state = frame.state3d[rows]
    w, x, y, z = state[:, 3], state[:, 4], state[:, 5], state[:, 6]
    below = -frame.physics.chassis_extent(rows)[:, :1]  # (n, 1): origin to underside, m
    reach = np.asarray(reach, dtype=float)
    # (n, 1, 3): the body's -z axis in the world, the last column of rotations(), alone
    # (np.array and minimum/maximum: np.stack's and np.clip's wrappers cost more than the
    # arithmetic for a few robots; the same bits)
    down = -np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)]).T
    dist = frame.physics.cast3d(rows, state[:, :3], down[:, None, :], reach + below[:, 0])
    return np.minimum(np.maximum(dist - below, 0.0), reach[:, None])


def points(scan: np.ndarray, local: np.ndarray, reach: float) -> np.ndarray:
    """(m, 3) points, m, of the returns of one scan (``scan`` (k,) distances along ``local``
    (k, 3) directions): no return (0) and nothing seen (``reach``) give no point."""
    keep = (scan > 0.0) & (scan < reach - 1e-9) & np.isfinite(scan)
    return local[keep] * scan[keep, None]
