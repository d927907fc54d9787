"""The arm's dimensions and its planar kinematics, with nothing but :mod:`math`.

One place for the numbers the robot type builds from, the ``arm_joints`` module checks commands
against and the ``reach`` driver plans with, so the three can never disagree. It imports no numpy
and no coopsim, so a network controller hosting the driver needs neither.

Frames and units: the *base frame* has its origin at the shoulder (the base's centre) and its x
axis along the base's heading; the *world frame* is the floor's. Metres and radians; angles are
counter-clockwise. Joint angle ``q[i]`` is link i's angle relative to the body before it (the
base for joint 0), zero when the arm lies straight out along the base's heading.
"""

from __future__ import annotations

import math
from typing import Sequence

LENGTHS = (0.40, 0.35, 0.25)  # m, joint-to-joint length of links 0, 1, 2 (the last: to the tip)
WIDTHS = (0.08, 0.07, 0.06)  # m, drawn and colliding width of each link
MASSES = (2.0, 1.4, 0.8)  # kg per link
LIMITS = tuple((-math.radians(d), math.radians(d)) for d in (150.0, 135.0, 120.0))  # rad
MAX_TORQUES = (60.0, 35.0, 15.0)  # N m, each joint motor's largest torque
BASE_SIZE = 0.30  # m, side of the square fixed base
REACH = sum(LENGTHS)  # m, farthest the tip gets from the shoulder

Pose = tuple[float, float, float]  # x, y (m) and yaw (rad)


def wrap(angle: float) -> float:
    """``angle`` wrapped to (-pi, pi], rad."""
    return math.atan2(math.sin(angle), math.cos(angle))


def within_limits(q: Sequence[float], slack: float = 1e-9) -> bool:
    """True when every joint angle of ``q`` (rad) lies within its limits."""
    return all(lo - slack <= a <= hi + slack for a, (lo, hi) in zip(q, LIMITS))


def frames(q: Sequence[float], base: Pose = (0.0, 0.0, 0.0)) -> list[Pose]:
    """The pose of every joint and of the tip: (x, y, yaw of the link that starts there).

    Args:
        q: Three joint angles, rad.
        base: The base's pose; (0, 0, 0) gives the base frame.

    Returns:
        Four poses: joint 0 (the shoulder), joint 1, joint 2 and the tip; the tip's yaw is the
        last link's heading.
    """
    x, y, yaw = base
    out = []
    for angle, length in zip(q, LENGTHS):
        yaw += angle
        out.append((x, y, yaw))
        x, y = x + length * math.cos(yaw), y + length * math.sin(yaw)
    out.append((x, y, yaw))
    return out


def forward(q: Sequence[float], base: Pose = (0.0, 0.0, 0.0)) -> Pose:
    """The tip's x, y (m) and heading (rad, wrapped) for joint angles ``q``; see :func:`frames`."""
    x, y, yaw = frames(q, base)[-1]
    return x, y, wrap(yaw)


def link_centres(q: Sequence[float], base: Pose = (0.0, 0.0, 0.0)) -> list[Pose]:
    """Centre and yaw of each link (where the viewer draws it), same frame as ``base``."""
    joints = frames(q, base)
    return [(x + length / 2 * math.cos(yaw), y + length / 2 * math.sin(yaw), yaw)
            for (x, y, yaw), length in zip(joints, LENGTHS)]


def to_base(point: Sequence[float], base: Pose) -> tuple[float, float]:
    """A world point (m) in the base frame of a base at ``base``."""
    dx, dy = point[0] - base[0], point[1] - base[1]
    c, s = math.cos(base[2]), math.sin(base[2])
    return c * dx + s * dy, -s * dx + c * dy


def solve(target: Sequence[float], heading: float,
          near: Sequence[float] = (0.0, 0.0, 0.0)) -> tuple[float, float, float] | None:
    """Joint angles putting the tip at ``target`` with the tip pointing along ``heading``.

    Two-link inverse kinematics for the wrist (the tip drawn back by the last link along the
    heading) plus the last joint making up the heading. Of the two elbow solutions, the one
    within limits and nearest ``near`` wins, so the arm does not swap elbows between calls.

    Args:
        target: Tip position (x, y) in the base frame, m.
        heading: Tip heading in the base frame, rad.
        near: The current joint angles, rad.

    Returns:
        Three joint angles (rad) within limits, or None when there are none.
    """
    l0, l1, l2 = LENGTHS
    wx, wy = target[0] - l2 * math.cos(heading), target[1] - l2 * math.sin(heading)
    c1 = (wx * wx + wy * wy - l0 * l0 - l1 * l1) / (2 * l0 * l1)
    if abs(c1) > 1.0:
        return None
    best, best_cost = None, math.inf
    for elbow in (1.0, -1.0):
        q1 = elbow * math.acos(c1)
        q0 = wrap(math.atan2(wy, wx) - math.atan2(l1 * math.sin(q1), l0 + l1 * math.cos(q1)))
        q = (q0, q1, wrap(heading - q0 - q1))
        cost = sum((a - b) ** 2 for a, b in zip(q, near))
        if within_limits(q) and cost < best_cost:
            best, best_cost = q, cost
    return best


def plan(target: Sequence[float], heading: float | None = None,
         near: Sequence[float] = (0.0, 0.0, 0.0),
         step: float = math.radians(5)) -> tuple[float, float, float] | None:
    """Joint angles reaching ``target``, trying tip headings nearest the preferred one first.

    Args:
        target: Tip position (x, y) in the base frame, m.
        heading: Tip heading in the base frame, rad; None prefers pointing away from the shoulder
            (along the target's bearing), which keeps the arm stretched toward it.
        near: The current joint angles, rad (see :func:`solve`).
        step: Spacing of the headings tried, rad.

    Returns:
        Three joint angles (rad), or None when no heading reaches the target (out of reach, or
        only with a joint past its limits). With a fixed ``heading`` only that one is tried.
    """
    if heading is not None:
        return solve(target, heading, near)
    preferred = math.atan2(target[1], target[0])
    for k in range(int(math.pi / step) + 1):
        for sign in ((1,) if k == 0 else (1, -1)):
            q = solve(target, preferred + sign * k * step, near)
            if q is not None:
                return q
    return None
