"""``velocity``: a holonomic drive (a quadrotor seen from above), commanded by velocity or by a
reference to track.

Each step the commanded planar velocity ``v_c`` (world frame) is reached through a first-order
lag of time constant ``tau`` and an acceleration limit: from the body's velocity ``v`` (as the
engine reports it after the last step) the velocity driven next is

    v' = v + clip((1 - exp(-dt / tau)) (v_c - v), max_accel dt)

(the clip limits the change's length), and its length is capped at ``max_speed``; the yaw rate
follows the same lag, capped at ``max_yaw_rate``. ``track`` sends a reference instead: position
(x, y) and feed-forward velocity; the module's outer loop commands ``v_c = v_ff + gain (p_ref -
p)``, as a quadrotor's position controller does above its attitude loop (SwarmSimX's tracking
study). The stored command keeps the reference, so a recording holds it (columns ``ref_x``,
``ref_y``, ``tracking``) and ``coopsim analyze tracking`` recovers the tracking error.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.commands import OUT_OF_RANGE, Command
from ...model.errors import ProtocolError
from ...model.kernel import StateField
from ...model.module import Column, Module
from ...model.params import ParamSpec
from . import kernels

SANITY = 1000.0  # m/s, m: larger velocities or references are refused (up to it they saturate)


class Velocity(Module):
    """Holonomic velocity drive with lag, acceleration limit and an optional position loop.

    The ``velocity`` module drives a robot whose type declares the ``velocity`` drive
    (``holonomic``). Each step, from the body's velocity v after the last step towards the
    commanded v_c, it drives v + clip((1 − e^(−dt/tau)) (v_c − v), max_accel · dt) (the clip
    bounds the change's length), capped at ``max_speed``; the yaw rate follows the same lag,
    capped at ``max_yaw_rate``. ``track`` commands v_c = v_ff + gain · (p_ref − p): a position
    loop above the velocity loop, as a quadrotor's controller has. Its stored command keeps the
    reference, recorded as the columns ``ref_x``, ``ref_y`` (m) and ``tracking`` (1 while
    tracking), so ``coopsim analyze tracking`` finds the tracking error in any recording
    (docs/experiments/swarmsimx.md).

    Reading: vx, vy, yaw rate driven this step (after the lag and limits), then the body's
    actual vx, vy (m/s), yaw rate (rad/s).
    """

    label = "velocity"
    described_by = ("planar",)  # a described planar base (description.mobile: base planar)
    description = ("holonomic drive: world-frame velocity (m/s) and yaw rate (rad/s) through a "
                   "first-order lag and an acceleration limit, or a position reference to track")
    params = (
        ParamSpec("max_speed", "float", "largest planar speed, m/s", 2.0, 0.0, 50.0, "m/s"),
        ParamSpec("max_accel", "float", "largest planar acceleration, m/s^2", 4.0, 0.01, 100.0,
                  "m/s^2"),
        ParamSpec("tau", "float", "time constant of the first-order lag, s (0: none)", 0.15, 0.0,
                  10.0, "s"),
        ParamSpec("max_yaw_rate", "float", "largest yaw rate, rad/s", 2.0, 0.0, 20.0, "rad/s"),
        ParamSpec("gain", "float", "position-loop gain of track, 1/s", 2.0, 0.0, 50.0, "1/s"),
    )
    commands = (
        Command(900, "set_velocity", "velocity", data=(3, 3), kind="motion",
                doc="vx, vy (m/s, world frame), yaw rate (rad/s); saturate at the limits"),
        Command(901, "track", "velocity", data=(4, 5), kind="motion",
                doc="x, y (m), vx, vy (m/s, feed-forward) [, yaw rate]: a reference to track"),
        Command(902, "stop", "velocity", kind="motion", doc="velocity and yaw rate to 0"),
        Command(903, "read", "velocity", kind="read",
                doc="vx_cmd, vy_cmd, yaw_rate_cmd (driven this step), vx, vy, yaw_rate (actual)"),
    )
    fields = ("vx_cmd", "vy_cmd", "yaw_rate_cmd", "vx", "vy", "yaw_rate")
    command_fields = ("vx", "vy", "yaw_rate", "ref_x", "ref_y", "tracking")
    columns = (Column("ref_x", 1e-4, 2, 3, "command"), Column("ref_y", 1e-4, 2, 4, "command"),
               Column("tracking", 1.0, 1, 5, "command"))
    # a learner's action: stored as set_velocity (the reference's three values zero)
    action_fields = ("vx m/s", "vy m/s", "yaw_rate rad/s")

    @classmethod
    def from_twist(cls, forward, left, turn, yaw, axle, params):
        """The body velocity turned by the heading into the world frame, and the turn rate."""
        c, s = math.cos(yaw), math.sin(yaw)
        command = next(k for k in cls.commands if k.name == "set_velocity")
        return cls.command_row(command, (forward * c - left * s, forward * s + left * c, turn),
                               params, None)

    @classmethod
    def action_space(cls, params):
        """vx, vy within +-max_speed m/s, the yaw rate within +-max_yaw_rate rad/s."""
        limit = np.array([params["max_speed"], params["max_speed"], params["max_yaw_rate"]],
                         dtype=float)
        return -limit, limit

    @classmethod
    def command_row(cls, command, data, params, robot):
        if any(abs(v) > SANITY for v in data):
            raise ProtocolError(OUT_OF_RANGE, f"{command.name} values must be within "
                                              f"+-{SANITY:g} (m, m/s, rad/s)")
        if command.name == "stop":
            return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        if command.name == "track":
            yaw_rate = data[4] if len(data) > 4 else 0.0
            return float(data[2]), float(data[3]), float(yaw_rate), float(data[0]), \
                float(data[1]), 1.0
        return float(data[0]), float(data[1]), float(data[2]), 0.0, 0.0, 0.0

    # The velocity driven this step handed to the engine's ``set_velocity`` and kept in its
    # state (``driven``: vx, vy m/s, yaw rate rad/s) for its reading, then the body's actual
    # velocity: one compiled call each (kernels.velocity_actuate, kernels.velocity_sense)
    state_fields = (StateField("driven", (3,)),)
    kernel_views = ("pose", "velocity", "dt")
    kernel_sense = kernels.velocity_sense
    kernel_actuate = kernels.velocity_actuate
    kernel_rowwise = True
    kernel_drive = ("set_velocity", (3,))
