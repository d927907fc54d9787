"""``gps`` and ``compass``: position and heading in the world frame; ``pose``: both and the
height, in 3D (an arm's pedestal or mobile base)."""

from __future__ import annotations

import math

from ...model.commands import Command
from ...model.module import Module
from . import armkernels, kernels
from .common import lost, noise, rate


class Gps(Module):
    """Position in the world frame, m."""

    label = "gps"
    described_by = ("wheels", "rotors", "planar")  # description keys giving it (description.mobile)
    mount = "link"  # how a described robot's sensor line mounts it
    description = "x, y in the world frame, m"
    params = (noise("m", 10.0), lost(), rate())
    commands = (Command(500, "read", "gps", kind="read", doc="x, y, m, world frame"),)
    fields = ("x", "y")

    kernel_views = ("pose",)  # its reading, noise and lost data: one compiled call
    kernel_sense = kernels.gps_sense
    kernel_rowwise = True


class Compass(Module):
    """Heading in the world frame, rad."""

    label = "compass"
    described_by = ("wheels", "rotors", "planar")  # description keys giving it (description.mobile)
    mount = "link"  # how a described robot's sensor line mounts it
    description = "yaw in the world frame, rad, counter-clockwise from +x, in (-pi, pi]"
    params = (noise("rad", math.pi), lost(), rate())
    commands = (Command(600, "read", "compass", kind="read",
                        doc="yaw, rad, counter-clockwise from +x, in (-pi, pi]"),)
    fields = ("yaw",)

    kernel_views = ("pose",)  # its reading, noise, lost data and wrap: one compiled call
    kernel_sense = kernels.compass_sense
    kernel_rowwise = True


class Pose(Module):
    """The robot's body in 3D: position (m) and heading (rad), world frame."""

    label = "pose"
    described_by = ("description",)  # every robot from a description file (its root link)
    description = ("x, y, z (m, world frame) and yaw (rad) of the robot's body: an arm's "
                   "pedestal or mobile base (z 0 in a 2D world)")
    params = (noise("m", 10.0), lost(), rate())
    commands = (Command(4300, "read", "pose", kind="read",
                        doc="x, y, z (m, world frame), yaw (rad, counter-clockwise from +x)"),)
    fields = ("x", "y", "z", "yaw")

    kernel_views = ("pose", "state3d")  # its reading, noise, lost data, wrap: one call
    kernel_sense = armkernels.pose_sense
