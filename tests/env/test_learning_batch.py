"""Batched worlds: K isolated copies of a scenario stepped in one call through Gymnasium's
vector API, with autoreset per copy (docs/learning.md)."""

from __future__ import annotations

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import coopsim.env  # noqa: E402,F401 -- registers coopsim/Scenario-v0
from coopsim.env.mapping import LearningError  # noqa: E402
from learnhelpers import ROOT, write  # noqa: E402

AVOID = str(ROOT / "scenarios" / "learn_avoid.scenario")
ID = "coopsim/Scenario-v0"
AGENTS = ["r1", "r2", "r3", "r4"]

QUIET = """
[ROBOT_1]
type        single
name        a
position    -3 -3 0
orientation 0 0 45

[ROBOT_2]
type        single
name        b
position    3 3 0

[SETTINGS]
dt          0.05
engine      kinematic
"""


def _vec(k, **kw):
    return gymnasium.make_vec(ID, num_envs=k, scenario=kw.pop("scenario", AVOID), **kw)


def test_make_vec_gives_a_vector_env_with_batched_spaces():
    env = _vec(3, robot=AGENTS, observe=["sonar", "bumper"])
    assert isinstance(env, gymnasium.vector.VectorEnv) and env.num_envs == 3
    assert env.single_action_space.shape == (4, 2)
    assert env.action_space.shape == (3, 4, 2)
    obs, info = env.reset(seed=0)
    assert obs["sonar"].shape == (3, 4, 11) and obs["bumper"].shape == (3, 4, 2)
    assert env.observation_space.contains(obs)
    one = _vec(2, robot="r1", flat=True, observe=["sonar", "gps"])
    obs, _ = one.reset(seed=0)
    assert obs.shape == (2, 13) and one.single_action_space.shape == (2,)


def test_a_copy_observes_its_own_targets_and_its_space_says_so():
    """A target reading holds each copy's own targets (two numbers each), and the space's
    width is that too, not every copy's targets (a bug once: 2 x K x T columns declared)."""
    goal = str(ROOT / "scenarios" / "learn_goal.scenario")
    env = _vec(3, scenario=goal, observe=["target"])
    obs, _ = env.reset(seed=0)
    width = obs["target"].shape[-1]
    assert width == 2 * _targets(goal)
    assert env.single_observation_space["target"].shape[-1] == width
    assert env.observation_space.contains(obs)


def _targets(path: str) -> int:
    from coopsim.formats.files import load
    return len(load(path).targets)


def test_copies_see_what_a_single_environment_sees():
    """Every copy starts like the scenario itself, and with the same actions goes on like it
    (to rounding: the copies sit at other coordinates)."""
    env = _vec(4, robot=AGENTS, observe=["sonar", "odometry"])
    single = gymnasium.make(ID, scenario=AVOID, robot="r3", observe=["sonar", "odometry"],
                            engine="kinematic").unwrapped
    obs, _ = env.reset(seed=0)
    ref, _ = single.reset(seed=0)
    for _ in range(40):
        act = np.tile([0.5, 0.3], (4, 4, 1))
        obs, *_ = env.step(act)
        ref, *_ = single.step(np.array([0.5, 0.3]))
    for k in range(4):
        assert np.allclose(obs["sonar"][k, 2], ref["sonar"], atol=1e-9)
        assert np.allclose(obs["odometry"][k, 2], ref["odometry"], atol=1e-9)
    assert ref["sonar"].min() < 2.0  # it saw a wall: the copies saw their own


def test_copies_are_isolated_from_each_other(tmp_path):
    quiet = write(tmp_path, QUIET)
    # the world backend's layout (copies side by side on one floor, gps in its frame); the
    # copies backend keeps each copy in its own arrays
    env = _vec(4, robot=["a", "b"], scenario=str(quiet), observe=["sonar", "gps"],
               backend="world")
    obs0, _ = env.reset(seed=0)
    act = np.zeros((4, 2, 2))
    act[0] = 0.6  # only copy 0 moves, for long enough to reach its walls
    for _ in range(200):
        obs, *_ = env.step(act)
    assert not np.array_equal(obs["gps"][0], obs0["gps"][0])
    for k in range(1, 4):
        assert np.array_equal(obs["sonar"][k], obs0["sonar"][k])
        assert np.array_equal(obs["gps"][k], obs0["gps"][k])
    # copy 0's robots drove into the walls of their own floor: still on it
    assert np.abs(obs["gps"][0] - env.batch.offsets[0]).max() <= 5.0


