"""``squad_follow``: squads travel, in formation, to a target, and follow it when it moves
(CoopDynSim's Fig. 4: five robots in an inverted V after a red target).

A batch driver: the robots hosting it with the same parameters, grouped by the scenario's
squads (``[SQUAD_n]``: robots, formation, spacing); a robot in no squad stands still. For each
squad, each time the target of ``color`` has moved more
than ``replan`` m from where the squad was sent, the squad is sent again (a
:class:`~coopsim.swarm.squad.SquadGoTo` planned on the run's map, :mod:`coopsim.swarm.structure`
keeping the shape on the way); the robots' reflexes (near sonar echoes, bumpers) come first.
What the squad's structure sees is in the driver's ``state`` (breaks, re-formations, arrival).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ...model.driver import Driver
from ...model.params import ParamSpec
from ...swarm.arbitrator import Decision, RobotController
from ...swarm.behaviours import AvoidCollision, RobotState
from ...swarm.errors import SwarmError
from ...swarm.follower import steer_all
from ...swarm.slotlaw import control_squads
from ...swarm.structure import Track

if TYPE_CHECKING:
    from ...swarm.formations import Formation


class SquadFollow(Driver):
    """One squad in formation after a target (see the module docstring)."""

    label = "squad_follow"
    description = ("travel as one squad in formation to the target of a colour and follow it "
                   "when it moves (needs gps, compass, sonar, bumper, motors)")
    batch = True
    params = (
        ParamSpec("color", "str", "colour of the target to follow", "red"),
        ParamSpec("replan", "float", "send the squad again when the target moved this far, m",
                  0.5, 0.05, 100.0, "m"),
        ParamSpec("heading", "float", "heading ordered at the target, deg (-999: the "
                  "direction of the last leg)", -999.0, -999.0, 360.0, "deg"),
    )

    def __init__(self, params, rng) -> None:
        super().__init__(params, rng)
        # the planner (SciPy) here, as the run is built, not in its first step; and not when
        # the registry imports this module (every run would pay it)
        from ...swarm import formations, game, squad

        self.planner = (formations.Formation, game.planning_grid, squad.Squad, squad.SquadGoTo)
        self.squads: list[_Follower] | None = None

    def step_batch(self, bots) -> None:
        snap = bots.snapshot
        if self.squads is None:
            self.squads = self._squads(bots)
        goal = next(((t.position[0], t.position[1]) for t in snap.targets
                     if t.color == self.p["color"]), None)
        heading = None if self.p["heading"] == -999.0 else math.radians(self.p["heading"])
        poses = bots.poses()
        sonar, bumper = bots.read("sonar"), bots.read("bumper")
        # no reflex due: nothing near ahead, no bumper pressed (AvoidCollision's trigger)
        calm = (sonar[:, BEAMS] >= D_CRIT).all(axis=1) & (bumper == 0).all(axis=1)
        out = np.zeros((len(bots.names), 2))
        xs, ys, yaws = (poses[:, c].tolist() for c in range(3))
        tracked, rows_tracked, rest = [], [], []
        for follower in self.squads:
            if goal is not None:
                follower.follow(goal, poses[follower.rows, :2], self.p["replan"], heading)
            members, slots, others = follower.split(calm)
            if members:
                ks = [follower.rows[m] for m in members]
                rows_tracked += ks
                tracked.append((follower.squad.structure, slots, poses[ks, 0], poses[ks, 1],
                                poses[ks, 2]))
            rest.append((follower, others))
        if tracked:  # slot tracking of every calm member of every squad in one call
            out[rows_tracked] = control_squads(tracked, bots.time)
        going = []  # quiet members on their way to a waypoint: steered in one call below
        for follower, others in rest:
            for m, quiet in others:
                k = follower.rows[m]
                way = follower.waypoint(m, xs[k], ys[k]) if quiet else None
                if way is not None:
                    going.append((k, follower.squad.controllers[m], *way))
                else:
                    out[k] = follower.decide(m, quiet, xs[k], ys[k], yaws[k], sonar[k],
                                             bumper[k], bots.time)
        if going:
            _steer(going, poses, out)
        bots.set("motors", out)

    def _squads(self, bots) -> list:
        """A follower per scenario squad holding these robots."""
        shape, planning_grid, *squad = self.planner
        grid = planning_grid(bots.snapshot.extra["map"])
        row = {name: k for k, name in enumerate(bots.names)}
        out = []
        for spec in bots.snapshot.extra.get("squads", ()):
            rows = [row[r] for r in spec.robots if r in row]
            if rows:
                out.append(_Follower(spec.name, rows, grid, shape.of(spec), *squad))
        return out

    def state(self) -> dict:
        """Each squad's formation keeping: arrived, breaks, re-formations, last error."""
        return {f.name: f.state() for f in self.squads or ()}


