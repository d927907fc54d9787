"""Under load: the first lockstep step waits for the run's own controllers for as long as they
are busy starting (their CPU time moves: imports, compiling; a loaded machine can take more than
the usual 10 s to start Python), instead of running ahead without them."""

from __future__ import annotations

import pytest

from coopsim.client import Client  # noqa: F401 -- the controller imports it; fail early here

from helpers import robot, scenario
from nethelpers import live, wait_until

SLOW = """\
import os, pathlib, time
while not pathlib.Path({gate!r}).exists():  # a controller slow to start, busy (as imports are)
    sum(range(20000))
from coopsim.client import Client
with Client() as c:
    bot = c.robot(os.environ["COOPSIM_ROBOT"])
    for _ in bot.loop(steps=20):
        bot.motors.set_speeds(0.1, 0.1)
    print("drove", bot.name if hasattr(bot, "name") else "")
"""

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def test_the_first_step_waits_past_start_wait_for_a_launched_controller_still_starting(
        tmp_path):
    gate, script = tmp_path / "go", tmp_path / "slow.py"
    script.write_text(SLOW.format(gate=str(gate)))
    spec = scenario([robot("r1", -1, 0)], mode="lockstep")
    with live(spec, paused=True, controllers=True, controller=((None, str(script)),),
              log_dir=str(tmp_path / "logs")) as run:
        st = run.stepper
        st.start_wait = 1.0  # the usual 10 s wait, shortened: what follows is past it
        st.resume()
        wait_until(lambda: run.controllers.cpu_seconds() > 3.0, timeout=120)  # 3 s busy
        
        assert st.snapshot.step == 0, "the run went ahead of its own controller"
        assert run.controllers.procs and all(p.poll() is None
                                             for p in run.controllers.procs.values())
        gate.touch()
        wait_until(lambda: st.snapshot.step >= 20, timeout=120)


def test_a_controller_stopped_by_the_runs_end_keeps_what_it_printed_in_its_log(tmp_path,
                                                                               monkeypatch):
    """Python buffers a program's output to a file: a line printed just before the run's end
    stopped it (SIGTERM) was lost. Controllers' output is unbuffered."""
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # as in a user's shell
    script = tmp_path / "talker.py"
    printed = tmp_path / "printed"
    script.write_text("import time\nprint('hello from the controller')\n"
                      f"open({str(printed)!r}, 'w').close()\ntime.sleep(600)\n")
    spec = scenario([robot("r1", -1, 0)])
    with live(spec, paused=True, controllers=True, controller=((None, str(script)),),
              log_dir=str(tmp_path / "logs")) as run:
        wait_until(printed.exists, timeout=120)
        assert run.controllers.procs["r1"].poll() is None  # still running: stopped by the end
    assert (tmp_path / "logs" / "r1.log").read_text() == "hello from the controller\n"
