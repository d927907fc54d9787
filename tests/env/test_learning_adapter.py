"""A user maps someone else's sensor to Gymnasium without editing it: a registered Learnable
adapter gives its reading the bounds a learner's space holds, in a real CoopsimEnv; without
the adapter the reading is unbounded (the default every module gets)."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.model.capabilities import Learnable, register_adapter, unregister_adapter
from coopsim.model.commands import Command
from coopsim.model.module import Module
from coopsim.model.params import ParamSpec
from coopsim.model.plugins import MODULES
from helpers import chassis_type, robot, scenario

gymnasium = pytest.importorskip("gymnasium", reason="the learning extra")
from coopsim.env.gym import CoopsimEnv  # noqa: E402

LABEL = "meter_caps_test"


class Meter(Module):
    """Someone else's sensor: the robot's x and y, m, clipped to +-span; nothing for learners."""

    label = LABEL
    params = (ParamSpec("span", "float", "largest value, m", 2.0, 0.1, 10.0, "m"),)
    commands = (Command(9726, "read", LABEL, kind="read", doc="x, y, m"),)
    fields = ("x", "y")

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return np.clip(frame.pose[rows, :2], -p["span"][:, None], p["span"][:, None])


class MeterBounds:
    """The user's adapter: the bounds the sensor's own parameter gives."""

    @staticmethod
    def observation_space(params, n_targets):
        return (-params["span"], -params["span"]), (params["span"], params["span"])


if LABEL not in MODULES:
    MODULES.register(LABEL)(Meter)
Walker = chassis_type("walker_caps_test", ("motors", LABEL))


def _space():
    env = CoopsimEnv(scenario([robot("r1", 0.5, 0.25, type=Walker.label)]),
                     observe=[LABEL])
    obs, _ = env.reset(seed=1)
    return env.observation_space[LABEL], obs[LABEL]


def test_an_adapter_gives_a_third_party_sensor_its_gymnasium_bounds():
    space, _ = _space()
    assert space.low.tolist() == [-np.inf, -np.inf]          # the default: unbounded
    register_adapter(Learnable, LABEL, MeterBounds)
    try:
        space, obs = _space()
        assert space.low.tolist() == [-2.0, -2.0] and space.high.tolist() == [2.0, 2.0]
        assert space.contains(obs) and obs.tolist() == pytest.approx([0.5, 0.25], abs=0.01)
    finally:
        unregister_adapter(Learnable, LABEL)
    assert _space()[0].high.tolist() == [np.inf, np.inf]
