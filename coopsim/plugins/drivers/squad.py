"""``squad``: the robots of one or more squads played in-process by the swarm library.

A batch driver: every robot hosting it with the same parameters is handled in one call per step
(``driver squad role attack`` on a1, a2, a3). Its robots are grouped by the scenario's squads
(``[SQUAD_n]``, read from the snapshot), the squads by team, and each team is a
:class:`coopsim.swarm.ctf.TeamPlayer`: the players' squad orders arrive from the ``/squads``
channel through the snapshot's board (``extra["orders"]``); with a ``ctf`` rule in the run, the
team plays by itself between them (``role``). A network controller runs the very same
TeamPlayer over the protocol (``clients/python/ctf_team.py``).

Needs ``gps``, ``compass``, ``sonar``, ``bumper`` and ``motors``; uses ``line`` and ``radio``
when the robots have them (the ``swarmbot`` type does).
"""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ...model.driver import Driver
from ...model.errors import ProtocolError
from ...model.params import ParamSpec
from ...model.radio import messages, pack
from ...swarm.behaviours import RobotState

if TYPE_CHECKING:
    from ...swarm.ctf import TeamPlayer

log = logging.getLogger(__name__)


class SquadDriver(Driver):
    """Squads of a game: orders, strategy, subsumption per robot (see the module docstring)."""

    label = "squad"
    description = ("play squads in-process: /squads orders, a capture-the-flag strategy, "
                   "subsumption per robot (needs gps, compass, sonar, bumper, motors)")
    batch = True
    params = (
        ParamSpec("role", "str", "what the squads do by themselves in a game", "attack",
                  choices=("attack", "defend", "none")),
        ParamSpec("rule", "str", "label of the game rule whose fields the strategy reads",
                  "ctf"),
        ParamSpec("beat", "float", "radio beacon period, s", 1.0, 0.05, 60.0, "s"),
        ParamSpec("think", "float", "period of the strategy's decisions, s", 0.5, 0.05, 60.0,
                  "s"),
        ParamSpec("pause", "float", "how long a player's order keeps the strategy off after "
                  "the squad has carried it out, s", 10.0, 0.0, 3600.0, "s"),
    )

    def __init__(self, params, rng) -> None:
        super().__init__(params, rng)
        # the game's planner (SciPy) here, as the run is built, not in its first step; and
        # not when the registry imports this module (every run would pay it)
        from ...swarm import ctf

        self.view, self.player = ctf.CtfView, ctf.TeamPlayer
        self.teams: dict[str, TeamPlayer] | None = None
        self.seen: dict[str, int] = {}  # squad -> sequence number of the last order taken
        self.heard_after: dict[str, int] = {}  # robot -> radio deliveries read up to this step
        self.holding: dict[str, dict] = {}  # squad -> {robot: why it holds the squad up}

    def step_batch(self, bots) -> None:
        snap = bots.snapshot
        if self.teams is None:
            self.teams = self._teams(bots)
        states = _states(bots)
        for name, order in snap.extra.get("orders", {}).items():
            if order.seq > self.seen.get(name, 0):
                self.seen[name] = order.seq
                for team in self.teams.values():
                    team.order(order)
        view = self.view.of(snap.rules.get(self.p["rule"])) \
            if self.p["role"] != "none" else None
        heard = self._radio(bots, snap.time) if "radio" in snap.readings else {}
        wheels = {}
        for team in self.teams.values():
            wheels.update(team.step(snap.time, states, view, heard))
        self._holding_up(bots)
        out = np.zeros((len(bots.names), 2))
        for k, name in enumerate(bots.names):
            out[k] = wheels.get(name, (0.0, 0.0))
        bots.set("motors", out)

    def _holding_up(self, bots) -> None:
        """Say which members a squad waits for, and why: on the board (``squad_blocked``:
        squad -> {robot: why}, in ``/sim state`` ``squad_orders``) and in the log, once as
        each starts and stops holding its squad up."""
        now = {}
        for team in self.teams.values():
            now.update(team.holding_up())
        if now == self.holding:
            return
        for squad, robots in now.items():
            for robot, why in robots.items():
                if robot not in self.holding.get(squad, {}):
                    log.warning("squad %s waits for %s: it %s", squad, robot, why)
        for squad, robots in self.holding.items():
            for robot in robots:
                if robot not in now.get(squad, {}):
                    log.info("squad %s: %s no longer holds it up", squad, robot)
        self.holding = now
        bots.post("squad_blocked", MappingProxyType(
            {k: MappingProxyType(dict(v)) for k, v in now.items()}))

    def _teams(self, bots) -> dict:
        """One TeamPlayer per team among the squads holding these robots."""
        mine = set(bots.names)
        squads = [s for s in bots.snapshot.extra.get("squads", ()) if mine & set(s.robots)]
        role = self.p["role"] if self.p["role"] != "none" else "attack"
        out = {}
        for team in sorted({s.team or s.name for s in squads}):
            members = [s for s in squads if (s.team or s.name) == team]
            out[team] = self.player(team, members, {s.name: role for s in members},
                                   bots.snapshot.extra["map"], self.p["beat"], self.p["think"],
                                   self.p["pause"])
        return out

    def _radio(self, bots, time: float) -> dict:
        """Send the teams' beacons due now and read what arrived since the last read."""
        out = {}
        for team in self.teams.values():
            for name, payload in team.beacons(time).items():
                if name not in bots.names:
                    continue
                bot = bots.robot(name)
                try:
                    bot.radio.send(pack(payload))
                except ProtocolError:
                    pass  # the queue is full: this beacon is skipped
                reading = bot.radio.read(str(self.heard_after.get(name, -1)))
                self.heard_after[name] = reading.step
                out[name] = messages(reading)
        return out


def _states(bots) -> dict:
    """Robot name -> RobotState from the batch's arrays (line sensors: zeros without them)."""
    gps, compass = bots.read("gps"), bots.read("compass")
    sonar, bumper = bots.read("sonar"), bots.read("bumper")
    line = np.nan_to_num(bots.read("line")) if "line" in bots.snapshot.readings else \
        np.zeros((len(bots.names), 2))
    time = bots.time
    return {name: RobotState(float(gps[k, 0]), float(gps[k, 1]), float(compass[k, 0]),
                             tuple(sonar[k].tolist()), (int(bumper[k, 0]), int(bumper[k, 1])),
                             time, (int(line[k, 0]), int(line[k, 1])))
            for k, name in enumerate(bots.names)}
