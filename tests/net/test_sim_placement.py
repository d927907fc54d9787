"""Floods and bodies placed inside things over ``/sim`` on the ``mujoco`` engine,
on a live run over real sockets: 400 ``insert_object`` at one point are one
object and 399 error 8 with the sentence, and the run goes on; a robot below the floor or
inside a table is error 8 and changes nothing; a contact overflow shows in the state."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mujoco")

from coopsim.model import limits  # noqa: E402
from coopsim.model.specs import ObjectSpec  # noqa: E402
from coopsim.net import protocol as p  # noqa: E402
from coopsim.physics.mujoco import build as mb  # noqa: E402

from helpers import robot, scenario  # noqa: E402
from nethelpers import Peer, live, lookup, wait_until  # noqa: E402

TABLE = ObjectSpec("table", "box", (0.9, 2.4, 0.4), (0.25, 0.0, 0.2))
CRATE = [0.2, 0.2, 0.2, -1.0, -1.0, 0.1, 0.0, 1.0]  # length width height x y z yaw mass


@pytest.fixture()
def run():
    world = scenario(robots=[robot("tb", -1.5, 1.5, type="turtlebot3")], objects=[TABLE],
                     floor=(4.0, 4.0), dt=0.01)
    with live(world, paused=True, engine="mujoco") as run:
        yield run


def _state(sim) -> dict:
    return json.loads(sim.ok(23)[1])


def test_a_flood_of_inserts_at_one_point_is_one_object_and_the_run_goes_on(sim):
    """Main accepted all 400 (46 -> 5 steps a second, RSS +156 MB)."""
    answers = [sim.ask(13, f"crate{k} box", data=CRATE)[:3] for k in range(400)]
    assert answers[0][0] == 0
    assert {(error, cmd) for error, _, cmd in answers[1:]} == {(p.FAILED, 13)}
    assert answers[1][1] == ("object crate1 at (-1, -1, 0.1) starts overlapping object crate0 "
                             "at (-1, -1, 0.1) (0.2 m deep): bodies must not start inside each "
                             "other or inside static geometry (more than 0.005 m): move it")
    sim.ok(4, params=[50])  # answered after 8 s at most: under load the rest follow later
    wait_until(lambda: _state(sim)["step"] >= 50)
    state = _state(sim)
    assert [o["name"] for o in state["objects"]] == ["table", "crate0"]
    assert state["step"] == 50 and state["error"] == "" and state["engine_warnings"] == []
    sim.ok(13, "beside box", data=[0.2, 0.2, 0.2, -0.7, -1.0, 0.1, 0.0, 1.0])  # 10 cm apart


def test_a_crate_dropped_into_a_crate_that_moved_is_checked_where_it_is_now(sim):
    sim.ok(13, "crate box", data=CRATE)
    sim.ok(14, "crate box", data=[0.2, 0.2, 0.2, 1.5, -1.5, 0.1, 0.0, 1.0])  # moved away
    sim.ok(13, "second box", data=CRATE)  # where the first one was
    error, text, *_ = sim.ask(14, "second box", data=[0.2, 0.2, 0.2, 1.55, -1.5, 0.1, 0.0, 1.0])
    assert error == p.FAILED and text.startswith("object second at (1.55, -1.5, 0.1) starts "
                                                 "overlapping object crate at (1.5, -1.5, 0.1)")
    assert [o["name"] for o in _state(sim)["objects"]] == ["table", "crate", "second"]


@pytest.mark.parametrize("data, sentence", [
    ([0.0, 1.0, -9000.0, 0.0], "robot cf (crazyflie) at (0, 1, -9000) is below the floor: a "
                               "body must start on or above the floor (z >= 0)"),
    ([0.3, 0.0, 0.2, 0.0], "robot cf (crazyflie) at (0.3, 0, 0.2) starts inside static "
                           "object table at (0.25, 0, 0.2) (0.029 m deep)"),
])
def test_a_robot_below_the_floor_or_inside_a_table_is_refused(sim, names, data, sentence):
    """Main accepted both: the first flew off to 617 km at 178 km/s, the second was thrown
    out of the table."""
    error, text, *_ = sim.ask(16, "cf crazyflie", data=data)
    assert error == p.FAILED and text.startswith(sentence), text
    assert [r["name"] for r in _state(sim)["robots"]] == ["tb"]
    assert names.ask(1, "/cf/rotors")[0] == p.UNKNOWN_NAME  # nothing was served
    sim.ok(16, "cf crazyflie", data=[0.3, 0.0, 0.415, 0.0])  # on the table's top (0.4 m)
    error, text, *_ = sim.ask(17, "cf crazyflie", data=[0.0, 1.0, -1.0, 0.0])
    assert error == p.FAILED and "below the floor" in text
    assert [r["name"] for r in _state(sim)["robots"]] == ["tb", "cf"]  # kept where it was


def test_an_insert_beyond_the_object_limit_is_refused(sim, monkeypatch):
    """The limit (25,000) lowered to 3: the table and two crates, then error 8 (main: no
    bound)."""
    monkeypatch.setattr(limits, "MAX_OBJECTS", 3)
    sim.ok(13, "a box", data=CRATE)
    sim.ok(13, "b box", data=[0.2, 0.2, 0.2, 1.0, -1.0, 0.1, 0.0, 1.0])
    error, text, *_ = sim.ask(13, "c box", data=[0.2, 0.2, 0.2, 1.0, 1.5, 0.1, 0.0, 1.0])
    assert (error, text) == (p.FAILED, "object 'c' is refused: a world holds at most 3 "
                                       "objects, this one would hold 4")
    assert [o["name"] for o in _state(sim)["objects"]] == ["table", "a", "b"]


def test_a_contact_overflow_shows_in_the_state(monkeypatch):
    """An arena with room for 16 contacts under a plank on 400 cubes (1,600 contacts)."""
    monkeypatch.setattr(mb, "ARENA_BASE", 0)
    monkeypatch.setattr(mb, "CONTACTS", 16)
    cubes = [ObjectSpec(f"c{i}_{j}", "box", (0.1, 0.1, 0.1), (0.1 * i - 1.0, 0.1 * j - 1.0,
                                                              0.05))
             for i in range(20) for j in range(20)]
    plank = ObjectSpec("plank", "box", (2.0, 2.0, 0.05), (-0.05, -0.05, 0.125), mass=5.0)
    with live(scenario(objects=[*cubes, plank], floor=(4.0, 4.0)), paused=True,
              engine="mujoco") as run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        try:
            sim.ok(4, params=[3])
            warnings = _state(sim)["engine_warnings"]
        finally:
            sim.close()
    assert len(warnings) == 1 and warnings[0].startswith(
        "the world's contacts overflowed MuJoCo's arena at t = 0.01 s")
