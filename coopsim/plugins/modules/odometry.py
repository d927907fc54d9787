"""``odometry``: dead reckoning from the wheels' motion, from (0, 0, 0) at load and reset."""

from __future__ import annotations

import numpy as np

from ...model.commands import Command
from ...model.kernel import normals
from ...model.module import Module
from ...model.params import ParamSpec
from . import kernels
from .groundfused import GroundPass
from .common import wrap
from .motors import Motors


class Odometry(Module):
    """x, y (m), yaw (rad) integrated from wheel travel, and each wheel's travel (m)."""

    label = "odometry"
    fused_pass = GroundPass  # one compiled sensing call a tick (groundfused)
    described_by = ("wheels",)  # description keys giving it (imported_mobile)
    description = "x, y (m), yaw (rad) integrated from wheel travel, and each wheel's travel (m)"
    params = (
        ParamSpec("slip", "float", "std of wheel slip, % of each step's wheel travel",
                  0.0, 0.0, 50.0, "%"),
    )
    commands = (
        Command(400, "read", "odometry", kind="read",
                doc="x, y (m), yaw (rad), left and right wheel travel (m)"),
        Command(401, "reset", "odometry", kind="action", doc="restart at (0, 0, 0)"),
    )
    fields = ("x", "y", "yaw", "left_travel", "right_travel")
    copy_kind = "frame"  # the copies batch backend runs measure on its arrays (CopyKernel)

    @classmethod
    def noise_draws(cls, p) -> int:
        """Two normals a robot (each wheel's slip) when some robot's ``slip`` is non-zero: the
        sensing plan draws them with every kind's noise (``frame.normals``)."""
        return 2 if _slips(p) else 0

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        speeds = Motors.wheel_speeds(frame, rows)
        axle = frame.axle if len(rows) == len(frame.axle) else frame.axle[rows]
        slip = speeds.size and _slips(p)
        if not slip and kernels.WARM.ready:  # one compiled call, the same bits
            out = np.empty((len(rows), 5))
            kernels.odometry(speeds, axle, frame.dt, prev, out)
            return out
        wheels = speeds * frame.dt
        if slip:
            draws = normals(frame, cls.label, rows, 2, rng)  # the plan's block, or rng's
            wheels = wheels * (1.0 + draws * p["slip"][:, None] / 100)
        left, right = wheels[:, 0], wheels[:, 1]
        ds, dyaw = (left + right) * 0.5, (right - left) / axle  # 0.5 *: the mean, bit for bit
        mid = prev[:, 2] + dyaw / 2
        out = np.empty((len(rows), 5))  # filled column by column: cheaper than column_stack
        out[:, 0] = prev[:, 0] + ds * np.cos(mid)
        out[:, 1] = prev[:, 1] + ds * np.sin(mid)
        out[:, 2] = wrap(prev[:, 2] + dyaw)
        out[:, 3:] = prev[:, 3:] + wheels
        return out

    @classmethod
    def act(cls, command, sim, robot, msg):
        sim.zero_reading(robot, cls.label)
        return "odometry reset"


def _slips(p) -> bool:
    """Whether some robot's ``slip`` is non-zero (``ParamArrays.zero`` says it without
    looking)."""
    return "slip" in p and "slip" not in getattr(p, "zero", ()) and bool(p["slip"].any())
