"""The arm's two hardware modules: ``arm_joints`` (motor commands and encoders) and ``effector``.

Both work over batches of robot rows and reach the physics only through ``frame.physics`` by the
roles the ``arm`` type names (``joint0``..``joint2``, the point ``tip``), so they hold no state of
their own and run the same for one arm or a hundred. Command ids: ``arm_joints`` 1100-1199,
``effector`` 1200-1299 (``coopsim list`` shows the hundreds taken).
"""

from __future__ import annotations

import numpy as np

from coopsim.model.commands import OUT_OF_RANGE, Command
from coopsim.model.errors import ProtocolError
from coopsim.model.module import Column, Module
from coopsim.model.params import ParamSpec

from .kinematics import LIMITS
from .robot import JOINTS

SPEEDS, POSITIONS = 0.0, 1.0  # the stored command's mode: joint rates, or joint angles to servo to


def _wrap(angle: np.ndarray) -> np.ndarray:
    return np.arctan2(np.sin(angle), np.cos(angle))


class Joints(Module):
    """Three motor joints: command angles (a position servo in the module) or rates; read
    angles and rates. The stored command is (mode, a0, a1, a2): mode 1 = angles (rad) to servo
    to, mode 0 = rates (rad/s). A new arm's command is all zeros: hold still."""

    label = "arm_joints"
    description = "3 motor joints: set angles (rad) or rates (rad/s); read angles and rates"
    params = (
        ParamSpec("max_speed", "float", "largest joint rate, rad/s", 1.5, 0.0, 10.0, "rad/s"),
        ParamSpec("gain", "float", "position servo gain: rate per rad of angle error, 1/s",
                  4.0, 0.0, 50.0, "1/s"),
        ParamSpec("noise", "float", "std of Gaussian noise added to each angle read, rad",
                  0.0, 0.0, 0.5, "rad"),
    )
    commands = (
        Command(1100, "set_positions", "arm_joints", data=(3, 3), kind="motion",
                doc="joint 0, 1, 2 angles, rad, within the joint limits (else error 4)"),
        Command(1101, "set_speeds", "arm_joints", data=(3, 3), kind="motion",
                doc="joint 0, 1, 2 rates, rad/s, within +-max_speed (else error 4)"),
        Command(1102, "stop", "arm_joints", kind="motion", doc="every joint rate to 0: hold still"),
        Command(1103, "read", "arm_joints", kind="read",
                doc="angle0..2 (rad, 0 = straight), rate0..2 (rad/s)"),
    )
    fields = ("angle0", "angle1", "angle2", "rate0", "rate1", "rate2")
    command_fields = ("mode", "a0", "a1", "a2")
    columns = tuple(Column(f"joint{i}_angle", 1e-4, 2, i) for i in range(3))

    @classmethod
    def command_row(cls, command, data, params, robot):
        """Check a motion command against the robot's joint limits (its type gives them by
        role) and store it as (mode, a0, a1, a2)."""
        if command.name == "stop":
            return SPEEDS, 0.0, 0.0, 0.0
        if command.name == "set_positions":
            limits = [robot.limits.get(role, spare) for role, spare in zip(JOINTS, LIMITS)]
            for i, (angle, (lo, hi)) in enumerate(zip(data, limits)):
                if not lo <= angle <= hi:
                    raise ProtocolError(OUT_OF_RANGE, f"joint{i} angle {angle:g} rad is outside "
                                                      f"its limits [{lo:.4g}, {hi:.4g}] rad")
            return (POSITIONS, *(float(a) for a in data))
        top = params["max_speed"]
        if any(abs(rate) > top for rate in data):
            got = ", ".join(f"{r:g}" for r in data)
            raise ProtocolError(OUT_OF_RANGE, f"joint rates must be within +-arm_joints.max_speed = "
                                              f"{top:g} rad/s, got {got}")
        return (SPEEDS, *(float(r) for r in data))

    @classmethod
    def actuate(cls, frame, rows, p, commands):
        """Turn stored commands into motor rates (rad/s, each joint's body relative to the one
        before it): rates pass through; angles go through a P-servo, gain * error. Both are
        capped at max_speed, which may have been lowered since the command was checked.

        Returns:
            (len(rows), 3) the rates the motors were set to.
        """
        top = p["max_speed"][:, None]
        wanted = commands[:, 1:]
        servo = commands[:, :1] == POSITIONS
        angles = frame.physics.joint_state(rows, JOINTS)[:, :, 0]
        rates = np.where(servo, p["gain"][:, None] * (wanted - angles), wanted)
        rates = np.clip(rates, -top, top)
        frame.physics.set_motor_rates(rows, JOINTS, rates)
        return rates

    @classmethod
    def sense(cls, frame, rows, p, prev):
        state = frame.physics.joint_state(rows, JOINTS)
        return np.column_stack((state[:, :, 0], state[:, :, 1]))

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        """The reading with ``noise`` on the angles only (the base class would add it to the
        rates too); no draws while noise is 0, so noiseless runs stay deterministic."""
        out = cls.sense(frame, rows, p, prev)
        if out.size and p["noise"].any():
            out[:, :3] += rng.standard_normal((len(rows), 3)) * p["noise"][:, None]
        return out


class Effector(Module):
    """Where the arm's tip is: x, y in the world frame and the last link's heading."""

    label = "effector"
    description = "arm tip: x, y (m, world frame) and heading (rad, counter-clockwise from +x)"
    params = (ParamSpec("noise", "float", "std of Gaussian noise added to each value, m and rad",
                        0.0, 0.0, 1.0, "m and rad"),)
    commands = (Command(1200, "read", "effector", kind="read",
                        doc="tip x, y (m, world frame), heading (rad, in (-pi, pi])"),)
    fields = ("x", "y", "heading")
    columns = (Column("tip_x", 1e-3, 2, 0), Column("tip_y", 1e-3, 2, 1))

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return frame.physics.points(rows, "tip")

    @classmethod
    def clip(cls, out, p):
        out[:, 2] = _wrap(out[:, 2])
        return out
