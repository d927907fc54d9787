"""A capture-the-flag team over the network: every robot of a team's squads from one process.

Usage: python ctf_team.py TEAM [--role SQUAD=attack|defend ...] [--state-every N]

The team's squads come from the run's layout (``/sim state``: ``squads`` with ``team TEAM``);
by default its first squad attacks and the others defend. Each step it reads every robot's gps,
compass, sonar, bumper and floor sensors (one request per robot, all sent before any reply is
awaited: :class:`coopsim.client.fleet.Fleet`), takes the players' orders from
``/squads/events``, reads the game from ``/sim state`` every N steps, beacons and listens on
the radio, and sends every robot's wheel speeds. The decisions are the swarm library's
:class:`coopsim.swarm.ctf.TeamPlayer`, the same the in-process ``squad`` driver runs. It ends
when the run finishes (the game is over).
"""

import argparse
import os
import sys
import time

from coopsim.client import Client, RemoteError
from coopsim.client.fleet import Fleet, finished
from coopsim.client.squads import Subscription
from coopsim.model.radio import messages, pack
from coopsim.model.specs import SquadSpec
from coopsim.swarm.behaviours import RobotState
from coopsim.swarm.ctf import CtfView, TeamPlayer
from coopsim.swarm.game import map_of_layout


def team_squads(layout: dict, team: str) -> list[SquadSpec]:
    """The team's squads in a layout document."""
    return [SquadSpec(s["name"], tuple(s["robots"]), s["formation"], s["spacing"], s["team"],
                      radius=s.get("radius"))
            for s in layout.get("squads", ()) if (s.get("team") or s["name"]) == team]


def read_states(fleet: Fleet, time_now: float, has_line: bool) -> dict:
    """Every robot's RobotState, one pipelined round per module."""
    gps, compass = fleet.read("gps"), fleet.read("compass")
    sonar, bumper = fleet.read("sonar"), fleet.read("bumper")
    line = fleet.read("line") if has_line else [[0, 0]] * len(fleet.names)
    return {n: RobotState(g[0], g[1], c[0], tuple(s), (int(b[0]), int(b[1])), time_now,
                          (int(v[0]), int(v[1])))
            for n, g, c, s, b, v in zip(fleet.names, gps, compass, sonar, bumper, line)}


class Radio:
    """The team's beacons out, and what each robot heard since its last read."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.after = {n: -1 for n in fleet.names}

    def exchange(self, beacons: dict) -> dict:
        if not beacons:
            return {}
        texts = [pack(beacons.get(n, {})) for n in self.fleet.names]
        self.fleet.call("radio", "send", texts)  # a full queue only skips a beacon
        readings = self.fleet.read("radio", texts=[str(self.after[n]) for n in self.fleet.names])
        out = {}
        for name, reading in zip(self.fleet.names, readings):
            self.after[name] = reading.step
            out[name] = messages(reading)
        return out


def play(client: Client, team: str, roles: dict, state_every: int) -> int:
    """Play until the run finishes; returns the number of steps played."""
    sim = client.sim()
    layout = sim.state()
    squads = team_squads(layout, team)
    if not squads:
        raise SystemExit(f"ctf_team: no squad of team {team!r} in the run")
    roles = {s.name: roles.get(s.name, "attack" if k == 0 else "defend")
             for k, s in enumerate(squads)}
    player = TeamPlayer(team, squads, roles, map_of_layout(layout))
    fleet = Fleet(client, player.robots)
    modules = {m for r in layout["robots"] if r["name"] in player.robots for m in r["modules"]}
    radio = Radio(fleet) if "radio" in modules else None
    orders = Subscription(client, [s.name for s in squads])
    view, now, steps = CtfView.of(layout["rules"].get("ctf")), float(layout["time"]), 0
    try:
        while True:
            if steps % state_every == 0 and steps:
                state = sim.state()
                view = CtfView.of(state["rules"].get("ctf"))
                if state["finished"]:
                    break
            for order in orders.poll():
                player.order(order)
            states = read_states(fleet, now, "line" in modules)
            heard = radio.exchange(player.beacons(now)) if radio else {}
            wheels = player.step(now, states, view, heard)
            infos = fleet.move("motors", "set_speeds",
                               [wheels.get(n, (0.0, 0.0)) for n in fleet.names])
            now, steps = infos[0].time, steps + 1
            if not infos[0].lockstep:
                time.sleep(0.02)  # real time: about 50 decisions a second
    except RemoteError as exc:
        if not finished(exc):
            raise
    finally:
        orders.close()
        for line in player.log[-5:]:
            print(f"ctf_team {team}: {line}", file=sys.stderr)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("team")
    parser.add_argument("--role", action="append", default=[], metavar="SQUAD=ROLE",
                        help="attack or defend (default: the first squad attacks)")
    parser.add_argument("--state-every", type=int, default=5,
                        help="read the game from /sim state every N steps")
    parser.add_argument("--nameserver", default=os.environ.get("COOPSIM_NAMESERVER"))
    args = parser.parse_args()
    roles = dict(r.split("=", 1) for r in args.role)
    with Client(args.nameserver, timeout=10.0) as client:
        steps = play(client, args.team, roles, max(1, args.state_every))
    print(f"ctf_team {args.team}: played {steps} steps", file=sys.stderr)


if __name__ == "__main__":
    main()
