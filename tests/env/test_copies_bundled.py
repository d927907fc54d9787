"""The bundled learning scenarios on the fast batch backend, and batches
too large for the machine refused up front.

Each of scenarios/learn_*.scenario, built with ``gymnasium.make_vec`` as the docs show it
(every module observed by default: motors, sonar, target, odometry, gps, compass, bumper), is
served by the ``copies`` backend, and its observations, rewards and ends equal the ``world``
backend's on a short run with a copy reset in the middle (learn_goal's sonar noise included:
the same generator, the same draws)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("numba")

import coopsim.env  # noqa: E402,F401 -- registers coopsim/Scenario-v0
from coopsim.env import memory  # noqa: E402
from coopsim.env.mapping import LearningError  # noqa: E402
from coopsim.model.errors import CoopsimError  # noqa: E402
from learnhelpers import ROOT  # noqa: E402

ID = "coopsim/Scenario-v0"
BUNDLED = ("learn_avoid", "learn_goal", "learn_coverage")
TOL = 1e-9  # m, m/s, rad: the world backend's copies sit at offsets (tests/env/test_copies.py)


def _scenario(name: str) -> str:
    return str(ROOT / "scenarios" / f"{name}.scenario")


def _own_frame(world, label: str, obs: np.ndarray) -> np.ndarray:
    """The world backend's reading in each copy's own frame: its gps reads the big floor's."""
    if label != "gps":
        return obs
    shift = world.batch.offsets.reshape((len(obs),) + (1,) * (obs.ndim - 2) + (2,))
    return obs - shift


def _same(copies, world, oc, ow, when: str) -> None:
    assert sorted(oc) == sorted(ow), when
    for label in ow:
        want = _own_frame(world, label, ow[label])
        assert oc[label].shape == want.shape, (when, label)
        assert np.allclose(oc[label], want, rtol=0, atol=TOL), (when, label)


@pytest.mark.parametrize("name", BUNDLED)
def test_each_bundled_learning_scenario_gets_the_copies_backend(name):
    k = 3
    copies = gymnasium.make_vec(ID, num_envs=k, scenario=_scenario(name))
    world = gymnasium.make_vec(ID, num_envs=k, scenario=_scenario(name), backend="world")
    assert copies.batch.backend == "copies", copies.batch.backend_reason
    assert {"motors", "odometry", "gps", "compass", "sonar"} <= set(copies.batch.maps[0].observe)
    oc, _ = copies.reset(seed=3)
    ow, _ = world.reset(seed=3)
    _same(copies, world, oc, ow, "reset")
    rng = np.random.default_rng(7)
    moved = 0.0
    for step in range(80):
        shape = copies.action_space.shape  # mostly ahead (walls and robots are met)
        act = np.where(rng.random(shape[:-1] + (1,)) < 0.7, 0.6, rng.uniform(-0.6, 0.6, shape))
        if step == 40:  # one copy starts over: its odometry and other readings zeroed
            for env in (copies, world):
                env.batch.reset_copies(np.arange(k) == 1)
        oc, rc, tc, uc, _ = copies.step(act)
        ow, rw, tw, uw, _ = world.step(act)
        _same(copies, world, oc, ow, f"step {step}")
        assert np.allclose(rc, rw, rtol=0, atol=TOL) and (tc == tw).all() and (uc == uw).all()
        moved = max(moved, float(np.abs(oc["odometry"][..., 3:]).max()))
    assert moved > 0.5  # the wheels' travel: the robots did move
    _same(copies, world, copies.reset()[0], world.reset()[0], "second reset")  # same seed


def test_learn_goal_noise_is_drawn_from_the_seed():
    """The sonar's 0.01 m noise: the same seed, the same draws; another seed, others."""
    def sonar(seed):
        env = gymnasium.make_vec(ID, num_envs=4, scenario=_scenario("learn_goal"))
        obs, _ = env.reset(seed=seed)
        return obs["sonar"]

    a, b, c = sonar(1), sonar(1), sonar(2)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert 0.002 < float(np.std(a - c)) < 0.03  # two draws of 0.01 m noise apart


@pytest.mark.parametrize("backend, copies", [(None, 10**9), ("world", 10**8)])
def test_a_batch_too_large_for_the_machine_is_refused_before_allocating(backend, copies):
    tracemalloc.start()
    try:
        with pytest.raises(LearningError) as why:
            gymnasium.make_vec(ID, num_envs=copies, scenario=_scenario("learn_avoid"),
                               backend=backend)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    text = str(why.value)
    assert isinstance(why.value, CoopsimError)
    assert f"{copies:,} copies would need about" in text and "bytes a copy" in text
    assert "of memory available now" in text and "copies fit" in text
    assert peak < 200e6  # bytes: the one-copy template, nothing for the K copies


def test_more_copies_than_one_world_holds_are_refused_on_the_world_backend_alone():
    # learn_avoid: 6 walls and 4 edge walls a copy; a world holds 25,000 objects
    with pytest.raises(LearningError) as why:
        gymnasium.make_vec(ID, num_envs=2501, scenario=_scenario("learn_avoid"), backend="world")
    assert "2,501 copies on the world backend would hold 25,010 objects (10 a copy" in str(
        why.value) and "at most 2,500 copies fit" in str(why.value)
    env = gymnasium.make_vec(ID, num_envs=2501, scenario=_scenario("learn_avoid"))
    assert env.unwrapped.batch.backend == "copies"


def test_the_estimate_is_the_figure_in_the_sentence():
    memory.check(10, 1000, "copies")  # 10 kB: fits anywhere
    have = memory.available()
    assert have is not None and have > 0
    with pytest.raises(LearningError, match=r"about [\d,.]+ GB \([\d,]+ bytes: 5,000 bytes a "
                                            r"copy on the copies backend\)"):
        memory.check(2 * (have // 5000) + 10, 5000, "copies")  # twice what is free: other
        # processes freeing memory between the two reads must not make it fit
