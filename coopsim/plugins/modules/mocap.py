"""``mocap``: a motion-capture system's pose of the robot: position and orientation, exact
unless its ``noise`` and ``angle_noise`` (0 by default) add some.

Position (m, world frame) with white noise of std ``noise`` on each axis; orientation as the
unit quaternion (w, x, y, z, body to world) turned by a small random rotation: a rotation vector
with std ``angle_noise`` (rad) on each body axis, applied in the body frame and renormalised. The
quaternion is kept in the hemisphere w >= 0 (q and -q are the same turn). ``rate`` sets the
update rate (Hz), as motion-capture systems run at 100-300 Hz. In a 2D world (an engine without
``flight``) it reads the planar pose: z 0, turned about z only. The reading with its noise and
lost data is the kind's compiled kernel (the ``ModuleKernel`` contract:
:func:`coopsim.plugins.modules.flying.mocap_sense`), one call for every robot.
"""

from __future__ import annotations

from ...model.commands import Command
from ...model.module import Module
from ...model.params import ParamSpec
from . import flying
from .common import lost, noise, rate


class Mocap(Module):
    """Pose from motion capture: x, y, z (m) and the quaternion qw, qx, qy, qz.

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``read`` (3200): ``[x, y, z, qw, qx, qy, qz]``: position m (world frame) and orientation
      quaternion (body to world, w ≥ 0), as motion capture sees it: exact by default
      (``mocap.noise`` and ``mocap.angle_noise`` are 0; set them to add Gaussian noise, m and
      rad)
    """

    label = "mocap"
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

    # the reading, its noise and lost data: one compiled call (ModuleKernel)
    kernel_views = ("full_state",)
    kernel_sense = flying.mocap_sense

    @classmethod
    def noise_draws(cls, p) -> int:
        """Standard normals a robot's reading takes per measured step: 3 for the position's
        noise, 3 for the orientation's, each when its parameter is not 0 for every robot."""
        return flying.columns(p, cls.NOISE)[1]
