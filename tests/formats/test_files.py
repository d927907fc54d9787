"""Tests of coopsim.formats.files: the .world/.scenario reader, its messages and the shipped files."""

from __future__ import annotations

import dataclasses
import math
import os
import random
from pathlib import Path

import pytest

from coopsim.formats import files
from coopsim.formats.check import check as check_files
from coopsim.model.plugins import ROBOT_TYPES
from coopsim.model.errors import FileFormatError
from coopsim.model.specs import COLORS, RobotSpec, ScenarioSpec, Settings, WorldSpec

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parents[1] / "data" / "files"
WORLDS = sorted((ROOT / "worlds").glob("*.world"))
SCENARIOS = sorted((ROOT / "scenarios").glob("*.scenario"))

FLOOR = "[FLOOR]\nsize 10 10 0.1\n"
WALL = "[WALL_1]\ntype box\nsize 1 1 1\nposition 0 0 0.5\n"
HEAD = "[WORLD]\nfile w.world\n"  # scenarios below run next to a 10 x 10 m w.world
ROBOT = "[ROBOT_1]\ntype single\nname r1\nposition 0 0 0\n"


def _error(path: Path | str) -> FileFormatError:
    """Load ``path`` and return the FileFormatError it must raise."""
    with pytest.raises(FileFormatError) as info:
        files.load(path)
    return info.value


def _assert_at(exc: FileFormatError, path: Path | str, line: int, fragment: str) -> None:
    message = str(exc)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in exc.reason, message
    assert (exc.path, exc.line) == (str(path), line)


# --- errors, one per kind -------------------------------------------------------------------------

