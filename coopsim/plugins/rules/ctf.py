"""``ctf``: capture the flag between two teams of squads (after the swarm-gaming paper's game).

Each team (the ``team`` of its ``[SQUAD_n]`` sections) has a base, where its flag starts; the
line halfway between the two bases, square to the line joining them, splits the floor into the
two teams' halves. Every step, in this order:

1. **Tag**: a robot in the enemy half that an enemy robot touches (their chassis less than
   ``touch`` m apart) is *tagged*; a flag it carried goes back to its base. A tagged robot must
   go back to its own base: it tags nobody and picks up nothing until it is within
   ``base_radius`` of it, which frees it.
2. **Pick up**: a free robot that touches the enemy flag (its chassis within ``touch`` of the
   flag's 0.15 m radius) carries it; the flag moves with it.
3. **Score**: a carrier within ``base_radius`` of its own base scores one for its team; the flag
   goes back to its base.

The game ends when a team reaches ``score_limit`` or the clock reaches ``time_limit`` (the
higher score wins; equal scores are a draw): the rule ends the run, saying the result. Fields
(``/sim state`` ``rules.ctf``, recorded every step): per team its score, base, flag position and
carrier, the tagged robots, the clock, the limits and the result. Its ``metrics`` field puts the
game's numbers on the state stream too (docs/protocol.md section 5): per team ``T.score``,
``T.flag_x``, ``T.flag_y`` (m) and ``T.carrier`` (the row, in the stream's robot order, of the
robot carrying T's flag; null, NaN on the stream, when nobody does), then ``clock`` (s) and
``tagged`` (how many robots are tagged).
"""

from __future__ import annotations

import math

from ...model.driver import Rule
from ...model.errors import RuleParameterError, SimulationError
from ...model.params import ParamSpec

FLAG_RADIUS = 0.15  # m: the flag's disc, for touching and drawing


def _coord(name: str, what: str, default: float) -> ParamSpec:
    return ParamSpec(name, "float", f"{what}, m", default, -1.0e4, 1.0e4, "m")


class Team:
    """One side: its robots, base, flag (position, carrier) and score."""

    def __init__(self, name: str, robots: tuple[str, ...], base: tuple[float, float]) -> None:
        self.name, self.robots, self.base = name, robots, base
        self.flag = base
        self.carrier: str | None = None  # an enemy robot carrying this team's flag
        self.score = 0

    def describe(self) -> dict:
        return {"score": self.score, "base": list(self.base), "flag": list(self.flag),
                "carrier": self.carrier, "robots": list(self.robots)}


