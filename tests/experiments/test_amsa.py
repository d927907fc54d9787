"""The AMSA leader/follower model: the paper's two scenarios load with their events, the leader's
behaviours drive as declared, and the follower holds the reference distance."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from coopsim.formats.files import load_scenario
from coopsim.model.specs import DriverSetting
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from nethelpers import SCENARIOS


def scenario(name):
    return load_scenario(SCENARIOS / f"{name}.scenario")


def run(spec, seconds, seed=None):
    st = Stepper(Simulation(spec, seed=seed), mode="lockstep", speed=0)
    snaps = [st.tick() for _ in range(round(seconds / spec.settings.dt))]
    return st, snaps


def test_the_paper_scenarios_load_with_their_events():
    one, two = scenario("amsa_scenario1"), scenario("amsa_scenario2")
    assert [e.time for e in one.events] == [0, 200, 400, 600]
    assert [e.resets for e in one.events] == [False, True, True, True]
    kv = [a.value for e in one.events for a in e.actions if a.name == "kv"]
    assert kv == [0.35, 0.15, 0.1, 0.05]
    assert [e.time for e in two.events] == [0, 100] and two.events[1].resets
    first = {(a.robot, a.module, a.name): a.value for a in two.events[0].actions}
    assert first == {("follower", "motors", "efficiency"): 60, ("leader", "gps", "lost"): 10,
                     ("leader", "driver", "behavior"): 4, ("follower", "driver", "kv"): 0.35,
                     ("follower", "driver", "kw"): 0.05}
    assert one.settings.duration == 800 and two.settings.duration == 200


def with_leader(spec, **settings):
    """``spec`` without events, the leader driven with ``settings``."""
    leader = spec.robots[0]
    driver = DriverSetting("amsa_leader", tuple(settings.items()))
    return dataclasses.replace(spec, events=(), robots=(dataclasses.replace(
        leader, drivers=(driver,)), *spec.robots[1:]))


@pytest.mark.parametrize("behavior, heading", [(1, 0.0), (3, 45.0)])
def test_straight_behaviours_hold_their_heading_at_the_speed(behavior, heading):
    spec = with_leader(scenario("amsa_scenario1"), behavior=behavior, speed=0.1, heading3=45.0)
    _, snaps = run(spec, 30)
    yaw = snaps[-1].poses[0, 2]
    assert math.degrees(math.atan2(math.sin(yaw), math.cos(yaw))) == pytest.approx(heading,
                                                                                  abs=1.0)
    assert np.hypot(*snaps[-1].velocities[0, :2]) == pytest.approx(0.1, rel=0.03)


def test_behaviour_2_drives_a_circle_of_its_radius():
    spec = with_leader(scenario("amsa_scenario1"), behavior=2, speed=0.2, radius=2.0)
    _, snaps = run(spec, 70)  # more than one lap (2 pi 2 / 0.2 = 63 s)
    xy = np.array([s.poses[0, :2] for s in snaps[len(snaps) // 4:]])
    centre = (xy.max(axis=0) + xy.min(axis=0)) / 2
    radii = np.hypot(*(xy - centre).T)
    assert radii.mean() == pytest.approx(2.0, rel=0.05) and radii.std() < 0.1


def test_behaviour_4_is_random_from_the_seed():
    spec = with_leader(scenario("amsa_scenario2"), behavior=4, speed=0.2, leg=3.0)
    paths = [np.array([s.poses[0, :2] for s in run(spec, 40, seed)[1]]) for seed in (1, 1, 2)]
    assert np.array_equal(paths[0], paths[1])  # same seed, same trajectory
    assert np.abs(paths[0] - paths[2]).max() > 0.5  # another seed, another one
    turns = np.abs(np.diff(np.unwrap(np.arctan2(*np.diff(paths[0], axis=0).T[::-1]))))
    assert turns.sum() > 1.0  # it does turn


@pytest.mark.slow
def test_follower_converges_near_the_reference_distance_in_scenario_1():
    _, snaps = run(scenario("amsa_scenario1"), 240)  # the first segment and a reset
    gap = np.array([s.rules["monitors"]["metrics"]["distance"] for s in snaps])
    times = np.array([s.time for s in snaps])
    settled = gap[(times > 150) & (times <= 200)]
    assert np.abs(settled - 1.5).max() < 0.02
    assert gap[(times > 200) & (times < 201)].min() == pytest.approx(1.5, abs=0.05)  # reset
    events = snaps[-1].rules["events"]["events"]
    assert [e["done"] for e in events] == [True, True, False, False]


@pytest.mark.slow
def test_in_scenario_2_kv_035_keeps_closer_than_kv_005():
    _, snaps = run(scenario("amsa_scenario2"), 200)
    gap = np.array([s.rules["monitors"]["metrics"]["distance"] for s in snaps])
    times = np.array([s.time for s in snaps])
    high, low = gap[(times > 20) & (times <= 100)], gap[times > 120]
    assert high.mean() < low.mean() and high.max() < 2.2
    assert 1.5 < low.mean() < 2.5