WORLD_ERRORS = [
    ("unknown section", FLOOR + "[FOO]\n", 3, "unknown section [FOO]"),
    ("robot section in a world", FLOOR + "[ROBOT_1]\n", 3, "unknown section [ROBOT_1]"),
    ("lower-case section", "[floor]\nsize 1 1 1\n", 1, "upper case: write [FLOOR]"),
    ("unknown key", FLOOR + WALL + "colour 1 2 3\n", 7, "unknown key 'colour' in [WALL_1]"),
    ("unknown shape", FLOOR + "[WALL_1]\ntype cube\n", 4, "unknown shape 'cube'"),
    ("missing values", "[FLOOR]\nsize 1 2\n", 2,
     "size needs 3 values (length width height), got 2"),
    ("extra values", FLOOR + WALL.replace("0 0 0.5", "0 0 0.5 1"), 6, "position needs 3 values"),
    ("no values", FLOOR + WALL + "mass\n", 7, "mass needs 1 value (kg), got 0"),
    ("not a number", "[FLOOR]\nsize 1 abc 1\n", 2, "size width must be a number, got 'abc'"),
    ("nan", "[FLOOR]\nsize 1 nan 1\n", 2, "size width must be a finite number, got 'nan'"),
    ("inf", FLOOR + WALL.replace("0 0 0.5", "-inf 0 0.5"), 6, "position x must be a finite"),
    ("overflow", "[FLOOR]\nsize 1e999 1 1\n", 2, "size length must be a finite number"),
    ("underscore number", "[FLOOR]\nsize 1_0 1 1\n", 2, "must be a number, got '1_0'"),
    ("negative size", FLOOR + WALL.replace("1 1 1", "1 -1 1"), 5, "size width must be between 0.001 and 1000 m, got -1 m"),
    ("zero size", FLOOR + WALL.replace("1 1 1", "0 1 1"), 5, "size length must be between 0.001 and 1000 m, got 0 m"),
    ("negative floor", "[FLOOR]\nsize -3 1 1\n", 2, "floor length must be between 0.01 and 20000 m"),
    ("negative floor height", "[FLOOR]\nsize 3 1 -1\n", 2, "floor height must be between 0 and 1000 m"),
    ("negative mass", FLOOR + WALL + "mass -2\n", 7, "mass must be 0 (static) or between 0.001 and 10000 kg, got -2 kg"),
    ("duplicate wall", FLOOR + WALL + WALL, 7, "duplicate section [WALL_1] (first at line 3)"),
    ("duplicate floor", FLOOR + FLOOR, 3, "duplicate section [FLOOR] (first at line 1)"),
    ("duplicate key", FLOOR + WALL + "size 2 2 2\n", 7, "duplicate key 'size' in [WALL_1]"),
    ("missing required key", FLOOR + "[WALL_1]\ntype box\nsize 1 1 1\n", 3,
     "[WALL_1] is missing the required key 'position'"),
    ("missing key, last section", FLOOR + "[WALL_1]\ntype box\n\n# end\n", 3, "'size'"),
    ("empty floor", "[FLOOR]\n" + WALL, 1, "[FLOOR] is missing the required key 'size'"),
    ("centre off the floor", FLOOR + WALL.replace("0 0 0.5", "5.5 0 0.5"), 6,
     "centre (5.5, 0) of [WALL_1] is off the 10 x 10 m floor"),
    ("tilted", FLOOR + WALL + "orientation 10 0 0\n", 7, "phi and psi must be 0 in 2D"),
    ("tilted psi", FLOOR + WALL + "orientation 0 -5 90\n", 7, "got 0 -5"),
    ("colour out of range", FLOOR + WALL + "color 10 20 256\n", 7,
     "color B must be an integer between 0 and 255, got 256"),
    ("negative colour", FLOOR + WALL + "color -1 20 25\n", 7, "color R must be an integer between 0 and 255"),
    ("colour not an integer", FLOOR + WALL + "color 10 2.5 25\n", 7, "color G must be an integer"),
    ("unknown colour name", FLOOR + WALL + "color chartreuse\n", 7, "unknown colour 'chartreuse'"),
    ("text before sections", "hello there\n" + FLOOR, 1, "text before the first [SECTION]"),
    ("not a key line", FLOOR + WALL + "size=3\n", 7, "not a 'key value…' line"),
    ("number as key", FLOOR + "1 2 3\n", 3, "not a 'key value…' line"),
    ("letters for n", FLOOR + "[WALL_x]\n", 3, "bad section name [WALL_x]"),
    ("zero for n", FLOOR + "[WALL_0]\n", 3, "bad section name [WALL_0]"),
    ("leading zero", FLOOR + "[WALL_01]\n", 3, "bad section name [WALL_01]"),
    ("no n", FLOOR + "[WALL]\n", 3, "write [WALL_n]"),
    ("malformed header", "[FLOOR\nsize 1 1 1\n", 1, "malformed section header"),
    ("no floor", WALL, 0, "no [FLOOR] section"),
    ("floor not first", WALL + FLOOR, 5, "[FLOOR] must be the first section, before [WALL_1]"),
    ("cylinder not round", FLOOR + WALL.replace("box", "cylinder").replace("1 1 1", "1 2 1"), 5,
     "a cylinder's length and width must be equal"),
    ("sphere not round", FLOOR + WALL.replace("box", "sphere").replace("1 1 1", "1 1 2"), 5,
     "a sphere's length, width and height must be equal"),
    ("empty file", "", 0, "empty file"),
    ("blank file", "  \n\t\n", 0, "empty file"),
    ("only comments", "# a world\n\n   # nothing else\n", 0, "empty file"),
]


@pytest.mark.parametrize("text,line,fragment", [c[1:] for c in WORLD_ERRORS],
                         ids=[c[0] for c in WORLD_ERRORS])
def test_world_errors(tmp_path, text, line, fragment):
    path = tmp_path / "t.world"
    path.write_text(text)
    _assert_at(_error(path), path, line, fragment)
    assert check_files([path]) == [str(_error(path))]


