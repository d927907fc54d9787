"""A capture-the-flag team: squads of robots, their orders, and the team's own strategy.

Written once for both hosts: the in-process ``squad`` driver and a network controller
(``clients/python/ctf_team.py``) give a :class:`TeamPlayer` the same things each step -- every
robot's :class:`~coopsim.swarm.behaviours.RobotState`, the game's fields (the ``ctf`` rule's),
the radio messages the robots received and the players' squad orders -- and get back every
robot's wheel speeds and the radio beacons to send.

* Each squad has a :class:`SquadRunner`: one subsumption stack per robot (reflexes: bumpers and
  sonar, the floor sensors' lines, the map's borders; then its command and sequence), and the
  squad's current order decomposed by the swarm library (:mod:`coopsim.swarm.game`).
* A tagged robot leaves its squad and drives home alone (a path on the grid); once freed it
  rejoins at the squad's next order.
* The team's strategy (:class:`TeamAI`) orders each squad by its role: ``attack`` squads capture
  the enemy flag and bring it home; ``defend`` squads circle their own flag, and close on an
  enemy heard in their half -- robots beacon their team on the radio every ``beat`` s, and a
  message's range and bearing locate its sender -- or on the enemy carrying their flag.
* A player's order (from ``/squads``) takes over its squad until the squad has carried it out,
  and ``pause`` s more; then the strategy resumes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.orders import SquadOrder
from ..model.specs import MapSpec, SquadSpec
from .arbitrator import RobotController
from .astar import find_path, smooth
from .behaviours import AvoidCollision, AvoidLines, GoTo, RespectBorders, Sequence, Stop
from .errors import SwarmError
from .formations import Formation
from .game import command_of, execute, planning_grid
from .squad import Squad


@dataclass(frozen=True)
class Side:
    """One team in the game's fields: score, base and flag (m), the enemy robot carrying its
    flag (or None), its robots."""

    name: str
    score: int
    base: tuple[float, float]
    flag: tuple[float, float]
    carrier: str | None
    robots: tuple[str, ...]


@dataclass(frozen=True)
class CtfView:
    """The ``ctf`` rule's fields, typed."""

    sides: dict
    tagged: frozenset
    result: str = ""

    @classmethod
    def of(cls, fields: dict | None) -> "CtfView | None":
        """The view of a rule's fields (None without them)."""
        if not fields or "teams" not in fields:
            return None
        sides = {n: Side(n, int(t["score"]), tuple(t["base"]), tuple(t["flag"]), t["carrier"],
                         tuple(t["robots"])) for n, t in fields["teams"].items()}
        return cls(sides, frozenset(fields.get("tagged", ())), fields.get("result", ""))

    def enemy(self, team: str) -> Side:
        return next(s for n, s in self.sides.items() if n != team)