def _steer(going, poses, out) -> None:
    """Set ``out``'s rows of the members in ``going`` ((row, controller, bearing (rad) and
    distance (m) of its waypoint, last, drive) each) to what their sequence layers'
    :func:`steer` would give, in one array call per drive; note the decisions on their
    controllers."""
    for drive in dict.fromkeys(g[5] for g in going):
        group = [g for g in going if g[5] == drive]
        k = [g[0] for g in group]
        bearing, d, last = (np.array([g[c] for g in group]) for c in (2, 3, 4))
        wheels = steer_all(poses[k, 2], bearing, d, last, drive)
        out[k] = wheels
        for (_, c, *_), (left, right) in zip(group, wheels.tolist()):
            c.last = Decision("sequence", left, right, len(c.reflexes) + 1)


D_CRIT = 0.12  # m: the members' AvoidCollision reflex
BEAMS = AvoidCollision(D_CRIT).beams  # the sonar beams it watches


class _Follower:
    """One squad after the target."""

    def __init__(self, name: str, rows: list[int], grid, formation: Formation, squad: type,
                 goto: type) -> None:
        """``squad`` and ``goto``: coopsim.swarm.squad's Squad and SquadGoTo."""
        self.name, self.rows, self.goto = name, rows, goto
        controllers = [RobotController(None, reflexes=[AvoidCollision(d_crit=D_CRIT)])
                       for _ in rows]
        self.squad = squad([None] * len(rows), grid, formation, controllers=controllers)
        self.sent: tuple[float, float] | None = None
        self.error = ""

    def follow(self, goal, positions, replan: float, heading) -> None:
        """Send the squad to ``goal`` when it has moved ``replan`` m from where it was sent."""
        if self.sent is not None and math.dist(goal, self.sent) <= replan:
            return
        try:
            self.squad.command(self.goto(goal[0], goal[1], heading=heading), positions)
        except SwarmError as exc:
            self.error = str(exc)  # unreachable: keep going where it was sent before
            return
        self.sent, self.error = goal, ""

    def split(self, calm) -> tuple[list[int], list[int], list[tuple[int, bool]]]:
        """Sort the members (positions in the squad) for this step: those whose stack would
        only track their slot (``calm``: no reflex due, none running; at the Track of an
        unfinished structure), which the structure's :func:`control_squads` drives as their
        stacks would, with their slot indices; and the others, each with whether it is calm.

        Args:
            calm: (robots,) no reflex due, by the batch's row.
        """
        structure = self.squad.structure
        live = structure is not None and not structure.arrived
        members, slots, others = [], [], []
        for m, (k, c) in enumerate(zip(self.rows, self.squad.controllers)):
            quiet = bool(calm[k]) and c.commands.command is None and \
                c.reflexes[0].phase is None and not c.squad_behaviours
            now = c.sequences.running
            if live and quiet and isinstance(now, Track) and now.structure is structure:
                members.append(m)
                slots.append(now.index)
            else:
                others.append((m, quiet))
        return members, slots, others

    def waypoint(self, member: int, x: float, y: float):
        """(bearing (rad), distance (m), last, drive) of the waypoint member ``member`` (at x, y
        m) steers to this step when its sequence is following GoTos and that waypoint is not reached
        yet (its stack would steer there, nothing else changing), else None."""
        follower = self.squad.controllers[member].sequences.follower
        if follower is None or follower.index >= len(follower.waypoints):
            return None
        wx, wy, tolerance, last = follower.aim()
        d = math.hypot(wx - x, wy - y)
        if d <= tolerance:
            return None
        return math.atan2(wy - y, wx - x), d, last, follower.drive

    def decide(self, member: int, quiet: bool, x: float, y: float, yaw: float, sonar, bumper,
               time: float) -> tuple[float, float]:
        """Wheel speeds (m/s) of member ``member`` from its stack. ``quiet`` (no reflex due or
        running, no simple command): the reflex and command layers would pass, so its sequence
        layer (or Idle) decides straight away, without the sonar (as the stack would)."""
        c = self.squad.controllers[member]
        if not quiet:
            d = c.decide(RobotState(x, y, yaw, tuple(sonar.tolist()),
                                    (int(bumper[0]), int(bumper[1])), time))
            return d.left, d.right
        state = RobotState(x, y, yaw, time=time)
        base = len(c.reflexes) + 1  # the sequence layer's place in the stack
        if c.sequences.active(state):
            left, right = c.sequences.act(state)
            c.last = Decision("sequence", float(left), float(right), base)
        else:
            c.last = Decision("idle", 0.0, 0.0, base + 1 + len(c.squad_behaviours))
        return c.last.left, c.last.right

    def state(self) -> dict:
        s = self.squad.structure
        if s is None:
            return {"arrived": False, "breaks": 0, "reforms": 0, "error": self.error}
        return {"arrived": bool(s.arrived), "breaks": s.stats.breaks,
                "reforms": s.stats.reforms, "error": self.error}
