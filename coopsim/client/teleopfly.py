"""A quadrotor flown by hand: velocity and altitude set points closed over the network.

The cascade's outer loop runs here, its attitude and rate loops in the ``rotors`` module: each
call reads the ``mocap`` pose (position m, attitude quaternion, world frame), estimates the
velocity from the previous reading (m/s, over the simulated time between them), and sends
``set_thrust_attitude`` (collective thrust N, roll and pitch rad, yaw rate rad/s; REP 103:
roll > 0 banks right, pitch > 0 tips the nose down). Horizontally a P loop on the velocity in
the heading's frame gives the wanted acceleration, hence the tilt (capped at :data:`MAX_TILT`);
vertically a PD loop holds an altitude set point that the ``up`` intent moves at the linear
speed. With the intent still it hovers where it is.
"""

from __future__ import annotations

import math

from ..model.specs import GRAVITY

MAX_TILT = 0.35  # rad of roll or pitch the outer loop asks at most
K_VEL = 2.0  # 1/s: wanted acceleration per m/s of velocity error
K_Z, K_VZ = 4.0, 3.0  # 1/s^2 per m of altitude error, 1/s per m/s of climb-rate error


def _yaw(qw: float, qx: float, qy: float, qz: float) -> float:
    return math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))


class Hover:
    """The outer loop of one quadrotor (its robot handle needs ``mocap`` and ``rotors``).

    Args:
        robot: A :class:`~coopsim.client.robot.Robot`.
        drive: The label of its module with ``set_thrust_attitude`` (its parameters ``mass``,
            ``kf``, ``max_speed`` give the hover thrust and the most thrust).
        pose: The label of its module whose read is ``[x, y, z, qw, qx, qy, qz]``.
        dt: The run's step, s (readings' step numbers times it is their time).
    """

    def __init__(self, robot, drive: str, pose: str, dt: float) -> None:
        self.robot, self.dt = robot, dt
        self.drive, self.pose = getattr(robot, drive), getattr(robot, pose)
        self.mass = float(robot.get_param(drive, "mass"))
        kf, top = float(robot.get_param(drive, "kf")), float(robot.get_param(drive,
                                                                          "max_speed"))
        self.max_thrust = 4.0 * kf * top * top
        self._prev: tuple[int, tuple[float, float, float]] | None = None
        self.z_ref: float | None = None

    def _velocity(self, step: int, pos) -> tuple[float, float, float, float]:
        """(vx, vy, vz) m/s since the previous reading, and the time between them, s."""
        prev = self._prev
        if prev is None or step <= prev[0]:
            self._prev = prev or (step, pos)
            return 0.0, 0.0, 0.0, 0.0
        self._prev = (step, pos)
        span = (step - prev[0]) * self.dt
        return (*((a - b) / span for a, b in zip(pos, prev[1])), span)

    def fly(self, intent, speeds) -> None:
        """One pass of the loop towards ``intent`` (fractions of ``speeds``)."""
        reading = self.pose.read()
        pos, quat = tuple(reading[:3]), reading[3:7]
        vx, vy, vz, span = self._velocity(reading.step, pos)
        yaw = _yaw(*quat)
        if self.z_ref is None:
            self.z_ref = pos[2]
        self.z_ref = max(0.05, self.z_ref + intent.up * speeds.linear * span)
        c, s = math.cos(yaw), math.sin(yaw)
        fwd, left = vx * c + vy * s, -vx * s + vy * c  # velocity in the heading's frame
        a_fwd = K_VEL * (intent.forward * speeds.linear - fwd)
        a_left = K_VEL * (intent.left * speeds.linear - left)
        pitch = max(-MAX_TILT, min(MAX_TILT, math.atan2(a_fwd, GRAVITY)))
        roll = max(-MAX_TILT, min(MAX_TILT, -math.atan2(a_left, GRAVITY)))
        climb = intent.up * speeds.linear
        a_z = K_Z * (self.z_ref - pos[2]) + K_VZ * (climb - vz)
        thrust = self.mass * (GRAVITY + a_z) / (math.cos(roll) * math.cos(pitch))
        thrust = max(0.0, min(self.max_thrust, thrust))
        self.drive.set_thrust_attitude(thrust, roll, pitch, intent.turn * speeds.angular)
