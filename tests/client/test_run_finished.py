"""A run that finishes while a controller is in its loop ends that controller quietly: the
finished error is RunFinished, and leaving ``with Client()`` on it is a normal end (status 0)."""

from __future__ import annotations

import sys

import pytest

from coopsim.app.run import Run, RunOptions
from coopsim.client import RemoteError, RunFinished

from helpers import finishes, robot, scenario

CONTROLLER = """
from coopsim.client import Client
import os
with Client() as client:
    bot = client.robot(os.environ["COOPSIM_ROBOT"])
    for _ in bot.loop():  # never ends by itself: only the run's end stops it
        bot.gps.read()
        bot.motors.set_speeds(0.1, 0.1)
print("left the with block")
"""


@pytest.mark.slow
def test_a_finished_run_ends_a_looping_controller_with_status_0(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text(CONTROLLER)
    spec = scenario([robot("r1", 0, 0)], mode="lockstep")
    options = RunOptions(port=0, duration=0.5, controller=(("r1", f"{sys.executable} {script}"),))
    with Run(spec, options) as run:
        run.start()
        assert finishes(run.stepper)
        ctl = run.controllers
        for proc in ctl.procs.values():
            proc.wait(30)
        assert ctl.exited() == {"r1": 0}, ctl.tail("r1")
        assert "left the with block" in ctl.tail("r1")


def test_run_finished_is_a_remote_error_and_only_for_the_finished_text():
    assert issubclass(RunFinished, RemoteError)
    with pytest.raises(RunFinished):  # not swallowed outside a Client's with block
        raise RunFinished(6, "the run has finished (duration 1 s reached)")
