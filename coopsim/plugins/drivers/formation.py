"""``formation``: robots that travel in a triangle, break it to pass obstacles and take their
places again after them (CoopDynSim's Fig. 10).

The robot with ``role lead`` heads for the target of ``color`` with attractor dynamics (the
target an attractor, what its sonar sees repellers; :mod:`.attractor`) at a walking pace and
stops there. The others (``role left`` / ``right``) each have a *slot*: a corner of an
equilateral triangle of side ``spacing`` whose apex is the leader, behind it and to its left or
right. A follower reads the leader's gps, compass and motors (a controller may read any robot's
modules) and its own gps and compass; its heading has an attractor at its slot's bearing, which
hands over to the leader's heading as it reaches the slot, and repellers from its own sonar; its
speed is the leader's plus a term that closes the distance to the slot, capped by the nearest
obstacle ahead. Near an obstacle the repellers win and the robot leaves its slot; once past it
the slot's attractor brings it back.

Needs ``gps``, ``compass``, ``sonar`` and ``motors`` (and ``target`` for the leader).
"""

from __future__ import annotations

import math

from ...model.driver import Driver
from ...model.params import ParamSpec
from ..params import number
from .attractor import (clearance, obstacle_rate, relax, target_rate, unbalanced,
                        wheel_speeds, wrap)

AXLE = 0.34  # m between the single chassis' wheels
MAX_WHEEL = 0.6  # m/s, the motors' default max_speed
SEEN = 1.99  # m: sonar distances from here to its 2 m range mean "nothing there"
SIDES = {"left": 1.0, "right": -1.0}


def slot(leader, spacing: float, role: str) -> tuple[float, float]:
    """World (x, y), m, of ``role``'s corner of the triangle whose apex is ``leader`` (x, y,
    yaw): ``spacing`` m from the leader and from the other follower, behind the leader."""
    x, y, yaw = leader
    back, side = -spacing * math.sqrt(3) / 2, SIDES[role] * spacing / 2
    return (x + back * math.cos(yaw) - side * math.sin(yaw),
            y + back * math.sin(yaw) + side * math.cos(yaw))



class Formation(Driver):
    """Lead the triangle to a target, or keep a corner of it behind the leader."""

    label = "formation"
    description = ("travel in a triangle: lead to a target, or keep a corner behind the leader "
                   "(needs gps, compass, sonar, motors; target to lead)")
    params = (
        ParamSpec("role", "str", "lead, or the follower's corner: left or right", "lead",
                  choices=("lead", "left", "right")),
        ParamSpec("leader", "str", "network name of the leader (followers)", "robot1"),
        ParamSpec("color", "str", "colour of the target to lead to (leader)", "red"),
        number("spacing", "side of the triangle, m", 1.0, 0.3, 10.0, "m"),
        number("speed", "leader's cruising speed; followers go up to twice it, m/s", 0.2, 0.0,
               0.6, "m/s"),
        number("arrived", "the leader stops this near the target, m", 0.3, 0.05, 5.0, "m"),
        number("attract", "strength of the target's or slot's attractor, 1/s", 2.0, 0.0, 50.0,
               "1/s"),
        number("gain", "follower speed per metre it is behind its slot, 1/s", 0.8, 0.0, 20.0,
               "1/s"),
        number("beta1", "strength of an obstacle's repeller at distance 0, 1/s", 4.0, 0.0, 50.0,
               "1/s"),
        number("beta2", "distance over which a repeller weakens by e, m", 0.3, 0.01, 5.0, "m"),
        number("radius", "radius the robot avoids obstacles with, m", 0.3, 0.05, 3.0, "m"),
        number("contact", "time to contact kept with the nearest obstacle ahead, s", 1.5, 0.1,
               60.0, "s"),
    )

    def setup(self, bot) -> None:
        self.v = 0.0
        self.last: float | None = None
        self.leader = None if self.p["role"] == "lead" else bot.peer(self.p["leader"])
        self.placed = False

    def step(self, bot) -> None:
        now = bot.time
        dt, self.last = (0.0 if self.last is None else now - self.last), now
        sonar = bot.sonar.read()
        p = self.p
        avoid = unbalanced(obstacle_rate(sonar, p["beta1"], p["beta2"], p["radius"], SEEN),
                           sonar, 3 * p["radius"])
        if self.leader is None:
            turn, wanted = self.lead(bot)
            if wanted == 0.0 and turn == 0.0:  # there: hold still, the corners form on it
                self.v = 0.0
                bot.motors.set_speeds(0.0, 0.0)
                return
        else:
            turn, wanted = self.follow(bot)
        self.v = relax(self.v, min(wanted, clearance(sonar) / p["contact"]), 3.0, dt)
        turn = max(-1.5, min(1.5, turn + avoid))
        bot.motors.set_speeds(*wheel_speeds(self.v, turn, AXLE, MAX_WHEEL))

    def lead(self, bot) -> tuple[float, float]:
        """Turn rate (rad/s) and speed (m/s) towards the target; 0 speed once there."""
        distance, bearing = bot.target.read_color(text=self.p["color"])
        if distance < self.p["arrived"]:
            return 0.0, 0.0
        wanted = min(self.p["speed"], 0.5 * distance) * max(0.0, math.cos(bearing))
        return target_rate(bearing, self.p["attract"]), wanted

    def follow(self, bot) -> tuple[float, float]:
        """Turn rate (rad/s) and speed (m/s) that bring the robot to its slot and keep it."""
        (x, y), (yaw,) = bot.gps.read(), bot.compass.read()
        (lx, ly), (lyaw,) = self.leader.gps.read(), self.leader.compass.read()
        wheels = self.leader.motors.read()
        lead_speed = (wheels[2] + wheels[3]) / 2
        sx, sy = slot((lx, ly, lyaw), self.p["spacing"], self.p["role"])
        distance = math.hypot(sx - x, sy - y)
        bearing = wrap(math.atan2(sy - y, sx - x) - yaw)
        # In its place (with hysteresis, or it would circle the point): face the leader's
        # way; out of it: head for the place.
        self.placed = distance < (0.15 if self.placed else 0.06)
        if self.placed:  # the place's pull fades out as the robot reaches it
            turn = target_rate(wrap(lyaw - yaw), self.p["attract"]) + \
                target_rate(bearing, self.p["attract"] * distance / 0.15)
        else:
            turn = target_rate(bearing, self.p["attract"])
        ahead = distance * math.cos(bearing)  # + when the slot is ahead of the robot
        wanted = lead_speed * max(0.0, math.cos(wrap(lyaw - yaw))) + self.p["gain"] * ahead
        return turn, max(0.0, min(2 * self.p["speed"], wanted))
