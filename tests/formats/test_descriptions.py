"""Robots from a description file (URDF, MJCF): the scenario keys, the safe read, the checks
with file:line, and a real load on MuJoCo (docs/files.md "Robots from a description file")."""

from __future__ import annotations

import math
import shutil
import site
from pathlib import Path

import pytest

from coopsim.formats.description import MAX_BYTES
from coopsim.formats.files import load_scenario, parse_scenario
from coopsim.model.errors import FileFormatError, NotAllowedError
from coopsim.description.robot import DescriptionSpec, ImportedType
from coopsim.model.plugins import ROBOT_TYPES

DATA = Path(__file__).resolve().parent.parent / "data" / "descriptions"
ARM = (DATA / "tiny_arm.urdf").read_text()


def scenario_text(description: str = "arm.urdf", extra: str = "",
                  world: str = str(DATA / "floor.world")) -> str:
    return (f"[WORLD]\nfile {world}\n\n[ROBOT_1]\ndescription {description}\n"
            f"name arm1\nposition 0.5 0 0\n{extra}\n[SETTINGS]\nengine mujoco\n")


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def load(folder: Path, urdf: str, extra: str = "", name: str = "arm.urdf"):
    write(folder, name, urdf)
    scenario = write(folder, "s.scenario", scenario_text(name, extra))
    return load_scenario(scenario)


def error_of(folder: Path, urdf: str, extra: str = "") -> FileFormatError:
    with pytest.raises(FileFormatError) as info:
        load(folder, urdf, extra)
    return info.value


def test_a_urdf_arm_becomes_a_robot_type_with_its_links_and_joints():
    spec = load_scenario(DATA / "tiny_arm.scenario")
    robot = spec.robots[0]
    assert robot.type == "tiny_arm" and isinstance(robot.description, DescriptionSpec)
    assert robot.description.get("tool") == ("tool",)
    rtype = ROBOT_TYPES.get("tiny_arm")
    assert issubclass(rtype, ImportedType)
    d = rtype.DESCRIPTION
    assert d.root == "base_link" and [l.name for l in d.links] == ["base_link", "upper", "fore",
                                                                  "tool"]
    shoulder = d.joint("shoulder")
    assert (shoulder.kind, shoulder.parent, shoulder.child) == ("revolute", "base_link", "upper")
    assert (shoulder.lower, shoulder.upper, shoulder.speed, shoulder.effort) == (-1.5, 1.5, 2.0,
                                                                                 40.0)
    assert shoulder.axis == (0.0, 1.0, 0.0) and shoulder.origin_xyz == (0.0, 0.0, 0.1)
    assert [j.name for j in d.moving] == ["shoulder", "elbow"]
    assert d.link("upper").mass == 1.0 and d.link("upper").parent_joint == "shoulder"


def test_an_entity_declaration_is_refused_with_its_line(tmp_path):
    laughs = ('<?xml version="1.0"?>\n<!DOCTYPE robot [\n<!ENTITY a "lol">\n'
              '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n]>\n<robot name="&b;"/>\n')
    exc = error_of(tmp_path, laughs)
    assert exc.path.endswith("arm.urdf") and exc.line == 2 and "DTD" in exc.reason


