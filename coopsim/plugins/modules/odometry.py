"""``odometry``: dead reckoning from the wheels' motion, from (0, 0, 0) at load and reset; a
described planar base's (``base planar``: no left and right wheel) from its own planar motion
(:func:`.kernels._odometry_row`), its wheel travels 0."""

from __future__ import annotations

from ...model.commands import Command
from ...model.module import Module
from ...model.params import ParamSpec
from . import kernels


class Odometry(Module):
    """x, y (m), yaw (rad) integrated from wheel travel, and each wheel's travel (m).

    Reading: x, y (m), yaw (rad) integrated from the wheels' travel from (0, 0, 0) at load and
    after a reset, and each wheel's travel, m (a planar base's: from its own motion, travels 0;
    a planar base).
    """

    label = "odometry"
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

    @classmethod
    def noise_draws(cls, p) -> int:
        """Two normals a robot (each wheel's slip) when some robot's ``slip`` is non-zero: the
        sensing plan draws them with every kind's noise (``frame.normals``)."""
        return 2 if _slips(p) else 0

    # x, y, yaw and the travels from the wheels' speeds (or a planar base's own motion), its
    # slip drawn by the plan: one compiled call (kernels.odometry_sense)
    kernel_views = ("pose", "velocity", "axle", "dt")
    kernel_sense = kernels.odometry_sense
    kernel_rowwise = True

    @classmethod
    def act(cls, command, sim, robot, msg):
        sim.zero_reading(robot, cls.label)
        return "odometry reset"


def _slips(p) -> bool:
    """Whether some robot's ``slip`` is non-zero (``ParamArrays.zero`` says it without
    looking)."""
    return "slip" in p and "slip" not in getattr(p, "zero", ()) and bool(p["slip"].any())
