"""The Gymnasium step's values against a plain simulation stepped by hand (the env's
own layer was cut; every observation, reward, ending and info value must keep its bits)."""

from __future__ import annotations

import math

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import coopsim.env  # noqa: E402,F401 -- registers coopsim/Scenario-v0
from coopsim.formats.files import load_scenario  # noqa: E402
from coopsim.model.snapshot import metric_values  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402
from learnhelpers import GOAL  # noqa: E402

pytestmark = pytest.mark.slow

STEPS = 1500


class ByHand:
    """``learn_goal`` on a Simulation and a lockstep Stepper, its task read as docs/learning.md
    states it: every reward term's weight x metric (a NaN metric adds 0), any end term holding,
    truncated at the task's ``truncate`` s."""

    def __init__(self, engine: str) -> None:
        self.spec = load_scenario(GOAL)
        self.sim = Simulation(self.spec, engine=engine)
        self.stepper = Stepper(self.sim, mode="lockstep", speed=0)

    def reset(self, seed=None):
        if seed is not None:
            self.sim.seed = seed
        return self.stepper.reset()

    def step(self, action):
        i = self.sim.robots.index["robot1"]
        self.sim.commands["motors"][i] = np.asarray(action, dtype=np.float64)
        snap = self.stepper.tick()
        task, values = self.spec.task, metric_values(snap.rules)
        reward = 0.0
        for term in task.rewards:
            v = float(values[term.metric])
            reward += 0.0 if math.isnan(v) else term.weight * v
        ended = self.sim.ended
        terminated = bool(ended) or any(t.holds(float(values.get(t.metric, math.nan))
                                                if t.metric else math.nan, ended)
                                        for t in task.ends)
        truncated = not terminated and snap.time >= task.truncate - 1e-9
        return snap, reward, terminated, truncated, values


def observed(snap, labels, flat: bool):
    """The robot's readings, each a float64 copy, in the space's order."""
    rows = {label: np.array(snap.readings[label][snap.index["robot1"]], dtype=np.float64)
            for label in labels}
    return np.concatenate(list(rows.values())) if flat else rows


def same(got, want) -> None:
    if isinstance(want, dict):
        assert list(got) == list(want)
        for key in want:
            same(got[key], want[key])
    else:
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
        assert got.flags.writeable  # a copy the learner may keep and change


def actions(env, k: int, snap):
    """Actions of every kind a learner sends: float64 arrays (stored in place), lists and
    float32 arrays (converted), and a goal-seeking stretch so that episodes terminate."""
    if k % 500 < 300:
        turn = float(np.clip(snap.readings["target"][0, 1], -0.2, 0.2))  # the bearing, rad
        return np.array([0.35 - turn, 0.35 + turn])
    return (env.action_space.sample(), [0.2, 0.21],
            np.array([0.45, 0.4], dtype=np.float32))[k % 3]


@pytest.mark.parametrize("flat", [False, True])
@pytest.mark.parametrize("engine", ["kinematic", "pymunk"])
def test_a_long_run_gives_the_hand_stepped_simulations_bits(engine, flat):
    env = gymnasium.make("coopsim/Scenario-v0", scenario=str(GOAL), engine=engine, flat=flat)
    env.action_space.seed(3)
    labels = tuple(env.unwrapped.amap.observe) if flat else \
        tuple(env.observation_space.spaces)
    hand = ByHand(engine)
    obs, _ = env.reset(seed=5)
    snap = hand.reset(5)
    same(obs, observed(snap, labels, flat))
    ends = {"terminated": 0, "truncated": 0}
    for k in range(STEPS):
        action = actions(env, k, snap)
        obs, reward, terminated, truncated, info = env.step(action)
        snap, want_reward, want_term, want_trunc, values = hand.step(action)
        same(obs, observed(snap, labels, flat))
        assert np.float64(reward).tobytes() == np.float64(want_reward).tobytes()
        assert type(reward) is float and (terminated, truncated) == (want_term, want_trunc)
        assert info == {"time": snap.time, "step": snap.step, "metrics": values}
        if terminated or truncated:
            ends["terminated" if terminated else "truncated"] += 1
            seed = None if k % 2 else k
            obs, _ = env.reset(seed=seed)
            snap = hand.reset(seed)
            same(obs, observed(snap, labels, flat))
    assert ends["terminated"] >= 1 and ends["truncated"] >= 1, ends  # both endings compared
