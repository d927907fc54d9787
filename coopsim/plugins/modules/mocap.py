"""``mocap``: a motion-capture system's pose of the robot: position and orientation, exact
unless its ``noise`` and ``angle_noise`` (0 by default) add some.

Position (m, world frame) with white noise of std ``noise`` on each axis; orientation as the
unit quaternion (w, x, y, z, body to world) turned by a small random rotation: a rotation vector
with std ``angle_noise`` (rad) on each body axis, applied in the body frame and renormalised. The
quaternion is kept in the hemisphere w >= 0 (q and -q are the same turn). ``rate`` sets the
update rate (Hz), as motion-capture systems run at 100-300 Hz. In a 2D world (an engine without
``flight``) it reads the planar pose: z 0, turned about z only.
"""

from __future__ import annotations

import numpy as np

from ...model.commands import Command
from ...model.module import Module
from ...model.params import ParamSpec
from . import flying
from .flyfused import FlightPass
from .flymujoco import AroundPass
from .common import lost, noise, rate
from .rotors import full_state


class Mocap(Module):
    """Pose from motion capture: x, y, z (m) and the quaternion qw, qx, qy, qz."""

    label = "mocap"
    fused_pass = (FlightPass, AroundPass)  # one compiled call a tick (flyfused, flymujoco)
    described_by = ("rotors",)  # description keys giving it (description.mobile)
    mount = "link"  # how a described robot's sensor line mounts it
    description = ("motion-capture pose: x, y, z (m, world frame) and quaternion qw, qx, qy, qz "
                   "(body to world); exact unless noise or angle_noise is set (both 0 by default)")
    params = (
        noise("m", 10.0),
        ParamSpec("angle_noise", "float", "std of the small random rotation added to the "
                  "orientation, rad per body axis", 0.0, 0.0, 1.0, "rad"),
        lost(), rate(),
    )
    commands = (Command(3200, "read", "mocap", kind="read",
                        doc="x, y, z (m, world frame), qw, qx, qy, qz (body to world)"),)
    fields = ("x", "y", "z", "qw", "qx", "qy", "qz")

    NOISE = ("noise", "angle_noise")  # in the order they draw, 3 normals each

    @classmethod
    def noise_draws(cls, p) -> int:
        """Standard normals a robot's reading takes per measured step: 3 for the position's
        noise, 3 for the orientation's, each when its parameter is not 0 for every robot."""
        return flying.columns(p, cls.NOISE)[1]

    @classmethod
    def sense(cls, frame, rows, p, prev):
        if frame.state3d is not None:
            out = np.empty((len(rows), 7))
            flying.mocap(frame.state3d, np.asarray(rows, dtype=np.int64), _NO_PAR, _NO_COLS,
                         _NO_NORMALS, out)
            return out
        out = full_state(frame, rows)[:, :7].copy()
        out[:, 3:] *= np.where(out[:, 3:4] < 0, -1.0, 1.0)
        return out

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        rows = np.asarray(rows, dtype=np.int64)
        cols, width = flying.columns(p, cls.NOISE)
        normals = flying.normals(frame, cls.label, rows, width, rng)
        if frame.state3d is not None:
            out = np.empty((len(rows), 7))
            flying.mocap(frame.state3d, rows, flying.matrix(p, cls.NOISE), cols, normals, out)
        else:
            out = cls.sense(frame, rows, p, prev)
            if cols[0] >= 0:
                out[:, :3] += normals[:, cols[0]:cols[0] + 3] * p["noise"][:, None]
            if cols[1] >= 0:
                out[:, 3:] = _turned(out[:, 3:], normals[:, cols[1]:cols[1] + 3]
                                     * p["angle_noise"][:, None])
        lost = flying.dropped(frame, cls.label, rows, p, rng)
        if lost is not None:
            out[lost] = prev[lost]
        return out


_NO_PAR, _NO_COLS, _NO_NORMALS = np.zeros((0, 2)), np.full(2, -1, np.int64), np.zeros((0, 0))


def _turned(q: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """(n, 4) quaternions ``q`` times the rotations of body-frame rotation vectors ``turn``."""
    angle = np.linalg.norm(turn, axis=1)
    half = angle / 2
    axis = turn / np.where(angle > 0, angle, 1.0)[:, None]
    d = np.column_stack((np.cos(half), axis * np.sin(half)[:, None]))
    w1, v1, w2, v2 = q[:, :1], q[:, 1:], d[:, :1], d[:, 1:]
    out = np.column_stack((w1 * w2 - np.sum(v1 * v2, axis=1, keepdims=True),
                           w1 * v2 + w2 * v1 + np.cross(v1, v2)))
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out * np.where(out[:, :1] < 0, -1.0, 1.0)
