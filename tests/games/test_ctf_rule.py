"""The ``ctf`` rule on small real simulations: pick-up by touch, tagging in the enemy half,
freeing at home, scoring, the score and time limits, and its checks of the scenario."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coopsim.formats.files import parse_scenario
from coopsim.model.errors import FileFormatError
from coopsim.sim.drivers import LocalRobot
from coopsim.sim.simulation import Simulation

from helpers import step_by_hand

WORLD = Path(__file__).resolve().parents[2] / "worlds" / "empty.world"  # 10 x 10 m


def game(robots: dict, time_limit=60, score_limit=2, squads=None) -> Simulation:
    """Bases (and flags) at (-1.5, 0) for A and (1.5, 0) for B; robots name -> (x, y, yaw deg)."""
    text = [f"[WORLD]\nfile {WORLD}\n[SETTINGS]\ndt 0.05\n",
            "[RULE_1]\ntype ctf\nparam flag_a_x -1.5\nparam flag_a_y 0\nparam flag_b_x 1.5\n"
            f"param flag_b_y 0\nparam base_radius 0.6\nparam time_limit {time_limit}\n"
            f"param score_limit {score_limit}\n"]
    for k, (name, (x, y, yaw)) in enumerate(robots.items(), start=1):
        text.append(f"[ROBOT_{k}]\ntype swarmbot\nname {name}\nposition {x} {y} 0\n"
                    f"orientation 0 0 {yaw}\n")
    squads = squads or {"A": [n for n in robots if n[0] == "a"],
                        "B": [n for n in robots if n[0] == "b"]}
    for k, (team, names) in enumerate(squads.items(), start=1):
        text.append(f"[SQUAD_{k}]\nname {team}\nteam {team}\nrobots {' '.join(names)}\n")
    return Simulation(parse_scenario("".join(text), "ctf_test.scenario"))


def step(sim, n=1, drive=None):
    def wheels():
        for name, (left, right) in (drive or {}).items():
            LocalRobot(sim, name).motors.set_speeds(left, right)
    step_by_hand(sim, n, wheels)


def fields(sim):
    return sim.snapshot.rules["ctf"]


def test_touching_the_enemy_flag_picks_it_up_and_it_moves_with_the_carrier():
    sim = game({"a1": (1.1, 0, 180), "b1": (3, 3, 0)})
    step(sim)
    f = fields(sim)
    assert f["teams"]["B"]["carrier"] == "a1" and "took B's flag" in f["last_event"]
    step(sim, 20, {"a1": (0.3, 0.3)})
    x = sim.snapshot.poses[0, 0]
    assert fields(sim)["teams"]["B"]["flag"] == pytest.approx([x, 0.0], abs=1e-6)
    assert x < 0.9


def test_the_game_is_on_the_state_stream_as_metrics():
    from coopsim.model.snapshot import rule_metrics
    from coopsim.net.statestream import decode_state, encode_state

    sim = game({"b1": (3, 3, 0), "a1": (1.1, 0, 180)})  # a1 is row 1
    step(sim)
    frame = decode_state(encode_state(sim.snapshot, "lockstep", 1.0, 0.0, 0, False, 0))
    named = dict(zip([n for n, _ in rule_metrics(sim.snapshot.rules)], frame.metrics))
    assert named["ctf.B.carrier"] == 1 and np.isnan(named["ctf.A.carrier"])
    assert (named["ctf.A.score"], named["ctf.A.flag_x"], named["ctf.A.flag_y"]) == (0, -1.5, 0)
    assert named["ctf.B.flag_x"] == pytest.approx(sim.snapshot.poses[1, 0])
    assert named["ctf.clock"] == pytest.approx(0.05) and named["ctf.tagged"] == 0


def test_a_carrier_home_scores_and_the_flag_goes_back():
    sim = game({"a1": (1.1, 0, 180), "b1": (3, 3, 0)}, score_limit=3)
    step(sim, 200, {"a1": (0.5, 0.5)})  # 3 m home at about 0.5 m/s
    f = fields(sim)
    assert f["teams"]["A"]["score"] == 1 and f["teams"]["B"]["flag"] == [1.5, 0.0]
    assert f["teams"]["B"]["carrier"] is None and "a1 scored for A" in f["last_event"]


def test_the_score_limit_ends_the_run_with_the_winner():
    sim = game({"a1": (1.1, 0, 180), "b1": (3, 3, 0)}, score_limit=1)
    step(sim, 200, {"a1": (0.5, 0.5)})
    assert fields(sim)["result"] == "A wins 1-0 (A-B)"
    assert sim.ended.startswith("ctf: capture the flag: A wins 1-0 (A-B) at t = ")


def test_touched_in_the_enemy_half_a_robot_is_tagged_drops_the_flag_and_is_freed_at_home():
    sim = game({"a1": (1.1, 0, 180), "b1": (1.1, -0.7, 90), "b2": (3, 3, 0)})
    step(sim)
    assert fields(sim)["teams"]["B"]["carrier"] == "a1"
    step(sim, 40, {"b1": (0.3, 0.3)})  # b1 drives up to a1, in B's half
    f = fields(sim)
    assert f["tagged"] == ["a1"] and f["teams"]["B"]["carrier"] is None
    assert f["teams"]["B"]["flag"] == [1.5, 0.0] and "a1 (A) tagged" in f["last_event"]
    step(sim, 5)
    assert fields(sim)["teams"]["B"]["carrier"] is None  # tagged: picks nothing up
    step(sim, 200, {"a1": (0.5, 0.5)})  # home to (-1.5, 0)
    assert fields(sim)["tagged"] == []


def test_no_tag_in_ones_own_half():
    sim = game({"a1": (-0.5, 0, 0), "b1": (-0.08, 0, 180), "b2": (3, 3, 0)})
    step(sim)
    assert fields(sim)["tagged"] == ["b1"]  # b1 is in A's half: it is the one tagged


def test_the_time_limit_ends_a_level_game_as_a_draw():
    sim = game({"a1": (-3, 3, 0), "b1": (3, 3, 0)}, time_limit=1)
    step(sim, 100)
    assert sim.step == 20 and fields(sim)["result"] == "draw 0-0 (A-B)"
    assert fields(sim)["clock"] == pytest.approx(1.0)


def test_a_game_needs_both_teams_squads():
    with pytest.raises(FileFormatError) as err:
        game({"a1": (-3, 3, 0), "b1": (3, 3, 0)}, squads={"A": ["a1"], "C": ["b1"]})
    assert err.value.line == 5 and "no [SQUAD_n] section has 'team B'" in str(err.value)