class SquadRunner:
    """One squad's robots and its current order (see the module docstring).

    Args:
        spec: The squad. grid: The team's planning grid. spec_map: The map (floor, zones).
    """

    def __init__(self, spec: SquadSpec, grid, spec_map: MapSpec) -> None:
        self.name, self.robots, self.grid = spec.name, tuple(spec.robots), grid
        self.formation = Formation.of(spec)
        zones = [np.asarray(z.polygon, dtype=float) for z in spec_map.zones]
        self.controllers = {r: RobotController(None, reflexes=[
            AvoidCollision(d_crit=0.12), AvoidLines(),
            RespectBorders(spec_map.floor, zones, margin=0.05)]) for r in self.robots}
        self.order: SquadOrder | None = None
        self.members: tuple[str, ...] = ()  # the robots the current order went to
        self.home: set[str] = set()  # tagged robots driving home alone
        self.rejoined = False  # a freed robot waits for the next order
        self.heading = 0.0
        self.error = ""
        self.last_ms = 0.0  # wall time of the last decomposition, ms
        self.structure = None  # the formation the current order travels as (or None)
        self.slot_robot: dict[int, str] = {}  # the structure's slots' robots

    def apply(self, order: SquadOrder, positions: dict) -> bool:
        """Give the squad ``order`` (its free robots at ``positions``: name -> (x, y), m).

        Returns:
            False when it cannot be carried out (``error`` says why; the squad holds).
        """
        import time

        members = [r for r in self.robots if r in positions and r not in self.home]
        if not members:
            self.error = "no free robot"
            return False
        squad = Squad(members, self.grid, self.formation,
                      controllers=[self.controllers[r] for r in members])
        squad.heading = self.heading
        started = time.perf_counter()
        try:
            execute(squad, command_of(order, self.formation.spacing),
                    np.array([positions[r] for r in members]))
        except SwarmError as exc:
            self.error = str(exc)
            return False
        finally:
            self.last_ms = (time.perf_counter() - started) * 1e3
        self.order, self.members, self.heading, self.error = order, tuple(members), \
            squad.heading, ""
        self.structure = squad.structure
        self.slot_robot = {int(k): r for r, k in zip(members, squad.last_plan.slot_of)}
        self.rejoined = False
        return True

    def send_home(self, robot: str, position, base) -> None:
        """Take ``robot`` out of the squad and drive it to ``base`` (m) on its own."""
        self.home.add(robot)
        self.members = tuple(r for r in self.members if r != robot)
        try:
            way = smooth(self.grid, find_path(self.grid, position, base).points)[1:]
            order = Sequence(tuple(GoTo(float(x), float(y), 0.3) for x, y in way)) \
                if len(way) else Sequence((Stop(),))
        except SwarmError:
            order = Sequence((Stop(),))
        self.controllers[robot].give(order)
        self.controllers[robot].squad_behaviours = []

    def rejoin(self, robot: str) -> None:
        """A freed robot stands still until the squad's next order."""
        self.home.discard(robot)
        self.rejoined = True
        self.controllers[robot].give(Stop())

    def holding_up(self) -> dict:
        """Robot name -> why it holds the squad's arrival up (the structure's ``stuck``:
        away from its slot, not moving; or no way there); empty while all goes well."""
        st = self.structure
        if st is None or st.arrived:
            return {}
        return {self.slot_robot[i]: why for i, why in sorted(st.stuck.items())
                if self.slot_robot.get(i) in self.members}

    @property
    def finished(self) -> bool:
        """True when every robot of the current order has carried it out."""
        return all(self.controllers[r].finished for r in self.members)

    def decide(self, states: dict) -> dict:
        """Wheel speeds (left, right), m/s, for the squad's robots whose states are given."""
        out = {}
        for name in self.robots:
            if name in states:
                d = self.controllers[name].decide(states[name])
                out[name] = (d.left, d.right)
        return out


class TeamAI:
    """A team's strategy: the order each squad should have now, by its role.

    Args:
        team: The team's name. roles: Squad name -> ``attack`` or ``defend``.
        defend_radius: Radius of the defenders' circle round their flag, m.
    """

    def __init__(self, team: str, roles: dict, defend_radius: float = 1.5) -> None:
        self.team, self.roles, self.defend_radius = team, dict(roles), defend_radius

    def want(self, squad: str, view: CtfView, enemies: dict) -> SquadOrder | None:
        """The order ``squad`` should follow (``enemies``: heard enemy name -> (x, y), m)."""
        mine, theirs = view.sides[self.team], view.enemy(self.team)
        if self.roles.get(squad) == "defend":
            if mine.carrier is not None:
                return SquadOrder(squad, "attack", mine.flag, radius=0.5)
            near = [p for p in enemies.values()
                    if math.dist(p, mine.base) < math.dist(p, theirs.base)]
            if near:
                target = min(near, key=lambda p: math.dist(p, mine.base))
                return SquadOrder(squad, "attack", tuple(target), radius=0.5)
            return SquadOrder(squad, "defend", mine.base, radius=self.defend_radius)
        if theirs.carrier is not None and theirs.carrier in mine.robots:
            return SquadOrder(squad, "goto", mine.base)
        return SquadOrder(squad, "capture", theirs.flag)


def _same(a: SquadOrder | None, b: SquadOrder | None, moved: float) -> bool:
    """Whether two orders are the same but for a move of the point under ``moved`` m."""
    if a is None or b is None or a.verb != b.verb:
        return False
    if a.point is None or b.point is None:
        return a.point == b.point
    return math.dist(a.point, b.point) < moved