def test_same_seed_same_batch_trajectory_bit_for_bit():
    def run(seed):
        env = _vec(3, robot=AGENTS, observe=["sonar"])
        env.reset(seed=seed)
        env.action_space.seed(seed)
        out = []
        for _ in range(30):
            obs, rew, *_ = env.step(env.action_space.sample())
            out += [obs["sonar"], rew]
        return np.concatenate([np.ravel(x) for x in out]).tobytes()

    assert run(1) == run(1) != run(2)


def test_autoreset_next_step_per_copy():
    def task(snap, rows):  # copy 1 ends at its 5th step, the others never
        terminated = np.zeros(rows.shape[0], bool)
        terminated[1] = bool(snap.step % 5 == 0)
        return np.ones(rows.shape), terminated

    env = _vec(3, robot="r1", observe=["odometry"], task=task)
    obs0, _ = env.reset(seed=0)
    act = np.full((3, 2), 0.5)
    for step in range(1, 6):
        obs, rew, term, trunc, info = env.step(act)
    assert term.tolist() == [False, True, False] and rew.tolist() == [1.0, 1.0, 1.0]
    moved = obs["odometry"][1, 0]
    assert moved > 0.05
    obs, rew, term, trunc, info = env.step(act)  # copy 1 starts over, the others go on
    assert rew.tolist() == [1.0, 0.0, 1.0] and not term.any()
    assert obs["odometry"][1, 0] == 0.0  # at rest at its start: odometry from zero
    assert obs["odometry"][0, 0] > moved
    assert info["episode_time"].tolist() == pytest.approx([0.3, 0.05, 0.3])


def test_the_task_section_and_truncation_per_copy(tmp_path):
    env = _vec(2, robot=AGENTS)  # learn_avoid: reward = r1's forward speed, truncate 20 s
    env.reset(seed=0)
    act = np.zeros((2, 4, 2))
    act[:, 0] = 0.4
    for _ in range(400):
        obs, rew, term, trunc, info = env.step(act)
        if trunc.any():
            break
    assert trunc.tolist() == [True, True] and info["episode_time"][0] == pytest.approx(20.0)
    assert rew[:, 1:].tolist() == [[0.0] * 3] * 2  # the terms name r1 only


def test_bad_makes():  # bad actions: tests/env/test_copies.py, on both backends
    with pytest.raises(LearningError, match="kinematic engine alone, not 'pymunk'"):
        _vec(2, engine="pymunk")
    with pytest.raises(LearningError, match="no robot 'zed'"):
        _vec(2, robot="zed")
    with pytest.raises(LearningError, match="has rules"):
        _vec(2, scenario=str(ROOT / "scenarios" / "formation.scenario"))


@pytest.mark.parametrize("backend", [None, "world"])
@pytest.mark.parametrize("scenario, why", [("crazyflie_hover", "this robot flies in 3D"),
                                           ("two_teams", "has no joints")])
def test_a_scenario_the_batch_engine_cannot_run_is_refused_as_a_batch(backend, scenario, why):
    with pytest.raises(LearningError) as refused:
        _vec(2, scenario=str(ROOT / "scenarios" / f"{scenario}.scenario"), backend=backend)
    assert str(refused.value).startswith("batched worlds run on the kinematic engine alone, and "
                                         "it cannot run this scenario: ")
    assert f"{scenario}.scenario:" in str(refused.value) and why in str(refused.value)


def test_lean_copies_carry_only_what_is_observed_and_see_the_same():
    full = _vec(3, robot=AGENTS, observe=["sonar"], backend="world")
    lean = _vec(3, robot=AGENTS, observe=["sonar"], lean=True, backend="world")
    assert set(lean.batch.sim.world.robots[0].modules) == {"motors", "sonar"}
    rows = lean.batch.sim.params.rows  # the robots each module senses
    assert {m for m, r in rows.items() if len(r)} == {"motors", "sonar"}
    a, _ = full.reset(seed=0)
    b, _ = lean.reset(seed=0)
    act = np.tile([0.5, 0.2], (3, 4, 1))
    for _ in range(30):
        a, *_ = full.step(act)
        b, *_ = lean.step(act)
    assert np.array_equal(a["sonar"], b["sonar"])
    with pytest.raises(LearningError, match="lean batched worlds need observe"):
        _vec(2, lean=True)