def test_an_external_entity_is_refused(tmp_path):
    external = ('<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                '\n<robot name="x">&x;</robot>\n')
    assert "DTD" in error_of(tmp_path, external).reason


def test_a_zero_mass_of_a_moving_link_is_repaired_at_its_line(tmp_path, caplog):
    bad = ARM.replace('<mass value="1.0"/>', '<mass value="0"/>')
    described = ROBOT_TYPES.get(load(tmp_path, bad).robots[0].type).DESCRIPTION
    line = next(n for n, text in enumerate(bad.splitlines(), 1) if 'value="0"' in text)
    assert described.link("upper").mass == pytest.approx(1e-3)
    assert described.repairs == (f"{tmp_path / 'arm.urdf'}:{line}: link 'upper' repaired: moves "
                                 "on joint 'shoulder': mass 0 kg -> 0.001 kg (boundmass)",)
    assert described.repairs[0] in caplog.text
    assert 'mass value="0.001"' in described.text  # what MuJoCo compiles is the repaired one
    frame = ARM.replace('<link name="tool"/>', '<link name="tool"><inertial><mass value="0"/>'
                        '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>'
                        '</link>')
    frame_type = ROBOT_TYPES.get(load(tmp_path, frame).robots[0].type)
    assert frame_type.DESCRIPTION.repairs == ()  # a massless frame on a fixed joint is fine


def test_an_inertia_that_is_not_positive_definite_is_repaired_a_negative_mass_refused(
        tmp_path):
    flat = ARM.replace('ixx="0.008" ixy="0" ixz="0" iyy="0.008" iyz="0" izz="0.001"',
                       'ixx="0.008" ixy="0" ixz="0" iyy="0.008" iyz="0" izz="-3.5e-08"')
    described = ROBOT_TYPES.get(load(tmp_path, flat).robots[0].type).DESCRIPTION
    (repair,) = described.repairs
    assert "link 'upper' repaired: principal moments -3.5e-08, 0.008, 0.008 kg m^2 are not all " \
           "> 0: raised to 8e-05, 0.008, 0.008 (boundinertia)" in repair
    assert described.link("upper").inertia[-1] == pytest.approx(8e-5)
    negative = ARM.replace('<mass value="1.0"/>', '<mass value="-1"/>')
    assert "mass must be >= 0 kg" in error_of(tmp_path, negative).reason
    nan = ARM.replace('ixx="0.008"', 'ixx="nan"')
    assert "needs 1 finite number" in error_of(tmp_path, nan).reason


def test_a_joint_cycle_and_an_unknown_parent_are_refused(tmp_path):
    cycle = ARM.replace("</robot>", '  <joint name="back" type="fixed"><parent link="tool"/>'
                                    '<child link="base_link"/></joint>\n</robot>')
    assert "cycle" in error_of(tmp_path, cycle).reason
    unknown = ARM.replace('<parent link="upper"/>', '<parent link="uper"/>')
    exc = error_of(tmp_path, unknown)
    assert "unknown parent link 'uper'" in exc.reason and exc.line > 0


def test_a_missing_mesh_is_refused_at_the_line_naming_it(tmp_path):
    bad = ARM.replace('<box size="0.04 0.04 0.2"/>', '<mesh filename="package://tiny/fore.stl"/>')
    exc = error_of(tmp_path, bad)
    assert "mesh 'package://tiny/fore.stl' not found" in exc.reason
    assert exc.line == next(n for n, t in enumerate(bad.splitlines(), 1) if "fore.stl" in t)


def test_an_oversized_file_is_refused(tmp_path):
    big = ARM.replace("</robot>", "<!--" + "x" * MAX_BYTES + "--></robot>")
    assert "too large" in error_of(tmp_path, big).reason


def test_a_key_naming_a_link_the_description_lacks_is_refused_at_its_line(tmp_path):
    exc = error_of(tmp_path, ARM, "tool nowhere\n")
    assert exc.path.endswith("s.scenario") and exc.line == 8 and "no link or site 'nowhere'" \
        in exc.reason


def test_a_network_load_reads_no_description_outside_the_data_folders(tmp_path):
    from coopsim.formats.folders import DataFolders
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir(), outside.mkdir()
    shutil.copy(DATA / "floor.world", inside)
    write(outside, "arm.urdf", ARM)
    text = scenario_text(str(outside / "arm.urdf"), world="floor.world")
    with pytest.raises(NotAllowedError, match="description '/.*' is outside the simulation's "):
        parse_scenario(text, inside / "s.scenario", DataFolders([inside]))


def test_the_arm_is_built_on_mujoco_with_prefixed_names():
    pytest.importorskip("mujoco")
    from coopsim.sim.simulation import Simulation
    sim = Simulation(load_scenario(DATA / "tiny_arm.scenario"))
    engine = sim.world.engine
    sim.physics()
    model = engine.model
    names = {model.body(i).name for i in range(model.nbody)}
    assert {"arm1/base_link", "arm1/upper", "arm1/fore", "arm1/tool"} <= names
    imported = engine._imports[0]
    assert set(imported.joints) == {"shoulder", "elbow"}
    q, _ = imported.addresses()
    assert model.jnt_range[[model.body_jntadr[imported.bodies["upper"]]]][0] == \
        pytest.approx([-1.5, 1.5])
    assert all(math.isfinite(engine.data.qpos[k]) for k in q)


def test_coopsim_check_exits_2_with_the_line_and_list_shows_the_imported_type(tmp_path):
    from click.testing import CliRunner
    from coopsim.app.cli import main
    write(tmp_path, "arm.urdf", ARM.replace('<mass value="0.5"/>', '<mass value="-1"/>'))
    bad = write(tmp_path, "s.scenario", scenario_text("arm.urdf"))
    result = CliRunner().invoke(main, ["check", str(bad)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{tmp_path / 'arm.urdf'}:16: link 'fore': mass must be >= 0 kg" in result.output
    result = CliRunner().invoke(main, ["list", str(DATA / "tiny_arm.scenario")])
    assert result.exit_code == 0, result.output
    assert "tiny_arm       imported from URDF tiny_arm.urdf: 4 links, 2 moving joints" \
        in result.output


def test_a_floating_base_is_a_free_body_and_an_mjcf_arms_servos_replace_its_actuators(
        tmp_path):
    pytest.importorskip("mujoco")
    from coopsim.sim.simulation import Simulation
    shutil.copy(DATA / "tiny_arm.urdf", tmp_path / "arm.urdf")
    shutil.copy(DATA / "tiny_arm.xml", tmp_path / "arm.xml")
    text = scenario_text("arm.urdf", "base floating\n").replace(
        "[SETTINGS]", "[ROBOT_2]\ndescription arm.xml\nname arm2\nposition -0.5 0 0\n"
        "tool tip\n[SETTINGS]")
    sim = Simulation(load_scenario(write(tmp_path, "s.scenario", text)))
    sim.physics()
    model = sim.world.engine.model
    free = [model.jnt_bodyid[j] for j in range(model.njnt) if model.jnt_type[j] == 0]
    assert len(free) == 1 and model.body(model.body_parentid[
        next(model.body(i).id for i in range(model.nbody) if model.body(i).name ==
             "arm1/base_link")]).id == free[0]
    # with a tool its joints are an arm's: coopsim's servos drive them, the file's own actuator
    # on the shoulder would fight them (coopsim.physics.mujoco.imported_arm)
    names = [model.actuator(i).name for i in range(model.nu)]
    assert "arm2/shoulder_servo" not in names and "arm2/shoulder/servo" in names
    assert model.jnt_range[model.joint("arm2/elbow").id] == pytest.approx([-2.0944, 2.0944],
                                                                          abs=1e-4)


def _example_robot(relative: str) -> Path:
    """A file of example-robot-data (the test extra), or skip."""
    for folder in site.getsitepackages():
        path = Path(folder) / "cmeel.prefix/share/example-robot-data/robots" / relative
        if path.exists():
            return path
    pytest.skip("example-robot-data is not installed")


def test_a_realistic_urdf_loads_its_package_meshes_without_a_search_key(tmp_path):
    urdf = _example_robot("ur_description/urdf/ur5_robot.urdf")
    spec = load_scenario(write(tmp_path, "s.scenario", scenario_text(str(urdf))))
    described = ROBOT_TYPES.get(spec.robots[0].type).DESCRIPTION
    assert len(described.moving) == 6 and len(described.links) == 11
    meshes = [m for link in described.links for m in link.meshes]
    assert {m.path[-4:] for m in meshes} == {".stl", ".dae"}  # its .dae visuals are read too


def test_what_mujoco_refuses_is_reported_by_check_at_the_files_line(tmp_path):
    pytest.importorskip("mujoco")
    (tmp_path / "flat.obj").write_text("v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nf 1 2 3\n")
    flat = ARM.replace('<link name="tool"/>', '<link name="tool"><collision><geometry>'
                                              '<mesh filename="flat.obj"/></geometry>'
                                              '</collision></link>')
    exc = error_of(tmp_path, flat)  # [SETTINGS] engine mujoco: the engine's check runs
    assert exc.path.endswith("arm.urdf") and exc.line == 20  # the <mesh> naming flat.obj
    assert "MuJoCo cannot build" in exc.reason and "\n" not in exc.reason


def test_an_mjcf_names_no_file_outside_the_data_folders(tmp_path):
    from coopsim.formats.folders import DataFolders
    inside = tmp_path / "in"
    inside.mkdir()
    shutil.copy(DATA / "floor.world", inside)
    (tmp_path / "secret.png").write_bytes(b"x")
    mjcf = (DATA / "tiny_arm.xml").read_text().replace(
        "<worldbody>", '<asset><texture name="t" type="2d" file="../secret.png"/></asset>\n'
                       "  <worldbody>")
    write(inside, "arm.xml", mjcf)
    with pytest.raises(NotAllowedError, match="file '../secret.png' is outside"):
        parse_scenario(scenario_text("arm.xml", world="floor.world"), inside / "s.scenario",
                       DataFolders([inside]))
    write(inside, "arm.xml", mjcf.replace("../secret.png", "gone.png"))
    with pytest.raises(FileFormatError, match="file 'gone.png' not found"):
        parse_scenario(scenario_text("arm.xml", world="floor.world"), inside / "s.scenario",
                       DataFolders([inside]))


def two_robots(folder: Path, first: str, second: str) -> Path:
    """A scenario with two robots of one file (tiny_arm.urdf), each with its own keys."""
    write(folder, "arm.urdf", ARM)
    return write(folder, "two.scenario", (
        f"[WORLD]\nfile {DATA / 'floor.world'}\n\n"
        f"[ROBOT_1]\ndescription arm.urdf\nname arm1\nposition 0.5 0 0\n{first}\n"
        f"[ROBOT_2]\ndescription arm.urdf\nname arm2\nposition -0.5 0 0\n{second}\n"
        "[SETTINGS]\nengine mujoco\n"))


def test_two_robots_of_one_file_with_other_keys_are_two_types(tmp_path):
    # one label for both gave the first robot the second's modules (its imu, not its lidar)
    spec = load_scenario(two_robots(tmp_path, "sensor lidar upper", "sensor imu fore"))
    types = [r.type for r in spec.robots]
    assert types == ["tiny_arm", "tiny_arm_2"]
    first, second = (ROBOT_TYPES.get(t).modules for t in types)
    assert "lidar" in first and "imu" not in first
    assert "imu" in second and "lidar" not in second


def test_two_robots_of_one_file_with_the_same_keys_share_their_type(tmp_path):
    spec = load_scenario(two_robots(tmp_path, "sensor imu fore", "sensor imu fore"))
    assert [r.type for r in spec.robots] == ["tiny_arm", "tiny_arm"]


def test_a_type_made_from_other_keys_of_an_earlier_robot_is_refused_at_its_line(tmp_path):
    path = two_robots(tmp_path, "type arm\nsensor lidar upper", "type arm\nsensor imu fore")
    with pytest.raises(FileFormatError) as info:
        load_scenario(path)
    assert info.value.line == path.read_text().splitlines().index("type arm", 8) + 1
    assert "[ROBOT_1]'s, built from other keys" in str(info.value)
