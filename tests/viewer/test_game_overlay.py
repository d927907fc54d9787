"""The viewer's game overlay comes from what a rule declares (``Rule.overlay``), not from its
label: the ctf rule's fields carry ``overlay: teams`` on a real simulation, and the viewer's
game module picks the fields of any rule that declares it."""

from __future__ import annotations

import sys
from pathlib import Path

from coopsim.formats.files import parse_scenario
from coopsim.model.plugins import RULES
from coopsim.sim.simulation import Simulation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "games"))
from test_ctf_rule import game  # noqa: E402 -- the ctf tests' small game

WORLD = Path(__file__).resolve().parents[2] / "worlds" / "empty.world"


def test_a_rule_that_declares_an_overlay_carries_it_in_its_fields():
    sim = game({"a1": (-3, 0, 0), "b1": (3, 0, 0)})
    assert RULES.get("ctf").overlay == "teams"
    assert sim.snapshot.rules["ctf"]["overlay"] == "teams"
    plain = Simulation(parse_scenario(f"[WORLD]\nfile {WORLD}\n[MONITORS]\nmetric t speed r1\n"
                                      "[ROBOT_1]\ntype single\nname r1\nposition 0 0 0\n",
                                      "plain.scenario"))
    assert "overlay" not in plain.snapshot.rules["monitors"]


def test_the_viewer_draws_the_teams_of_whichever_rule_declares_them():
    from coopsim.viewer.game import game_parts, team_fields

    teams = {"A": {"score": 1, "base": [0, 0], "flag": [0, 0]},
             "B": {"score": 0, "base": [1, 0], "flag": [1, 0]}}
    fields = {"overlay": "teams", "teams": teams, "clock": 10.0, "time_limit": 70.0}
    run = {"rules": {"monitors": {"metrics": {}}, "flagfight": fields}}
    assert team_fields(run) is fields
    assert game_parts(run)[0] == ("A 1 : 0 B   1:00 left", "state")
    undeclared = {"rules": {"ctf": {"teams": teams}}}  # a label alone draws nothing
    assert team_fields(undeclared) is None and game_parts(undeclared) == []
