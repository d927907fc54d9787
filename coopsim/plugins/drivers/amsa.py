"""The AMSA leader/follower rovers (El Baccouri, Guillou, Babau: "Robotic system testing with
AMSA framework"): a leader with four behaviours and a follower with a proportional control law.

Scale: the paper's reference distance of 15 units is 1.5 m here (1 unit = 0.1 m); its times
are seconds, kept as they are. Its context parameters map onto coopsim's: ``lostDataGPS`` is
the leader's ``gps.lost`` (%), ``motorCoef`` the follower's ``motors.efficiency`` (%),
``behavior`` the leader driver's ``behavior``, ``Kv`` and ``Kw`` the follower driver's ``kv``
and ``kw``. docs/experiments/amsa.md compares the two.

Both drivers need ``gps``, ``compass`` and ``motors`` (the ``single`` robot has them). Headings
are radians counter-clockwise from +x in the world frame (parameters in degrees), distances m,
speeds m/s.
"""

from __future__ import annotations

import math

from ...model.driver import Driver
from ...model.params import ParamSpec

AXLE = 0.34  # m between the wheels of a ``single`` robot: wheel speeds from (v, w)
TURN_GAIN = 1.0  # rad/s per rad of heading error, the leader's heading hold
TURN_LIMIT = 0.5  # rad/s, the leader's largest yaw rate
STALE = 1.0  # s without a new leader fix before the follower takes the leader as stopped


def wrap(angle: float) -> float:
    """``angle`` wrapped to (-pi, pi], rad."""
    return math.atan2(math.sin(angle), math.cos(angle))


def wheels(forward: float, turn: float) -> tuple[float, float]:
    """Left, right wheel speeds (m/s) for a forward speed (m/s) and a yaw rate (rad/s)."""
    return forward - turn * AXLE / 2, forward + turn * AXLE / 2


class AmsaLeader(Driver):
    """The leader rover: behaviour 1 and 3 drive straight at ``speed`` along ``heading1`` and
    ``heading3``; 2 drives a circle of ``radius``; 4 a random trajectory: every leg (drawn
    from an exponential of mean ``leg`` s, from this driver's seeded generator) the heading
    changes by up to ``turn`` degrees either way, and beyond ``bound`` m of the start the
    leader heads back towards it."""

    label = "amsa_leader"
    description = "AMSA leader rover: straight lines, a circle or a random trajectory " \
                  "(needs gps, compass, motors)"
    params = (
        ParamSpec("behavior", "int", "1, 3: straight along heading1, heading3; 2: circle; "
                                     "4: random trajectory", 1, 1, 4),
        ParamSpec("speed", "float", "cruise speed, m/s", 0.05, 0.0, 0.6, "m/s"),
        ParamSpec("heading1", "float", "heading of behaviour 1, degrees from +x", 0.0,
                  -180.0, 180.0, "deg"),
        ParamSpec("heading3", "float", "heading of behaviour 3, degrees from +x", 45.0,
                  -180.0, 180.0, "deg"),
        ParamSpec("radius", "float", "circle radius of behaviour 2, m", 3.0, 0.2, 100.0, "m"),
        ParamSpec("turn", "float", "behaviour 4: largest heading change per leg, degrees",
                  90.0, 0.0, 180.0, "deg"),
        ParamSpec("leg", "float", "behaviour 4: mean duration of a leg, s", 10.0, 0.5, 1000.0,
                  "s"),
        ParamSpec("bound", "float", "behaviour 4: head back beyond this distance from the "
                                    "start, m", 10.0, 1.0, 1000.0, "m"),
    )

    def setup(self, bot) -> None:
        self.start = tuple(bot.gps.read())
        (self.goal,) = bot.compass.read()  # behaviour 4's heading
        self.next_leg = bot.time

    def step(self, bot) -> None:
        (yaw,) = bot.compass.read()
        behavior, speed = self.p["behavior"], self.p["speed"]
        if behavior == 2:
            bot.motors.set_speeds(*wheels(speed, speed / self.p["radius"]))
            return
        if behavior == 4:
            heading = self._wander(bot, yaw)
        else:
            heading = math.radians(self.p["heading1" if behavior == 1 else "heading3"])
        error = wrap(heading - yaw)
        turn = max(-TURN_LIMIT, min(TURN_LIMIT, TURN_GAIN * error))
        bot.motors.set_speeds(*wheels(speed * max(0.0, math.cos(error)), turn))

    def _wander(self, bot, yaw: float) -> float:
        """Behaviour 4's heading: a new one at the end of each leg (rad, world frame)."""
        if bot.time >= self.next_leg:
            x, y = bot.gps.read()
            home = math.atan2(self.start[1] - y, self.start[0] - x)
            if math.hypot(x - self.start[0], y - self.start[1]) > self.p["bound"]:
                self.goal = home + math.radians(self.rng.uniform(-30.0, 30.0))
            else:
                self.goal = yaw + math.radians(self.rng.uniform(-1.0, 1.0) * self.p["turn"])
            self.next_leg = bot.time + self.rng.exponential(self.p["leg"])
        return self.goal


