"""Every exercise passes with its reference solution (tests/usecases/solutions) and fails, with
the reason, for a robot left idle and for controllers that crash, hang, never start or send
garbage; the simulator never hangs (lockstep's lease detaches a silent controller, the
exercise's time limit ends the run).

The controllers' failures are graded by the same code whichever exercise runs, so one run of the
three-robot exercise gives each robot a differently broken controller and is checked for every
note, and one run checks a crash; the exercises' own FAIL reasons are checked in-process.
"""

from __future__ import annotations

import dataclasses

import pytest

from coopsim.formats.files import load
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from usecasehelpers import EXERCISES, HERE, coopsim, run_to_end

CASES = [("01_wander", "wander"), ("02_target", "target"), ("03_follow", "follow"),
         ("04_formation", "formation")]
BANNER = "=" * 35
BAD = HERE / "bad"


def grade(exercise: str, *controllers, options=()) -> tuple[int, str, str]:
    """Run an exercise with controllers (``--controller`` values); return the exit code, the
    verdict banner and stderr."""
    given = [a for c in controllers for a in ("--controller", c)]
    proc = coopsim("run", EXERCISES / f"{exercise}.scenario", "--headless", "--port", "0",
                   *given, *options, timeout=600)  # a hang guard, not a deadline
    banner = proc.stdout[proc.stdout.find("\n" + BANNER):]
    return proc.returncode, banner, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("exercise, solution", CASES)
def test_the_reference_solution_passes(exercise, solution, tmp_path):
    options = ()
    if exercise == "02_target":  # behind CurveZMQ: the launched controller gets the run's keys
        assert coopsim("keys", tmp_path / "keys").returncode == 0
        options = ("--keys", tmp_path / "keys")
    code, banner, err = grade(exercise, HERE / "solutions" / f"{solution}.py", options=options)
    assert code == 0, banner + err
    lines = banner.strip().splitlines()
    assert lines[0] == " PASS ".center(78, "=") and lines[-1] == "=" * 78, banner
    assert len(lines) == 3, f"a clean pass says nothing else:\n{banner}"


@pytest.mark.parametrize("exercise, limit, reason", [
    ("01_wander", 4, "exercise_wander: FAIL: robot1 drove only 0.0 m in 4 s (at least 5 m "
                     "needed); it touched nothing"),
    ("02_target", 4, "exercise_target: FAIL: robot1 did not reach the red target in 4 s"),
    ("03_follow", None, "exercise_follow: FAIL: robot1 was "),
    ("04_formation", 4, "formation: FAIL: not formed at the red target after 4 s"),
], ids=[exercise for exercise, _ in CASES])
@pytest.mark.slow
def test_an_idle_robot_fails_each_exercise_with_its_reason(exercise, limit, reason):
    spec = load(str(EXERCISES / f"{exercise}.scenario"))
    idle = dataclasses.replace(spec.robots[0], controller=None, drivers=())
    rules = spec.rules
    if limit is not None:  # the same check, sooner
        rules = tuple(dataclasses.replace(r, settings=tuple(
            (k, limit if k == "limit" else v) for k, v in r.settings)) for r in rules)
    spec = dataclasses.replace(spec, robots=(idle, *spec.robots[1:]), rules=rules)
    _, finished = run_to_end(Stepper(Simulation(spec), mode="lockstep"))
    assert finished.startswith(reason), finished


@pytest.fixture(scope="module")
def broken_formation():
    """04_formation with a broken controller on each robot: ``left`` never sends anything,
    ``lead`` hangs after 10 steps, ``right`` sends garbage. The first step waits for the two
    that attach (``--wait-for 2``), not the 10 s start wait for ``left`` as well (that wait's
    end is tests/net/test_lockstep_behaviour.py's); ``left`` is named all the same: it never
    sent a request."""
    return grade("04_formation", f"left={BAD / 'silent.py'}", f"lead={BAD / 'hang.py'}",
                 f"right={BAD / 'garbage.py'}", options=("--wait-for", "2"))


@pytest.mark.slow
def test_broken_controllers_fail_the_exercise(broken_formation):
    code, banner, err = broken_formation
    assert code == 1, banner + err
    assert banner.strip().startswith(" FAIL ".center(78, "=")), banner
    assert "formation: not formed at the red target after 80 s" in banner


@pytest.mark.slow
def test_a_controller_that_never_starts_is_named(broken_formation):
    _, banner, _ = broken_formation
    assert "controller of left never sent left a request" in banner


@pytest.mark.slow
def test_a_hanging_controller_is_detached_and_named(broken_formation):
    _, banner, _ = broken_formation
    assert "controller of lead went silent for more than the 3 s lease" in banner


@pytest.mark.slow
def test_a_garbage_sending_controller_is_named_with_the_error_codes_it_got(broken_formation):
    _, banner, _ = broken_formation
    assert "right answered 200 request(s) with an error (error 1 x120, error 2 x40, error 4 " \
           "x40)" in banner


@pytest.mark.slow
def test_a_controller_that_lets_go_and_then_crashes_is_in_the_verdict():
    """The run ends before the controller's process does (it let go of its robot first): the
    verdict waits for its exit, so the crash is said whatever the machine's load."""
    code, banner, _ = grade("01_wander", BAD / "slow_crash.py")
    assert code == 1
    lines = banner.strip().splitlines()
    assert lines[1].startswith("controller of robot1 exited with code 1 within"), banner
    assert "| cleaning up slowly before failing" in banner


@pytest.mark.slow
def test_a_crashing_controller_fails_with_its_last_output():
    code, banner, _ = grade("01_wander", BAD / "crash.py")
    assert code == 1
    assert banner.strip().startswith(" FAIL ".center(78, "="))
    assert "controller of robot1 exited with code 1 within" in banner
    # the crash first, under the banner; what the rule saw (its consequence) after it
    lines = banner.strip().splitlines()
    assert lines[1].startswith("controller of robot1 exited with code 1"), banner
    reason = next(i for i, line in enumerate(lines) if "exercise_wander:" in line)
    assert lines[reason].startswith("then exercise_wander: ") and reason > 1, banner
    assert "| ZeroDivisionError: float division by zero" in banner
    assert "| about to divide by the number of walls seen" in banner
