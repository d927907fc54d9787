"""A tiny kinematic simulation for the swarm tests: unicycle robots on an empty floor.

Each robot integrates ``v = (left + right) / 2``, ``omega = (right - left) / axle`` with a fixed
step, its wheel speeds clipped to the motors' limit as coopsim's motors do. Sensors answer the
robot API that :mod:`coopsim.swarm` uses; sonar sees nothing (2 m) and bumpers never press, so
the tests exercise planning and following, not reflexes.
"""

from __future__ import annotations

import math

AXLE = 0.34  # m
MAX_SPEED = 0.6  # m/s


class _Sensor:
    def __init__(self, read) -> None:
        self.read = read


class _Motors:
    def __init__(self, robot: "KinematicRobot") -> None:
        self._robot = robot

    def set_speeds(self, left: float, right: float) -> None:
        self._robot.left = max(-MAX_SPEED, min(MAX_SPEED, float(left)))
        self._robot.right = max(-MAX_SPEED, min(MAX_SPEED, float(right)))
        self._robot.commanded.append((float(left), float(right)))


class KinematicRobot:
    """A point on wheels with the robot API (gps, compass, sonar, bumper, motors)."""

    def __init__(self, x: float, y: float, yaw: float = 0.0) -> None:
        self.x, self.y, self.yaw = x, y, yaw
        self.left = self.right = 0.0
        self.commanded: list[tuple[float, float]] = []
        self.gps = _Sensor(lambda: [self.x, self.y])
        self.compass = _Sensor(lambda: [self.yaw])
        self.sonar = _Sensor(lambda: [2.0] * 11)
        self.bumper = _Sensor(lambda: [0, 0])
        self.motors = _Motors(self)

    def integrate(self, dt: float) -> None:
        """Advance the pose by ``dt`` s at the current wheel speeds (exact arc)."""
        v = (self.left + self.right) / 2
        w = (self.right - self.left) / AXLE
        if abs(w) < 1e-9:
            self.x += v * dt * math.cos(self.yaw)
            self.y += v * dt * math.sin(self.yaw)
        else:
            r = v / w
            self.x += r * (math.sin(self.yaw + w * dt) - math.sin(self.yaw))
            self.y -= r * (math.cos(self.yaw + w * dt) - math.cos(self.yaw))
        self.yaw = (self.yaw + w * dt + math.pi) % (2 * math.pi) - math.pi


def run(robots, step, until, dt: float = 0.05, max_time: float = 120.0) -> float:
    """Call ``step()`` (which sets wheel speeds) and integrate every robot, until ``until()``
    is true or ``max_time`` s of simulated time have passed. Returns the simulated time, s."""
    t = 0.0
    while t < max_time:
        step()
        for r in robots:
            r.integrate(dt)
        t += dt
        if until():
            return t
    return t
