"""``reach``: move an arm's tip to a point (or a coloured target) and stop there.

Written once against the robot API, it runs in-process (``driver reach x 0.5 y 1.0`` in an arm's
section) and over the network (``coopsim.client.run_controller(Reach, "arm2", {...})``). Each
call it reads the base's pose (``gps``, ``compass``), the joint angles and the tip
(``effector``), plans joint angles with inverse kinematics in the base frame
(:func:`coopsim_arm.kinematics.plan`) and commands them; once the tip is within ``tolerance`` of
the goal it stops the joints, and starts again if something pushes the tip away.
"""

from __future__ import annotations

import math

from coopsim.model.driver import Driver
from coopsim.model.params import ParamSpec

from .kinematics import REACH, plan, to_base


class Reach(Driver):
    """Inverse kinematics to a goal point; needs arm_joints, effector, gps and compass (and target
    for ``color``)."""

    label = "reach"
    description = ("move an arm's tip to a point or a target colour and stop (needs arm_joints, "
                   "effector, gps, compass)")
    params = (
        ParamSpec("x", "float", "goal x, m, world frame", 0.0, -1e4, 1e4, "m"),
        ParamSpec("y", "float", "goal y, m, world frame", 0.0, -1e4, 1e4, "m"),
        ParamSpec("color", "str", "reach the first target of this colour instead of (x, y); "
                  "'none' uses x and y", "none"),
        ParamSpec("heading", "float", "tip heading to reach with, rad, world frame", 0.0,
                  -math.pi, math.pi, "rad"),
        ParamSpec("fix_heading", "bool", "hold the tip at 'heading'; false lets the planner "
                  "pick the heading nearest the goal's bearing", False),
        ParamSpec("tolerance", "float", "stop when the tip is this near the goal, m", 0.01,
                  0.001, 1.0, "m"),
        ParamSpec("gain", "float", "0: send angles (the arm_joints module servos); > 0: send rates "
                  "gain * angle error, 1/s", 0.0, 0.0, 50.0, "1/s"),
    )

    def setup(self, bot) -> None:
        self.done = False  # the tip is at the goal and the joints are stopped

    def goal(self, bot, base) -> tuple[float, float]:
        """The goal in the world frame, m: the ``color`` target's, or (x, y)."""
        if self.p["color"] == "none":
            return self.p["x"], self.p["y"]
        distance, angle = bot.target.read_color(text=self.p["color"])
        bearing = base[2] + angle  # the target module measures from the base's heading
        return base[0] + distance * math.cos(bearing), base[1] + distance * math.sin(bearing)

    def step(self, bot) -> None:
        base = (*bot.gps.read(), bot.compass.read()[0])
        goal = self.goal(bot, base)
        tip = bot.effector.read()
        miss = math.hypot(goal[0] - tip[0], goal[1] - tip[1])
        # hysteresis: a tip that settles just inside the tolerance does not start and stop
        if miss <= self.p["tolerance"] or (self.done and miss <= 2 * self.p["tolerance"]):
            self.done = True
            bot.arm_joints.stop()
            return
        self.done = False
        q = list(bot.arm_joints.read())[:3]
        wanted = self.plan(to_base(goal, base), base[2], q)
        if wanted is None:  # nowhere reachable: hold rather than thrash against the limits
            bot.arm_joints.stop()
        elif self.p["gain"] > 0:
            top = bot.get_param("arm_joints", "max_speed")
            rates = [max(-top, min(top, self.p["gain"] * (w - a))) for w, a in zip(wanted, q)]
            bot.arm_joints.set_speeds(*rates)
        else:
            bot.arm_joints.set_positions(*wanted)

    def plan(self, goal: tuple[float, float], base_yaw: float, q: list[float]):
        """Joint angles (rad) for a goal in the base frame; a goal beyond reach is pulled in
        along its bearing, so the arm points at it as far as it can."""
        heading = self.p["heading"] - base_yaw if self.p["fix_heading"] else None
        distance = math.hypot(*goal)
        if distance > REACH * 0.999:
            goal = (goal[0] * REACH * 0.999 / distance, goal[1] * REACH * 0.999 / distance)
        return plan(goal, heading, q)