SCENARIO_ERRORS = [
    ("no world", "[TARGET]\nred 1 1 0\n", 0, "no [WORLD] section"),
    ("world without file", "[WORLD]\n[TARGET]\n", 1, "[WORLD] is missing the required key 'file'"),
    ("world file missing", "# x\n[WORLD]\nfile nope.world\n", 3,
     "world file 'nope.world' not found"),
    ("world file is a folder", "[WORLD] file sub\n", 1, "world file 'sub' is a directory"),
    ("two worlds", HEAD + "[WORLD] file w.world\n", 3, "duplicate section [WORLD]"),
    ("two target sections", HEAD + "[TARGET]\n[TARGET]\n", 4, "duplicate section [TARGET]"),
    ("unknown target colour", HEAD + "[TARGET]\nred 1 1 0\nteal 1 1 0\n", 5,
     "unknown target colour 'teal' in [TARGET]"),
    ("target missing values", HEAD + "[TARGET]\nred 1 1\n", 4, "red needs 3 values (x y z), got 2"),
    ("target off the floor", HEAD + "[TARGET]\nblue 1 -6 0\n", 4,
     "blue target at (1, -6) is off the 10 x 10 m floor"),
    ("unknown robot type", HEAD + ROBOT.replace("single", "tank"), 4, "'tank'"),
    ("bad robot name", HEAD + ROBOT.replace("name r1", "name 1r"), 5,
     "name must be letters, digits, '_' or '-', starting with a letter, got '1r'"),
    ("robot name with a slash", HEAD + ROBOT.replace("name r1", "name r/1"), 5, "got 'r/1'"),
    ("reserved robot name", HEAD + ROBOT.replace("name r1", "name sim"), 5, "must not be 'sim'"),
    ("duplicate robot names", HEAD + ROBOT + ROBOT.replace("ROBOT_1", "ROBOT_2"), 9,
     "robot name 'r1' is already used by [ROBOT_1]"),
    ("robot half off the floor", HEAD + ROBOT.replace("0 0 0", "4.85 0 0"), 6,
     "robot r1 (single, radius 0.2 m) at (4.85, 0) does not fit on the 10 x 10 m floor"),
    ("team2 off the floor", HEAD + ROBOT.replace("single", "team2").replace("0 0 0", "0 4.5 0"), 6,
     "(team2, radius 1 m)"),
    ("robot missing name", HEAD + "[ROBOT_1]\ntype single\nposition 0 0 0\n", 3,
     "[ROBOT_1] is missing the required key 'name'"),
    ("robot zero", HEAD + "[ROBOT_0]\n", 3, "bad section name [ROBOT_0]"),
    ("robot colour", HEAD + ROBOT + "color 0 0 300\n", 7, "color B must be an integer between 0 and 255"),
    ("robot colour arity", HEAD + ROBOT + "color 0 0\n", 7, "color needs 3 values (R G B), got 2"),
    ("robot tilted", HEAD + ROBOT + "orientation 0 90 0\n", 7, "phi and psi must be 0"),
    ("robot unknown key", HEAD + ROBOT + "speed 3\n", 7, "unknown key 'speed' in [ROBOT_1]"),
    ("param arity", HEAD + ROBOT + "param motors.noise\n", 7, "param needs 2 values"),
    ("param name", HEAD + ROBOT + "param noise 0.1\n", 7, "param name must look like module.name"),
    ("param value", HEAD + ROBOT + "param motors.noise lots\n", 7,
     "param value must be a number or true/false, got 'lots'"),
    ("param nan", HEAD + ROBOT + "param motors.noise nan\n", 7, "got 'nan'"),
    ("empty controller", HEAD + ROBOT + "controller   # none\n", 7, "controller needs a value"),
    ("dt too big", HEAD + "[SETTINGS]\ndt 0.5\n", 4, "dt must be between 0.0005 and 0.1 s, got 0.5"),
    ("dt too small", HEAD + "[SETTINGS]\ndt 0.0001\n", 4, "dt must be between 0.0005 and 0.1 s"),
    ("unknown mode", HEAD + "[SETTINGS]\nmode fast\n", 4, "unknown mode 'fast' (expected realtime"),
    ("negative seed", HEAD + "[SETTINGS]\nseed -1\n", 4, "seed must be an integer >= 0"),
    ("fractional seed", HEAD + "[SETTINGS]\nseed 1.5\n", 4, "seed must be an integer >= 0"),
    ("zero duration", HEAD + "[SETTINGS]\nduration 0\n", 4, "duration must be > 0, got 0"),
    ("negative speed", HEAD + "[SETTINGS]\nspeed -1\n", 4, "speed must be >= 0, got -1"),
    ("bad record", HEAD + "[SETTINGS]\nrecord maybe\n", 4, "record must be true, false, 1 or 0"),
    ("unknown setting", HEAD + "[SETTINGS]\nfps 60\n", 4, "unknown key 'fps' in [SETTINGS]"),
    ("zero threads", HEAD + "[SETTINGS]\nthreads 0\n", 4,
     "threads must be an integer from 1 to 1024, got '0'"),
    ("fractional threads", HEAD + "[SETTINGS]\nthreads 2.5\n", 4,
     "threads must be an integer from 1 to 1024"),
    ("object off the floor", HEAD + WALL.replace("WALL", "OBJECT").replace("0 0 0.5", "0 7 0"),
     6, "centre (0, 7) of [OBJECT_1] is off the 10 x 10 m floor"),
    ("object unknown shape", HEAD + "[OBJECT_3]\ntype cone\n", 4, "unknown shape 'cone'"),
    ("object negative mass", HEAD + WALL.replace("WALL", "OBJECT") + "mass -1\n", 7,
     "mass must be 0 (static) or between"),
    ("wall in a scenario", HEAD + WALL, 3, "unknown section [WALL_1] in a .scenario file"),
    ("floor in a scenario", "[FLOOR]\n", 1, "unknown section [FLOOR] in a .scenario file"),
]


