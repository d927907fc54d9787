"""``coopsim check`` reports a file's first error by line, whatever pass finds it.

A scenario is checked in passes (each section on its own, then what needs the whole file);
before the fix a file with an unknown rule on line 5 and an unknown robot type on line 8 was
reported at line 8, because rules were built after every robot.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.formats import files
from coopsim.model.errors import FileFormatError

FLOOR = "[FLOOR]\nsize 10 10 0.1\n"
WORLD = "[WORLD]\nfile w.world\n"
ROBOT = "[ROBOT_1]\ntype single\nname r1\nposition 0 0 0\n"

# (case, scenario text, line of its first error, what that error says, the text with the first
# error fixed, line of the second error): every file has a second error further down that an
# earlier pass used to report first (the fixed text proves it is an error on its own)
TWO_ERRORS = [
    ("unknown rule before an unknown robot type",
     WORLD + "\n[RULE_1]\ntype nosuchrule\n\n[ROBOT_1]\ntype nosuchtype\nname r1\n"
     "position 0 0 0\n", 5, "unknown rule 'nosuchrule'", ("nosuchrule", "stop_when_all_at_target"),
     8),
    ("bad rule parameter before a robot off the floor",
     WORLD + "[TARGET]\nred 1 1 0\n[RULE_1]\ntype stop_when_all_at_target\nparam radius 0\n"
     + ROBOT.replace("0 0 0", "30 0 0"), 7, "radius", ("radius 0", "radius 1"), 11),
    ("robot off the floor before its bad parameter",
     WORLD + ROBOT.replace("0 0 0", "30 0 0") + "param sonar.noise -1\n", 6, "does not fit",
     ("30 0 0", "0 0 0"), 7),
    ("bad driver parameter before a bad module parameter in one robot",
     WORLD + ROBOT + "driver wander cruise 99\nparam sonar.noise -1\n", 7, "cruise",
     ("cruise 99", "cruise 1"), 8),
    ("unknown robot type before a missing world file",
     "[ROBOT_1]\ntype nosuchtype\nname r1\nposition 0 0 0\n[WORLD]\nfile nowhere.world\n", 2,
     "unknown robot type", ("nosuchtype", "single"), 6),
    ("object off the floor before its unequal cylinder sizes",
     WORLD + "[OBJECT_1]\ntype cylinder\nposition 30 0 0\nsize 1 2 1\n", 5, "is off",
     ("30 0 0", "0 0 0"), 6),
    ("unknown rule before a duplicate robot name",
     WORLD + "[RULE_1]\ntype nosuchrule\n" + ROBOT + ROBOT.replace("ROBOT_1", "ROBOT_2"), 4,
     "unknown rule", ("nosuchrule", "stop_when_all_at_target\n[TARGET]\nred 1 1 0"), 13),
    ("rule that needs a target before an engine that refuses a robot",
     WORLD + "[RULE_1]\ntype stop_when_all_at_target\n" + ROBOT.replace("single", "team2")
     + "[SETTINGS]\nengine kinematic\n", 3, "needs a any target",
     ("stop_when_all_at_target", "stop_when_all_at_target\n[TARGET]\nred 1 1 0"), 7),
]
CASES = {"argnames": "text, line, fragment, fix, second",
         "argvalues": [case[1:] for case in TWO_ERRORS], "ids": [case[0] for case in TWO_ERRORS]}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "w.world").write_text(FLOOR)
    return tmp_path


@pytest.mark.parametrize(**CASES)
def test_the_first_error_by_line_is_reported(folder, text, line, fragment, fix, second):
    path = folder / "two.scenario"
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        files.load(path)
    assert (info.value.line, fragment in info.value.reason) == (line, True), str(info.value)


@pytest.mark.parametrize(**CASES)
def test_with_the_first_fixed_the_second_is_reported(folder, text, line, fragment, fix, second):
    path = folder / "one.scenario"
    path.write_text(text.replace(*fix))
    with pytest.raises(FileFormatError) as info:
        files.load(path)
    assert info.value.line == second, str(info.value)


@pytest.mark.slow
def test_check_command_prints_the_first_error(folder):
    path = folder / "two.scenario"
    path.write_text(TWO_ERRORS[0][1])
    result = subprocess.run([sys.executable, "-m", "coopsim", "check", str(path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith(f"{path}:5: unknown rule 'nosuchrule'")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("rule, line", [
    # the robot named on a param line: that line (it was the [RULE_1] header, line 5)
    ("[RULE_1]\ntype exercise_follow\nparam robot r1\nparam leader nobody\n", 8),
    ("[RULE_1]\ntype formation\nparam leader r1\nparam left nobody\nparam right r1\n", 8),
    # a default that names no robot: no param line to point at, so the header
    ("[RULE_1]\ntype exercise_follow\nparam robot r1\n", 5),
])
@pytest.mark.slow
def test_a_rule_parameter_naming_no_robot_is_reported_at_its_param_line(folder, rule, line):
    path = folder / "rule.scenario"
    path.write_text(WORLD + "[TARGET]\nred 1 1 0\n" + rule + ROBOT.replace("ROBOT_1", "ROBOT_2"))
    done = subprocess.run([sys.executable, "-m", "coopsim", "check", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith(f"{path}:{line}: "), done.stderr
    assert "no " in done.stderr and "Traceback" not in done.stderr
