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
robot's own geoms skipped) and measured from the underside of the body (the kernel's ``below``
view, :func:`coopsim.model.kernel.underside`); on ``aerial`` likewise
(:mod:`coopsim.physics.aerial.rays`). The range, its noise, lost data and caps are the kind's
compiled kernel (the ``ModuleKernel`` contract:
:func:`coopsim.plugins.modules.flying.altimeter_sense`), one call for every robot.
"""

from __future__ import annotations

from ...model.commands import Command
from ...model.module import Module
from ...model.params import ParamSpec
from . import flying
from .common import lost, noise, rate


class Altimeter(Module):
    """Range to the floor along the body's -z axis, m."""

    label = "altimeter"
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

    # the range (the core's cast from the underside in 3D, else to the floor), its noise, lost
    # data and caps: one compiled call (ModuleKernel)
    kernel_views = ("full_state", "below")
    kernel_sense = flying.altimeter_sense
