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