@pytest.mark.parametrize("text,line,fragment", [c[1:] for c in SCENARIO_ERRORS],
                         ids=[c[0] for c in SCENARIO_ERRORS])
def test_scenario_errors(tmp_path, text, line, fragment):
    (tmp_path / "w.world").write_text(FLOOR)
    (tmp_path / "sub").mkdir()
    path = tmp_path / "t.scenario"
    path.write_text(text)
    _assert_at(_error(path), path, line, fragment)


def test_unknown_robot_type_names_known_types(tmp_path):
    (tmp_path / "w.world").write_text(FLOOR)
    path = tmp_path / "t.scenario"
    path.write_text(HEAD + ROBOT.replace("single", "tank"))
    assert "single" in _error(path).reason


# --- errors about the file itself -----------------------------------------------------------------

def test_binary_file_with_nul_bytes(tmp_path):
    path = tmp_path / "logo.world"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    _assert_at(_error(path), path, 1, "binary file, not a text file")


def test_invalid_utf8_is_a_binary_file(tmp_path):
    path = tmp_path / "latin1.scenario"
    path.write_bytes("[WORLD]\nfile caf\u00e9.world\n".encode("latin-1"))
    _assert_at(_error(path), path, 1, "binary file, not a text file (invalid UTF-8 on line 2)")


def test_nul_in_text_given_to_the_parser():
    with pytest.raises(FileFormatError, match=r"^x\.world:1: binary file"):
        files.parse_world(FLOOR + "\x00", "x.world")


@pytest.mark.parametrize("name,fragment", [("gone.world", "no such file"),
                                           ("gone.scenario", "no such file"),
                                           ("folder.world", "is a directory"),
                                           ("notes.txt", "unknown file type '.txt'"),
                                           ("README", "unknown file type")])
def test_unloadable_files_are_line_zero(tmp_path, name, fragment):
    (tmp_path / "folder.world").mkdir()
    (tmp_path / "notes.txt").write_text(FLOOR)
    (tmp_path / "README").write_text(FLOOR)
    path = tmp_path / name
    _assert_at(_error(path), path, 0, fragment)


def test_empty_scenario(tmp_path):
    path = tmp_path / "e.scenario"
    path.write_text("")
    _assert_at(_error(path), path, 0, "empty file")


# --- errors reported inside the world a scenario names --------------------------------------------

def test_error_inside_the_world_points_into_the_world_file():
    exc = _error(DATA / "uses_broken.scenario")
    _assert_at(exc, DATA / "broken.world", 8, "position needs 3 values (x y z), got 2")


def test_missing_world_points_at_the_file_line():
    path = DATA / "missing_world.scenario"
    _assert_at(_error(path), path, 4, "world file 'does_not_exist.world' not found")


def test_world_errors_through_a_relative_scenario_path(monkeypatch):
    monkeypatch.chdir(DATA.parent)
    assert check_files(["files/uses_broken.scenario"]) == [
        os.path.join("files", "broken.world") + ":8: position needs 3 values (x y z), got 2"]


# --- robots: validation goes through coopsim.model.validate --------------------------------------

