"""``transport``: the referee of cooperative transport (CoopDynSim's Fig. 9).

Every ``team2`` section of the scenario is a team whose goal is the target of its own colour
(the section's ``color`` and a ``[TARGET]`` line of the same named colour). The rule follows each
team's bar and ends the run:

* with success once every bar's centre is inside its goal zone (``radius`` m about its target)
  and has stayed there ``hold`` s, saying how long each team took;
* with a failure after ``limit`` s, or as soon as a bar is *dropped* (a support's spring
  pulled or pushed past ``drop`` N, or a robot more than ``slack`` m away from its end of the
  bar) or *jammed* (its centre has come no ``progress`` m nearer its target in the last
  ``stall`` s).

Its fields (``/sim state`` rules, the recording) give, per team, the bar's distance to its goal,
whether and when it arrived, and the largest support force so far.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.driver import Rule
from ...model.errors import SimulationError
from ..params import number
from ...model.specs import COLORS
from ..robots.team2 import SPACING, Team2



class _Team:
    """What the rule follows of one team."""

    def __init__(self, name: str, color: str, goal: tuple[float, float]) -> None:
        self.name, self.color, self.goal = name, color, goal
        self.members = Team2.member_names(name)
        self.distance = math.inf
        self.best = math.inf  # nearest the bar has been, m, at the last real progress
        self.since = 0.0  # when that progress was made, s
        self.inside: float | None = None  # since when the bar is in its zone, s
        self.arrived: float | None = None  # when it first entered for good, s
        self.force = 0.0  # largest |support force| so far, N

    def fields(self) -> dict:
        return {"distance": round(self.distance, 4), "arrived": self.arrived,
                "max_force": round(self.force, 2), "goal": self.color}


class Transport(Rule):
    """Succeeds when every team has its bar in its goal zone; fails when one drops or jams
    its bar."""

    label = "transport"
    description = ("referee of bar transport: every team2's bar to the target of its colour, "
                   "never dropped or jammed")
    params = (
        number("radius", "goal zone: the bar's centre this near its target, m", 0.5, 0.05, 10.0,
               "m"),
        number("hold", "how long every bar must stay in its zone, s", 1.0, 0.0, 600.0, "s"),
        number("stall", "a bar with no progress for this long is jammed, s", 20.0, 1.0, 3600.0,
               "s"),
        number("progress", "the least approach that counts as progress, m", 0.1, 0.001, 10.0,
               "m"),
        number("drop", "a support force beyond this drops the bar, N", 95.0, 1.0, 10000.0, "N"),
        number("slack", "a robot this far from its end of the bar has dropped it, m", 0.15,
               0.01, 5.0, "m"),
        number("limit", "FAIL when the bars are not delivered this long into the run, s", 300.0,
               1.0, 86400.0, "s"),
    )

    def __init__(self, params) -> None:
        super().__init__(params)
        self.teams: list[_Team] = []
        self.started = False

    def check(self, scenario) -> None:
        teams = [r for r in scenario.robots if r.type == Team2.label]
        if not teams:
            raise SimulationError("transport needs at least one team2 robot section")
        by_rgb = {COLORS[t.color]: t for t in scenario.targets if t.color in COLORS}
        for spec in teams:
            target = by_rgb.get(tuple(spec.color))
            if target is None:
                raise SimulationError(
                    f"transport: team {spec.name} has colour {tuple(spec.color)}, and no target "
                    f"has that colour (give the team a named colour, e.g. 'color magenta', and "
                    f"a [TARGET] line of the same colour)")
            self.teams.append(_Team(spec.name, target.color, tuple(target.position[:2])))

    def after_step(self, sim, snap) -> None:
        for team in self.teams:
            why = self._follow(team, snap)
            if why:
                self.end(f"FAIL: {why} at t = {snap.time:.2f} s")
                return
        if all(t.inside is not None and snap.time - t.inside >= self.p["hold"] - 1e-9
               for t in self.teams):
            took = ", ".join(f"{t.name} in {t.arrived:.1f} s" for t in self.teams)
            self.end(f"PASS: every bar delivered ({took}); run took {snap.time:.2f} s")
        elif snap.time >= self.p["limit"]:
            left = ", ".join(f"{t.name} {t.distance:.2f} m" for t in self.teams)
            self.end(f"FAIL: bars not delivered after {self.p['limit']:g} s (from their goals: "
                     f"{left})")

    def _follow(self, team: _Team, snap) -> str:
        """Update one team; return why it failed, or ""."""
        p = self.p
        bar = snap.part_poses[snap.parts.index(f"{team.name}.bar")]
        rows = [snap.index[m] for m in team.members]
        force = snap.readings["support"][rows, 1]
        team.force = max(team.force, float(np.abs(force).max()))
        loose = self._loose(bar, snap.poses[rows])
        if not np.isfinite(bar).all() or loose > p["slack"]:
            return f"{team.name} dropped its bar (a robot is {loose:.2f} m from its support)"
        if np.abs(force).max() > p["drop"]:
            return (f"{team.name} dropped its bar (support force {np.abs(force).max():.0f} N "
                    f"> {p['drop']:g} N)")
        team.distance = math.hypot(bar[0] - team.goal[0], bar[1] - team.goal[1])
        if team.distance <= p["radius"]:
            team.inside = snap.time if team.inside is None else team.inside
            team.arrived = team.inside if team.arrived is None else team.arrived
            team.since = snap.time
            return ""
        team.inside = team.arrived = None
        if team.distance < team.best - p["progress"] or not math.isfinite(team.best):
            team.best, team.since = team.distance, snap.time
        elif snap.time - team.since > p["stall"]:
            return (f"{team.name} jammed its bar ({team.distance:.2f} m from the "
                    f"{team.color} target, no {p['progress']:g} m of progress in "
                    f"{p['stall']:g} s)")
        return ""

    @staticmethod
    def _loose(bar: np.ndarray, poses: np.ndarray) -> float:
        """Largest distance (m) from a member's centre to its end of the bar (leader at
        +SPACING/2 along the bar, helper at -SPACING/2)."""
        ends = [(bar[0] + s * SPACING / 2 * math.cos(bar[2]),
                 bar[1] + s * SPACING / 2 * math.sin(bar[2])) for s in (1, -1)]
        return max(math.hypot(x - e[0], y - e[1]) for (x, y, _), e in zip(poses, ends))

    def fields(self) -> dict:
        return {t.name: t.fields() for t in self.teams}
