"""The textbook behaviours of the real-robot types (docs/robots.md), as drivers: each runs
in-process (``driver braitenberg`` in a scenario) or over the network
(``coopsim.client.run_controller``; clients/python has the scripts, clients/c the C twins).

* ``braitenberg`` (e-puck): obstacle avoidance by Braitenberg's vehicle 3b: each wheel's speed
  is the cruise speed plus a weighted sum of the IR proximity readings; obstacles on one side
  speed that side's wheel up, so the robot turns away.
* ``kilobot_swarm`` (Kilobot): aggregation or dispersion by IR messaging (the radio as a 10 cm
  link). Every robot broadcasts a tiny message each step and counts who it heard (with only
  the distance, as a Kilobot knows it). Aggregation: a random walk (straight runs, tumbles on
  the spot) that stops while at least ``quorum`` neighbours are heard; dispersion: walk while
  anyone is nearer than ``spacing``, rest otherwise. Its RGB LED shows the state: green at
  rest, red walking.
* ``wall_follow`` (TurtleBot3): right-hand wall following with the 360-beam lidar: hold
  ``gap`` m to the wall on the right (a proportional law on the beams at -90 and -60 degrees),
  turn left in place when something is ahead, curve right when the wall ends.
* ``line_follow`` (Thymio): edge following with the two ground sensors (``line``): the left
  sensor on the line and the right one off means the robot straddles the edge: go straight;
  both on: veer right; both off: veer left.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.driver import Driver
from ...model.params import ParamSpec
from ...model.radio import pack

#: Braitenberg weights of the e-puck's IR0..IR7 (front right round the back to front left):
#: (left wheel, right wheel). An obstacle ahead-right slows the left wheel and speeds the right
#: one: the robot turns left, away from it.
BRAITENBERG = ((-1.0, 1.0), (-0.8, 0.8), (-0.4, 0.4), (0.0, 0.0), (0.0, 0.0),
               (0.4, -0.4), (0.8, -0.8), (1.0, -1.0))


def braitenberg_speeds(ir, cruise: float, gain: float, saturation: float) -> tuple[float, float]:
    """Wheel speeds (left, right), m/s, from eight IR intensities."""
    x = np.clip(np.asarray(ir[:8], float) / saturation, 0.0, 1.0)
    w = np.array(BRAITENBERG)
    left, right = cruise + gain * cruise * (w[:, 0] @ x), cruise + gain * cruise * (w[:, 1] @ x)
    if x[[0, 7]].min() > 0.02:  # both front sensors see it: straight ahead, turn in place
        turn = cruise if x[0] + x[1] >= x[6] + x[7] else -cruise
        return -turn, turn
    return float(left), float(right)


class Braitenberg(Driver):
    """Braitenberg obstacle avoidance on IR proximity sensors (the e-puck's classic)."""

    label = "braitenberg"
    description = ("Braitenberg obstacle avoidance on the IR proximity sensors (needs "
                   "proximity, motors)")
    params = (
        ParamSpec("cruise", "float", "forward wheel speed, m/s", 0.1, 0.0, 5.0, "m/s"),
        ParamSpec("gain", "float", "how hard a reading at saturation steers (x cruise)", 2.0,
                  0.0, 20.0),
        ParamSpec("saturation", "float", "the sensors' reading at contact", 4095.0, 1.0, 1e6),
    )

    def step(self, bot) -> None:
        bot.motors.set_speeds(*braitenberg_speeds(bot.proximity.read(), self.p["cruise"],
                                                  self.p["gain"], self.p["saturation"]))


class KilobotSwarm(Driver):
    """Aggregation or dispersion of Kilobots by IR messaging (counts and distances only)."""

    label = "kilobot_swarm"
    description = ("Kilobot aggregation (stop among quorum neighbours) or dispersion (move "
                   "away from neighbours nearer than spacing) by IR messages (needs radio, "
                   "motors)")
    params = (
        ParamSpec("mode", "str", "aggregate or disperse", "aggregate",
                  choices=("aggregate", "disperse")),
        ParamSpec("quorum", "int", "aggregate: neighbours heard to stop", 2, 1, 100),
        ParamSpec("spacing", "float", "disperse: rest when nobody is nearer, m", 0.06, 0.0,
                  10.0, "m"),
        ParamSpec("run", "int", "steps of a straight run between tumbles", 100, 1, 100000,
                  "steps"),
        ParamSpec("tumble", "int", "most steps of a tumble (turning on the spot)", 60, 1,
                  100000, "steps"),
    )

    def setup(self, bot) -> None:
        self.left = 0  # steps left in the current run or tumble
        self.turning = 0.0  # -1, 0 (running) or +1
        self.showing = None  # the state its LED shows (set on a change only: an action)

    def step(self, bot) -> None:
        bot.radio.send(pack(1))  # "I am here": one byte-sized message a step
        heard = bot.radio.read()
        distances = heard[0::3]  # range, bearing, step per message; a Kilobot uses range only
        if self.p["mode"] == "aggregate":
            rest = len(distances) >= self.p["quorum"]
        else:
            rest = not any(d < self.p["spacing"] for d in distances)
        if rest != self.showing and hasattr(bot, "leds"):  # as Kilobot demos do: state on LED
            bot.leds.set(*((0, 200, 0) if rest else (200, 0, 0)))
            self.showing = rest
        if rest:
            bot.motors.stop()
            return
        self._walk(bot)

    def _walk(self, bot) -> None:
        """A random walk: straight runs and tumbles of random length."""
        if self.left <= 0:
            if self.turning:  # end of a tumble: run
                self.turning, self.left = 0.0, int(self.p["run"])
            else:
                self.turning = 1.0 if self.rng.random() < 0.5 else -1.0
                self.left = int(self.rng.integers(1, int(self.p["tumble"]) + 1))
        self.left -= 1
        top = 1.0  # saturates at motors.max_speed: a Kilobot's 1 cm/s
        if self.turning:
            bot.motors.set_speeds(-top * self.turning, top * self.turning)
        else:
            bot.motors.set_speeds(top, top)


def wall_follow_speeds(scan, info, cruise: float, gap: float) -> tuple[float, float]:
    """Wheel speeds (left, right), m/s, to follow the wall on the right at ``gap`` m, from a
    lidar scan and its ``info`` row (nearest, bearing, beams, angle_min, increment, time)."""
    d = np.asarray(scan, float)
    if not len(d):
        return 0.0, 0.0
    d = np.where(d > 0.0, d, np.inf)  # no return: nothing there (or too close to tell)
    angle_min, inc = info[3], info[4] or 1.0
    beam = lambda deg: d[int(round((math.radians(deg) - angle_min) / inc)) % len(d)]  # noqa: E731
    sector = lambda a, b: min(beam(x) for x in range(a, b + 1, 5))  # noqa: E731
    ahead = sector(-20, 20)
    if ahead < 1.5 * gap:
        return -cruise, cruise  # blocked: turn left in place
    right, diag = sector(-100, -80), beam(-60) * math.cos(math.radians(30))
    if min(right, diag) > 3 * gap:
        return cruise, 0.6 * cruise  # lost the wall (a door, a corner): curve right to find it
    error = min(right, diag) - gap
    steer = float(np.clip(1.5 * error / gap, -0.5, 0.5)) * cruise  # too far: steer right
    return cruise + steer, cruise - steer


class WallFollow(Driver):
    """Right-hand wall following with a 360-degree lidar (the TurtleBot3's classic)."""

    label = "wall_follow"
    description = "follow the wall on the right with the lidar (needs lidar, motors)"
    params = (
        ParamSpec("cruise", "float", "forward wheel speed, m/s", 0.15, 0.0, 5.0, "m/s"),
        ParamSpec("gap", "float", "distance to keep from the wall, m", 0.4, 0.05, 5.0, "m"),
    )

    def step(self, bot) -> None:
        bot.motors.set_speeds(*wall_follow_speeds(bot.lidar.read(), bot.lidar.info(),
                                                  self.p["cruise"], self.p["gap"]))


def line_follow_speeds(left: float, right: float, cruise: float,
                       turn: float) -> tuple[float, float]:
    """Wheel speeds (left, right), m/s, following an edge with two ground sensors."""
    if left and not right:
        return cruise, cruise  # straddling the edge
    if left and right:
        return cruise, cruise * (1.0 - turn)  # both on the line: veer right, off it
    return cruise * (1.0 - turn), cruise  # both off: veer left, onto it


class LineFollow(Driver):
    """Follow a line's edge with two ground sensors (the Thymio's classic)."""

    label = "line_follow"
    description = "follow the edge of a floor line with the two ground sensors (needs line, motors)"
    params = (
        ParamSpec("cruise", "float", "forward wheel speed, m/s", 0.08, 0.0, 5.0, "m/s"),
        ParamSpec("turn", "float", "how much the inner wheel slows to veer (0..1)", 0.6, 0.0,
                  1.0),
    )

    def step(self, bot) -> None:
        left, right, _ = bot.line.read()
        bot.motors.set_speeds(*line_follow_speeds(left, right, self.p["cruise"],
                                                  self.p["turn"]))