@pytest.mark.parametrize("bad, reason", [
    ("param sonar.max_range 99", "out of range"),
    ("param sonar.nonsense 1", "unknown parameter 'nonsense'"),
    ("param support.noise 1", "has no module 'support'"),
    ("param motors.efficiency true", "takes a float"),
])
def test_param_errors_are_reported_at_the_param_line(tmp_path, bad, reason):
    (tmp_path / "w.world").write_text(FLOOR)
    path = tmp_path / "t.scenario"
    path.write_text(HEAD + ROBOT + "param motors.max_speed 1\n" + bad + "\n")
    _assert_at(_error(path), path, 8, reason)


def test_params_parse_to_typed_values_in_order(tmp_path):
    (tmp_path / "w.world").write_text(FLOOR)
    path = tmp_path / "t.scenario"
    path.write_text(HEAD + ROBOT + "param motors.max_speed 0.5\nparam sonar.max_range 3\n"
                    "param gps.noise 1e-2\n")
    params = files.load_scenario(path).robots[0].params
    assert [(p.module, p.name, p.value, p.line) for p in params] == [
        ("motors", "max_speed", 0.5, 7), ("sonar", "max_range", 3, 8), ("gps", "noise", 0.01, 9)]
    assert type(params[1].value) is int


def test_team2_footprint_keeps_the_whole_team_on_the_floor(tmp_path):
    (tmp_path / "w.world").write_text(FLOOR)
    path = tmp_path / "t.scenario"
    path.write_text(HEAD + ROBOT.replace("single", "team2").replace("0 0 0", "4.5 0 0"))
    _assert_at(_error(path), path, 6, f"radius {ROBOT_TYPES.get('team2').footprint:g} m")


def test_robot_exactly_at_the_edge_fits(tmp_path):
    (tmp_path / "w.world").write_text(FLOOR)
    path = tmp_path / "t.scenario"
    path.write_text(HEAD + ROBOT.replace("0 0 0", "4.8 -4.8 0"))
    assert files.load_scenario(path).robots[0].position == (4.8, -4.8, 0.0)


# --- what a good file turns into ------------------------------------------------------------------

def test_small_world_round_trip():
    world = files.load_world(DATA / "small.world")
    assert isinstance(world, WorldSpec)
    assert (world.floor.length, world.floor.width, world.floor.height) == (4.0, 3.0, 0.05)
    box, cyl = world.objects
    assert (box.name, box.shape, box.size, box.position) == ("WALL_1", "box", (1.0, 0.2, 0.5),
                                                             (0.5, -1.0, 0.25))
    assert box.yaw == pytest.approx(math.pi / 2)
    assert box.static and box.mass == 0.0 and box.line == 6
    assert box.color == (150, 150, 150)
    assert (cyl.name, cyl.shape, cyl.radius, cyl.mass, cyl.line) == ("WALL_7", "cylinder", 0.2,
                                                                     1.5, 12)
    assert cyl.yaw == 0.0 and not cyl.static and cyl.color == COLORS["orange"]
    assert world.path == str(DATA / "small.world")
    assert world.text == (DATA / "small.world").read_text()


def test_small_scenario_round_trip():
    scenario = files.load_scenario(DATA / "small.scenario")
    assert scenario.name == "small" and scenario.path == str(DATA / "small.scenario")
    assert scenario.world.path == str(DATA / "small.world")
    assert [(t.color, t.position, t.line) for t in scenario.targets] == [
        ("red", (1.5, 1.0, 0.0), 5), ("blue", (-1.5, -1.0, 0.0), 6), ("red", (0.0, 1.2, 0.0), 7)]
    alpha, beta = scenario.robots  # file order, not section number order
    assert (alpha.name, alpha.type, alpha.line, alpha.color) == ("alpha", "single", 9, (10, 20, 30))
    assert alpha.yaw == pytest.approx(math.pi)
    assert alpha.controller == "python3 ctl.py --name alpha"
    assert (beta.name, beta.yaw, beta.controller, beta.params) == ("beta-2", 0.0, None, ())
    assert beta.color == RobotSpec("single", "x").color
    (ball,) = scenario.objects
    assert (ball.name, ball.shape, ball.mass) == ("OBJECT_1", "sphere", 0.25)
    assert scenario.settings == Settings(dt=0.005, mode="lockstep", duration=12.5, seed=42,
                                         speed=0.0, record=True)


