"""docs/experiments/robot-files.md's table of example-robot-data: the script that
writes it, run on one robot of each kind from the package as installed (each loads as shipped, its FK within 1 mm /
0.1° of Pinocchio's, its kind's check's figure within its goal), and the table in the docs
naming every URDF the installed package ships."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "robots"))

pytest.importorskip("mujoco")
pytest.importorskip("collada")
pytest.importorskip("pinocchio")
robot_table = pytest.importorskip("robot_table")

#: One robot of each kind: file -> kind (B1: its SRDF height is 2.2 cm above its stance's;
#: the quadruped, cheap, stands without an SRDF or foot spheres: its lowest collision point).
ONE_PER_KIND = {"z1.urdf": "arm", "tiago.urdf": "wheeled", "iris.urdf": "multirotor",
                "b1.urdf": "legged", "quadruped.urdf": "legged",
                "talos_reduced.urdf": "humanoid", "allegro_right_hand.urdf": "hand",
                "double_pendulum.urdf": "bench"}
#: Each kind's figure in its check (tests/robots/robotchecks) and its goal: a regression past
#: the goal fails here.
GOALS = {"arm": ("move_to", "worst {} mm", 5.0), "wheeled": ("odometry", "straight: odometry "
                                                              "{} %", 1.0),
         "multirotor": ("hover", "hover at 1 m: {} cm", 2.0),
         "legged": ("stands", "worst {} cm off", 2.0),
         "humanoid": ("held", "worst {} rad", 0.1), "hand": ("held", "worst {} rad", 0.1),
         "bench": ("held", "worst {} rad", 0.1)}


def _figure(text: str, pattern: str) -> float:
    """The number in ``text`` where ``{}`` stands in ``pattern``."""
    head, tail = pattern.split("{}")
    return float(text.split(head, 1)[1].split(tail, 1)[0])


def _share():
    try:
        return robot_table.share()
    except Exception:  # noqa: BLE001 -- PackageNotFoundError: the test extra is missing
        pytest.skip("example-robot-data is not installed (pip install '.[test]')")


@pytest.mark.slow
def test_one_robot_of_each_kind_loads_as_shipped_and_passes_its_checks():
    _share()
    rows = robot_table.table(list(ONE_PER_KIND))
    assert {r.file: r.kind for r in rows} == ONE_PER_KIND
    for r in rows:
        assert r.loaded, f"{r.file}: {r.missing}"
        assert r.fk is not None and r.fk.ok, f"{r.file}: {r.fk}"
        word, pattern, goal = GOALS[r.kind]
        assert r.motion is not None and r.motion.ok is True, f"{r.file}: {r.motion}"
        assert word in r.motion.figure and _figure(r.motion.figure, pattern) <= goal, \
            f"{r.file}: {r.motion.figure}"
        assert 0 < r.cpu_s and 0 < r.cold_s  # timed (no timed assertion: a loaded machine)
    tiago = next(r for r in rows if r.file == "tiago.urdf")
    assert tiago.loads == "yes (2 repaired)" and "dae" in tiago.meshes  # the antennas
    text = robot_table.markdown(rows)
    assert text.count("\n| ") == len(rows)  # below the header and its rule: a line a robot
    assert "Loaded as shipped: 8 of 8 (100 %)" in text
    quadruped = next(r for r in rows if r.file == "quadruped.urdf")
    assert "its lowest collision point (FL_contact) on the floor" in quadruped.motion.figure


def test_an_empty_file_is_a_row_saying_why(tmp_path):
    _share()
    (row,) = robot_table.table(["ur3.urdf"])
    assert (row.loads, row.kind) == ("no", "arm") and "empty <robot>" in row.missing


def test_the_docs_table_lists_every_urdf_of_the_installed_package(tmp_path):
    robots = _share()
    doc = (ROOT / "docs" / "experiments" / "robot-files.md").read_text()
    table = doc.split(robot_table.BEGIN, 1)[1].split(robot_table.END, 1)[0]
    listed = {line.split(" | ")[1] for line in table.splitlines() if line.startswith("| ")}
    shipped = {Path(p).name for p in robot_table.urdfs(robots)}
    assert shipped <= listed, f"not in the page: {sorted(shipped - listed)} (run " \
                              "tests/robots/robot_table.py --write)"
    copy = tmp_path / "robots.md"
    copy.write_text(f"head\n{robot_table.BEGIN}\nold\n{robot_table.END}\ntail\n")
    robot_table.write("| new |", copy)
    assert copy.read_text() == f"head\n{robot_table.BEGIN}\n| new |\n{robot_table.END}\ntail\n"
