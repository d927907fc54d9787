"""A copy of a batch is the template world run alone: the copies backend steps each copy with
the kinematic engine's own small-world step, so copy c, without noise, is the same bits as a
Simulation of the template scenario (same engine) driven with copy c's actions: positions, yaw
and sonar ranges, through wall and robot-robot contacts, and against a scenario's own object."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("numba")

from coopsim.env.copies import CopyBatch  # noqa: E402
from coopsim.env.episode import Episode  # noqa: E402
from learnhelpers import ROOT  # noqa: E402
from coopsim.model.specs import (FloorSpec, ObjectSpec, RobotSpec, ScenarioSpec,  # noqa: E402
                                 Settings, WorldSpec)

K, STEPS = 4, 50
NAMES = tuple(f"r{k}" for k in range(8))


def _scenario() -> ScenarioSpec:
    """Seven single robots in a tight ring, facing its centre where an eighth stands, between a wall and a post:
    driven ahead they press into each other several at a time (the pushes a robot gets from
    several others summed in the engine's order) and into the walls."""
    ring = np.linspace(0.0, 2 * math.pi, 7, endpoint=False)
    robots = tuple(RobotSpec("single", n, (0.45 * math.cos(t), 0.45 * math.sin(t), 0.0),
                             t - math.pi) for n, t in zip(NAMES, ring))
    robots += (RobotSpec("single", NAMES[-1], (0.02, -0.01, 0.0), 0.3),)
    wall = (ObjectSpec("wall", "box", (0.2, 1.6, 0.5), (0.9, 0.2, 0.25)),
            ObjectSpec("post", "cylinder", (0.15, 0.15, 0.5), (-0.9, -0.6, 0.25)))
    return ScenarioSpec(WorldSpec(FloorSpec(2.6, 2.2), objects=wall), robots=robots,
                        settings=Settings(dt=0.05, seed=1, engine="kinematic"))


def _actions(steps: int) -> np.ndarray:
    """(steps, K, A, 2): each copy its own: full speed into the others and the walls, turns."""
    rng = np.random.default_rng(7)
    act = rng.uniform(-0.6, 0.6, (steps, K, len(NAMES), 2))
    act[:, 0] = 0.6  # copy 0: both wheels full ahead, into each other and the walls
    act[:, 1, :, 0], act[:, 1, :, 1] = 0.6, 0.45  # copy 1: ahead, turning
    return act


def test_copy_c_is_the_template_world_run_alone_bit_for_bit():
    spec, act = _scenario(), _actions(STEPS)
    batch = CopyBatch(spec, K, robots=NAMES, observe=["sonar"], lean=True, seed=0)
    batch.reset(seed=0)
    a = len(NAMES)
    alone = [Episode(spec, NAMES, observe=["sonar"], engine="kinematic", seed=0, lean=True)
             for _ in range(K)]
    for ep in alone:
        ep.reset(seed=0)
    touched = crowded = 0
    for t in range(STEPS):
        batch.act(act[t])
        batch.tick()
        for c, ep in enumerate(alone):
            ep.act({n: act[t, c, j] for j, n in enumerate(NAMES)})
            snap = ep.tick()
            engine = ep.sim.world.engine
            rows = slice(c * a, c * a + a)
            assert np.array_equal(batch.pos[rows], engine.pos), (t, c)
            assert np.array_equal(batch.yaw[rows], engine.yaw), (t, c)
            assert np.array_equal(batch.state[rows], engine.state), (t, c)
            sonar = batch.observation()["sonar"][c]
            for j, n in enumerate(NAMES):
                assert np.array_equal(sonar[j], ep.observation(snap, n)["sonar"]), (t, c, n)
        touched += int((batch.contact != 0).any())
        crowded += int(_crowded(batch.pos[:a], batch._shared["radius"][:a]))
    assert touched > 10 and crowded > 5  # walls met; a robot pressed by three others at once


def _crowded(pos, radius) -> bool:
    """Whether some robot overlaps three others or more (positions of one copy)."""
    d = np.linalg.norm(pos[:, None] - pos[None], axis=2)
    near = d < (radius[:, None] + radius[None]) + 1e-3
    return bool(((near.sum(axis=1) - 1) >= 3).any())


def test_a_scenario_object_stands_in_every_copy_as_in_the_template_world():
    """five_robots' extra box (its ``[OBJECT_1]``, 0.4 kg, at x = 1.5 m; the kinematic engine
    pushes no object): robot3, driven straight at it, ends against its face in each copy, every
    reading the same bits as the scenario run alone."""
    scenario = str(ROOT / "scenarios" / "five_robots.scenario")
    batch = CopyBatch(scenario, 2, robots="robot3", seed=1)
    batch.reset(seed=1)
    alone = Episode(scenario, ("robot3",), engine="kinematic", seed=1)
    alone.reset(seed=1)
    ahead = np.full((2, 2), 0.6)  # both wheels, m/s
    for t in range(800):  # 8 s: 4.8 m of wheel travel; the box's face is 4.45 m ahead
        batch.act(ahead)
        batch.tick()
        alone.act({"robot3": ahead[0]})
        want = alone.observation(alone.tick(), "robot3")
        got = batch.observation()
        for label, reading in want.items():
            for c in range(2):
                assert np.array_equal(got[label][c, 0], reading), (t, c, label)
    assert np.allclose(got["gps"][:, 0, 0], 1.5 - 0.15 - 0.2, atol=0.01)  # face - radius
    assert (got["bumper"][:, 0, 0] == 1.0).all()  # touching it in front