def test_world_path_is_relative_to_the_scenario_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the scenario's folder
    scenario = files.load_scenario(DATA / "nested" / "deep.scenario")
    assert scenario.world.path == str(DATA / "small.world")
    assert len(scenario.world.objects) == 2
    assert scenario.settings == Settings() and scenario.robots == () and scenario.targets == ()


def test_relative_scenario_path_gives_a_normalised_world_path(monkeypatch):
    monkeypatch.chdir(DATA.parent)
    scenario = files.load(os.path.join("files", "nested", "deep.scenario"))
    assert scenario.world.path == os.path.join("files", "small.world")


def test_absolute_world_path(tmp_path):
    path = tmp_path / "t.scenario"
    path.write_text(f"[WORLD]\nfile {DATA / 'small.world'}\n")
    assert files.load(path).world.floor.length == 4.0


def test_paths_with_spaces_and_hash_inside_words(tmp_path):
    (tmp_path / "my world#1.world").write_text(FLOOR)
    path = tmp_path / "t.scenario"
    path.write_text("[WORLD]\nfile my world#1.world   # comment\n"
                    + ROBOT + "controller ./run.sh a#b 'x y'  # comment\n")
    scenario = files.load(path)
    assert scenario.world.path == str(tmp_path / "my world#1.world")
    assert scenario.robots[0].controller == "./run.sh a#b 'x y'"


def test_paper_layout_details_parse(tmp_path):
    text = "\ufeff[FLOOR]\t\r\nsize\t4 4 0.1\r\n[WALL_1]  type box  # on the header line\r\n" \
           "size\t1\t1 1\r\nposition 1 1 0\r\norientation\t0 0 -90\r\n"
    path = tmp_path / "p.world"
    path.write_bytes(text.encode("utf-8"))
    (wall,) = files.load(path).objects
    assert wall.shape == "box" and wall.line == 3 and wall.yaw == pytest.approx(-math.pi / 2)


def test_colour_names_and_zero_speed(tmp_path):
    (tmp_path / "w.world").write_text(FLOOR)
    path = tmp_path / "t.scenario"
    path.write_text(HEAD + ROBOT + "color magenta\n[SETTINGS]\nspeed 0\nrecord 0\n")
    scenario = files.load(path)
    assert scenario.robots[0].color == COLORS["magenta"]
    assert scenario.settings.speed == 0.0 and scenario.settings.record is False


def test_parsers_are_pure_and_specs_frozen():
    text = (DATA / "small.world").read_text()
    first, second = files.parse_world(text, "a.world"), files.parse_world(text, "a.world")
    assert first == second
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.objects[0].mass = 3.0  # type: ignore[misc]


def test_parse_world_without_a_path():
    world = files.parse_world(FLOOR)
    assert world.path == "" and world.objects == ()


def test_scenario_from_world():
    world = files.load_world(DATA / "small.world")
    scenario = files.scenario_from_world(world)
    assert isinstance(scenario, ScenarioSpec)
    assert scenario.world is world and scenario.name == "small"
    assert scenario.robots == () and scenario.targets == () and scenario.objects == ()
    assert scenario.settings == Settings()


def test_load_dispatches_on_extension():
    assert isinstance(files.load(DATA / "small.world"), WorldSpec)
    assert isinstance(files.load(str(DATA / "small.scenario")), ScenarioSpec)


def test_check_reports_one_line_per_bad_file_in_order(tmp_path):
    good = DATA / "small.scenario"
    bad = tmp_path / "b.world"
    bad.write_text("[FLOOR]\nsize 1 1\n")
    problems = check_files([good, bad, DATA / "uses_broken.scenario", DATA / "small.world"])
    assert problems == [f"{bad}:2: size needs 3 values (length width height), got 2",
                        f"{DATA / 'broken.world'}:8: position needs 3 values (x y z), got 2"]
    assert check_files([]) == [] and check_files(str(good)) == []


