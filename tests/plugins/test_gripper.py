"""The built-in ``gripper`` on the built-in ``gripperbot``, on both engines with real engines:
grab the touched movable object, carry it (pymunk: real joints; kinematic: a rigid hold),
release it where it is, read what is held; refusals are error replies. The same module is
driven over the network through its command listing (ids 1000-1002, with their docs)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from coopsim.client import Client, RemoteError
from coopsim.model.commands import FAILED
from coopsim.model.errors import ProtocolError, SimulationError
from coopsim.sim.drivers import LocalRobot
from coopsim.sim.simulation import Simulation

from helpers import box, cylinder, robot, scenario, step_by_hand
from nethelpers import live

ENGINES = ["pymunk", "kinematic"]


def world(engine: str, crate_x: float = 0.37) -> Simulation:
    """A gripperbot at the origin facing +x, a 0.3 m crate (1.5 kg) in front of it (gap
    0.02 m at 0.37), a heavy post behind."""
    spec = scenario([robot("g", 0.0, 0.0, type="gripperbot")],
                    [box("CRATE", crate_x, 0.0, size=(0.3, 0.3), mass=1.5),
                     cylinder("POST", -2.0, 2.0, diameter=0.4)])
    return Simulation(replace(spec, settings=replace(spec.settings, engine=engine)))


def drive(sim, left: float, right: float, steps: int) -> None:
    bot = LocalRobot(sim, "g")
    step_by_hand(sim, steps, lambda: bot.motors.set_speeds(left, right))


def crate_in_robot_frame(sim) -> np.ndarray:
    """The crate's (x, y) in the robot's frame, m."""
    snap = sim.snapshot
    x, y, yaw = snap.poses[0]
    cx, cy, _ = snap.object_poses[snap.objects.index("CRATE")]
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([c * (cx - x) + s * (cy - y), -s * (cx - x) + c * (cy - y)])


@pytest.mark.parametrize("engine", ENGINES)
def test_grab_carry_and_release_on_both_engines(engine):
    sim = world(engine)
    bot = LocalRobot(sim, "g")
    assert bot.gripper.read().text == "" and list(bot.gripper.read()) == [0.0, 0.0]
    assert bot.gripper.grab() == "CRATE"
    held = bot.gripper.read()
    assert held.text == "CRATE" and list(held) == [1.0, 1.5]
    start = crate_in_robot_frame(sim)
    drive(sim, 0.2, 0.3, 150)  # 1.5 s along a left-hand arc
    x, y, yaw = sim.snapshot.poses[0]
    assert x > 0.25 and yaw > 0.2  # the robot went somewhere and turned
    assert np.allclose(crate_in_robot_frame(sim), start, atol=0.03)  # the crate came along
    step_by_hand(sim, 1)
    assert list(sim.snapshot.reading("g", "gripper")) == [1.0, 1.5]  # the measured reading
    assert bot.gripper.release() == "CRATE"
    assert bot.gripper.read().text == "" and bot.gripper.release() == "nothing held"
    drop = sim.snapshot.object_poses[0, :2].copy()
    drive(sim, -0.3, -0.3, 100)  # back away: the crate stays behind
    assert np.allclose(sim.snapshot.object_poses[0, :2], drop, atol=0.05)
    assert crate_in_robot_frame(sim)[0] > start[0] + 0.2


@pytest.mark.parametrize("engine", ENGINES)
def test_a_pin_lets_the_held_object_turn_and_refusals_are_errors(engine):
    sim = world(engine, crate_x=0.60)  # 0.25 m away: out of reach
    bot = LocalRobot(sim, "g")
    with pytest.raises(ProtocolError) as err:
        bot.gripper.grab()
    assert err.value.code == FAILED and "no movable object within 0.05 m" in str(err.value)
    with pytest.raises(SimulationError, match="POST is static"):
        sim.attach("g", "POST")
    bot.set_param("gripper", "reach", 0.3)
    bot.set_param("gripper", "weld", 0)
    assert bot.gripper.grab() == "CRATE"
    with pytest.raises(SimulationError, match="g holds CRATE already"):
        sim.attach("g", "CRATE")
    drive(sim, 0.2, 0.2, 50)
    assert crate_in_robot_frame(sim)[0] == pytest.approx(0.60, abs=0.05)  # pulled along
    sim.world.remove_object("CRATE")  # a held object removed: the hold goes with it
    sim.relayout()
    assert bot.gripper.read().text == "" and sim.world.held == {}


def test_the_gripper_over_the_network_with_its_documented_ids():
    spec = scenario([robot("g", 0.0, 0.0, type="gripperbot")],
                    [box("CRATE", 0.37, 0.0, size=(0.3, 0.3), mass=1.5)])
    with live(spec, paused=True) as run, Client(run.network.endpoint, timeout=10.0) as client:
        bot = client.robot("g")
        listing = {c.name: c for c in bot.gripper.commands().values()}
        assert {n: c.id for n, c in listing.items()} == {"grab": 1000, "release": 1001,
                                                         "read": 1002}
        assert listing["grab"].kind == "action" and "nearest movable object" in \
            listing["grab"].doc
        assert bot.gripper.grab() == "CRATE"
        reply = bot.gripper.read()
        assert reply.text == "CRATE" and list(reply) == [1.0, 1.5]
        with pytest.raises(RemoteError) as err:
            bot.gripper.grab()
        assert err.value.code == FAILED and "holds CRATE already" in str(err.value)
        assert bot.gripper.release() == "CRATE"
