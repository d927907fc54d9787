"""A long ``/sim step`` (up to 1,000,000 steps) is stopped by a pause or a reset within one
step, whichever front end asks: ``/sim`` over ZeroMQ, or the ROS 2 run-control services, which
call the same server in the run's process (``sim_caller``) from a thread of their own."""

from __future__ import annotations

import threading

import pytest

from coopsim.app.run import sim_caller

from helpers import robot, scenario
from nethelpers import live, wait_until

LONG = 1_000_000


@pytest.fixture()
def run():
    with live(scenario(robots=[robot("r1")]), paused=True, speed=0.0) as run:
        yield run


def _still(sim, at: int) -> None:
    """The run stands at step ``at`` across five trips through the stepper's loop (a pause
    each: carried out between two steps, so a run still stepping moves on between them)."""
    for _ in range(5):
        reply = sim.ok(2)
        assert reply[3][:2] == [at, 1], f"stepped on after it was stopped: {reply[3][0]} > {at}"


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["pause", "reset"])
def test_a_long_step_over_sim_stops_at_a_pause_or_reset(run, sim, stop):
    reply = sim.ok(4, params=[LONG])  # answered after 8 s with the progress so far
    assert 0 < reply[3][0] < LONG and reply[3][1] == 1
    stopped = sim.ok(2 if stop == "pause" else 5)
    assert stopped[3][1] == 1
    if stop == "reset":
        assert stopped[3][0] == 0
    _still(sim, stopped[3][0])


@pytest.mark.parametrize("stop", ["pause", "reset"])
def test_a_long_ros2_step_stops_at_a_pause_or_reset_and_is_answered_then(run, sim, stop):
    call = sim_caller(run.network.sim)
    replies = []
    stepping = threading.Thread(target=lambda: replies.append(call("step", (LONG,))))
    stepping.start()
    try:
        wait_until(lambda: sim.ok(1)[3][0] > 50, timeout=600)
        stopped = call(stop)
        assert stopped.error == 0 and stopped.params[1] == 1
    finally:
        stepping.join()
    # the step call's wait ended with the steps it queued: its answer is where they stopped
    # (before, it waited out its 8 s while the run went on stepping)
    at = stopped.params[0]
    assert replies[0].error == 0 and replies[0].params[1] == 1
    if stop == "pause":
        assert replies[0].params[0] == at
    _still(sim, at)