class AmsaFollower(Driver):
    """The follower rover: keeps ``gap`` m behind ``leader``. The error between where the
    leader is (its gps, which may lose fixes) and where it should be is split along and
    across the follower's heading; the forward speed is the leader's estimated speed along
    the heading plus ``kv`` times the along error, the yaw rate ``kw`` times the across
    error (AMSA's proportional law with its gains Kv and Kw)."""

    label = "amsa_follower"
    description = "AMSA follower rover: keep a distance behind the leader with gains kv, kw " \
                  "(needs gps, compass, motors)"
    params = (
        ParamSpec("leader", "str", "network name of the leader", "leader"),
        ParamSpec("gap", "float", "reference distance behind the leader, m", 1.5, 0.0, 50.0,
                  "m"),
        ParamSpec("kv", "float", "gain of the forward speed on the along error, 1/s", 0.35,
                  0.0, 10.0, "1/s"),
        ParamSpec("kw", "float", "gain of the yaw rate on the across error, rad/s per m",
                  0.05, 0.0, 100.0, "rad/(s m)"),
        ParamSpec("feedforward", "bool", "add the leader's estimated speed to the forward "
                                         "speed", True),
    )

    def setup(self, bot) -> None:
        self.leader = bot.peer(self.p["leader"])
        self.fix = tuple(self.leader.gps.read())
        self.fix_time = bot.time
        self.velocity = (0.0, 0.0)  # the leader's, m/s, from its last two distinct fixes

    def step(self, bot) -> None:
        x, y = bot.gps.read()
        (yaw,) = bot.compass.read()
        lx, ly = self._leader_fix(bot.time)
        dx, dy = lx - x, ly - y
        distance = math.hypot(dx, dy)
        bearing = wrap(math.atan2(dy, dx) - yaw)
        along = distance * math.cos(bearing) - self.p["gap"]
        across = distance * math.sin(bearing)
        forward = self.p["kv"] * along
        if self.p["feedforward"]:
            forward += self.velocity[0] * math.cos(yaw) + self.velocity[1] * math.sin(yaw)
        bot.motors.set_speeds(*wheels(forward, self.p["kw"] * across))

    def _leader_fix(self, now: float) -> tuple[float, float]:
        """The leader's latest gps fix; its velocity is updated when the fix changes (a lost
        fix repeats the previous one) and taken as 0 once no new fix came for STALE s."""
        fix = tuple(self.leader.gps.read())
        if fix != self.fix:
            span = max(now - self.fix_time, 1e-9)
            self.velocity = ((fix[0] - self.fix[0]) / span, (fix[1] - self.fix[1]) / span)
            self.fix, self.fix_time = fix, now
        elif now - self.fix_time > STALE:
            self.velocity = (0.0, 0.0)
        return fix
