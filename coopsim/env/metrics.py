"""Metric functions for ``[MONITORS]`` ``python`` lines that learning tasks often need
(``metric dist python coopsim.env.metrics:target_distance robot1 red``). Each takes the step's
snapshot and text arguments and returns a number (NaN when it cannot be computed); none imports
Gymnasium."""

from __future__ import annotations

import math

import numpy as np

from ..model.capabilities import Learnable, capability
from ..model.errors import CoopsimError
from ..model.metric_kind import nearest_target
from ..model.plugins import MODULES


def target_distance(snap, robot: str, color: str = "any") -> float:
    """Distance from ``robot``'s centre to the nearest target of ``color`` (any colour by
    default), m; NaN without such a robot or target."""
    i = snap.index.get(robot)
    return math.nan if i is None else nearest_target(snap, i, color)


def collisions(snap, robot: str) -> float:
    """1 when one of ``robot``'s contact sensors (the modules declaring ``contact``, such as
    the bumper) touches something this step, else 0; NaN without such a robot or sensor."""
    i = snap.index.get(robot)
    if i is None:
        return math.nan
    touch = [reading[i] for label, reading in snap.readings.items() if _contact(label)]
    values = np.concatenate(touch) if touch else np.empty(0)
    values = values[~np.isnan(values)]  # NaN: a module the robot does not carry
    return float(values.max() > 0.5) if values.size else math.nan


def _contact(label: str) -> bool:
    """Whether module ``label`` declares its reading contact switches (unknown: no)."""
    try:
        return capability(MODULES.get(label), Learnable, default=True).contact
    except CoopsimError:
        return False


def forward_speed(snap, robot: str) -> float:
    """``robot``'s speed along its heading, m/s (negative backwards); NaN without it."""
    i = snap.index.get(robot)
    if i is None:
        return math.nan
    yaw = snap.poses[i, 2]
    return float(snap.velocities[i, 0] * math.cos(yaw) + snap.velocities[i, 1] * math.sin(yaw))


def spread(snap, *robots: str) -> float:
    """Mean distance from each of ``robots`` to its nearest other one, m (a cooperative
    coverage score: robots spread over the floor score high); NaN with fewer than two."""
    rows = [snap.index[r] for r in robots if r in snap.index]
    if len(rows) < 2:
        return math.nan
    p = snap.poses[rows, :2]
    d = np.hypot(*(p[:, None, :] - p[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(d, np.inf)
    return float(d.min(axis=1).mean())


def waypoint_distance(snap, robot: str, x: str = "0", y: str = "0", z: str = "1") -> float:
    """3D distance from ``robot``'s centre to the waypoint (x, y, z), m (world frame; the
    arguments are text, as a ``[MONITORS]`` line gives them); NaN without the robot or in a
    2D world (no ``Snapshot.pose3d``)."""
    i = snap.index.get(robot)
    if i is None or snap.pose3d is None:
        return math.nan
    goal = np.array([float(x), float(y), float(z)])
    return float(np.linalg.norm(snap.pose3d[i, :3] - goal))


def tilt(snap, robot: str) -> float:
    """Angle between ``robot``'s body z axis and the world's z (up), rad: 0 level, pi/2 on
    its side, pi upside down; NaN without the robot or in a 2D world."""
    i = snap.index.get(robot)
    if i is None or snap.pose3d is None:
        return math.nan
    _, qx, qy, _ = snap.pose3d[i, 3:7]
    # the world z of the body's z axis is 1 - 2 (qx^2 + qy^2) for a unit quaternion
    return float(math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (qx * qx + qy * qy)))))


def spin(snap, robot: str) -> float:
    """Magnitude of ``robot``'s angular velocity, rad/s (body frame, what a gyroscope reads);
    NaN without the robot or in a 2D world."""
    i = snap.index.get(robot)
    if i is None or snap.twist3d is None:
        return math.nan
    return float(np.linalg.norm(snap.twist3d[i, 3:6]))
