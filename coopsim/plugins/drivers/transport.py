"""``transport_leader`` and ``transport_helper``: a team of two robots carrying a long bar
(CoopDynSim's Fig. 9, after Soares et al., IROS 2007).

The *leader* knows where to go: its heading follows attractor dynamics with the target of its
colour as an attractor and what its sonar sees as repellers, and its forward speed relaxes to
what the target and the nearest obstacle ahead allow (:mod:`.attractor`). It drives until the
bar's centre, which it locates from its support reading (the bar's angle from its heading and
``reach``, the distance from its support to the bar's centre), is over the target.

The *helper* does not know the target. It follows the load: its heading has an attractor at the
bar's direction (the support's angle: the bar points from the helper to the leader) and
repellers from its own sonar, and its forward speed complies with the bar: it is proportional
to the support's force, which is + while the bar pulls the helper along (the leader is faster)
and - while it pushes the helper back (the leader slows or stops). The team settles at the
leader's speed with a small steady pull on the bar.

Both need ``support``, ``sonar`` and ``motors`` (the leader ``target`` too): a ``team2``.
"""

from __future__ import annotations

import math

from ...model.driver import Driver
from ...model.params import ParamSpec
from ..params import number
from .attractor import (clearance, obstacle_rate, relax, target_rate, unbalanced,
                        wheel_speeds, wrap)

AXLE = 0.34  # m between the wheels of the single/team2 chassis
MAX_WHEEL = 0.6  # m/s, the motors' default max_speed
SEEN = 1.99  # m: sonar distances from here to its 2 m range mean "nothing there"



OBSTACLE_PARAMS = (
    number("beta1", "strength of an obstacle's repeller at distance 0, 1/s", 4.0, 0.0, 50.0,
           "1/s"),
    number("beta2", "distance over which a repeller weakens by e, m", 0.35, 0.01, 5.0, "m"),
    number("radius", "radius the robot avoids obstacles with (chassis and load), m", 0.4,
           0.05, 3.0, "m"),
    number("max_turn", "largest turn rate, rad/s", 1.2, 0.05, 10.0, "rad/s"),
)


class _Timed(Driver):
    """A driver that integrates its dynamics over the sim time since its previous call."""

    def setup(self, bot) -> None:
        self.v = 0.0
        self.last: float | None = None

    def elapsed(self, bot) -> float:
        """Sim time since the previous call, s (0 on the first)."""
        now = bot.time
        dt = 0.0 if self.last is None else now - self.last
        self.last = now
        return dt

    def avoid(self, sonar) -> float:
        """The obstacles' contribution to the turn rate, rad/s."""
        p = self.p
        rate = obstacle_rate(sonar, p["beta1"], p["beta2"], p["radius"], SEEN)
        return unbalanced(rate, sonar, 3 * p["radius"])

    def drive(self, bot, turn: float) -> None:
        """Command the wheels for ``self.v`` (m/s) and ``turn`` (rad/s, clipped)."""
        limit = self.p["max_turn"]
        turn = max(-limit, min(limit, turn))
        bot.motors.set_speeds(*wheel_speeds(self.v, turn, AXLE, MAX_WHEEL))


class TransportLeader(_Timed):
    """Head for the target of ``color`` with the bar, around obstacles; stop with the bar's
    centre over the target."""

    label = "transport_leader"
    description = ("lead a bar-carrying team to the target of a colour by attractor dynamics "
                   "(needs target, sonar, support, motors)")
    params = (
        ParamSpec("color", "str", "colour of the target to take the bar to", "red"),
        number("speed", "cruising speed, m/s", 0.3, 0.0, 0.6, "m/s"),
        number("arrived", "stop when the bar's centre is this near the target, m", 0.15, 0.01,
               5.0, "m"),
        number("reach", "distance from the leader's support to the bar's centre, m", 0.6, 0.0,
               5.0, "m"),
        number("attract", "strength of the target's attractor, 1/s", 1.5, 0.0, 50.0, "1/s"),
        number("contact", "time to contact kept with the nearest obstacle ahead, s", 2.0, 0.1,
               60.0, "s"),
        number("accel", "rate at which the speed relaxes to the desired one, 1/s", 2.0, 0.1,
               100.0, "1/s"),
        *OBSTACLE_PARAMS,
    )

    def setup(self, bot) -> None:
        super().setup(bot)
        self.closest = math.inf  # nearest the bar's centre has come to the target, m
        self.done = False

    def step(self, bot) -> None:
        dt = self.elapsed(bot)
        distance, bearing = bot.target.read_color(text=self.p["color"])
        sonar, bar = bot.sonar.read(), bot.support.read()[0]
        left = self.left_to_go(distance, bearing, bar)
        final = distance < self.p["reach"]  # on the last stretch: drive on straight
        # Done once the bar's centre is there, or has passed its closest point on the
        # last stretch (it will not get nearer without turning back).
        self.done = self.done or left < self.p["arrived"] or (final and left > self.closest
                                                              + 0.05)
        self.closest = min(self.closest, left)
        if self.done:
            self.v = 0.0
            bot.motors.set_speeds(0.0, 0.0)
            return
        turn = self.avoid(sonar) + (0.0 if final else target_rate(bearing, self.p["attract"]))
        wanted = min(self.p["speed"], 0.5 * left, clearance(sonar) / self.p["contact"])
        self.v = relax(self.v, wanted * max(0.0, math.cos(bearing if not final else 0.0)),
                       self.p["accel"], dt)
        self.drive(bot, turn)

    def left_to_go(self, distance: float, bearing: float, bar: float) -> float:
        """Distance (m) from the bar's centre to the target, in the leader's frame: the centre
        lies ``reach`` behind the support along the bar (``bar`` rad from the heading)."""
        reach = self.p["reach"]
        return math.hypot(distance * math.cos(bearing) + reach * math.cos(bar),
                          distance * math.sin(bearing) + reach * math.sin(bar))


class TransportHelper(_Timed):
    """Follow the load: turn towards the bar's direction, go as fast as the bar pulls, avoid
    obstacles."""

    label = "transport_helper"
    description = ("help carry a bar: follow its direction and pull "
                   "(needs support, sonar, motors)")
    params = (
        number("speed", "largest forward speed, m/s", 0.5, 0.0, 0.6, "m/s"),
        number("follow", "strength of the attractor at the bar's direction, 1/s", 2.5, 0.0,
               50.0, "1/s"),
        number("comply", "forward speed per newton of pull on the support, m/s/N", 0.015, 0.0,
               1.0, "m/s/N"),
        number("deadband", "pulls and pushes weaker than this are ignored, N", 1.0, 0.0, 1000.0,
               "N"),
        *OBSTACLE_PARAMS[:2],
        number("radius", "radius the robot avoids obstacles with, m", 0.25, 0.05, 3.0, "m"),
        OBSTACLE_PARAMS[3],
    )

    def step(self, bot) -> None:
        self.elapsed(bot)
        bar, force = bot.support.read()
        sonar = bot.sonar.read()
        pull = math.copysign(max(0.0, abs(force) - self.p["deadband"]), force)
        top = self.p["speed"]
        self.v = max(-top, min(top, self.p["comply"] * pull))
        self.drive(bot, target_rate(wrap(bar), self.p["follow"]) + self.avoid(sonar))
