"""``bumper`` and ``support``: what the chassis touches, and the force on a carried bar."""

from __future__ import annotations

import numpy as np

from ...model.commands import Command
from ...model.module import Module
from . import kernels
from .common import noise, rate, wrap


class Bumper(Module):
    """Contact switches on the front and rear halves of the chassis.

    Reading: front, rear: 1.0 while the chassis touches something on that half.
    """

    label = "bumper"
    description = "front, rear: 1.0 while the chassis touches something on that half, else 0.0"
    params = (rate(),)
    commands = (Command(700, "read", "bumper", kind="read", doc="front, rear: 1.0 or 0.0"),)
    fields = ("front", "rear")
    contact = True

    kernel_views = ("contact",)  # the engine's flags: one compiled copy
    kernel_sense = kernels.bumper_sense
    kernel_rowwise = True

    @classmethod
    def observation_space(cls, params, n_targets):
        """Both switches 0 or 1."""
        return np.zeros(2), np.ones(2)


class Support(Module):
    """The support holding a carried bar: the bar's angle and the force the joint carries.

    Works for any robot type whose members name a ``bar`` body and a ``support`` joint.

    Reading: bar angle from the heading (rad), force carried by the support joint (N; for a
    sprung support such as ``team2``'s, the spring's force along the bar, + when the bar pulls
    the robot towards the bar's middle, − when it pushes it away; for a plain hinge, the size
    of the force): any robot whose type names a carried ``bar`` body and a ``support`` joint.
    """

    label = "support"
    description = "bar angle from the heading (rad) and force in the support joint (N)"
    params = (noise("rad and N", 100.0), rate())
    commands = (Command(800, "read", "support", kind="read",
                        doc="bar angle from the heading (rad), support force (N)"),)
    fields = ("angle", "force")

    @classmethod
    def sense(cls, frame, rows, p, prev):
        bar = frame.physics.poses(rows, "bar")
        force = frame.physics.joint_force(rows, "support")
        return np.column_stack((wrap(bar[:, 2] - frame.pose[rows, 2]), force))
