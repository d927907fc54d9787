"""The Crazyflie hover task is a valid Gymnasium environment (gymnasium's own check_env on the
real mujoco engine), its actions reach the propellers, and full throttle climbs while zero
throttle falls."""

from __future__ import annotations

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")

import coopsim.env  # noqa: E402,F401  (registers the ids)
from gymnasium.utils.env_checker import check_env  # noqa: E402


def test_check_env_passes_on_the_hover_task():
    env = gymnasium.make("coopsim/CrazyflieHover-v0")
    check_env(env.unwrapped, skip_render_check=True)
    assert env.action_space.shape == (4,)
    assert env.observation_space.shape[0] >= 13  # mocap (7), imu (6) and the other modules
    env.close()


def test_full_throttle_climbs_and_none_stays_down():
    env = gymnasium.make("coopsim/CrazyflieHover-v0", observe=("mocap", "imu"))
    obs, _ = env.reset(seed=3)
    z0 = obs[2]
    for _ in range(40):  # 0.4 s: the motors spin up from rest with their 0.072 s lag
        obs, reward, terminated, truncated, info = env.step(np.ones(4))
    assert obs[2] > z0 + 0.1, obs[:3]        # 4 x max thrust beats 27 g
    assert reward < 0.0 and "dist" in info["metrics"]
    obs, _ = env.reset(seed=3)
    for _ in range(40):
        obs, *_ = env.step(-np.ones(4))
    assert obs[2] < z0 + 0.01, obs[:3]
    env.close()
