"""Graders of the exercises in ``exercises/``: each ends the run with ``PASS: ...`` or
``FAIL: ...`` and the reason, which ``coopsim run`` prints as a banner (and exits 1 on FAIL).

* ``exercise_wander``: drive about for ``limit`` s, at least ``distance`` m of path, touching
  nothing (the bumper).
* ``exercise_target``: get the robot's centre within ``radius`` of the target of ``color``, and
  stop there, within ``limit`` s.
* ``exercise_follow``: keep between ``near`` and ``far`` m from ``leader`` from ``grace`` s on,
  until ``limit`` s, never touching it.

The robot being graded is ``robot``. The time a check fails is said in sim seconds.
"""

from __future__ import annotations

import math

from ...model.driver import Rule
from ...model.errors import RuleParameterError
from ...model.params import ParamSpec
from ..params import number



ROBOT = ParamSpec("robot", "str", "network name of the robot being graded", "robot1")
LIMIT = number("limit", "length of the exercise, s of sim time", 60.0, 1.0, 86400.0, "s")


class _Exercise(Rule):
    """Shared checks: the graded robot exists; where it is."""

    def check(self, scenario) -> None:
        if self.p["robot"] not in {r.name for r in scenario.robots}:
            raise RuleParameterError(["robot"], f"{self.label}: no robot {self.p['robot']!r} in "
                                                "the scenario")

    def pose(self, snap, name: str | None = None):
        """(x, y, yaw) of the graded robot (or ``name``)."""
        return snap.poses[snap.index[name or self.p["robot"]]]

    def touching(self, snap) -> bool:
        """The graded robot's bumper is pressed."""
        return bool(snap.readings["bumper"][snap.index[self.p["robot"]]].max() > 0)


class ExerciseWander(_Exercise):
    """Wander: keep moving, touch nothing."""

    label = "exercise_wander"
    description = "exercise: drive at least a distance in the time, touching nothing"
    params = (ROBOT, LIMIT,
              number("distance", "path the robot must drive, m", 5.0, 0.0, 10000.0, "m"))

    def __init__(self, params) -> None:
        super().__init__(params)
        self.driven = 0.0
        self.last = None

    def after_step(self, sim, snap) -> None:
        x, y, _ = self.pose(snap)
        if self.last is not None:
            self.driven += math.hypot(x - self.last[0], y - self.last[1])
        self.last = (x, y)
        me = self.p["robot"]
        if self.touching(snap):
            self.end(f"FAIL: {me} touched something at t = {snap.time:.2f} s "
                     f"(at x = {x:.2f}, y = {y:.2f} m), after {self.driven:.1f} m")
        elif snap.time >= self.p["limit"] - 1e-9:
            if self.driven >= self.p["distance"]:
                self.end(f"PASS: {me} drove {self.driven:.1f} m in {self.p['limit']:g} s "
                         f"and touched nothing")
            else:
                self.end(f"FAIL: {me} drove only {self.driven:.1f} m in {self.p['limit']:g} s "
                         f"(at least {self.p['distance']:g} m needed); it touched nothing")

    def fields(self) -> dict:
        return {"driven": round(self.driven, 3)}


class ExerciseTarget(_Exercise):
    """Reach a target and stop on it."""

    label = "exercise_target"
    description = "exercise: reach the target of a colour and stop there, in time"
    params = (ROBOT, LIMIT,
              ParamSpec("color", "str", "colour of the target to reach", "red"),
              number("radius", "how near the target's centre counts as there, m", 0.4, 0.05,
                     10.0, "m"),
              number("hold", "how long the robot must stay there, s", 1.0, 0.0, 600.0, "s"))

    def __init__(self, params) -> None:
        super().__init__(params)
        self.goal = (0.0, 0.0)
        self.distance = math.inf
        self.since: float | None = None

    def check(self, scenario) -> None:
        super().check(scenario)
        goals = [t for t in scenario.targets if t.color == self.p["color"]]
        if not goals:
            raise RuleParameterError(["color"], f"exercise_target needs a {self.p['color']} "
                                                "target")
        self.goal = tuple(goals[0].position[:2])

    def after_step(self, sim, snap) -> None:
        x, y, _ = self.pose(snap)
        self.distance = math.hypot(x - self.goal[0], y - self.goal[1])
        me, color = self.p["robot"], self.p["color"]
        if self.distance <= self.p["radius"]:
            self.since = snap.time if self.since is None else self.since
            if snap.time - self.since >= self.p["hold"] - 1e-9:
                self.end(f"PASS: {me} reached the {color} target at t = {self.since:.2f} s "
                         f"and stayed ({self.distance:.2f} m from its centre)")
                return
        else:
            self.since = None
        if snap.time >= self.p["limit"] - 1e-9:
            self.end(f"FAIL: {me} did not reach the {color} target in {self.p['limit']:g} s "
                     f"(it ended {self.distance:.2f} m from it; {self.p['radius']:g} m needed)")

    def fields(self) -> dict:
        return {"distance": round(self.distance, 4)}


class ExerciseFollow(_Exercise):
    """Follow a leader at a distance."""

    label = "exercise_follow"
    description = "exercise: stay between two distances from a leader, never touching it"
    params = (ROBOT, LIMIT,
              ParamSpec("leader", "str", "network name of the robot to follow", "leader"),
              number("near", "the follower must stay at least this far, m (centres)", 0.5, 0.0,
                     100.0, "m"),
              number("far", "and at most this far, m (centres)", 1.5, 0.1, 100.0, "m"),
              number("grace", "time to close in before the distance counts, s", 10.0, 0.0,
                     3600.0, "s"),
              number("slack", "how long the robot may stay out of range at a time, s", 3.0,
                     0.0, 3600.0, "s"))

    def __init__(self, params) -> None:
        super().__init__(params)
        self.gap = 0.0
        self.out: float | None = None  # out of range since, s

    def check(self, scenario) -> None:
        super().check(scenario)
        if self.p["leader"] not in {r.name for r in scenario.robots}:
            raise RuleParameterError(["leader"], f"exercise_follow: no leader "
                                                 f"{self.p['leader']!r}")

    def after_step(self, sim, snap) -> None:
        x, y, _ = self.pose(snap)
        lx, ly, _ = self.pose(snap, self.p["leader"])
        self.gap = math.hypot(lx - x, ly - y)
        me, leader = self.p["robot"], self.p["leader"]
        if self.touching(snap) and self.gap < 0.6:
            self.end(f"FAIL: {me} ran into {leader} at t = {snap.time:.2f} s")
            return
        inside = self.p["near"] <= self.gap <= self.p["far"]
        if snap.time < self.p["grace"] or inside:
            self.out = None
        else:
            self.out = snap.time if self.out is None else self.out
            if snap.time - self.out > self.p["slack"]:
                self.end(f"FAIL: {me} was {self.gap:.2f} m from {leader} at t = "
                         f"{snap.time:.2f} s, out of {self.p['near']:g}-{self.p['far']:g} m "
                         f"for more than {self.p['slack']:g} s")
                return
        if snap.time >= self.p["limit"] - 1e-9:
            self.end(f"PASS: {me} kept {self.p['near']:g}-{self.p['far']:g} m from {leader} "
                     f"for {self.p['limit']:g} s")

    def fields(self) -> dict:
        return {"gap": round(self.gap, 4)}
