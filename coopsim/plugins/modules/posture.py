"""``posture``: every moving joint of a robot built from a description file (URDF, MJCF),
wheels and fingers included: what a client needs, with the robot's pose, to place each of its
links (:func:`coopsim.model.linkposes.link_poses`; docs/robots.md "Your own robot", *What is
shown where*).

Reading: ``count`` (the robot's moving joints, at most 32), then ``q1..q32``: each joint's
position (rad, or m for a prismatic one), in the description's order of its revolute,
continuous and prismatic joints (the state document's ``links`` names which column is which
joint); NaN beyond ``count``. Streamed and recorded as ``link_q1..link_q32`` (0.1 mrad or
0.1 mm steps), which is all a viewer, Foxglove, ROS 2's ``/tf`` or a replay needs to redraw the
links. Every described robot carries it (``described_by``: the ``description`` key); it has no
command but its read.
"""

from __future__ import annotations

import numpy as np

from ...model.commands import Command
from ...model.linkposes import COLUMNS, MAX_COLUMNS
from ...model.module import Column, Module


class Posture(Module):
    """The positions of a described robot's moving joints (rad or m).

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``read`` (4400): request nothing; reply ``[count, q1 .. q32]``: a robot from a
      description file (every such robot carries the module, protocol 10): its ``count`` moving
      joints' positions (rad; m for a prismatic joint) in the file's order of its revolute,
      continuous and prismatic joints, wheels and fingers included, NaN beyond ``count``;
      streamed and recorded as the columns ``link_q1`` .. ``link_q32``, which the state
      document's ``links`` names joint by joint
    """

    label = "posture"
    described_by = ("description",)  # every robot from a description file (description.mobile)
    description = ("a robot from a description file: its moving joints' positions (rad or "
                   "m), wheels and fingers included, in the file's order")
    commands = (Command(4400, "read", "posture", kind="read",
                        doc="count, q1..q32: the moving joints' positions (rad or m) in the "
                            "description's order; NaN beyond count"),)
    fields = ("count", *(f"q{j}" for j in range(1, MAX_COLUMNS + 1)))
    columns = tuple(Column(name, 1e-4, 2, j, "reading", stream=True)
                    for j, name in enumerate(COLUMNS, start=1))

    @classmethod
    def sense(cls, frame, rows, p, prev):
        q = frame.physics.described_positions(rows, MAX_COLUMNS)
        out = np.empty((len(rows), 1 + MAX_COLUMNS))
        out[:, 0] = np.count_nonzero(~np.isnan(q), axis=1)
        out[:, 1:] = q
        return out
