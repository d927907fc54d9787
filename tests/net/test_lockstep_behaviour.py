"""Lockstep as a first user expects it: reading a robot never waits, the first step waits for
the run's own controllers, speed is honoured in every mode, and a stalled run says whom it
waits for."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from coopsim.client import Client

from helpers import robot, scenario
from nethelpers import ROOT, live, wait_until


def _two():
    return scenario([robot("r1", -1, 0), robot("r2", 1, 0)], mode="lockstep")


def test_reading_a_robot_never_waits_for_its_lockstep_motion_reply():
    with live(_two()) as run, Client(run.network.endpoint) as a, \
            Client(run.network.endpoint) as b:
        leader, follower = a.robot("r1"), b.robot("r2")
        follower.motors.set_speeds(0.1, 0.1)  # r2 attaches
        done = threading.Event()
        threading.Thread(target=lambda: (leader.motors.set_speeds(0.2, 0.2), done.set()),
                         daemon=True).start()
        wait_until(lambda: len(run.stepper.slots.attached()) == 2)
        gps = follower.peer("r1").gps.read()  # r1's own motion reply is still pending
        assert len(gps) == 2  # answered while the motion reply waits: no wall-clock bound
        assert not done.is_set(), "r1's reply waits for the step that r2 holds up"
        follower.motors.set_speeds(0.1, 0.1)
        assert done.wait(60.0)


def test_the_first_step_waits_for_the_controllers_it_was_told_to():
    with live(_two(), wait_for=2) as run, Client(run.network.endpoint) as c:
        r1, r2 = c.robot("r1"), c.robot("r2")
        r1.motors.set_speeds(0.1, 0.1)
        time.sleep(0.4)
        assert run.stepper.snapshot.step == 0, "one of two attached: no step yet"
        state = c.sim().state()
        assert state["waiting_for"] == ["1 more controller(s) to attach"]
        reply = r2.motors.set_speeds(0.1, 0.1)
        assert reply.step >= 1
    with live(_two(), wait_for=3) as run:
        run.stepper.start_wait = 0.3  # nobody comes: it starts anyway, after the wait
        wait_until(lambda: run.stepper.snapshot.step > 10, timeout=10)


def test_speed_is_honoured_in_lockstep_and_lockstep_defaults_to_as_fast_as_possible():
    with live(_two(), paused=True) as run, Client(run.network.endpoint) as c:
        sim = c.sim()
        assert sim.status()["speed"] == 0.0
        sim.set_speed(1.0)
        sim.resume()
        time.sleep(1.0)
        # never faster than asked; as fast as asked once the machine lets it (a loaded machine
        # starves the run's first second now and then: wait for it, a cap only against a stall)
        status = wait_until(lambda: next((st for st in [sim.status()] if st["rtf"] > 0.5),
                                         None), timeout=120)
        assert status["speed"] == 1.0 and 0.5 < status["rtf"] < 1.5, status
        sim.set_mode("realtime")
        assert sim.status()["speed"] == 1.0


def test_a_stalled_lockstep_run_names_whom_it_waits_for():
    with live(_two()) as run, Client(run.network.endpoint) as c:
        c.robot("r1").motors.set_speeds(0.1, 0.1)  # attaches, then falls silent
        time.sleep(0.8)
        state = c.sim().state()
        assert state["waiting_for"] == ["r1"] and state["stalled"] >= 0.5


# Silent past the stall line: a lease longer than its sleep, so that the run waits for it (the
# line comes once a step has waited 2 s, and at most every 5 s: at load the first step's wait
# for it to attach took the line, and the 3 s lease detached it before the next)
SILENT = ("import time; from coopsim.client import Client\n"
          "with Client() as c:\n    c.sim().set_lease(60)\n"
          "    c.robot('robot1').motors.set_speeds(0.1, 0.1)\n    time.sleep(50)\n")


@pytest.mark.slow
def test_the_cli_says_whom_a_stalled_run_waits_for(tmp_path):
    (tmp_path / "silent.py").write_text(SILENT)
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    (tmp_path / "s.scenario").write_text(
        "[WORLD]\nfile w.world\n[SETTINGS]\nmode lockstep\n[ROBOT_1]\ntype single\n"
        "name robot1\nposition 0 0 0\ncontroller python silent.py\n")
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run", str(tmp_path / "s.scenario"),
                             "--headless", "--port", "0", "--duration", "50"], cwd=ROOT,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        seen = ""
        deadline = time.monotonic() + 300  # a guard against a hang
        while "controller(s) of robot1" not in seen and time.monotonic() < deadline:
            seen += proc.stderr.readline()
        assert "lockstep: no step for" in seen, seen
        assert "waiting for a command from the controller(s) of robot1" in seen, seen
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["realtime", "lockstep"])
def test_the_mode_default_speed_shows_in_the_summary(mode):
    done = subprocess.run([sys.executable, "-m", "coopsim", "run", "scenarios/one_robot.scenario",
                           "--headless", "--port", "0", "--no-controllers", "--mode", mode,
                           "--duration", "0.3"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert ("(speed 1x)" if mode == "realtime" else "(speed max)") in done.stdout


def test_stall_lines_are_rate_limited_and_count_what_they_skip(capsys, monkeypatch):
    """Under load a run stalls briefly many times: one line per EVERY s, short stalls none."""
    from types import SimpleNamespace

    from coopsim.app import console

    now = [100.0]
    monkeypatch.setattr(console.time, "monotonic", lambda: now[0])
    report = console.StallReport()

    def stall(seconds):
        report(SimpleNamespace(waiting=("robot1",), stalled=seconds))

    stall(0.8)  # short: not worth a line
    assert capsys.readouterr().err == ""
    stall(2.5)
    assert capsys.readouterr().err.count("no step for 2.5 s") == 1
    for _ in range(7):  # seven stalls within the next seconds: no line each
        report(SimpleNamespace(waiting=(), stalled=0.0))
        now[0] += 0.5
        stall(2.1)
    assert capsys.readouterr().err == ""
    now[0] += 5.0
    stall(3.0)
    line = capsys.readouterr().err
    assert "waiting for a command from the controller(s) of robot1" in line
    assert "(7 more stall(s) since the last line)" in line, line


BUSY_START = ("import time\nend = time.process_time() + {seconds}\n"
              "while time.process_time() < end:\n    pass  # starting: imports, compiling\n"
              "from coopsim.client import Client\n"
              "with Client() as c:\n    print(c.robot('robot1').motors.set_speeds(0.1, 0.1).step,"
              " flush=True)\n")


@pytest.mark.slow
def test_the_first_step_waits_for_a_launched_controller_busy_starting(tmp_path):
    """A controller that takes longer than the start wait to start, all of it busy (on a
    loaded machine: imports and compiling), still gets the run's first step: its own CPU time
    holds the wait open."""
    from coopsim.app.run import Run, RunOptions
    from coopsim.formats.files import load

    (tmp_path / "busy.py").write_text(BUSY_START.format(seconds=1.5))
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    (tmp_path / "s.scenario").write_text(
        "[WORLD]\nfile w.world\n[SETTINGS]\nmode lockstep\n[ROBOT_1]\ntype single\n"
        "name robot1\nposition 0 0 0\ncontroller python busy.py\n")
    with Run(load(str(tmp_path / "s.scenario")), RunOptions(port=0, log_dir=str(tmp_path))) as run:
        run.stepper.start_wait = 0.5  # far shorter than the controller's start
        run.start()
        while run.controllers.exited() == {}:  # what the console does while it watches
            run.forget_dead_controllers()
            time.sleep(0.05)
        assert run.controllers.exited() == {"robot1": 0}
    assert (tmp_path / "robot1.log").read_text().split() == ["1"], "it got the first step"


def test_a_start_wait_says_how_long_it_will_wait(capsys):
    """Waiting for controllers to attach, the line says when the run starts without them."""
    from types import SimpleNamespace

    from coopsim.app import console

    report = console.StallReport(lambda: 6.54)
    report(SimpleNamespace(waiting=("2 more controller(s) to attach",), stalled=3.5))
    line = capsys.readouterr().err.strip()
    assert line.startswith("lockstep: the first step has waited 3.5 s for 2 more controller(s) "
                           "to attach; it starts without them in 6.5 s"), line
    with live(_two(), wait_for=2) as run:
        wait_until(lambda: run.stepper.starting)
        left = run.stepper.start_wait_left()
        assert 0.0 < left <= run.stepper.start_wait
        run.stepper.start_wait = 0.0  # nobody comes: it starts, and no longer waits
        wait_until(lambda: run.stepper.snapshot.step > 0)
        assert run.stepper.start_wait_left() is None


def test_a_control_loop_takes_one_iteration_a_step_while_the_run_is_paused_and_stepped():
    """A paused lockstep run answers a motion command "queued" after 0.5 s; the loop then
    waits for the step that uses it, so a paused run holds a controller's loop, each single
    step moves it one iteration, and iteration i's command is used by step i + 1 throughout."""
    one = scenario([robot("r1", -1, 0)], mode="lockstep")
    with live(one, wait_for=1) as run, Client(run.network.endpoint) as c, \
            Client(run.network.endpoint) as operator:
        sim, lines, ended, stop = operator.sim(), [], threading.Event(), threading.Event()

        def control():  # until told to stop: a loaded machine may pause it late
            bot = c.robot("r1")
            for i in bot.loop():
                done = bot.motors.set_speeds(0.1, 0.1)
                lines.append((i, done.step, done.note.startswith("lockstep: queued")))
                if stop.is_set():
                    break
            ended.set()

        threading.Thread(target=control, daemon=True).start()
        wait_until(lambda: len(lines) >= 5)
        sim.pause()
        held = sim.status()["step"]
        for _ in range(3):  # wait for a "queued" reply, then take one step by hand
            wait_until(lambda: (lines[-1][1], lines[-1][2]) == (held, True), timeout=20)
            sim.step(1)  # answered before it is taken: wait for it, the next reply is its
            held += 1
            wait_until(lambda: sim.status()["step"] == held)
        sim.resume()
        resumed = len(lines)
        wait_until(lambda: len(lines) >= resumed + 5)  # the loop runs free again
        stop.set()
        assert ended.wait(120)
    assert all(step == i + (not queued) for i, step, queued in lines), str(lines)
    assert sum(queued for _, _, queued in lines) >= 3


def test_a_control_loop_waiting_for_its_step_ends_when_the_run_finishes():
    """A paused run stepped by hand to its end: the loop does not wait for a step that will
    not come; its command after the last step is refused (code 6)."""
    from coopsim.client import RemoteError

    one = scenario([robot("r1", -1, 0)], mode="lockstep")
    with live(one, paused=True, wait_for=1, duration=0.1) as run, \
            Client(run.network.endpoint) as c, Client(run.network.endpoint) as operator:
        bot, codes, ended = c.robot("r1"), [], threading.Event()

        def control():
            try:
                for _ in bot.loop():
                    bot.motors.set_speeds(0.1, 0.1)
            except RemoteError as exc:
                codes.append(exc.code)
            ended.set()

        threading.Thread(target=control, daemon=True).start()
        wait_until(lambda: "r1" in run.stepper.slots.attached())
        operator.sim().step(10)  # to the duration's end, the run still paused
        assert ended.wait(120), "the loop waits for a step of a finished run"
        assert run.stepper.finished and run.stepper.paused and codes == [6]
