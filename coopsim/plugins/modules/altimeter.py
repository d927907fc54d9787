"""``altimeter``: a downward range sensor (a time-of-flight ranger under the body, as the
Crazyflie's Flow deck carries) measuring to the floor at z = 0.

The ray leaves the body's centre along the body's -z axis; with the body at height z whose z axis
makes the angle a with the vertical, it meets the floor after z / cos a (m). Beyond ``max_range``,
or when the ray points at or above the horizon (the body upside down), it reads ``max_range``
(as the sonar does when nothing is in range). Objects and other robots under it are not seen:
only the floor. White noise of std ``noise`` (m), clipped to [0, max_range]; ``rate`` sets the
update rate (Hz). In a 2D world (an engine without ``flight``) the robots are on the floor: it
reads 0.

On an engine that casts rays in 3D (``mujoco``, ``aerial``) it sees what is really below: the ray is
cast along the body's -z axis against the 3D geometry (objects, other robots, the terrain; the
robot's own geoms skipped) and measured from the underside of the body
(:func:`.ranging3d.underside`); on ``aerial`` likewise (:mod:`coopsim.physics.aerial.rays`).
"""

from __future__ import annotations

import numpy as np

from ...model.commands import Command
from ...model.module import Module
from ...model.params import ParamSpec
from . import flying, ranging3d
from .flyfused import FlightPass
from .flymujoco import AroundPass
from .common import lost, noise, rate
from .rotors import full_state


class Altimeter(Module):
    """Range to the floor along the body's -z axis, m."""

    label = "altimeter"
    fused_pass = (FlightPass, AroundPass)  # one compiled call a tick (flyfused, flymujoco)
    described_by = ("rotors",)  # description keys giving it (description.mobile)
    mount = "link"  # how a described robot's sensor line mounts it
    description = "range to the floor along the body's -z axis, m (max_range when beyond)"
    params = (
        ParamSpec("max_range", "float", "farthest range measured, m", 4.0, 0.01, 1000.0, "m"),
        noise("m", 10.0), lost(), rate(),
    )
    commands = (Command(3300, "read", "altimeter", kind="read",
                        doc="range to the floor along the body's -z axis, m"),)
    fields = ("range",)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        if ranging3d.active(frame):  # from the underside, against the 3D geometry (mujoco)
            return ranging3d.underside(frame, rows, p["max_range"])
        if frame.state3d is not None:  # one compiled pass, no gather
            out = np.empty((len(rows), 1))
            flying.altimeter(frame.state3d, np.asarray(rows, dtype=np.int64),
                             np.ascontiguousarray(p["max_range"], dtype=float), out)
            return out
        state = full_state(frame, rows)
        x, y = state[:, 4], state[:, 5]
        down = 1.0 - 2.0 * (x * x + y * y)  # the body z axis's world z: cos of the tilt
        height = np.maximum(state[:, 2], 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            hit = np.where(down > 1e-9, height / np.where(down > 1e-9, down, 1.0), np.inf)
        return np.minimum(hit, p["max_range"])[:, None]

    @classmethod
    def clip(cls, out, p):
        return np.clip(out, 0.0, p["max_range"][:, None])
