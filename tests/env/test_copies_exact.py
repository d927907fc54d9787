"""A copy of a batch is the template world run alone: the copies backend steps each copy with
the kinematic engine's own small-world step, so copy c, without noise, is the same bits as a
Simulation of the template scenario (same engine) driven with copy c's actions: positions, yaw
and sonar ranges, through wall and robot-robot contacts."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from coopsim.env.copies import CopyBatch  # noqa: E402
from coopsim.env.episode import Episode  # noqa: E402
from coopsim.model.specs import (FloorSpec, ObjectSpec, RobotSpec, ScenarioSpec,  # noqa: E402
                                 Settings, WorldSpec)

K, STEPS = 4, 50
NAMES = ("r0", "r1", "r2")


def _scenario() -> ScenarioSpec:
    """Three single robots close together between a wall and the floor's edge."""
    robots = (RobotSpec("single", "r0", (-0.4, 0.0, 0.0)),
              RobotSpec("single", "r1", (0.0, 0.05, 3.1)),
              RobotSpec("single", "r2", (-0.2, 0.6, -1.5)))
    wall = (ObjectSpec("wall", "box", (0.2, 1.6, 0.5), (0.7, 0.2, 0.25)),
            ObjectSpec("post", "cylinder", (0.15, 0.15, 0.5), (-0.9, -0.6, 0.25)))
    return ScenarioSpec(WorldSpec(FloorSpec(2.4, 2.0), objects=wall), robots=robots,
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
    touched = 0
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
    assert touched > 10  # walls and robots were met
