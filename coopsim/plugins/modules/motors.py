"""``motors``: two driven wheels. Commands set wheel speeds (m/s) or normalized power (%)."""

from __future__ import annotations

import numpy as np

from ...model.commands import OUT_OF_RANGE, Command
from ...model.errors import ProtocolError
from ...model.kernel import StateField
from ...model.limits import shown
from ...model.module import Column, Module
from ...model.params import ParamSpec
from . import kernels

SPEED_SANITY = 100.0  # m/s: larger wheel speeds are an error; up to it they saturate at max_speed


class Motors(Module):
    """Differential drive: the stored command is (left, right) wheel speed, m/s."""

    label = "motors"
    described_by = ("wheels",)  # description keys giving it (description.mobile)
    description = "differential drive: set wheel speeds or power; reads commanded and actual speeds"
    params = (
        ParamSpec("max_speed", "float", "largest wheel speed, m/s", 0.6, 0.0, 5.0, "m/s"),
        ParamSpec("efficiency", "float", "share of the commanded speed the wheels reach, %",
                  100.0, 0.0, 100.0, "%"),
    )
    commands = (
        Command(100, "set_speeds", "motors", data=(2, 2), kind="motion",
                doc="left, right wheel speed, m/s (saturates at max_speed)"),
        Command(101, "set_power", "motors", data=(2, 2), kind="motion",
                doc="left, right power, -100..100 % of max_speed"),
        Command(102, "stop", "motors", kind="motion", doc="both wheels to 0"),
        Command(103, "read", "motors", kind="read",
                doc="left_cmd, right_cmd (driven, m/s), left, right (actual, m/s)"),
    )
    fields = ("left_cmd", "right_cmd", "left", "right")
    command_fields = ("left", "right")
    action_fields = ("left m/s", "right m/s")  # a learner's action: stored as set_speeds
    columns = (Column("left_cmd", 1e-3, 1, 0, "command"), Column("right_cmd", 1e-3, 1, 1, "command"))

    @classmethod
    def command_row(cls, command, data, params, robot):
        if command.name == "stop":
            return 0.0, 0.0
        if command.name == "set_power":
            if any(abs(v) > 100.0 for v in data):
                raise ProtocolError(OUT_OF_RANGE, "power must be within -100..100 %, got "
                                                  f"{shown(data[0], 100.0, -100.0)}, "
                                                  f"{shown(data[1], 100.0, -100.0)}")
            return data[0] / 100.0 * params["max_speed"], data[1] / 100.0 * params["max_speed"]
        if any(abs(v) > SPEED_SANITY for v in data):
            raise ProtocolError(OUT_OF_RANGE,
                                f"wheel speeds {shown(data[0], SPEED_SANITY, -SPEED_SANITY)}, "
                                f"{shown(data[1], SPEED_SANITY, -SPEED_SANITY)} m/s are beyond "
                                f"+-{SPEED_SANITY:g} m/s (speeds over motors.max_speed saturate)")
        return float(data[0]), float(data[1])

    @classmethod
    def from_twist(cls, forward, left, turn, yaw, axle, params):
        """Wheel speeds for a forward speed and a turn rate (``left`` is ignored: no sideways
        wheels); beyond the sanity limit refused, over max_speed saturating as any command."""
        half = turn * axle / 2.0
        speeds = next(c for c in cls.commands if c.name == "set_speeds")
        return cls.command_row(speeds, (forward - half, forward + half), params, None)

    @classmethod
    def action_space(cls, params):
        """Each wheel within +-max_speed m/s."""
        limit = float(params["max_speed"])
        return np.full(2, -limit), np.full(2, limit)

    # Wheel speeds -> the chassis' forward speed (m/s) and yaw rate (rad/s), handed to the
    # engine's differential drive; the wheel speeds driven (after max_speed and efficiency) kept
    # as actuated and in its state (``driven``, m/s): one compiled call (kernels.motors_actuate).
    # Its reading: the wheel speeds driven, then the actual ones from the chassis' motion: one
    # compiled call (kernels.motors_sense)
    state_fields = (StateField("driven", (2,)),)
    kernel_views = ("pose", "velocity", "axle")
    kernel_sense = kernels.motors_sense
    kernel_actuate = kernels.motors_actuate
    kernel_rowwise = True
    kernel_drive = ("drive", 2)
