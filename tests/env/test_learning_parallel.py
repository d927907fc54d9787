"""The PettingZoo ParallelEnv over every robot or one team of a scenario (docs/learning.md)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import parallel_api_test  # noqa: E402

from coopsim.env.mapping import ActionError, LearningError  # noqa: E402
from coopsim.env.parallel import parallel_env  # noqa: E402
from learnhelpers import ROOT, TWO, write  # noqa: E402

TASK = """
[MONITORS]
metric      xa      python coopsim.env.metrics:forward_speed a
metric      gap     distance a b

[TASK]
reward      1 xa a                # a is paid for driving forward, b is not
reward      -0.1 gap              # both for staying close
terminate   gap < 1.0
truncate    3
"""

SQUADS = """
[ROBOT_3]
type        single
name        c
position    0 2 0

[SQUAD_1]
name        blue
team        west
robots      a c

[SQUAD_2]
name        red
robots      b
"""


def test_passes_pettingzoos_parallel_api_test_on_five_robots():
    env = parallel_env(str(ROOT / "scenarios" / "five_robots.scenario"))
    assert env.possible_agents == [f"robot{i}" for i in range(1, 6)]
    parallel_api_test(env, num_cycles=100)


def test_passes_the_api_test_with_a_task_that_ends_episodes(tmp_path):
    env = parallel_env(str(write(tmp_path, TWO + TASK)), flat=True)
    parallel_api_test(env, num_cycles=100)


def test_rewards_follow_the_per_agent_terms_and_agents_leave_when_done(tmp_path):
    env = parallel_env(str(write(tmp_path, TWO + TASK)))
    obs, infos = env.reset(seed=0)
    assert set(obs) == {"a", "b"} and set(obs["a"]) >= {"sonar", "motors", "target"}
    go = {"a": np.array([0.5, 0.5]), "b": np.zeros(2)}
    for _ in range(10):
        obs, rewards, terms, truncs, infos = env.step(go)
    gap = infos["a"]["metrics"]["gap"]
    assert rewards["b"] == pytest.approx(-0.1 * gap)
    assert rewards["a"] == pytest.approx(-0.1 * gap + infos["a"]["metrics"]["xa"])
    assert rewards["a"] > rewards["b"]
    steps = 10
    while env.agents:
        obs, rewards, terms, truncs, infos = env.step({a: go[a] for a in env.agents})
        steps += 1
    assert steps == 60 and all(truncs.values()) and not any(terms.values())  # 3 s of 0.05


def test_same_seed_same_joint_trajectory(tmp_path):
    path = str(write(tmp_path, TWO))

    def run(seed):
        env = parallel_env(path)
        obs, _ = env.reset(seed=seed)
        out = []
        for k in range(40):
            obs, *_ = env.step({a: np.array([0.3, 0.2 + 0.01 * k]) for a in env.agents})
            out += [obs[a]["sonar"] for a in sorted(obs)]
        return np.concatenate(out).tobytes()

    assert run(3) == run(3) != run(4)


def test_a_team_selects_its_squads_robots(tmp_path):
    path = str(write(tmp_path, TWO + SQUADS))
    assert parallel_env(path, team="west").possible_agents == ["a", "c"]
    assert parallel_env(path, team="red").possible_agents == ["b"]
    with pytest.raises(LearningError, match="no team or squad 'green'"):
        parallel_env(path, team="green")


def test_the_bundled_game_plays_team_b_and_refuses_the_driven_team_a():
    """capture the flag: team B (a network team: no driver lines) is five agents that step;
    team A's robots keep their squad drivers, so taking them as agents is refused."""
    path = str(ROOT / "scenarios" / "ctf.scenario")
    env = parallel_env(path, team="B")
    assert env.possible_agents == ["b1", "b2", "b3", "b4", "b5"]
    obs, _ = env.reset(seed=0)
    sim = env.episode.sim
    rows = [sim.snapshot.robot_index(a) for a in env.possible_agents]
    start = sim.snapshot.poses[rows, :2]
    for _ in range(20):
        env.step({a: env.action_space(a).high for a in env.agents})  # full ahead
    moved = np.hypot(*(sim.snapshot.poses[rows, :2] - start).T)
    assert moved.min() > 0.05, moved
    with pytest.raises(LearningError, match="robot a1 has a driver"):
        parallel_env(path, team="A")


def test_bad_actions_name_the_agent(tmp_path):
    env = parallel_env(str(write(tmp_path, TWO)))
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"^b: action left m/s = -2\.0 is outside"):
        env.step({"a": np.zeros(2), "b": np.array([-2.0, 0.0])})
    with pytest.raises(LearningError, match="'zed' is not an agent"):
        env.step({"zed": np.zeros(2)})
    with pytest.raises(ActionError, match=r"^a: action has shape \(1, 2\)"):
        env.step({"a": np.zeros((1, 2))})


def test_step_and_reset_after_close_raise_and_keys_follow_the_space(tmp_path):
    env = parallel_env(str(write(tmp_path, TWO + TASK)))
    obs, _ = env.reset(seed=0)
    for agent, o in obs.items():
        assert list(o) == list(env.observation_space(agent).spaces)
    actions = {a: env.action_space(a).sample() for a in env.agents}
    env.close()
    with pytest.raises(LearningError, match=r"step\(\) after close"):
        env.step(actions)
    with pytest.raises(LearningError, match=r"reset\(\) after close"):
        env.reset(seed=0)
