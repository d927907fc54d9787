"""Squads in games: orders into squad commands, capture (the paper's GoTo + PickUp) and halt, the
server's reachability check, maps from layouts, and the capture-the-flag team (strategy, tagged
robots sent home, players' orders, enemies located by radio)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model.orders import SquadOrder
from coopsim.model.radio import RadioMessage, pack, decode
from coopsim.model.specs import FloorSpec, MapSpec, ObjectSpec, SquadSpec, ZoneSpec
from coopsim.swarm import (Attack, Defend, Formation, Gather, GoTo, PickUp, Squad, SquadGoTo,
                           Stop, SwarmError)
from coopsim.swarm.behaviours import RobotState
from coopsim.swarm.ctf import CtfView, TeamAI, TeamPlayer
from coopsim.swarm.game import (Capture, Halt, check_order, command_of, execute, map_of_layout,
                                planning_grid)

from swarm_sim import KinematicRobot, run

RIVER = ZoneSpec("ZONE_1", "water", ((-0.8, -2.5), (0.8, -2.5), (0.8, 2.5), (-0.8, 2.5)))
MAP = MapSpec(FloorSpec(10.0, 8.0), (ObjectSpec("p", "cylinder", (0.6, 0.6, 0.5),
                                                (-3.0, 2.5, 0.25)),), (RIVER,))


@pytest.fixture(scope="module")
def grid():
    return planning_grid(MAP)


@pytest.mark.parametrize("order, want", [
    (SquadOrder("A", "goto", (1.0, 2.0), "line"), SquadGoTo(1.0, 2.0, Formation("line", 0.6))),
    (SquadOrder("A", "gather"), Gather(None, None, None)),
    (SquadOrder("A", "defend", (1.0, 2.0), radius=1.5), Defend((1.0, 2.0), 1.5)),
    (SquadOrder("A", "attack", (1.0, 2.0)), Attack((1.0, 2.0), None)),
    (SquadOrder("A", "capture", (1.0, 2.0)), Capture((1.0, 2.0), None)),
    (SquadOrder("A", "hold"), Halt()),
])
def test_orders_become_squad_commands(order, want):
    assert command_of(order) == want


@pytest.mark.slow
def test_capture_goes_round_the_water_and_the_nearest_robot_picks_the_flag_up(grid):
    robots = [KinematicRobot(-4.0, y, 0.0) for y in (-1.0, 0.0, 1.0)]
    squad = Squad(robots, grid, Formation("wedge", 0.7))
    orders = execute(squad, Capture((3.5, 0.0)), squad.positions())
    pickers = [o for o in orders if isinstance(o.commands[-1], PickUp)]
    assert len(pickers) == 1
    goto = pickers[0].commands[-2]
    assert isinstance(goto, GoTo) and (goto.x, goto.y) == (3.5, 0.0)
    run(robots, squad.step, squad.arrived, max_time=120)
    assert squad.arrived()
    carrier = [c for c in squad.controllers if c.carrying == "flag"]
    assert len(carrier) == 1
    x, y = carrier[0].robot.x, carrier[0].robot.y
    assert math.dist((x, y), (3.5, 0.0)) < 0.2
    assert isinstance(squad.current, Capture)


def test_halt_stops_every_robot_and_needs_robots(grid):
    robots = [KinematicRobot(-4.0, y, 0.0) for y in (-1.0, 1.0)]
    squad = Squad(robots, grid)
    orders = execute(squad, Halt(), squad.positions())
    assert all(o.commands == (Stop(),) for o in orders)
    with pytest.raises(SwarmError, match="empty squad"):
        execute(Squad([], grid), Halt(), np.zeros((0, 2)))


def test_the_server_check_refuses_only_unreachable_points(grid):
    squad = np.array([(-4.0, -1.0), (-4.0, 1.0)])
    check_order(grid, SquadOrder("A", "goto", (4.0, 0.0)), squad)  # round the river: fine
    check_order(grid, SquadOrder("A", "hold"), squad)
    for point in [(0.0, 0.0), (20.0, 0.0)]:  # mid-river (1.1 m from a free cell); off the floor
        with pytest.raises(SwarmError, match="^unreachable: "):
            check_order(grid, SquadOrder("A", "goto", point), squad)
    check_order(grid, SquadOrder("A", "defend", (-3.0, 2.5), radius=1.2), squad)  # the pillar


def test_a_map_from_a_layout_document_plans_like_the_map():
    layout = {"floor": {"length": 10.0, "width": 8.0}, "layout_version": 7,
              "objects": [{"name": "p", "shape": "cylinder", "size": [0.6, 0.6, 0.5],
                           "x": -3.0, "y": 2.5, "z": 0.25, "yaw": 0.0, "mass": 0.0},
                          {"name": "crate", "shape": "box", "size": [0.4, 0.4, 0.4],
                           "x": 2.0, "y": 2.0, "yaw": 0.0, "mass": 1.0}],
              "zones": [{"name": "ZONE_1", "kind": "water", "color": [60, 120, 220],
                         "polygon": [list(v) for v in RIVER.polygon]}]}
    spec = map_of_layout(layout)
    assert [o.name for o in spec.obstacles] == ["p"] and spec.version == 7  # movable: not
    assert np.array_equal(planning_grid(spec).blocked, planning_grid(MAP).blocked)


FIELDS = {"teams": {"A": {"score": 0, "base": [-4.0, 0.0], "flag": [-4.0, 0.0],
                          "carrier": None, "robots": ["a1", "a2", "a3"]},
                    "B": {"score": 0, "base": [4.0, 0.0], "flag": [4.0, 0.0],
                          "carrier": None, "robots": ["b1"]}},
          "tagged": [], "result": ""}


def view(**changes):
    fields = {"teams": {k: dict(v) for k, v in FIELDS["teams"].items()},
              "tagged": changes.pop("tagged", []), "result": ""}
    for key, value in changes.items():
        team, what = key.split("_", 1)
        fields["teams"][team][what] = value
    return CtfView.of(fields)


def test_the_strategy_by_role():
    ai = TeamAI("A", {"A": "attack", "Ad": "defend"})
    assert ai.want("A", view(), {}) == SquadOrder("A", "capture", (4.0, 0.0))
    assert ai.want("A", view(B_carrier="a2"), {}) == SquadOrder("A", "goto", (-4.0, 0.0))
    assert ai.want("Ad", view(), {}) == SquadOrder("Ad", "defend", (-4.0, 0.0), radius=1.5)
    assert ai.want("Ad", view(), {"b1": (-2.0, 1.0)}) == \
        SquadOrder("Ad", "attack", (-2.0, 1.0), radius=0.5)
    assert ai.want("Ad", view(), {"b1": (2.0, 1.0)}).verb == "defend"  # in B's half: not ours
    assert ai.want("Ad", view(A_carrier="b1", A_flag=[-1.0, 1.0]), {}) == \
        SquadOrder("Ad", "attack", (-1.0, 1.0), radius=0.5)


def states(positions, t=0.0):
    return {n: RobotState(x, y, 0.0, time=t) for n, (x, y) in positions.items()}


def test_a_team_sends_tagged_robots_home_and_takes_a_players_order_first():
    team = TeamPlayer("A", [SquadSpec("A", ("a1", "a2", "a3"), "wedge", 0.7, "A")],
                      {"A": "attack"}, MAP)
    where = {"a1": (-3.5, -1.0), "a2": (-3.5, 0.0), "a3": (-3.5, 1.0)}
    team.step(0.0, states(where), view())
    run_ = team.runners["A"]
    assert run_.order == SquadOrder("A", "capture", (4.0, 0.0))
    team.step(1.0, states({**where, "a2": (2.0, 3.0)}), view(tagged=["a2"]))
    last = run_.controllers["a2"].command.commands[-1]
    assert "a2" in run_.home and (last.x, last.y) == (-4.0, 0.0)  # home, alone
    team.order(SquadOrder("A", "goto", (-3.0, -2.0), seq=1))
    team.step(2.0, states(where), view(tagged=["a2"]))
    assert run_.order.verb == "goto" and run_.members == ("a1", "a3")
    team.step(3.0, states(where), view())  # a2 freed: it waits for the next order
    assert "a2" not in run_.home and run_.controllers["a2"].command == Stop()
    assert run_.order.verb == "goto"  # the player's order still holds


def test_radio_beacons_locate_enemies_by_range_and_bearing():
    team = TeamPlayer("A", [SquadSpec("Ad", ("a4",), "line", 0.6, "A")], {"Ad": "defend"}, MAP,
                      beat=1.0)
    assert team.beacons(0.0) == {"a4": {"team": "A"}} and team.beacons(0.5) == {}
    heard = RadioMessage("b1", 2.0, math.pi / 2, 3, decode(pack({"team": "B"})))
    mate = RadioMessage("a9", 1.0, 0.0, 3, decode(pack({"team": "A"})))
    me = {"a4": RobotState(-3.0, -1.0, 0.0)}
    team.step(0.0, me, view(), {"a4": [heard, mate]})
    assert team.heard["b1"][:2] == pytest.approx((-3.0, 1.0))  # 2 m to its left
    assert "a9" not in team.heard
    assert team.runners["Ad"].order == SquadOrder("Ad", "attack", pytest.approx((-3.0, 1.0)),
                                                  radius=0.5)
