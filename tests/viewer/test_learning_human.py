"""render_mode="human": the environment's run is served on the network and the viewer shows it
(a real ``coopsim view`` process on a private Xvfb display)."""

from __future__ import annotations

import signal
from pathlib import Path

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import coopsim.env  # noqa: E402,F401
from coopsim.client import Client  # noqa: E402

from helpers import freeze  # noqa: E402

GOAL = Path(__file__).resolve().parents[2] / "scenarios" / "learn_goal.scenario"

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def test_human_mode_serves_the_run_and_starts_the_viewer(display):
    env = gymnasium.make("coopsim/Scenario-v0", scenario=str(GOAL), render_mode="human")
    try:
        env.reset(seed=0)
        for _ in range(5):
            obs, *_ = env.step(np.array([0.3, 0.3]))
        view = env.unwrapped._drawing.viewer
        assert view.process.poll() is None  # the window process is up
        with Client(view.network.endpoint) as client:
            poses = client.sim().list_robots()  # /sim answers from the env's stepper
            sonar = client.robot("robot1").sonar.read()
        assert np.allclose(poses["robot1"][:2], obs["gps"])
        assert np.array_equal(np.array(sonar), obs["sonar"])  # the served run is the env's
    finally:
        env.close()
    assert view.process.poll() is not None  # close() ended the viewer


def test_close_ends_a_viewer_that_does_not_answer_its_sigterm(display):
    """A viewer too busy or starved to close at its next frame within the grace (a loaded
    machine drawing in software; stopped here, SIGSTOP) is killed and reaped: close() returns
    with no process left (it returned with the killed one not yet gone)."""
    env = gymnasium.make("coopsim/Scenario-v0", scenario=str(GOAL), render_mode="human")
    env.reset(seed=0)
    env.step(np.array([0.3, 0.3]))
    view = env.unwrapped._drawing.viewer
    freeze(view.process.pid)
    env.close()
    assert view.process.poll() == -signal.SIGKILL
