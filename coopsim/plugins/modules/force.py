"""``force``: the force-torque sensor at an arm's wrist, between flange and tool.

Reading: ``fx, fy, fz`` (N) and ``tx, ty, tz`` (N m) in the tool frame (z along the approach
axis), what the engine measures between the arm's last link and its tool in the last step
(:meth:`~coopsim.model.module.PhysicsAccess.wrist_wrench`): a held object's weight shows as
about m g, a push on the fingers as its force. Robots without an arm read 0.
"""

from __future__ import annotations

from ...model.commands import Command
from ...model.module import Module
from . import armkernels
from .common import lost, noise, rate


class Force(Module):
    """Wrist force (N) and torque (N m), tool frame."""

    label = "force"
    description = "wrist force-torque sensor: fx, fy, fz (N), tx, ty, tz (N m), tool frame"
    params = (noise("N or N m", 1000.0), lost(), rate())
    commands = (Command(4200, "read", "force", kind="read",
                        doc="fx, fy, fz (N), tx, ty, tz (N m): the wrist's wrench, tool frame"),)
    fields = ("fx", "fy", "fz", "tx", "ty", "tz")

    kernel_views = ("wrench",)  # its reading, noise and lost data: one compiled call
    kernel_sense = armkernels.force_sense
