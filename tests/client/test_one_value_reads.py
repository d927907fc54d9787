"""A one-value read (the compass's heading) reads naturally on both hosts: ``.value`` and
``float()`` give the float, while indexing and unpacking keep working as for every reading."""

from __future__ import annotations

import math

import pytest

from coopsim.client import Client
from coopsim.model.driver import Reading
from coopsim.sim.drivers import LocalRobot
from coopsim.sim.simulation import Simulation

from helpers import robot, scenario
from nethelpers import live

YAW = math.radians(30)


def _world():
    return scenario(robots=[robot("r1", 0.0, 0.0, yaw=YAW)], mode="lockstep")


def _checks(heading: Reading, position: Reading) -> None:
    assert heading.value == pytest.approx(YAW, abs=1e-6)
    assert isinstance(heading.value, float) and float(heading) == heading.value
    assert math.atan2(1.0, 0.0) - heading.value == pytest.approx(math.pi / 2 - YAW, abs=1e-6)
    (yaw,) = heading  # the list it always was
    assert heading[0] == yaw == heading.value
    with pytest.raises(ValueError, match="2 values, not one"):
        position.value
    with pytest.raises(ValueError):
        float(position)


def test_a_network_controller_reads_the_compass_as_a_float():
    with live(_world(), paused=True) as run, Client(run.network.endpoint, timeout=5.0) as c:
        bot = c.robot("r1")
        _checks(bot.compass.read(), bot.gps.read())


def test_an_in_process_driver_reads_the_compass_as_a_float():
    sim = Simulation(_world())
    bot = LocalRobot(sim, "r1")
    _checks(bot.compass.read(), bot.gps.read())
