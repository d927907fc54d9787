"""Hostile and physics-breaking inserts and updates at ``/sim``: names that would take over a
server's port, and numbers the engine would accept and then fail every step on.

Every refusal is the model's sentence (coopsim.model.limits), the one a file gets for the same
value (tests/formats/test_file_limits.py checks that side), and it changes nothing.
"""

from __future__ import annotations

import json

import pytest

from coopsim.net import protocol as p

from helpers import robot, scenario
from nethelpers import Peer, live


@pytest.fixture()
def run():
    with live(scenario(robots=[robot("robot1", -2.0, 0.0)], floor=(10.0, 10.0)),
              paused=True) as run:
        yield run


def _refused(sim: Peer, code: int, command: int, text: str, params=(), data=()) -> str:
    error, sentence, cmd, *_ = sim.ask(command, text, params, data)
    assert (error, cmd) == (code, command), sentence
    return sentence


def _world(sim: Peer) -> tuple:
    state = json.loads(sim.ok(23)[1])
    return ([r["name"] for r in state["robots"]], [o["name"] for o in state["objects"]],
            len(state["targets"]))


# --- names ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sim", "SIM", "playback", "nameserver"])
def test_a_robot_may_not_take_a_name_the_simulator_serves(sim, names, name):
    sim_endpoint = names.ok(1, "/sim")[1]
    text = _refused(sim, p.OUT_OF_RANGE, 16, f"{name} single", data=[2, 2, 0, 0])
    assert text == f"robot name must not be {name!r}: the simulator serves /{name.lower()} itself"
    assert names.ok(1, "/sim")[1] == sim_endpoint  # /sim and its state stream stay
    assert names.ok(1, "/sim/state")[0] == 0
    assert _world(sim)[0] == ["robot1"]


@pytest.mark.parametrize("name", ["robot1/motors", "/robot1", "9lives", "a.b", "é", "x" * 65])
def test_a_robot_name_outside_the_pattern_is_refused(sim, names, name):
    motors = names.ok(1, "/robot1/motors")[1]
    text = _refused(sim, p.OUT_OF_RANGE, 16, f"{name} single", data=[2, 2, 0, 0])
    assert text.startswith("robot name must "), text
    assert names.ok(1, "/robot1/motors")[1] == motors
    assert _world(sim)[0] == ["robot1"]


def test_names_a_robot_type_derives_follow_the_rule_too(sim):
    text = _refused(sim, p.OUT_OF_RANGE, 16, f"{'t' * 60} team2", data=[0, 0, 0, 0])
    assert "robot type 'team2' names a robot 'tttt" in text and "at most 64" in text
    assert _world(sim)[0] == ["robot1"]
    sim.ok(16, "t single", data=[2, 2, 0, 0])
    sim.ok(16, "t2 team2", data=[0, -2, 0, 0])  # t2_leader, t2_helper
    assert _world(sim)[0] == ["robot1", "t", "t2_leader", "t2_helper"]


def test_update_robot_and_object_names_follow_the_same_rule(sim):
    assert _refused(sim, p.OUT_OF_RANGE, 17, "sim single", data=[2, 2, 0, 0]).startswith(
        "robot name must not be 'sim'")
    text = _refused(sim, p.OUT_OF_RANGE, 13, "a/b box", data=[1, 1, 1, 0, 0, 0.5, 0, 0])
    assert text.startswith("object name must be letters"), text


# --- numbers ----------------------------------------------------------------------------------------

OBJECT = [1.0, 1.0, 0.5, 2.0, 2.0, 0.25, 0.0, 1.0]  # length width height x y z yaw mass
BAD_OBJECTS = [
    (0, 1e-300, "size length must be between 0.001 and 1000 m, got 1e-300 m"),
    (1, 0.0, "size width must be between 0.001 and 1000 m, got 0 m"),
    (2, 1e300, "size height must be between 0.001 and 1000 m, got 1e+300 m"),
    (7, 5e-324, "mass must be 0 (static) or between 0.001 and 10000 kg, got 4.94066e-324 kg"),
    (7, 1e300, "mass must be 0 (static) or between 0.001 and 10000 kg, got 1e+300 kg"),
    (7, -1.0, "mass must be 0 (static) or between 0.001 and 10000 kg, got -1 kg"),
    (5, 1e9, "position z must be between -10000 and 10000 m, got 1e+09 m"),
    (6, 1e300, "yaw must be between -6.28319 and 6.28319 rad (-360 to 360 degrees), "
               "got 1e+300 rad (5.72958e+301 degrees)"),
]


@pytest.mark.parametrize("index, value, message", BAD_OBJECTS)
@pytest.mark.parametrize("command", [13, 14])
def test_an_object_that_would_break_the_physics_is_refused(sim, command, index, value, message):
    sim.ok(13, "crate box", data=OBJECT)
    data = list(OBJECT)
    data[index] = value
    assert _refused(sim, p.OUT_OF_RANGE, command, "crate box", data=data) == message
    sim.ok(4, params=[5])  # and the run steps on
    assert _world(sim)[1] == ["crate"]


def test_object_colours_are_integers_0_to_255(sim):
    text = _refused(sim, p.OUT_OF_RANGE, 13, "c box", params=[0, 256, 0], data=OBJECT)
    assert text == "color G must be an integer between 0 and 255, got 256"
    sim.ok(13, "c box", params=[0, 255, 0], data=OBJECT)


@pytest.mark.parametrize("data, message", [
    ([1e300, 0, 0, 0], "position x must be between -10000 and 10000 m, got 1e+300 m"),
    ([0, 0, -2e4, 0], "position z must be between -10000 and 10000 m, got -20000 m"),
    ([2, 2, 0, 7.0], "yaw must be between -6.28319 and 6.28319 rad (-360 to 360 degrees), got "
                     "7 rad (401.07 degrees)"),
])
@pytest.mark.parametrize("command", [16, 17])
def test_a_robot_pose_outside_its_range_is_refused(sim, command, data, message):
    name = "robot1" if command == 17 else "robot9"
    assert _refused(sim, p.OUT_OF_RANGE, command, f"{name} single", data=data) == message
    assert _world(sim)[0] == ["robot1"]
    sim.ok(4, params=[5])


def test_a_robot_colour_outside_0_255_is_refused(sim):
    text = _refused(sim, p.OUT_OF_RANGE, 16, "r9 single", params=[-1, 0, 0], data=[2, 2, 0, 0])
    assert text == "color R must be an integer between 0 and 255, got -1"


@pytest.mark.parametrize("command, params", [(19, []), (20, [0])])
def test_a_target_position_outside_its_range_is_refused(sim, command, params):
    sim.ok(19, "red", data=[1, 1, 0])
    text = _refused(sim, p.OUT_OF_RANGE, command, "red", params=params, data=[1, 1, 1e12])
    assert text == "position z must be between -10000 and 10000 m, got 1e+12 m"
    assert _world(sim)[2] == 1


def test_a_floating_object_in_a_2d_world_is_refused_with_failed_and_changes_nothing(sim):
    """A 2D engine cannot hold an object whose bottom is above the floor (it could only drop it):
    error 8 (failed: valid numbers, not doable in this world) with the engine's sentence."""
    floating = list(OBJECT)
    floating[5] = 1.5  # z of the centre: its bottom at 1.25 m
    text = _refused(sim, p.FAILED, 13, "lamp box", data=floating)
    assert "engine is 2D and object lamp floats above the floor (its bottom at z = 1.25 m)" \
        in text and "engine mujoco" in text
    sim.ok(4, params=[5])
    assert _world(sim)[1] == []