class TeamPlayer:
    """A team of squads playing capture the flag (see the module docstring).

    Args:
        team: The team's name. squads: Its SquadSpecs. roles: Squad name -> role.
        spec_map: The map to plan on. beat: Radio beacon period, s. think: Strategy period, s.
        pause: How long a player's order keeps the strategy off after it is carried out, s.
    """

    def __init__(self, team: str, squads, roles: dict, spec_map: MapSpec, beat: float = 1.0,
                 think: float = 0.5, pause: float = 10.0) -> None:
        self.team, self.beat, self.think, self.pause = team, beat, think, pause
        self.grid = planning_grid(spec_map)
        self.runners = {s.name: SquadRunner(s, self.grid, spec_map) for s in squads}
        self.ai = TeamAI(team, roles)
        self.heard: dict[str, tuple] = {}  # enemy -> (x, y, time heard)
        self.player: dict[str, float] = {}  # squad -> time the player's control ends (inf: busy)
        self.pending: dict[str, SquadOrder] = {}
        self._next_think = self._next_beat = 0.0
        self.log: list[str] = []

    @property
    def robots(self) -> tuple[str, ...]:
        return tuple(r for run in self.runners.values() for r in run.robots)

    def order(self, order: SquadOrder) -> None:
        """A player's order for one of the team's squads (applied at the next step)."""
        if order.squad in self.runners:
            self.pending[order.squad] = order

    def step(self, time: float, states: dict, view: CtfView | None = None,
             messages: dict | None = None) -> dict:
        """Wheel speeds (left, right), m/s, of every robot whose state is given.

        Args:
            time: Sim time, s. states: Robot name -> RobotState.
            view: The game (None: no strategy, players' orders only).
            messages: Robot name -> the RadioMessages it received since the last step.
        """
        positions = {n: (s.x, s.y) for n, s in states.items()}
        self._listen(time, states, messages or {})
        if view is not None:
            self._tagged(view, positions)
        for squad, order in list(self.pending.items()):
            run = self.runners[squad]
            if run.apply(order, positions):
                self.player[squad] = math.inf
            else:
                self.log.append(f"{squad}: {order.text}: {run.error}")
            del self.pending[squad]
        if view is not None and not view.result and time >= self._next_think:
            self._next_think = time + self.think
            self._strategy(time, view, positions)
        wheels = {}
        for run in self.runners.values():
            wheels.update(run.decide(states))
        return wheels

    def holding_up(self) -> dict:
        """Squad name -> {robot: why it holds the squad's arrival up}, for the squads that
        wait for a member (:meth:`SquadRunner.holding_up`)."""
        out = {name: run.holding_up() for name, run in self.runners.items()}
        return {name: robots for name, robots in out.items() if robots}

    def beacons(self, time: float) -> dict:
        """Robot name -> payload to broadcast now (every ``beat`` s: the team's name)."""
        if time < self._next_beat:
            return {}
        self._next_beat = time + self.beat
        return {r: {"team": self.team} for r in self.robots}

    def _listen(self, time: float, states: dict, messages: dict) -> None:
        for receiver, got in messages.items():
            me = states.get(receiver)
            for m in got:
                try:
                    team = m.value().get("team")
                except (ValueError, AttributeError):
                    continue  # not a beacon
                if me is None or team == self.team:
                    continue
                a = me.yaw + m.bearing
                self.heard[m.sender] = (me.x + m.range * math.cos(a),
                                        me.y + m.range * math.sin(a), time)
        for name in [n for n, (_, _, t) in self.heard.items() if time - t > 3 * self.beat]:
            del self.heard[name]

    def _tagged(self, view: CtfView, positions: dict) -> None:
        base = view.sides[self.team].base
        for run in self.runners.values():
            for robot in run.robots:
                if robot in view.tagged and robot not in run.home and robot in positions:
                    run.send_home(robot, positions[robot], base)
                elif robot not in view.tagged and robot in run.home:
                    run.rejoin(robot)  # the strategy re-plans with it

    def _strategy(self, time: float, view: CtfView, positions: dict) -> None:
        enemies = {n: (x, y) for n, (x, y, _) in self.heard.items()}
        for squad, run in self.runners.items():
            until = self.player.get(squad, -math.inf)
            if until == math.inf and run.finished:
                until = self.player[squad] = time + self.pause
            if time < until:
                continue
            want = self.ai.want(squad, view, enemies)
            retry = run.rejoined or (run.finished and run.order is not None
                                     and run.order.verb == "capture")
            if want is not None and (retry or not _same(run.order, want, 1.0)):
                if not run.apply(want, positions):
                    self.log.append(f"{squad}: {want.text}: {run.error}")
