"""The motion goals on example-robot-data's robots as installed (tests/robots/
robot_motion.py runs each check; docs/robots.md states the figures): the TIAGo's base drives
true (odometry against the pose), so does the PR2's caster base on a planar velocity, the
Iris (rotors at -59/-123/123/59 degrees) hovers and flies the eight through the mixer its file gives, a file without rotor links says how to name
them, tilted and + frames mix right, the Go2 stands from its SRDF stance, the Talos stands on its feet in
its half-sitting stance, and its held joints track targets with its base fixed and refuse
targets past their limits."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "robots"))
import robot_motion as rm  # noqa: E402

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.errors import FileFormatError, ProtocolError  # noqa: E402
from coopsim.description.rotors import Mixer, allocation, default_spins  # noqa: E402

ROBOTS = rm.robots_folder()
needs_package = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


def _shipped_or_patched(tmp_path, relative: str) -> Path:
    """The file as shipped; where this checkout still refuses a malformed inertia (the
    TIAGo's 1 mg antennas: the inertia repair of the loading branch), a copy with those
    inertias made diagonal, beside the original's meshes."""
    path = ROBOTS / relative
    text = path.read_text()
    bad = ('ixx="0.00000002371" ixy="0.00000006119" ixz="0.00000001179" iyy="0.00000002833" '
           'iyz="0.00000000774" izz="0.00000003849"')
    try:
        from coopsim.description import robotxml
        repaired = "repair" in robotxml.__doc__.lower()
    except Exception:  # noqa: BLE001
        repaired = False
    if repaired or bad not in text:
        return path
    copy = path.parent / f"_h52_{path.name}"  # beside it: package:// and relative URIs hold
    target = tmp_path / path.name
    target.write_text(text.replace(bad, 'ixx="1e-8" ixy="0" ixz="0" iyy="1e-8" iyz="0" '
                                        'izz="1e-8"'))
    del copy
    return target


@pytest.mark.slow
@needs_package
def test_the_tiago_base_rests_drives_straight_and_turns_with_its_odometry_true(tmp_path):
    urdf = _shipped_or_patched(tmp_path, "tiago_description/robots/tiago.urdf")
    got = rm.check_wheeled(urdf, "wheel_left_joint", "wheel_right_joint")
    print("TIAGo:", got["figure"])
    assert got["rest_mm"] < 0.01 and got["rest_deg"] < 0.001  # 10 s at rest: 0 mm, 0 deg
    assert got["distance_m"] > 1.9 and got["straight_pct"] <= 1.0
    assert got["turned_deg"] == pytest.approx(90, abs=5) and got["turn_deg"] <= 1.0


@pytest.mark.slow
@needs_package
def test_the_pr2_caster_base_rests_drives_straight_sideways_and_turns_with_its_odometry_true():
    # base planar: its casters' joints are fixed in the file; the drive's gain once was the
    # whole robot's inertia and its held arms kept the base turning 4 degrees in 10 s at rest
    got = rm.check_planar(ROBOTS / "pr2_description/urdf/pr2.urdf")
    print("PR2:", got["figure"])
    assert got["rest_mm"] < 0.01 and got["rest_deg"] < 0.001
    assert got["distance_m"] > 1.9 and got["drift_mm"] < 5 and got["straight_pct"] <= 1.0
    assert got["turned_deg"] == pytest.approx(90, abs=5) and got["turn_deg"] <= 1.0


@pytest.mark.slow
@needs_package
def test_the_iris_hovers_and_flies_the_eight_through_its_own_mixer():
    got = rm.check_multirotor(ROBOTS / "iris_description/robots/iris.urdf",
                              [f"iris__rotor_{k}" for k in range(4)], seconds=8.0)
    print("Iris:", got["figure"])
    assert got["hover_m"] <= 0.02 and got["eight_m"] <= 0.1


@needs_package
def test_a_robot_starts_resting_on_its_lowest_collision_point():
    """The Borinot's arm hangs 0.347 m below its base link (set at the floor it was thrown up
    and flipped); the quadruped's contact links carry it 0.345 m up; the Iris' legs 0.055 m."""
    borinot = ROBOTS / "borinot_description/urdf/borinot_flying_arm_2.urdf"
    height, link = rm.resting_height(borinot)
    assert link == "flying_arm_2__link2" and height == pytest.approx(0.3467, abs=2e-4)
    bent = rm.resting_height(borinot, {"flying_arm_2__j_bl_link1": 1.5})[0]
    assert bent < height - 0.1  # the arm swung up: the base's own geometry is lowest
    height, link = rm.resting_height(ROBOTS / "quadruped_description/urdf/quadruped.urdf")
    assert link == "FL_contact" and height == pytest.approx(0.345)
    assert rm.resting_height(ROBOTS / "iris_description/robots/iris.urdf")[0] == \
        pytest.approx(0.055)
    assert len(rm.borinot_lines()) == 6 and {row[-1] for row in rm.borinot_lines()} == \
        {"cw", "ccw"}


@needs_package
def test_a_file_without_rotor_links_says_how_to_name_them(tmp_path):
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    path = tmp_path / "h.scenario"
    urdf = ROBOTS / "hector_description/robots/quadrotor_base.urdf"
    path.write_text("\n".join(["[WORLD]", "file w.world", "[SETTINGS]", "engine mujoco",
                               "[ROBOT_1]", f"description {urdf}", "name hq",
                               "position 0 0 0", *rm._search(urdf, ()),
                               "rotors rotor_0 rotor_1 rotor_2 rotor_3"]) + "\n")
    with pytest.raises(FileFormatError) as err:
        load(str(path))
    assert err.value.line == 10
    assert "has no link 'rotor_0'" in str(err.value) and "rotor X Y Z AX AY AZ" in str(err.value)
    lines = "\n".join(f"rotor {' '.join(map(str, row))}" for row in rm.plus_lines())
    path.write_text(path.read_text().replace("rotors rotor_0 rotor_1 rotor_2 rotor_3", lines))
    assert load(str(path)).robots[0].name == "hq"


def test_the_mixer_gives_an_x_frame_what_it_asks_and_a_tilted_hexa_no_sideways_force():
    arm = 0.1
    xy = np.array([(arm, -arm, 0), (-arm, -arm, 0), (-arm, arm, 0), (arm, arm, 0)], float)
    up = np.tile((0.0, 0.0, 1.0), (4, 1))
    x = Mixer(allocation(xy, up, default_spins(xy), 0.01), top=10.0)
    force, torque = x.remix((0, 0, 8.0), (0.05, -0.03, 0.002))
    assert force == pytest.approx((0, 0, 8.0)) and torque == pytest.approx((0.05, -0.03, 0.002))
    rows = rm.hexa_lines(0.25, 20.0)
    pos = np.array([r[:3] for r in rows], float)
    axes = np.array([r[3:6] for r in rows], float)
    hexa = Mixer(allocation(pos, axes, [r[6] for r in rows], 0.01), top=10.0)
    force, torque = hexa.remix((0, 0, 15.0), (0.1, 0.2, -0.05))
    assert force[2] == pytest.approx(15.0) and torque == pytest.approx((0.1, 0.2, -0.05))
    assert abs(force[0]) < 1e-9 and abs(force[1]) < 1e-9  # the tilts cancel at hover
    assert (hexa.thrusts(np.array((0, 0, 15.0)), np.zeros(3)) > 0).all()
    same = Mixer(allocation(xy, up, ("cw",) * 4, 0.01), top=10.0)  # yaw tied to the thrust
    assert same.remix((0, 0, 8.0), (0, 0, 0.0))[1][2] == pytest.approx(0.01 * 8.0, rel=1e-3)
    assert math.isclose(float(np.linalg.norm(axes[0])), 1.0, abs_tol=1e-5)  # 6 decimals


@pytest.mark.slow
@needs_package
def test_the_go2_stands_from_its_srdf_stance():
    go2 = ROBOTS / "go2_description"
    stance, height = rm.srdf_stance(go2 / "srdf/go2.srdf")
    got = rm.check_legged(go2 / "urdf/go2.urdf", stance, height, seconds=5.0)
    print("Go2:", got["figure"])
    assert got["worst_m"] <= 0.02 and got["past_limits"] == 0


@pytest.mark.slow
@needs_package
def test_the_talos_stands_on_its_feet_in_its_half_sitting_stance():
    urdf = ROBOTS / "talos_data/robots/talos_reduced.urdf"
    stance, height = rm.srdf_stance(ROBOTS / "talos_data/srdf/talos.srdf", "half_sitting")
    stance = {k: v for k, v in stance.items() if k in rm.described_joints(urdf)}
    got = rm.check_legged(urdf, stance, height, seconds=4.0)
    print("Talos standing:", got["figure"])
    assert got["worst_m"] <= 0.02 and got["past_limits"] == 0


@pytest.mark.slow
@needs_package
def test_the_talos_held_joints_track_targets_with_its_base_fixed_and_refuse_past_limits():
    urdf = ROBOTS / "talos_data/robots/talos_reduced.urdf"
    got = rm.check_humanoid(urdf)
    print("Talos:", got["figure"])
    assert got["joints"] == 32 and got["median_rad"] < 0.01 and got["worst_rad"] <= 0.1
    from coopsim.model.plugins import ROBOT_TYPES
    from coopsim.plugins.modules.servos import Servos
    from coopsim.model.module import RobotInfo

    kind = next(label for label in ROBOT_TYPES.labels() if label.startswith("talos"))
    servos = ROBOT_TYPES.get(kind).SERVOS
    command = next(c for c in Servos.commands if c.name == "set_targets")
    targets = [s.home for s in servos]
    targets[0] = servos[0].upper + 0.5
    with pytest.raises(ProtocolError, match=f"{servos[0].name}'s target"):
        Servos.command_row(command, tuple(targets), {}, RobotInfo("t", kind))
    with pytest.raises(ProtocolError, match="one target per held joint"):
        Servos.command_row(command, tuple(targets[:3]), {}, RobotInfo("t", kind))


def test_a_rotor_axis_of_no_length_or_lying_level_is_refused():
    from coopsim.description.robot import Description, Link
    from coopsim.description.mobile import DescriptionKeyError, airframe

    frame = Description("t", "t.urdf", (Link("base", mass=1.0,
                                             inertia=(0.01, 0, 0, 0.01, 0, 0.02)),), (),
                        root="base")
    lines = [list(row) for row in rm.plus_lines()]
    for bad, words in (((0, 0, 0), "has no length"), ((1, 0, 0), "lies level")):
        lines[2][3:6] = bad
        with pytest.raises(DescriptionKeyError, match=words):
            airframe(frame, (), given=tuple(map(tuple, lines)))
    assert len(airframe(frame, (), given=rm.plus_lines()).positions) == 4


@needs_package
@pytest.mark.parametrize("stance, words", [
    ("FL_hip_joint 5", "FL_hip_joint 5 is beyond its limits"),
    ("nowhere 0.1", "'nowhere' is not a held joint"),
    ("FL_hip_joint 0.1 FR_hip_joint", "give pairs of a joint and its position"),
    ("FL_hip_joint high", "FL_hip_joint's position 'high' is not a finite number"),
])
def test_a_stance_past_the_limits_or_of_no_held_joint_is_refused_at_its_line(tmp_path, stance,
                                                                               words):
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    path = tmp_path / "g.scenario"
    urdf = ROBOTS / "go2_description/urdf/go2.urdf"
    path.write_text("\n".join(["[WORLD]", "file w.world", "[SETTINGS]", "engine mujoco",
                               "[ROBOT_1]", f"description {urdf}", "name g", "base floating",
                               "position 0 0 0.4", *rm._search(urdf, ()),
                               f"stance {stance}"]) + "\n")
    with pytest.raises(FileFormatError) as err:
        load(str(path))
    assert err.value.line == 11 and words in str(err.value)
