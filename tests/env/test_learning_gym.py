"""coopsim/Scenario-v0: one robot of a scenario as a Gymnasium environment (docs/learning.md)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import coopsim.env  # noqa: E402,F401 -- registers coopsim/Scenario-v0
from coopsim.env.mapping import ActionError, LearningError  # noqa: E402
from coopsim.model.errors import FileFormatError  # noqa: E402
from learnhelpers import GOAL, TWO, write  # noqa: E402

ID = "coopsim/Scenario-v0"


@pytest.mark.parametrize("flat", [False, True])
def test_passes_gymnasiums_env_checker(flat):
    env = gymnasium.make(ID, scenario=str(GOAL), flat=flat).unwrapped
    check_env(env, skip_render_check=True)
    assert env.action_space.low.tolist() == [-0.6, -0.6]  # motors.max_speed
    if flat:
        assert env.observation_space.shape == (27,)
    else:
        assert env.observation_space["sonar"].high.tolist() == [2.0] * 11  # sonar.max_range


def test_make_adds_the_order_enforcer_but_not_the_passive_checker_unless_asked():
    """The registration declines the passive checker (it checks the first step only, the
    test above runs the full one); asked for, it comes back and passes; order is enforced."""
    env = gymnasium.make(ID, scenario=str(GOAL))
    assert type(env) is gymnasium.wrappers.OrderEnforcing
    assert type(env.env) is type(env.unwrapped)
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(np.array([0.3, 0.2]))
    checked = gymnasium.make(ID, scenario=str(GOAL), disable_env_checker=False)
    assert type(checked.env) is gymnasium.wrappers.PassiveEnvChecker
    checked.reset(seed=0)
    checked.step(np.array([0.3, 0.2]))


@pytest.mark.slow
def test_a_fresh_interpreter_makes_it_by_the_module_prefixed_id():
    code = ("import gymnasium\n"
            f"env = gymnasium.make('coopsim.env:{ID}', scenario={str(GOAL)!r})\n"
            "obs, info = env.reset(seed=1)\nprint(sorted(obs))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "'sonar'" in done.stdout


def test_the_entry_point_registers_the_id():
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="gymnasium.envs") if e.name == "coopsim"]
    ep.load()()
    assert ID in gymnasium.registry


def _trajectory(seed: int, steps: int = 60):
    env = gymnasium.make(ID, scenario=str(GOAL)).unwrapped
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    out = [obs["sonar"].copy(), obs["gps"].copy()]
    for _ in range(steps):
        obs, reward, *_ = env.step(env.action_space.sample())
        out += [obs["sonar"].copy(), obs["gps"].copy(), np.array([reward])]
    return np.concatenate(out)


def test_same_seed_same_trajectory_bit_for_bit_and_another_seed_differs():
    first, again, other = _trajectory(5), _trajectory(5), _trajectory(6)
    assert first.tobytes() == again.tobytes()
    assert first.tobytes() != other.tobytes()


def test_reset_with_the_same_seed_repeats_the_episode_in_one_env():
    env = gymnasium.make(ID, scenario=str(GOAL)).unwrapped
    runs = []
    for _ in range(2):
        obs, _ = env.reset(seed=9)
        seq = [obs["sonar"]]
        for k in range(30):
            seq.append(env.step(np.array([0.4, 0.1 * (k % 3)]))[0]["sonar"])
        runs.append(np.concatenate(seq).tobytes())
    assert runs[0] == runs[1]


def _episode(env, seed: int, steps: int = 40) -> bytes:
    obs, info = env.reset(seed=seed)
    seq = [obs["sonar"], obs["gps"], np.array([info["time"]])]
    for k in range(steps):
        obs, reward, *_ = env.step(np.array([0.5, 0.1 * (k % 4) - 0.1]))
        seq += [obs["sonar"], obs["gps"], obs["motors"], np.array([reward])]
    return np.concatenate(seq).tobytes()


def test_an_episode_after_resets_equals_a_fresh_envs_bit_for_bit():
    # a reset reuses what the last run built: nothing of that run may leak into
    # the next, whatever seed it ran with and however far it went
    env = gymnasium.make(ID, scenario=str(GOAL)).unwrapped
    _episode(env, 4, 120)
    _episode(env, 8, 7)
    again = _episode(env, 3)
    fresh = _episode(gymnasium.make(ID, scenario=str(GOAL)).unwrapped, 3)
    assert again == fresh
    assert again != _episode(env, 4)
    # a parameter set during a run is the scenario's again after a reset (its table is
    # gathered again, not kept)
    env.episode.sim.set_param("robot1", "sonar", "noise", 0.5)
    env.episode.sim.set_param("robot1", "motors", "max_speed", 0.2)
    assert _episode(env, 3) == fresh


def test_the_task_rewards_minus_the_distance_and_terminates_at_the_target():
    env = gymnasium.make(ID, scenario=str(GOAL)).unwrapped
    obs, info = env.reset(seed=0)
    # robot1 at (-2, -2) facing +x; the target is at (2, 2): turn left, then drive to it
    rewards, terminated, steps = [], False, 0
    while not terminated and steps < 400:
        angle = obs["target"][1]
        turn = float(np.clip(2.0 * angle, -0.5, 0.5))
        obs, reward, terminated, truncated, info = env.step(
            np.clip([0.5 - turn, 0.5 + turn], -0.6, 0.6))
        rewards.append(reward)
        steps += 1
        assert not truncated
    assert terminated and info["metrics"]["reached"] == 1.0
    assert rewards[0] == pytest.approx(-np.hypot(4, 4), abs=0.1)  # -1 * dist
    assert rewards[-1] > 9.0  # 10 * reached - a small distance


def test_truncates_at_the_tasks_duration(tmp_path):
    path = write(tmp_path, TWO + "\n[TASK]\ntruncate 0.5\n")
    env = gymnasium.make(ID, scenario=str(path), robot="b").unwrapped
    env.reset(seed=0)
    flags = [env.step(np.zeros(2))[3] for _ in range(10)]
    assert flags == [False] * 9 + [True]  # 10 steps of 0.05 s


def test_a_python_task_decides_reward_and_ends(tmp_path):
    path = write(tmp_path, TWO)

    def task(snap, agent):
        return snap.poses[snap.index[agent], 0], False, snap.step >= 3

    env = gymnasium.make(ID, scenario=str(path), robot="a", task=task).unwrapped
    env.reset(seed=0)
    out = [env.step(np.array([0.5, 0.5]))[1:4] for _ in range(3)]
    assert out[-1][2] is True and out[0][2] is False
    assert out[0][0] < out[2][0] < -1.9  # x grows while it drives along +x


def test_rgb_array_draws_the_robot_where_it_is_headless(tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    env = gymnasium.make(ID, scenario=str(GOAL), render_mode="rgb_array", size=200)
    env.reset(seed=0)
    img = env.render()
    assert img.shape == (200, 200, 3) and img.dtype == np.uint8
    # robot1 (default colour) at (-2, -2) on a 10 m floor: pixel (row 140, col 60)
    robot = env.unwrapped.episode.sim.world.robot("robot1").color
    assert tuple(img[140, 60]) == tuple(robot)
    assert tuple(img[60, 140]) == (230, 40, 40)  # the red target at (2, 2)
    assert tuple(img[100, 100]) == (235, 235, 228)  # bare floor


def test_an_action_outside_the_space_names_the_agent_and_the_bound():
    env = gymnasium.make(ID, scenario=str(GOAL)).unwrapped
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"robot1: action right m/s = 0\.9 is outside the "
                                          r"motors bound \[-0\.6, 0\.6\]"):
        env.step(np.array([0.1, 0.9]))
    with pytest.raises(ActionError, match=r"robot1: action has shape \(3,\)"):
        env.step(np.zeros(3))
    with pytest.raises(ActionError, match="robot1: action left m/s = nan"):
        env.step(np.array([np.nan, 0.0]))


def test_bad_make_arguments_fail_at_make(tmp_path):
    with pytest.raises(LearningError, match="has no robot 'nobody'"):
        gymnasium.make(ID, scenario=str(GOAL), robot="nobody")
    with pytest.raises(LearningError, match="robot robot1 has no module 'radio'"):
        gymnasium.make(ID, scenario=str(GOAL), observe=["sonar", "radio"])
    bad = write(tmp_path, TWO + "\n[TASK]\nreward -1 nowhere\n")
    with pytest.raises(FileFormatError, match=r"t\.scenario:\d+: unknown metric 'nowhere'"):
        gymnasium.make(ID, scenario=str(bad))


def test_a_bundled_scenario_is_found_by_its_relative_name_from_any_folder(tmp_path,
                                                                         monkeypatch):
    """docs/learning.md's examples typed in a folder of one's own (an installed coopsim has no
    scenarios/ there): the bundled scenario is made and stepped; a missing one is named."""
    monkeypatch.chdir(tmp_path)
    env = gymnasium.make(ID, scenario="scenarios/learn_goal.scenario")
    obs, _ = env.reset(seed=0)
    assert obs["sonar"].shape == (11,)
    env.step(env.action_space.sample())
    env.close()
    with pytest.raises(FileFormatError, match="scenarios/no_such.scenario:0: no such file"):
        gymnasium.make(ID, scenario="scenarios/no_such.scenario")


@pytest.mark.slow
def test_coopsim_check_reports_a_bad_task_line(tmp_path):
    bad = write(tmp_path, TWO + "\n[MONITORS]\nmetric d speed a\n\n[TASK]\n"
                                 "reward -1 d\nterminate d => 3\n")
    done = subprocess.run([sys.executable, "-m", "coopsim", "check", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    line = bad.read_text().splitlines().index("terminate d => 3") + 1
    assert done.stderr.strip() == f"{bad}:{line}: terminate operator must be one of " \
                                  "< <= > >=, got '=>'"
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_core_imports_neither_gymnasium_nor_pettingzoo():
    code = ("import sys\nimport coopsim, coopsim.sim.simulation, coopsim.app.cli\n"
            "from coopsim.app import cli\ncli.main(['list'], standalone_mode=False)\n"
            "bad = [m for m in ('gymnasium', 'pettingzoo') if m in sys.modules]\n"
            "assert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_holonomic_robot_takes_velocity_actions_within_its_limits(tmp_path):
    path = write(tmp_path, "[ROBOT_1]\ntype holonomic\nname h\nposition 0 0 0\n"
                           "param velocity.max_yaw_rate 1.5\n\n[SETTINGS]\ndt 0.05\n")
    env = gymnasium.make(ID, scenario=str(path)).unwrapped
    assert env.action_space.low.tolist() == [-2.0, -2.0, -1.5]  # max_speed, max_yaw_rate
    assert "motors" not in env.observation_space.spaces
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    for _ in range(40):
        obs, *_ = env.step(np.array([0.0, 0.5, 0.0]))  # +y, world frame
    assert obs["gps"][1] > 0.5 and abs(obs["gps"][0]) < 1e-6
    assert obs["velocity"][:3].tolist() == pytest.approx([0.0, 0.5, 0.0], abs=1e-4)  # lag


def test_a_lean_robot_senses_only_what_is_observed_and_sees_the_same(tmp_path):
    path = str(write(tmp_path, TWO))
    full = gymnasium.make(ID, scenario=path, robot="a", observe=["sonar", "gps"]).unwrapped
    lean = gymnasium.make(ID, scenario=path, robot="a", observe=["sonar", "gps"],
                          lean=True).unwrapped
    world = lean.episode.sim.world
    assert set(world.robot("a").modules) == {"motors", "sonar", "gps"}
    assert "odometry" in world.robot("b").modules  # not an agent: left as it was
    a, _ = full.reset(seed=4)
    b, _ = lean.reset(seed=4)
    for k in range(40):
        a, *_ = full.step(np.array([0.4, 0.2 + 0.005 * k]))
        b, *_ = lean.step(np.array([0.4, 0.2 + 0.005 * k]))
    assert a["gps"].tobytes() == b["gps"].tobytes()
    assert a["sonar"].tobytes() == b["sonar"].tobytes()  # the same noise draws, too
    with pytest.raises(LearningError, match="lean environments need observe"):
        gymnasium.make(ID, scenario=path, lean=True)


def test_step_and_reset_after_close_raise_and_keys_follow_the_space():
    env = gymnasium.make(ID, scenario=str(GOAL)).unwrapped
    obs, _ = env.reset(seed=0)
    assert list(obs) == list(env.observation_space.spaces)  # a Dict space sorts its keys
    env.close()
    with pytest.raises(gymnasium.error.ClosedEnvironmentError, match=r"step\(\) after close"):
        env.step(env.action_space.sample())
    with pytest.raises(LearningError, match=r"reset\(\) after close"):
        env.reset(seed=0)


def test_the_step_holds_the_world_lock_exactly_when_a_human_view_may_serve_the_world():
    """A human view's servers call into the world under the stepper's world lock, so its
    steps hold it too; without a view no other thread can, and the step skips the lock."""
    from coopsim.env.gym import CoopsimEnv

    held = {}
    for mode in (None, "human"):
        env = CoopsimEnv(str(GOAL), render_mode=mode)
        env.render = lambda: None  # no viewer in this test: only whether the lock is held
        lock = env.episode.stepper.world_lock
        env.episode.stepper.hooks.append(lambda snap, mode=mode, lock=lock: held.setdefault(
            mode, []).append(lock._is_owned()))  # noqa: SLF001 -- RLock's own test
        env.reset(seed=0)
        for _ in range(3):
            env.step(np.array([0.3, 0.2]))
    assert held == {None: [False] * 3, "human": [True] * 3}
