"""The rules of the arm tasks on the real MuJoCo engine, without arms: cubes laid by the
scenario already stacked (or not) are graded ``stacked``; a cube on (or off) its target is graded
``delivered``; refusals at load say what is missing."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.errors import FileFormatError  # noqa: E402
from coopsim.plugins.rules.stacking import stack_problem  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402

CUBE = 0.04


def cube(n: int, x: float, y: float, z: float, color: str = "red") -> str:
    return (f"[OBJECT_{n}]\ntype box\nsize {CUBE} {CUBE} {CUBE}\nposition {x} {y} {z}\n"
            f"mass 0.1\ncolor {color}\n")


def scenario(tmp_path, objects: str, rule: str, targets: str = "red 0.3 0 0") -> Stepper:
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 4 4 0.1\n")
    path = tmp_path / "t.scenario"
    path.write_text(f"[WORLD]\nfile w.world\n{objects}[TARGET]\n{targets}\n[RULE_1]\n{rule}"
                    "[SETTINGS]\nengine mujoco\ndt 0.002\nmode lockstep\nseed 1\n")
    return Stepper(Simulation(load(str(path))), mode="lockstep")


def run(step: Stepper, seconds: float):
    for _ in range(int(seconds / step.sim.dt)):
        step.tick()
        if step.sim.ended:
            break
    return step.sim.ended, step.snapshot


def test_a_resting_stack_on_the_spot_passes_after_the_hold(tmp_path):
    tower = "".join(cube(k + 1, 0.3, 0.0, CUBE / 2 + k * CUBE + 0.0005 * k) for k in range(3))
    step = scenario(tmp_path, tower, "type stacked\nparam color red\nparam hold 0.3\n"
                                     "param limit 5\n")
    ended, snap = run(step, 5.0)
    assert ended.startswith("stacked: PASS: 3 red stacked at t = "), ended
    done = snap.rules["stacked"]["stacks"][0]["done"]
    assert 0.0 < done < 1.0 and snap.time >= done + 0.3 - 1e-6


def test_cubes_side_by_side_fail_at_the_limit_saying_why(tmp_path):
    row = "".join(cube(k + 1, 0.3 + 0.1 * k, 0.0, CUBE / 2) for k in range(3))
    step = scenario(tmp_path, row, "type stacked\nparam color red\nparam limit 1\n")
    ended, snap = run(step, 2.0)
    assert ended.startswith("stacked: FAIL: not stacked in 1 s: red (number 2 from the bottom"), \
        ended
    assert snap.time == pytest.approx(1.0, abs=0.003)


def test_a_stack_off_its_spot_fails(tmp_path):
    tower = "".join(cube(k + 1, 0.6, 0.0, CUBE / 2 + k * CUBE) for k in range(2))
    step = scenario(tmp_path, tower, "type stacked\nparam objects OBJECT_1+OBJECT_2\n"
                                     "param limit 0.5\n")
    ended, _ = run(step, 1.0)
    assert "the lowest is 0.300 m from the spot (at most 0.02 m)" in ended, ended


def test_two_colours_are_two_stacks_each_on_its_own_target(tmp_path):
    red = "".join(cube(k + 1, 0.3, 0.0, CUBE / 2 + k * CUBE) for k in range(2))
    blue = "".join(cube(k + 3, -0.3, 0.5, CUBE / 2 + k * CUBE, "blue") for k in range(2))
    step = scenario(tmp_path, red + blue, "type stacked\nparam color red+blue\n"
                                          "param hold 0.2\nparam limit 3\n",
                    "red 0.3 0 0\nblue -0.3 0.5 0")
    ended, snap = run(step, 3.0)
    assert ended.startswith("stacked: PASS: 2 red and 2 blue stacked"), ended
    assert [s["color"] for s in snap.rules["stacked"]["stacks"]] == ["red", "blue"]


def test_delivered_passes_on_the_target_and_fails_beside_it(tmp_path):
    rule = "type delivered\nparam object OBJECT_1\nparam color green\nparam hold 0.2\n" \
           "param limit 1\n"
    on = scenario(tmp_path, cube(1, 1.0, 1.0, CUBE / 2), rule, "green 1.02 1 0")
    ended, _ = run(on, 2.0)
    assert ended.startswith("delivered: PASS: OBJECT_1 delivered on the green target"), ended
    off = scenario(tmp_path, cube(1, 1.0, 1.0, CUBE / 2), rule, "green 1.5 1 0")
    ended, _ = run(off, 2.0)
    assert ended == ("delivered: FAIL: OBJECT_1 not delivered on the green target in 1 s: the "
                     "lowest is 0.500 m from the spot (at most 0.1 m)"), ended


@pytest.mark.parametrize("color, rule, words", [
    ("blue", "type stacked\nparam color blue\n", "no blue target to stand on"),
    ("red", "type stacked\nparam color blue\n", "a blue stack needs 2 or more movable blue"),
    ("red", "type stacked\nparam color red\nparam objects OBJECT_1+OBJECT_9\n",
     "OBJECT_9 is not"),
    ("red", "type stacked\nparam color teal\n", "'teal' is not a named colour"),
    ("red", "type delivered\nparam object OBJECT_7\n", "no object 'OBJECT_7' in the scenario"),
])
def test_a_rule_that_cannot_grade_the_scenario_is_refused_at_its_line(tmp_path, color, rule,
                                                                      words):
    with pytest.raises(FileFormatError, match=r"t\.scenario:\d+: .*" + words):
        scenario(tmp_path, cube(1, 0.3, 0, 0.02, color) + cube(2, 0.4, 0, 0.02, color), rule)


def test_the_stack_problem_names_the_first_misfit():
    centres = np.array([[0.0, 0.0, 0.02], [0.0, 0.0, 0.06], [0.05, 0.0, 0.10]])
    heights = np.full(3, 0.04)
    still = np.zeros(3)
    assert stack_problem(centres[:2], heights[:2], still[:2], (0, 0, 0), 0.02, 0.01, 0.02) == ""
    assert stack_problem(centres, heights, still, (0, 0, 0), 0.02, 0.01, 0.02).startswith(
        "number 3 from the bottom is 0.050 m beside the one below")
    assert "still moves (0.500 m/s" in stack_problem(
        centres[:2], heights[:2], np.array([0.0, 0.5]), (0, 0, 0), 0.02, 0.01, 0.02)
    lifted = centres[:1] + [0.0, 0.0, 0.03]  # held in the air above its spot
    assert "bottom is +0.030 m off the surface" in stack_problem(
        lifted, heights[:1], still[:1], (0, 0, 0), 0.02, 0.01, 0.02)
