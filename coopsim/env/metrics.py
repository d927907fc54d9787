"""Metric functions for ``[MONITORS]`` ``python`` lines that learning tasks often need
(``metric dist python coopsim.env.metrics:target_distance robot1 red``). Each takes the step's
snapshot and text arguments and returns a number (NaN when it cannot be computed); none imports
Gymnasium."""

from __future__ import annotations

import math

import numpy as np


def target_distance(snap, robot: str, color: str = "any") -> float:
    """Distance from ``robot``'s centre to the nearest target of ``color`` (any colour by
    default), m; NaN without such a robot or target."""
    i = snap.index.get(robot)
    spots = [t.position[:2] for t in snap.targets if color in ("any", t.color)]
    if i is None or not spots:
        return math.nan
    d = np.asarray(spots) - snap.poses[i, :2]
    return float(np.hypot(d[:, 0], d[:, 1]).min())


def collisions(snap, robot: str) -> float:
    """1 when ``robot``'s bumper touches something this step (front or rear), else 0; NaN
    without such a robot or bumper."""
    i = snap.index.get(robot)
    bumper = snap.readings.get("bumper")
    if i is None or bumper is None:
        return math.nan
    return float(bumper[i].max() > 0.5)


def forward_speed(snap, robot: str) -> float:
    """``robot``'s speed along its heading, m/s (negative backwards); NaN without it."""
    i = snap.index.get(robot)
    if i is None:
        return math.nan
    yaw = snap.poses[i, 2]
    return float(snap.velocities[i, 0] * math.cos(yaw) + snap.velocities[i, 1] * math.sin(yaw))
