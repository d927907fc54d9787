"""Mobile robots from description files on the real MuJoCo engine (docs/robots.md "Your own
robot"): the worked examples' wheeled base (examples/descriptions/rover.urdf) drives forward
and turns with its odometry matching its motion, its lidar mounted where the file puts the
link; the Crazyflie-sized quadrotor (nanoquad.urdf) gets the airframe of its file and the
``flight`` driver flies part of an eight (its mean horizontal error printed and bounded; the
whole eight is ``studies/imported_eight.py``); keys naming what cannot be what they say
are refused at their line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.errors import FileFormatError  # noqa: E402
from coopsim.sim.drivers import LocalRobot  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "descriptions"


def _scenario(tmp_path, robot: list[str], dt: float, name: str = "s") -> Path:
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    path = tmp_path / f"{name}.scenario"
    path.write_text("\n".join(["[WORLD]", "file w.world", "[SETTINGS]", "engine mujoco",
                               f"dt {dt}", "mode lockstep", "seed 3", "[ROBOT_1]"] + robot)
                    + "\n")
    return path


def rover(tmp_path, *extra: str) -> Path:
    return _scenario(tmp_path, [f"description {EXAMPLES / 'rover.urdf'}", "name rv",
                                "position 0 0 0", "wheels wheel_left_joint wheel_right_joint",
                                "sensor lidar base_scan", "sensor imu imu_link", *extra], 0.02)


@pytest.fixture(scope="module")
def driven(tmp_path_factory):
    """The rover driven 1 s straight at 0.2 m/s, then 1 s turning on the spot: (poses after
    each, odometry after each, the simulation)."""
    sim = Simulation(load(str(rover(tmp_path_factory.mktemp("rover")))))
    stepper = Stepper(sim, mode="lockstep")
    bot = LocalRobot(sim, "rv")
    out = []
    for left, right in ((0.2, 0.2), (-0.1, 0.1)):
        bot.motors.set_speeds(left, right)
        for _ in range(50):
            snap = stepper.tick()
        out.append((snap.poses[0].copy(), np.array(snap.reading("rv", "odometry"))))
    return out, sim


def test_the_rover_gets_its_axle_top_speed_and_lidar_mount_from_its_file(driven):
    _, sim = driven
    assert sim.world.robot("rv").axle == pytest.approx(0.16)
    bot = LocalRobot(sim, "rv", control=False)
    assert bot.params("motors")["max_speed"] == pytest.approx(6.67 * 0.033)
    lidar = bot.params("lidar")
    assert (lidar["x"], lidar["y"], lidar["yaw"]) == pytest.approx((-0.032, 0.0, 0.0))


def test_the_rover_drives_and_turns_with_its_odometry_matching(driven):
    (after_straight, odo_straight), (after_turn, odo_turn) = driven[0]
    # 1 s at 0.2 m/s (the drive reaches its speed within a step)
    assert after_straight[0] == pytest.approx(0.2, abs=0.01)
    assert abs(after_straight[1]) < 1e-3 and abs(after_straight[2]) < 1e-3
    assert odo_straight[:3] == pytest.approx(after_straight[:3], abs=0.005)
    # 1 s at 0.2 / 0.16 = 1.25 rad/s on the spot
    assert after_turn[2] == pytest.approx(1.25, abs=0.03)
    assert after_turn[:2] == pytest.approx(after_straight[:2], abs=0.005)
    assert odo_turn[2] == pytest.approx(after_turn[2], abs=0.01)


def nanoquad(tmp_path, driver: str = "", *extra: str, spin: str = "ccw cw cw ccw") -> Path:
    return _scenario(tmp_path, [f"description {EXAMPLES / 'nanoquad.urdf'}", "name nq",
                                "position 0 0 0.5", "rotors rotor_fl rotor_fr rotor_bl rotor_br",
                                f"spin {spin}", "kf 2.22e-8", "km 1.324e-10", *extra]
                     + ([f"driver flight {driver}"] if driver else []), 0.005, "q")


def test_the_quadrotor_gets_its_airframe_from_its_file(tmp_path):
    sim = Simulation(load(str(nanoquad(tmp_path))))
    p = LocalRobot(sim, "nq", control=False).params("rotors")
    assert p["mass"] == pytest.approx(0.0271)
    assert p["arm"] == pytest.approx(0.0325 * math.sqrt(2))
    assert (p["ixx"], p["iyy"], p["izz"]) == pytest.approx((1.698e-5, 1.698e-5, 2.936e-5),
                                                           rel=1e-3)
    assert (p["kf"], p["km"]) == (2.22e-8, 1.324e-10)


@pytest.mark.slow
def test_the_flight_driver_flies_the_quadrotor_along_an_eight(tmp_path):
    dt = 0.005
    path = nanoquad(tmp_path, "shape eight size 0.8 period 6 takeoff 1 height 1")
    stepper = Stepper(Simulation(load(str(path))), mode="lockstep")
    where, refs = [], []
    for _ in range(int(round(4.0 / dt))):
        snap = stepper.tick()
        where.append(snap.pose3d[0, :3].copy())
        refs.append(snap.commands["rotors"][0, 5:8].copy())
    flying = slice(int(1.0 / dt), None)  # half a lap after the take-off hold
    where, refs = np.array(where)[flying], np.array(refs)[flying]
    error = np.linalg.norm(where[:, :2] - refs[:, :2], axis=1)
    print(f"imported quadrotor, half an eight: mean horizontal error "
          f"{error.mean() * 1000:.1f} mm, max {error.max() * 1000:.1f} mm")
    assert error.mean() < 0.1
    assert np.ptp(where[:, 0]) > 0.7 and abs(where[:, 2] - 1.0).max() < 0.15


@pytest.mark.parametrize("spin, extra, line, words", [
    ("cw cw cw cw", (), 13, "cannot control thrust, roll, pitch and yaw together"),
    ("ccw cw cw ccw", ("sensor wheels base_link",), 16, "sensor: 'wheels' is not a module"),
    ("ccw cw cw ccw", ("sensor lidar nowhere",), 16, "has no link 'nowhere'"),
    ("ccw cw cw ccw", ("base floating",), 16, "base: a robot with rotors sets its own base"),
])
def test_keys_that_cannot_be_what_they_say_are_refused_at_their_line(tmp_path, spin, extra,
                                                                      line, words):
    with pytest.raises(FileFormatError) as err:
        load(str(nanoquad(tmp_path, "", *extra, spin=spin)))
    assert err.value.line == line and words in str(err.value)


def test_a_planar_base_drives_any_way_on_its_velocity_with_its_odometry_matching(tmp_path):
    # base planar: the rover's wheels left alone (held), the chassis on a planar velocity;
    # beside it the rover on its wheels (both robots' odometry in one module pass)
    path = _scenario(tmp_path, [f"description {EXAMPLES / 'rover.urdf'}", "name rv",
                                "position 0 0 0", "base planar", "type planar_rover", "[ROBOT_2]",
                                f"description {EXAMPLES / 'rover.urdf'}", "name wh",
                                "position 0 2 0", "wheels wheel_left_joint wheel_right_joint"],
                     0.02)
    sim = Simulation(load(str(path)))
    stepper, bot = Stepper(sim, mode="lockstep"), LocalRobot(sim, "rv")
    assert {"velocity", "odometry", "gps", "compass"} <= set(sim.world.robot("rv").modules)
    assert "motors" not in sim.world.robot("rv").modules
    LocalRobot(sim, "wh").motors.set_speeds(0.1, 0.1)
    for command in ((0.1, 0.2, 0.0), (0.0, 0.0, 0.5), (0.2, -0.1, 0.3)):
        bot.velocity.set_velocity(*command)  # world frame
        for _ in range(50):
            snap = stepper.tick()
        pose, odo = snap.poses[0], np.array(snap.reading("rv", "odometry"))
        assert odo[:3] == pytest.approx(pose[:3], abs=1e-6) and odo[3:] == pytest.approx(0)
    wheeled = np.array(snap.reading("wh", "odometry"))
    assert wheeled[0] == pytest.approx(0.3, abs=0.01) and wheeled[3:] == pytest.approx(0.3,
                                                                                        abs=0.01)
    assert pose[2] == pytest.approx(0.8, abs=0.01)  # 0.5 + 0.3 rad/s for 1 s each
    assert pose[:2] == pytest.approx((0.1 + 0.2, 0.2 - 0.1), abs=0.01)


def test_a_planar_base_with_wheels_is_refused_at_its_base_line(tmp_path):
    with pytest.raises(FileFormatError) as err:
        load(str(rover(tmp_path, "base planar")))
    assert err.value.line == 15 and "a robot with wheels sets its own base" in str(err.value)


def _frame(rotor_xy, wheels=()):
    """A description of a base with links at ``rotor_xy`` (m) and wheel joints at y = +-w."""
    from coopsim.description.robot import Description, Joint, Link

    links = [Link("base", mass=1.0, inertia=(0.01, 0, 0, 0.01, 0, 0.02))]
    joints = []
    for k, (x, y) in enumerate(rotor_xy):
        links.append(Link(f"r{k}", f"j{k}", 0.01, (1e-6, 0, 0, 1e-6, 0, 1e-6)))
        joints.append(Joint(f"j{k}", "fixed", "base", f"r{k}", origin_xyz=(x, y, 0.0)))
    for name, y in wheels:
        links.append(Link(name, name, 0.05, (1e-5, 0, 0, 1e-5, 0, 1e-5)))
        joints.append(Joint(name, "continuous", "base", name, origin_xyz=(0.0, y, 0.03)))
    return Description("t", "t.urdf", tuple(links), tuple(joints), root="base")


def test_a_plus_frame_flies_and_wheels_named_right_first_are_refused():
    from coopsim.description.mobile import DescriptionKeyError, airframe, wheel_base

    plus = airframe(_frame([(0.1, 0.0), (0.0, -0.1), (-0.1, 0.0), (0.0, 0.1)]),
                    ("r0", "r1", "r2", "r3"))
    assert plus.spins == ("cw", "ccw", "cw", "ccw")  # alternating from the front, cw first
    x = airframe(_frame([(0.1, -0.1), (-0.1, -0.1), (-0.1, 0.1), (0.1, 0.1)]),
                 ("r3", "r2", "r1", "r0"))
    assert x.rotors == ("r3", "r2", "r1", "r0") and x.arm == pytest.approx(0.1 * math.sqrt(2))
    assert x.spins == ("ccw", "cw", "ccw", "cw")  # front right (r0) and back left cw
    assert 4 * x.kf * x.max_speed ** 2 == pytest.approx(2 * x.mass * 9.81)  # the default kf
    base = _frame([], wheels=(("wl", 0.1), ("wr", -0.1)))
    assert wheel_base(base, "wl", "wr").axle == pytest.approx(0.2)
    assert wheel_base(base, "wl", "wr").radius == pytest.approx(0.03)
    with pytest.raises(DescriptionKeyError, match="name the left wheel first"):
        wheel_base(base, "wr", "wl")


CAR = """<robot name="car">
  <link name="base_link"/>
  <joint name="chassis_joint" type="fixed"><parent link="base_link"/><child link="chassis"/>
    <origin xyz="0 0 0.05"/></joint>
  <link name="chassis"><inertial><origin xyz="0.15 0 0"/><mass value="4"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.06"/></inertial>
    <collision><origin xyz="0.15 0 0.05"/><geometry><box size="0.4 0.15 0.05"/></geometry>
    </collision></link>
  {wheels}
