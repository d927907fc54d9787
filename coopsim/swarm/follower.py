"""Turning waypoints into wheel speeds for a differential-drive robot.

The controller is a heading P-controller with waypoint switching: steer towards the current
waypoint (turning on the spot while it lies more than ``turn_in_place`` rad off the nose), move to
the next one once within its tolerance, and slow down only when nearing the last one. Going
straight along each segment (instead of pure pursuit's corner cutting) keeps the robot on the
planned, obstacle-free segments; the switching tolerance is the most it cuts at a corner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .errors import SwarmError


@dataclass(frozen=True)
class Drive:
    """A differential drive's limits and the follower's gains.

    Attributes:
        max_speed: Top wheel speed, m/s (coopsim robots: 0.6).
        axle: Distance between the wheels, m (coopsim robots: 0.34).
        k_heading: Turn rate per rad of heading error, 1/s.
        k_distance: Forward speed per m to the last waypoint, 1/s (the slow-down near the goal).
        turn_in_place: Heading error beyond which the robot turns without moving forward, rad.
    """

    max_speed: float = 0.6
    axle: float = 0.34
    k_heading: float = 2.5
    k_distance: float = 1.2
    turn_in_place: float = math.radians(50.0)


def wrap(angle: float) -> float:
    """An angle brought into [-pi, pi), rad."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


def wheel_speeds(v: float, omega: float, drive: Drive) -> tuple[float, float]:
    """(left, right) wheel speeds, m/s, for body speed ``v`` (m/s) and turn rate ``omega``
    (rad/s, CCW), scaled down together when a wheel would exceed ``drive.max_speed`` so that the
    path's curvature is kept."""
    left = v - omega * drive.axle / 2
    right = v + omega * drive.axle / 2
    top = max(abs(left), abs(right))
    if top > drive.max_speed:
        left, right = left * drive.max_speed / top, right * drive.max_speed / top
    return left, right


def steer(x: float, y: float, yaw: float, target: Sequence[float], drive: Drive,
          slow: bool = True) -> tuple[float, float]:
    """Wheel speeds (m/s) taking a robot at (x, y) m facing ``yaw`` rad towards ``target``.

    Args:
        slow: Slow down as the target nears (False when more waypoints follow).
    """
    dx, dy = target[0] - x, target[1] - y
    error = wrap(math.atan2(dy, dx) - yaw)
    omega = drive.k_heading * error
    if abs(error) > drive.turn_in_place:
        return wheel_speeds(0.0, omega, drive)
    v = drive.max_speed
    if slow:
        v = min(v, drive.k_distance * math.hypot(dx, dy))
    return wheel_speeds(v * math.cos(error), omega, drive)


def steer_all(yaw, bearing, dist, slow, drive: Drive) -> np.ndarray:
    """:func:`steer` for k robots in arrays, the same numbers: (k, 2) wheel speeds (m/s) for
    robots facing ``yaw`` (rad) whose target lies at ``bearing`` (rad, world frame) and
    ``dist`` (m) from them; ``slow``: slow down as the target nears (bool array). The caller
    takes ``bearing`` and ``dist`` from ``math.atan2`` and ``math.hypot`` of the offset, as
    :func:`steer` does (numpy's ``arctan2`` and ``hypot`` can differ in the last bit)."""
    error = (bearing - yaw + math.pi) % (2 * math.pi) - math.pi
    omega = drive.k_heading * error
    v = np.where(slow, np.minimum(drive.max_speed, drive.k_distance * dist), drive.max_speed)
    v = np.where(np.abs(error) > drive.turn_in_place, 0.0, v * np.cos(error))
    out = np.column_stack([v - omega * drive.axle / 2, v + omega * drive.axle / 2])
    top = np.abs(out).max(axis=1)
    over = top > drive.max_speed
    out[over] = out[over] * drive.max_speed / top[over, None]  # as wheel_speeds rounds
    return out


class PathFollower:
    """Follow waypoints in order with :func:`steer` (see the module docstring).

    Args:
        waypoints: (k, 2) points, m, world frame, k >= 1.
        tolerance: Distance at which a waypoint counts as reached, m; one value or one a waypoint.
        drive: Limits and gains.
    """

    def __init__(self, waypoints, tolerance: float | Sequence[float] = 0.15,
                 drive: Drive = Drive()) -> None:
        self.waypoints = np.asarray(waypoints, dtype=float).reshape(-1, 2)
        if len(self.waypoints) == 0:
            raise SwarmError("a path follower needs at least one waypoint")
        self.tolerance = np.broadcast_to(np.asarray(tolerance, dtype=float),
                                         (len(self.waypoints),))
        self.drive = drive
        self.index = 0  # the waypoint being steered to

    def done(self, x: float, y: float) -> bool:
        """True once the last waypoint has been reached (advancing past reached ones)."""
        while self.index < len(self.waypoints):
            wx, wy = self.waypoints[self.index]
            if math.hypot(wx - x, wy - y) > self.tolerance[self.index]:
                return False
            self.index += 1
        return True

    def aim(self) -> tuple[float, float, float, bool]:
        """(x, y (m), tolerance (m), whether it is the last) of the waypoint steered to now;
        call after :meth:`done` said False."""
        wx, wy = self.waypoints[self.index]
        return float(wx), float(wy), float(self.tolerance[self.index]), \
            self.index == len(self.waypoints) - 1

    def speeds(self, x: float, y: float, yaw: float) -> tuple[float, float]:
        """Wheel speeds (m/s) for the robot at (x, y) m facing ``yaw`` rad; (0, 0) when done."""
        if self.done(x, y):
            return 0.0, 0.0
        last = self.index == len(self.waypoints) - 1
        return steer(x, y, yaw, self.waypoints[self.index], self.drive, slow=last)
