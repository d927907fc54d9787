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

QUICK = """\
import os
from coopsim.client import Client
with Client() as c, open({out!r}, "w") as out:
    bot = c.robot(os.environ["COOPSIM_ROBOT"])
    for i in bot.loop(steps=6):
        done = bot.motors.set_speeds(0.1, 0.1)
        print(i, done.step, done.note, file=out, flush=True)
"""

IN_TURN = """\
from coopsim.client import Client
with Client() as c, open({out!r}, "w") as out:
    bots = [c.robot("r1"), c.robot("r2")]
    for bot in bots:  # one process attaching its robots in turn, each waiting for its reply
        done = bot.motors.set_speeds(0.1, 0.1)
        print(bot.name, done.step, done.note, file=out, flush=True)
    for bot in bots:
        bot.detach()
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


def test_a_controller_that_attached_first_waits_for_the_step_while_another_is_busy_starting(
        tmp_path):
    """One loop iteration is one step from the first: a controller that attached while
    another was still busy starting is answered "queued" after 2 s, and its loop waits for
    the step that uses that command instead of running one iteration ahead of the run."""
    gate, out = tmp_path / "go", tmp_path / "quick.txt"
    (tmp_path / "slow.py").write_text(SLOW.format(gate=str(gate)))
    (tmp_path / "quick.py").write_text(QUICK.format(out=str(out)))
    spec = scenario([robot("r1", -1, 0), robot("r2", 1, 0)], mode="lockstep")
    with live(spec, paused=True, controllers=True,
              controller=(("r1", str(tmp_path / "quick.py")), ("r2", str(tmp_path / "slow.py"))),
              log_dir=str(tmp_path / "logs")) as run:
        st = run.stepper
        st.resume()
        wait_until(lambda: "r1" in st.slots.attached(), timeout=120)
        busy = run.controllers.cpu_seconds()  # r1 waits for its reply: the rest is r2 starting
        wait_until(lambda: run.controllers.cpu_seconds() > busy + 3.0, timeout=120)
        assert st.snapshot.step == 0
        gate.touch()
        wait_until(lambda: out.exists() and out.read_text().count("\n") == 6, timeout=120)
    lines = [line.split(" ", 2) for line in out.read_text().splitlines()]
    # iteration i's command is used by step i + 1: a "queued" reply still shows step i
    assert all(int(step) == i + (note == "lockstep") and note.startswith("lockstep")
               for i, (_, step, note) in enumerate(lines)), out.read_text()
    assert lines[0][2].startswith("lockstep: queued"), "r1 did not attach while r2 started"


def test_one_process_attaching_its_robots_in_turn_is_answered_before_the_start_wait_ends(
        tmp_path):
    """The first step waits for two controllers, both robots of one process that sends their
    first commands in turn: the first is answered "not yet" once nothing launched is busy,
    long before the start wait ends, so the second can attach and step 1 use both."""
    out = tmp_path / "in_turn.txt"
    (tmp_path / "in_turn.py").write_text(IN_TURN.format(out=str(out)))
    spec = scenario([robot("r1", -1, 0), robot("r2", 1, 0)], mode="lockstep")
    with live(spec, paused=True, controllers=True, wait_for=2,
              controller=(("r1", str(tmp_path / "in_turn.py")),),
              log_dir=str(tmp_path / "logs")) as run:
        run.stepper.start_wait = 600.0  # only an early answer lets the second robot attach
        run.stepper.resume()
        wait_until(lambda: out.exists() and out.read_text().count("\n") == 2, timeout=120)
    first, second = (line.split(" ", 2) for line in out.read_text().splitlines())
    assert first == ["r1", "0", "lockstep: queued, the step has not run yet"]
    assert second == ["r2", "1", "lockstep"]


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
