"""Every exercise passes with its reference solution (tests/usecases/solutions) and fails, with
the reason, for a controller that crashes, hangs or sends garbage; the simulator never hangs
(lockstep's lease detaches a silent controller, the exercise's time limit ends the run)."""

from __future__ import annotations

import pytest

from usecasehelpers import EXERCISES, HERE, coopsim

CASES = [("01_wander", "wander"), ("02_target", "target"), ("03_follow", "follow"),
         ("04_formation", "formation")]
BANNER = "=" * 35


def grade(exercise: str, controller, *options) -> tuple[int, str, str]:
    """Run an exercise with a controller; return the exit code, the verdict banner, stderr."""
    proc = coopsim("run", EXERCISES / f"{exercise}.scenario", "--headless", "--port", "0",
                   "--controller", controller, *options, timeout=180)
    banner = proc.stdout[proc.stdout.find("\n" + BANNER):]
    return proc.returncode, banner, proc.stderr


@pytest.mark.parametrize("exercise, solution", CASES)
def test_the_reference_solution_passes(exercise, solution, tmp_path):
    options = ()
    if exercise == "02_target":  # behind CurveZMQ: the launched controller gets the run's keys
        assert coopsim("keys", tmp_path / "keys").returncode == 0
        options = ("--keys", tmp_path / "keys")
    code, banner, err = grade(exercise, HERE / "solutions" / f"{solution}.py", *options)
    assert code == 0, banner + err
    lines = banner.strip().splitlines()
    assert lines[0] == " PASS ".center(78, "=") and lines[-1] == "=" * 78, banner
    assert len(lines) == 3, f"a clean pass says nothing else:\n{banner}"


@pytest.mark.parametrize("exercise", [e for e, _ in CASES])
def test_a_crashing_controller_fails_with_its_last_output(exercise):
    code, banner, _ = grade(exercise, HERE / "bad" / "crash.py")
    assert code == 1
    assert banner.strip().startswith(" FAIL ".center(78, "="))
    assert "controller of" in banner and "exited with code 1" in banner
    assert "| ZeroDivisionError: float division by zero" in banner
    assert "| about to divide by the number of walls seen" in banner


@pytest.mark.parametrize("exercise", [e for e, _ in CASES])
def test_a_hanging_controller_is_detached_and_fails(exercise):
    code, banner, _ = grade(exercise, HERE / "bad" / "hang.py")
    assert code == 1 and " FAIL " in banner
    assert "went silent for more than the 3 s lease" in banner


@pytest.mark.parametrize("exercise", [e for e, _ in CASES])
def test_a_garbage_sending_controller_fails_with_the_error_codes_it_got(exercise):
    code, banner, _ = grade(exercise, HERE / "bad" / "garbage.py")
    assert code == 1 and " FAIL " in banner
    assert "answered 200 request(s) with an error (error 1 x120, error 2 x40, error 4 x40)" \
        in banner


def test_a_controller_that_never_starts_fails_and_says_so():
    code, banner, _ = grade("02_target", HERE / "bad" / "silent.py")
    assert code == 1 and " FAIL " in banner
    assert "never sent robot1 a request" in banner