def test_the_batch_casts_each_copy_in_its_own_frame_as_the_world_caster_would():
    """The batch's CopyCaster (one copy's walls in the copy's frame, its own copy's robots)
    gives the generic caster's distances over the whole world, to rounding of the offsets."""
    from coopsim.env import batchcast
    from coopsim.plugins.modules.sonar import ANGLES
    from coopsim.raycast.jitcast import JitRayCaster, fan_directions

    env = _vec(9, robot=AGENTS, observe=["sonar"], lean=True, backend="world")
    caster = env.batch.caster
    assert isinstance(caster, batchcast.CopyCaster)
    assert caster._copy is not None and len(caster._copy[5]) < 200  # one copy's walls only
    env.reset(seed=0)
    act = np.tile([0.5, 0.3], (9, 4, 1))
    act[:, 1] = [0.2, 0.55]  # r2 turns: rays meet walls and robots at many angles
    sim = env.batch.sim
    radius, group = np.ascontiguousarray(sim.robots.radius), sim.robots.group.astype(np.int64)
    for step in range(120):
        obs, *_ = env.step(act)
        if step % 20:
            continue
        pose = np.ascontiguousarray(sim.snapshot.poses)
        heading, fan = fan_directions(pose[:, 2], ANGLES)
        moving = (np.ascontiguousarray(np.column_stack([pose[:, :2], radius])),
                  np.zeros((0, 4)), group, np.zeros(0, np.int64))
        reach = np.full(len(pose), 2.0)
        mine = caster.fan(pose, heading, fan, reach, radius, group, moving)
        world = JitRayCaster.fan(caster, pose, heading, fan, reach, radius, group, moving)
        assert np.allclose(mine, world, rtol=0, atol=1e-9)
        assert (mine < 2.0).mean() > 0.3  # the rays do hit walls
        assert np.allclose(obs["sonar"], np.clip(mine, 0, 2.0)[env.batch.rows], atol=1e-9)


def _digest_in_process(threads: int, copies: int, steps: int) -> str:
    """tests/env/batch_digest.py's digest in a fresh process with ``threads`` numba threads
    (the compiled casters waited for: the copies' fans are cast by the parallel kernel)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "env" / "batch_digest.py"),
                          "--copies", str(copies), "--steps", str(steps)],
                         capture_output=True, text=True, env=env, check=True)
    return out.stdout.split()[-1]


@pytest.mark.slow
def test_a_batch_runs_the_same_bits_on_one_and_two_threads():
    """128 copies x 4 robots x 11 sonar rays: 5,632 rays a step, above the copies' fan
    kernel's parallel threshold (4,096), so the second process splits them over 2 threads;
    copies end and reset on the way."""
    from coopsim.env.batchcast import PARALLEL_MIN

    assert 128 * 4 * 11 >= PARALLEL_MIN
    one, two = (_digest_in_process(t, 128, 30) for t in (1, 2))
    assert len(one) == 64 and one == two
@pytest.mark.parametrize("robot", [AGENTS, "r1"])
def test_observation_keys_come_in_the_observation_spaces_order(robot):
    env = _vec(2, robot=robot, observe=["sonar", "gps", "bumper"])
    order = list(env.single_observation_space.spaces)
    assert order == list(env.observation_space.spaces)
    obs, _ = env.reset(seed=0)
    assert list(obs) == order
    obs, *_ = env.step(env.action_space.sample())
    assert list(obs) == order


def test_step_and_reset_after_close_raise():
    env = _vec(2, robot="r1")
    env.reset(seed=0)
    env.close()
    with pytest.raises(gymnasium.error.ClosedEnvironmentError, match=r"step\(\) after close"):
        env.step(env.action_space.sample())
    with pytest.raises(LearningError, match=r"reset\(\) after close"):
        env.reset(seed=0)