</robot>
"""
WHEEL = """<joint name="{name}_joint" type="{kind}"><parent link="{parent}"/>
    <child link="{name}"/><origin xyz="{x} {y} {z}" rpy="{rpy}"/><axis xyz="{axis}"/>
    <limit effort="10" velocity="100" lower="-1" upper="1"/></joint>
  <link name="{name}"><inertial><mass value="{mass}"/>
    <inertia ixx="0.0003" ixy="0" ixz="0" iyy="0.0003" iyz="0" izz="0.0004"/></inertial>
    {geometry}</link>"""


def test_a_base_whose_mass_sits_ahead_of_its_axle_drives_straight(tmp_path):
    # pybullet's racecar (its 4 kg chassis 0.15 m ahead of the rear axle, steering hinges
    # held): the drive's force and torque, each from its own dof's inertia, pushed its
    # sideways and turning motion against each other, an oscillation every substep; it
    # ended 5 mm aside and 1 degree turned after 2 m (11.6 mm at dt 0.01)
    parts = []
    for side, y in (("left", 0.1), ("right", -0.1)):
        cylinder = '<collision><geometry><cylinder radius="0.05" length="0.045"/></geometry>' \
                   '</collision>'
        parts.append(WHEEL.format(name=f"{side}_rear", kind="continuous", parent="base_link",
                                  x=0, y=y, z=0.05, rpy="1.5708 0 0", axis="0 0 -1", mass=0.34,
                                  geometry=cylinder))
        parts.append(WHEEL.format(name=f"{side}_hinge", kind="revolute", parent="base_link",
                                  x=0.325, y=y, z=0.05, rpy="0 1.5708 0", axis="-1 0 0", mass=0.1,
                                  geometry=""))
        parts.append(WHEEL.format(name=f"{side}_front", kind="continuous",
                                  parent=f"{side}_hinge", x=0, y=0, z=0, rpy="1.5708 0 0",
                                  axis="0 0 -1", mass=0.34, geometry=cylinder))
    (tmp_path / "car.urdf").write_text(CAR.format(wheels="\n  ".join(parts)))
    sim = Simulation(load(str(_scenario(tmp_path, [
        "description car.urdf", "name car", "position 0 0 0",
        "wheels left_rear_joint right_rear_joint"], 0.02))))
    stepper = Stepper(sim, mode="lockstep")
    bot = LocalRobot(sim, "car")
    bot.motors.set_speeds(0.4, 0.4)
    for _ in range(250):
        snap = stepper.tick()
    x, y, yaw = snap.poses[0][:3]
    assert x == pytest.approx(2.0, abs=0.01)
    assert abs(y) < 1e-4 and abs(math.degrees(yaw)) < 0.01, (y, math.degrees(yaw))
