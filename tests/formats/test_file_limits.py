"""Names and numbers in files: the model's one rule and one table (coopsim.model.limits), with the
sentences ``/sim`` answers for the same values (tests/net/test_sim_hostile_inputs.py)."""

from __future__ import annotations

import pytest

from coopsim.formats import files
from coopsim.model.errors import FileFormatError

FLOOR = "[FLOOR]\nsize 10 10 0.1\n"
WALL = "[WALL_1]\ntype box\nsize 1 1 1\nposition 0 0 0.5\n"
HEAD = "[WORLD]\nfile w.world\n"
ROBOT = "[ROBOT_1]\ntype single\nname r1\nposition 0 0 0\n"


def _error(tmp_path, name: str, text: str) -> str:
    (tmp_path / "w.world").write_text(FLOOR)
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        files.load(path)
    return f"{info.value.line}: {info.value.reason}"


WORLD = [
    ("tiny size", FLOOR + WALL.replace("1 1 1", "1e-300 1 1"), 5,
     "size length must be between 0.001 and 1000 m, got 1e-300 m"),
    ("huge size", FLOOR + WALL.replace("1 1 1", "1 1 1e300"), 5,
     "size height must be between 0.001 and 1000 m, got 1e+300 m"),
    ("zero size", FLOOR + WALL.replace("1 1 1", "0 1 1"), 5,
     "size length must be between 0.001 and 1000 m, got 0 m"),
    ("denormal mass", FLOOR + WALL + "mass 5e-324\n", 7,
     "mass must be 0 (static) or between 0.001 and 10000 kg, got 4.94066e-324 kg"),
    ("huge mass", FLOOR + WALL + "mass 1e300\n", 7,
     "mass must be 0 (static) or between 0.001 and 10000 kg, got 1e+300 kg"),
    ("far z", FLOOR + WALL.replace("0 0 0.5", "0 0 1e9"), 6,
     "position z must be between -10000 and 10000 m, got 1e+09 m"),
    ("wild yaw", FLOOR + WALL + "orientation 0 0 1e300\n", 7,
     "yaw must be between -6.28319 and 6.28319 rad (-360 to 360 degrees), "
     "got 1.74533e+298 rad (1e+300 degrees)"),
    ("colour", FLOOR + WALL + "color 0 256 0\n", 7,
     "color G must be an integer between 0 and 255, got 256"),
    ("tiny floor", "[FLOOR]\nsize 1e-300 10 0.1\n", 2,
     "floor length must be between 0.01 and 20000 m, got 1e-300 m"),
]


@pytest.mark.parametrize("case, text, line, reason", WORLD, ids=[c[0] for c in WORLD])
def test_world_numbers_have_the_models_ranges_and_sentences(tmp_path, case, text, line, reason):
    assert _error(tmp_path, "bad.world", text) == f"{line}: {reason}"


SCENARIO = [
    ("robot named sim", ROBOT.replace("name r1", "name sim"), 5,
     "robot name must not be 'sim': the simulator serves /sim itself"),
    ("robot named nameserver", ROBOT.replace("name r1", "name Nameserver"), 5,
     "robot name must not be 'Nameserver': the simulator serves /nameserver itself"),
    ("robot named a port", ROBOT.replace("name r1", "name r2/motors"), 5,
     "robot name must be letters, digits, '_' or '-', starting with a letter, got 'r2/motors'"),
    ("long name", ROBOT.replace("name r1", "name " + "r" * 65), 5,
     "robot name must be at most 64 characters, got 65"),
    ("derived name", ROBOT.replace("single", "team2").replace("name r1", "name " + "t" * 60), 4,
     f"robot type 'team2' names a robot '{'t' * 60}_leader' after '{'t' * 60}': robot name "
     "must be at most 64 characters, got 67"),
    ("robot yaw", ROBOT + "orientation 0 0 400\n", 7,
     "yaw must be between -6.28319 and 6.28319 rad (-360 to 360 degrees), got 6.98132 rad "
     "(400 degrees)"),
    ("robot far", ROBOT.replace("0 0 0", "0 0 -2e4"), 6,
     "position z must be between -10000 and 10000 m, got -20000 m"),
    ("target far", "[TARGET]\nred 1 1 1e12\n", 4,
     "position z must be between -10000 and 10000 m, got 1e+12 m"),
    ("object mass", "[OBJECT_1]\ntype box\nsize 1 1 1\nposition 0 0 0\nmass 1e300\n", 7,
     "mass must be 0 (static) or between 0.001 and 10000 kg, got 1e+300 kg"),
]


@pytest.mark.parametrize("case, text, line, reason", SCENARIO, ids=[c[0] for c in SCENARIO])
def test_scenario_names_and_numbers_follow_the_model(tmp_path, case, text, line, reason):
    assert _error(tmp_path, "bad.scenario", HEAD + text) == f"{line}: {reason}"


def test_the_edges_of_every_range_load(tmp_path):
    (tmp_path / "w.world").write_text(FLOOR)
    edge = (HEAD + "[OBJECT_1]\ntype box\nsize 0.001 1000 0.001\nposition 0 0 10000\n"
            "orientation 0 0 -360\nmass 10000\ncolor 0 255 0\n"
            "[OBJECT_2]\ntype box\nsize 1 1 1\nposition 1 1 -10000\nmass 0.001\n"
            "[ROBOT_1]\ntype single\nname " + "a" * 64 + "\nposition 2 2 0\norientation 0 0 360\n"
            "[ROBOT_2]\ntype team2\nname " + "b" * 57 + "\nposition -2 -2 0\n"
            "[ROBOT_3]\ntype single\nname simulator\nposition 2 -2 0\n")
    path = tmp_path / "edge.scenario"
    path.write_text(edge)
    spec = files.load(path)
    assert [r.name for r in spec.robots] == ["a" * 64, "b" * 57, "simulator"]
    assert [o.mass for o in spec.objects] == [10000.0, 0.001]