def test_mangled_files_only_ever_raise_file_format_errors(tmp_path):
    rng = random.Random(2024)
    pieces = ["[", "]", "#", " ", "\t", "nan", "-1", "1e999", "0", "x", "é", "[WALL_1]",
              "[ROBOT_1]", "[FLOOR]", "size", "type", "position", "color", "param", "a.b",
              "9" * 30, "[WORLD] file", "\r"]
    (tmp_path / "w.world").write_text(FLOOR)
    sources = [p.read_text() for p in WORLDS + [DATA / "small.world"]]
    sources.append(HEAD + ROBOT + "[TARGET]\nred 1 1 0\n[SETTINGS]\ndt 0.01\n")
    for i in range(600):
        lines = rng.choice(sources).split("\n")
        for _ in range(rng.randint(1, 3)):
            junk = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
            lines.insert(rng.randrange(len(lines) + 1), junk)
        text = "\n".join(lines)
        for ext in (".world", ".scenario"):
            path = tmp_path / f"m{ext}"
            path.write_text(text)
            try:
                files.load(path)
            except FileFormatError as exc:
                assert str(exc).startswith(f"{path}:") or str(exc).startswith(f"{tmp_path}")


# --- the shipped worlds and scenarios -------------------------------------------------------------

def test_shipped_files_are_all_there():
    assert {p.name for p in WORLDS} >= {"empty.world", "arena.world", "corridor.world",
                                        "maze.world", "paper_template.world"}
    assert {p.name for p in SCENARIOS} >= {"one_robot.scenario", "five_robots.scenario",
                                           "team2_bar.scenario", "two_teams.scenario",
                                           "paper_template.scenario"}


@pytest.mark.parametrize("path", WORLDS + SCENARIOS, ids=lambda p: p.name)
def test_shipped_file_loads(path):
    assert check_files([path]) == []
    if "paper_template" not in path.name:
        assert path.read_text().startswith("# "), "every shipped file starts with a comment"


def test_shipped_scenarios_hold_what_they_promise():
    load = {p.stem: files.load_scenario(p) for p in SCENARIOS}
    assert [r.type for r in load["one_robot"].robots] == ["single"] and load["one_robot"].targets
    five = load["five_robots"]
    assert len(five.robots) == 5 and len(five.targets) == 2
    assert five.world.path.endswith(os.path.join("worlds", "arena.world"))
    bar = load["team2_bar"]
    assert [r.type for r in bar.robots] == ["team2"] and bar.targets[0].color == "magenta"
    assert [r.type for r in load["two_teams"].robots] == ["team2", "team2"]


def test_arena_has_every_shape_and_movable_objects():
    world = files.load_world(ROOT / "worlds" / "arena.world")
    assert (world.floor.length, world.floor.width) == (8.0, 8.0)
    assert {o.shape for o in world.objects} == {"box", "cylinder", "sphere"}
    assert any(not o.static for o in world.objects) and any(o.static for o in world.objects)


@pytest.mark.parametrize("name", ["paper_template.world", "paper_template.scenario"])
def test_paper_templates_use_only_the_paper_style(name):
    folder = "worlds" if name.endswith(".world") else "scenarios"
    lines = (ROOT / folder / name).read_text().splitlines()
    assert not any("#" in line or not line.strip() for line in lines)
    entries = [line for line in lines if not line.startswith("[")]
    assert entries and all("\t" in line for line in entries)
    paper_keys = {"size", "type", "position", "orientation", "mass", "color", "name"} | set(COLORS)
    assert {line.split()[0] for line in entries} <= paper_keys
    if folder == "scenarios":
        assert lines[0].startswith("[WORLD]") and lines[0].split()[1] == "file"
        assert all(ln.split("]")[0].strip("[") in ("WORLD", "TARGET") or ln.startswith("[ROBOT_")
                   for ln in lines if ln.startswith("["))
    assert check_files([ROOT / folder / name]) == []


def test_paper_template_scenario_contents():
    scenario = files.load_scenario(ROOT / "scenarios" / "paper_template.scenario")
    assert scenario.world.path == str(ROOT / "worlds" / "paper_template.world")
    assert [(r.type, r.name) for r in scenario.robots] == [("single", "robot1"), ("team2", "team1")]
    assert scenario.robots[0].yaw == pytest.approx(math.pi / 2)
    assert scenario.robots[0].color == (255, 0, 0)


def test_docs_world_example_parses():
    doc = (ROOT / "docs" / "files.md").read_text()
    block = doc.split("### Example\n\n```\n", 1)[1].split("```", 1)[0]
    world = files.parse_world(block, "example.world")
    assert [o.name for o in world.objects] == ["WALL_1", "WALL_2", "WALL_3"]