class CaptureTheFlag(Rule):
    """Two teams, a flag and a base each; tag, capture, score; time and score limits."""

    label = "ctf"
    overlay = "teams"  # the viewer draws bases, flags, score and clock from the fields
    description = "capture the flag between the squads of two teams (needs [SQUAD_n] team)"
    params = (
        ParamSpec("team_a", "str", "first team: the team word of its [SQUAD_n] sections", "A"),
        ParamSpec("team_b", "str", "second team", "B"),
        _coord("flag_a_x", "x of the first team's base and flag", -8.0),
        _coord("flag_a_y", "y of the first team's base and flag", 0.0),
        _coord("flag_b_x", "x of the second team's base and flag", 8.0),
        _coord("flag_b_y", "y of the second team's base and flag", 0.0),
        ParamSpec("base_radius", "float", "radius of a base (scoring, freeing), m", 1.0, 0.1,
                  100.0, "m"),
        ParamSpec("touch", "float", "largest gap between two bodies that touch, m", 0.05, 0.0,
                  1.0, "m"),
        ParamSpec("time_limit", "float", "length of the game, s", 300.0, 1.0, 1.0e6, "s"),
        ParamSpec("score_limit", "int", "captures that win the game", 3, 1, 1000),
    )

    def __init__(self, params) -> None:
        super().__init__(params)
        self.teams: dict[str, Team] = {}
        self.tagged: set[str] = set()
        self.clock = 0.0
        self.result = ""
        self.last_event = ""
        self._rows: dict = {}  # robot name -> its row in the last snapshot (the stream's order)

    def check(self, scenario) -> None:
        names = (self.p["team_a"], self.p["team_b"])
        if names[0] == names[1]:
            raise SimulationError(f"ctf needs two different teams, not {names[0]!r} twice")
        for team, key in zip(names, ("flag_a", "flag_b")):
            robots = tuple(r for s in scenario.squads if s.team == team for r in s.robots)
            if not robots:
                raise RuleParameterError([("team_a", "team_b")[names.index(team)]],
                                         f"ctf: no [SQUAD_n] section has 'team {team}' (with "
                                         "robots)")
            x, y = self.p[f"{key}_x"], self.p[f"{key}_y"]
            if not scenario.world.floor.contains(x, y):
                raise RuleParameterError([f"{key}_x", f"{key}_y"],
                                         f"ctf: {key} ({x:g}, {y:g}) is off the floor")
            self.teams[team] = Team(team, robots, (x, y))

    def after_step(self, sim, snap) -> None:
        if self.result or len(self.teams) != 2:
            return
        self.clock = snap.time
        self._rows = snap.index
        where = self._positions(sim, snap)
        self._tag(where, snap.time)
        self._free(where)
        self._pick_up(where, snap.time)
        self._score(where, snap.time)
        for team in self.teams.values():
            if team.carrier is not None:
                team.flag = where[team.carrier][:2]
        self._maybe_end(snap.time)

    # -- the phases -----------------------------------------------------------------------------

    def _positions(self, sim, snap) -> dict[str, tuple[float, float, float]]:
        """Robot name -> (x, y, chassis radius) for the teams' robots in the run."""
        out = {}
        for team in self.teams.values():
            for name in team.robots:
                i = snap.index.get(name)
                if i is not None:
                    out[name] = (float(snap.poses[i, 0]), float(snap.poses[i, 1]),
                                 float(sim.robots.radius[i]))
        for team in self.teams.values():  # a carrier that left the run drops the flag home
            if team.carrier is not None and team.carrier not in out:
                team.carrier, team.flag = None, team.base
        return out

    def _side(self, x: float, y: float) -> str:
        """The team whose half (x, y) is in."""
        a, b = (t.base for t in self.teams.values())
        mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
        along = (x - mid[0]) * (b[0] - a[0]) + (y - mid[1]) * (b[1] - a[1])
        return list(self.teams)[0 if along < 0 else 1]

    def _enemy(self, team: Team) -> Team:
        return next(t for t in self.teams.values() if t is not team)

    def _tag(self, where: dict, time: float) -> None:
        for team in self.teams.values():
            enemies = [where[r] for r in self._enemy(team).robots
                       if r in where and r not in self.tagged]
            for name in team.robots:
                if name not in where or name in self.tagged:
                    continue
                x, y, r = where[name]
                if self._side(x, y) == team.name:
                    continue
                if any(math.hypot(x - ex, y - ey) <= r + er + self.p["touch"]
                       for ex, ey, er in enemies):
                    self.tagged.add(name)
                    self._event(time, f"{name} ({team.name}) tagged")
                    for other in self.teams.values():
                        if other.carrier == name:
                            other.carrier, other.flag = None, other.base

    def _free(self, where: dict) -> None:
        for team in self.teams.values():
            for name in team.robots:
                if name in self.tagged and name in where and \
                        math.dist(where[name][:2], team.base) <= self.p["base_radius"]:
                    self.tagged.discard(name)

    def _pick_up(self, where: dict, time: float) -> None:
        for team in self.teams.values():
            flag = self._enemy(team)
            if flag.carrier is not None:
                continue
            for name in team.robots:
                if name in where and name not in self.tagged:
                    x, y, r = where[name]
                    if math.dist((x, y), flag.flag) <= r + FLAG_RADIUS + self.p["touch"]:
                        flag.carrier = name
                        self._event(time, f"{name} ({team.name}) took {flag.name}'s flag")
                        break

    def _score(self, where: dict, time: float) -> None:
        for team in self.teams.values():
            flag = self._enemy(team)
            carrier = flag.carrier
            if carrier is not None and carrier in team.robots and \
                    math.dist(where[carrier][:2], team.base) <= self.p["base_radius"]:
                team.score += 1
                flag.carrier, flag.flag = None, flag.base
                self._event(time, f"{carrier} scored for {team.name}")

    def _maybe_end(self, time: float) -> None:
        a, b = self.teams.values()
        score = f"{a.score}-{b.score} ({a.name}-{b.name})"
        if max(a.score, b.score) >= self.p["score_limit"]:
            winner = a if a.score > b.score else b
            self.result = f"{winner.name} wins {score}"
        elif time >= self.p["time_limit"] - 1e-9:
            self.result = f"draw {score}" if a.score == b.score else \
                f"{(a if a.score > b.score else b).name} wins {score} on time"
        if self.result:
            self.end(f"capture the flag: {self.result} at t = {time:.1f} s")

    def _event(self, time: float, what: str) -> None:
        self.last_event = f"t = {time:.1f} s: {what}"

    def fields(self) -> dict:
        return {"teams": {n: t.describe() for n, t in self.teams.items()},
                "tagged": sorted(self.tagged), "clock": self.clock,
                "time_limit": self.p["time_limit"], "score_limit": self.p["score_limit"],
                "base_radius": self.p["base_radius"], "flag_radius": FLAG_RADIUS,
                "result": self.result, "last_event": self.last_event,
                "metrics": self._metrics()}

    def _metrics(self) -> dict:
        """The game as numbers, for the state stream (carrier: a row, or None)."""
        out: dict = {}
        for name, team in self.teams.items():
            row = self._rows.get(team.carrier) if team.carrier is not None else None
            out.update({f"{name}.score": team.score, f"{name}.flag_x": float(team.flag[0]),
                        f"{name}.flag_y": float(team.flag[1]),
                        f"{name}.carrier": None if row is None else int(row)})
        out.update({"clock": self.clock, "tagged": len(self.tagged)})
        return out

