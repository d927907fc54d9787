"""Attractor dynamics for heading direction and forward speed, after the dynamical-systems
approach to behaviour generation used by CoopDynSim's transport teams (Soares, Bicho, Machado
and Erlhagen, IROS 2007, and the work it builds on).

The behavioural variable is the robot's heading direction phi (rad, world frame). Its rate of
change is a sum of contributions, each erecting an attractor or a repeller at a direction:

* the target: ``-lambda_tar * sin(phi - psi_tar)``, an attractor at the target's bearing
  psi_tar, of strength lambda_tar (1/s);
* each sonar sector i that sees something at distance d_i, mounted at theta_i from the nose:
  a repeller at psi_i = phi + theta_i, ``lambda_i * (phi - psi_i) * exp(-(phi - psi_i)**2 /
  (2 sigma_i**2))``, whose strength ``lambda_i = beta1 * exp(-d_i / beta2)`` decays with
  distance and whose range ``sigma_i = atan(tan(sector / 2) + R / (R + d_i))`` is the angle the
  obstacle subtends for a robot of radius R.

The robot is always at phi, so only the relative angles matter: the rate is evaluated at the
current heading and becomes the turn rate. The forward speed relaxes to a desired speed,
``dv/dt = -c_v (v - v_des)``, with v_des the smaller of what the target asks (slow down near it)
and what the obstacles allow (a constant time to contact with the nearest one ahead).

Everything here is plain Python (``math`` only): drivers built on it run in-process and in a
network controller that has no numpy.
"""

from __future__ import annotations

import math
from typing import Sequence

#: Sonar mounting angles relative to the nose, rad: right (-90 deg) to left (+90 deg), 18 apart.
SONAR_ANGLES = tuple(math.radians(-90.0 + 18.0 * i) for i in range(11))
SECTOR = math.radians(18.0)  # rad, the angle one sonar sector covers


def wrap(angle: float) -> float:
    """``angle`` wrapped to (-pi, pi], rad."""
    return math.atan2(math.sin(angle), math.cos(angle))


def target_rate(bearing: float, strength: float) -> float:
    """Turn rate (rad/s) the target attractor asks for, ``bearing`` rad from the nose (+ left)."""
    return strength * math.sin(bearing)


def obstacle_rate(sonar: Sequence[float], beta1: float, beta2: float, radius: float,
                  seen: float) -> float:
    """Turn rate (rad/s) the obstacles' repellers ask for.

    Args:
        sonar: The 11 distances from the chassis edge, m, right to left.
        beta1: Strength of a repeller at distance 0, 1/s.
        beta2: Distance over which a repeller's strength falls by e, m.
        radius: Radius the robot avoids with, m (its own, plus whatever it carries).
        seen: Distances at or beyond this are "nothing there" and erect no repeller, m.
    """
    rate = 0.0
    for theta, d in zip(SONAR_ANGLES, sonar):
        if d >= seen:
            continue
        strength = beta1 * math.exp(-d / beta2)
        sigma = math.atan(math.tan(SECTOR / 2) + radius / (radius + max(d, 0.0)))
        rate -= strength * theta * math.exp(-theta * theta / (2 * sigma * sigma))
    return rate


def unbalanced(rate: float, sonar: Sequence[float], near: float, nudge: float = 0.3) -> float:
    """``rate`` (rad/s) with a nudge to the more open side when an obstacle within ``near`` m
    dead ahead erects repellers that cancel: the heading sits on an unstable fixed point
    there, which a simulation without noise would hold for ever."""
    if abs(rate) >= 0.05 or clearance(sonar, 1) >= near:
        return rate
    return rate + (nudge if sum(sonar[6:]) >= sum(sonar[:5]) else -nudge)


def clearance(sonar: Sequence[float], half_width: int = 3) -> float:
    """Nearest distance (m) the sonar sectors within ``half_width`` of the nose see."""
    return min(sonar[5 - half_width:6 + half_width])


def relax(v: float, target: float, rate: float, dt: float) -> float:
    """One step of ``dv/dt = -rate (v - target)`` over ``dt`` s, exact for a constant target
    (so a large rate or a long period never overshoots)."""
    return target + (v - target) * math.exp(-rate * max(dt, 0.0))


def wheel_speeds(forward: float, turn: float, axle: float, limit: float) -> tuple[float, float]:
    """(left, right) wheel speeds, m/s, for a forward speed (m/s) and turn rate (rad/s) on
    wheels ``axle`` m apart, neither beyond ``limit`` m/s: the turn is kept first (it is what
    avoids the obstacles), the forward speed gets what is left."""
    half = max(-limit, min(limit, turn * axle / 2))
    room = limit - abs(half)
    forward = max(-room, min(room, forward))
    return forward - half, forward + half
