"""``odometry``: dead reckoning from the wheels' motion, from (0, 0, 0) at load and reset; a
described planar base's (``base planar``: no left and right wheel) from its own planar motion
(:func:`_planar`), its wheel travels 0."""

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
    """x, y (m), yaw (rad) integrated from wheel travel, and each wheel's travel (m).

    Reading: x, y (m), yaw (rad) integrated from the wheels' travel from (0, 0, 0) at load and
    after a reset, and each wheel's travel, m (a planar base's: from its own motion, travels 0;
    a planar base).
    """

    label = "odometry"
    fused_pass = GroundPass  # one compiled sensing call a tick (groundfused)
    described_by = ("wheels", "planar")  # description keys giving it (description.mobile)
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

    _flat: tuple = (None, None)  # (the axle array, its planar rows' mask or None)

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        every = len(rows) == len(frame.axle)
        axle = frame.axle if every else frame.axle[rows]
        # one read of the cache: worlds on other threads (sweeps, vector envs) replace it
        # between this world's check and its use, so the pair is taken whole
        seen, mask = cls._flat
        if seen is not frame.axle:  # a new table (tables.py makes a new array)
            flat = frame.axle <= 0  # a planar base (base planar): no left and right wheel
            mask = flat if flat.any() else None
            cls._flat = (frame.axle, mask)
        if mask is None:
            return cls._wheeled(frame, rows, p, prev, rng, axle)
        flat = mask if every else mask[rows]
        out = cls._wheeled(frame, rows, p, prev, rng, np.where(flat, 1.0, axle))
        out[flat] = _planar(frame, np.arange(len(frame.axle))[rows][flat], prev[flat])
        return out

    @classmethod
    def _wheeled(cls, frame, rows, p, prev, rng, axle):
        """x, y, yaw and each wheel's travel integrated from the wheels' speeds."""
        speeds = Motors.wheel_speeds(frame, rows)
        slip = speeds.size and _slips(p)
        if not slip:  # one compiled call
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


def _planar(frame, rows, prev) -> np.ndarray:
    """A planar base's odometry (it has no left and right wheel): the step's displacement
    (world frame, what the engine reports as the velocity times dt) turned into the base's
    frame at the step's mid heading, then turned by the odometry's own mid heading, as a
    caster base's controller integrates its casters' motion; the wheel travels stay 0."""
    vel, dt = frame.velocity[rows], frame.dt
    dyaw = vel[:, 2] * dt
    true_mid = frame.pose[rows, 2] - dyaw / 2  # the pose is the step's end
    c, s = np.cos(true_mid), np.sin(true_mid)
    forward = (vel[:, 0] * c + vel[:, 1] * s) * dt
    left = (vel[:, 1] * c - vel[:, 0] * s) * dt
    mid = prev[:, 2] + dyaw / 2
    out = prev.copy()
    out[:, 0] += forward * np.cos(mid) - left * np.sin(mid)
    out[:, 1] += forward * np.sin(mid) + left * np.cos(mid)
    out[:, 2] = wrap(prev[:, 2] + dyaw)
    return out


def _slips(p) -> bool:
    """Whether some robot's ``slip`` is non-zero (``ParamArrays.zero`` says it without
    looking)."""
    return "slip" in p and "slip" not in getattr(p, "zero", ()) and bool(p["slip"].any())
