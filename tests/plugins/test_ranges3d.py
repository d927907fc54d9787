"""Range sensing in 3D: on the ``mujoco`` engine the ``lidar``, ``sonar``,
``proximity`` and ``altimeter`` cast from the sensor's real 3D pose against the 3D geometry
(MuJoCo's ``mj_multiRay``), checked against distances worked out by hand in a walled room; on
2D engines every reading stays bit for bit what it was before (digests taken on the code
before range sensing went 3D)."""

from __future__ import annotations

import dataclasses
import hashlib
import math

import numpy as np
import pytest

from coopsim.model.params import ParameterError
from coopsim.model.specs import ParamSetting, RobotSpec
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, cylinder, robot, scenario

LENGTH, WIDTH, WALL_TOP = 4.0, 3.0, 4.0  # the room: the floor's edges, the walls' height (m)


def flyer_type():
    """``cf_ranges``: a Crazyflie carrying a lidar and a sonar too (how a plugin puts range
    sensors on a quadrotor), registered once."""
    from coopsim.model.plugins import ROBOT_TYPES
    from coopsim.plugins.robots.crazyflie import Crazyflie

    if "cf_ranges" not in ROBOT_TYPES:
        ROBOT_TYPES.register("cf_ranges")(type("CfRanges", (Crazyflie,), {
            "label": "cf_ranges", "modules": Crazyflie.modules + ("lidar", "sonar")}))


def flyer(name, x, y, z, params=(), yaw=0.0) -> RobotSpec:
    flyer_type()
    return RobotSpec("cf_ranges", name, (x, y, z), yaw,
                     params=tuple(ParamSetting("lidar", k, v) for k, v in params))


def run(robots, objects=(), engine="mujoco", floor=(LENGTH, WIDTH), tilt=None):
    """A lockstep run of one step; ``tilt`` (robot name, quaternion w x y z) sets a flyer's
    attitude before it (nothing turns it within one step: no torque, no spin)."""
    scn = scenario(robots, objects, floor=floor, seed=3)
    scn = dataclasses.replace(scn, settings=dataclasses.replace(scn.settings, engine=engine))
    stepper = Stepper(Simulation(scn), mode="lockstep")
    if tilt is not None:
        engine_ = stepper.sim.world.engine
        engine_.state3d()  # compiles the model
        row = stepper.sim.robots.index[tilt[0]]
        body = engine_._robots[row]
        engine_.data.qpos[body.qadr + 3:body.qadr + 7] = tilt[1]
    stepper.tick()
    return stepper


def room_distance(origin, direction) -> float:
    """Distance from ``origin`` along unit ``direction`` to the floor (z = 0) or a wall of the
    room (|x| = LENGTH / 2, |y| = WIDTH / 2, up to WALL_TOP), m; inf when it leaves."""
    best = math.inf
    if direction[2] < -1e-12:
        best = -origin[2] / direction[2]
    for axis, half in ((0, LENGTH / 2), (1, WIDTH / 2)):
        for side in (-half, half):
            if abs(direction[axis]) > 1e-12:
                t = (side - origin[axis]) / direction[axis]
                if 0 < t < best and origin[2] + t * direction[2] <= WALL_TOP:
                    best = t
    return best


def rotation(q) -> np.ndarray:
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def expected_scan(state, beams, channels, vfov_deg, reach, fov=2 * math.pi):
    """The scan (channels x beams) a lidar at a flyer's centre (state3d row) should read."""
    from coopsim.plugins.modules import ranging

    rot = rotation(state[3:7])
    azimuth = ranging.beam_angles(beams, fov)
    elevation = (np.zeros(1) if channels == 1 else
                 np.radians(np.linspace(-vfov_deg / 2, vfov_deg / 2, channels)))
    out = []
    for e in elevation:
        for a in azimuth:
            d = rot @ np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a),
                                math.sin(e)])
            out.append(min(room_distance(state[:3], d), reach))
    return np.array(out)


@pytest.fixture(scope="module")
def room():
    """A 16 x 90 lidar on a Crazyflie 1 m up, off-centre and turned, in the bare room."""
    st = run([flyer("cf", 0.3, -0.2, 1.0, [("beams", 90), ("channels", 16), ("vfov", 30.0),
                                           ("max_range", 8.0), ("x", 0.0)], yaw=0.4)])
    return st


def test_a_lidar_1_m_up_in_a_room_reads_the_walls_to_1_cm(room):
    snap = room.snapshot
    state = room.sim.world.engine.state3d()[room.sim.robots.index["cf"]]
    assert 0.99 < state[2] < 1.0  # one step of falling
    scan = snap.extra["lidar"].of("cf")
    assert scan.shape == (16 * 90,)
    want = expected_scan(state, 90, 16, 30.0, 8.0)
    assert np.abs(scan - want).max() < 0.01
    info = snap.reading("cf", "lidar")
    assert info[2] == 90 and info[0] == pytest.approx(want.min(), abs=0.01)


def test_the_point_cloud_lies_on_the_walls(room):
    snap = room.snapshot
    state = room.sim.world.engine.state3d()[room.sim.robots.index["cf"]]
    info = snap.reading("cf", "lidar")
    cloud = snap.extra["lidar"].points("cf", info[3] + np.arange(90) * info[4])
    assert cloud.shape == (16 * 90, 3)  # every beam returns: the room is closed
    world = cloud @ rotation(state[3:7]).T + state[:3]
    on_wall = np.minimum(np.abs(np.abs(world[:, 0]) - LENGTH / 2),
                         np.abs(np.abs(world[:, 1]) - WIDTH / 2))
    assert on_wall.max() < 0.01
    from coopsim.plugins.modules.lidar import Lidar
    command = next(c for c in Lidar.commands if c.name == "points")
    _, flat = Lidar.answer_robot(command, "cf", snap.reading("cf", "lidar"), "", snap)
    assert np.allclose(np.reshape(flat, (-1, 3)), cloud)


def test_a_crazyflie_flies_over_a_low_wall_a_ground_robot_sees(room):
    low = box("low", 1.0, 0.0, size=(0.2, 2.8))  # 0.5 m tall, its face at x = 0.9
    st = run([flyer("cf", 0.0, 0.5, 1.0, [("beams", 4), ("max_range", 8.0)]),
              robot("tb", 0.0, -0.5, 0.0, type="turtlebot3",
                    params=[("lidar", "beams", 4), ("lidar", "x", 0.0),
                            ("lidar", "max_range", 8.0)])], [low])
    scans = st.snapshot.extra["lidar"]
    assert scans.of("cf")[2] == pytest.approx(LENGTH / 2, abs=0.01)  # ahead: the room's wall
    assert scans.of("tb")[2] == pytest.approx(0.9, abs=0.01)  # ahead: the low wall
    sonar = st.snapshot.reading("cf", "sonar")
    assert sonar[5] == pytest.approx(LENGTH / 2 - 0.0695, abs=0.01)  # over it, from the edge
    assert st.snapshot.reading("cf", "altimeter")[0] == pytest.approx(1.0 - 0.0145, abs=0.01)


def test_tilted_20_degrees_the_beams_hit_the_floor_where_geometry_says():
    pitch = math.radians(20.0)  # nose down: a positive turn about the body's y axis
    q = (math.cos(pitch / 2), 0.0, math.sin(pitch / 2), 0.0)
    st = run([flyer("cf", 0.0, 0.0, 1.0, [("beams", 36), ("max_range", 8.0), ("x", 0.0)])],
             floor=(8.0, 8.0), tilt=("cf", q))
    state = st.sim.world.engine.state3d()[0]
    assert rotation(state[3:7])[2, 0] == pytest.approx(-math.sin(pitch), abs=1e-6)
    scan = st.snapshot.extra["lidar"].of("cf")
    global LENGTH, WIDTH
    keep = LENGTH, WIDTH
    LENGTH = WIDTH = 8.0
    try:
        want = expected_scan(state, 36, 1, 0.0, 8.0)
    finally:
        LENGTH, WIDTH = keep
    assert np.abs(scan - want).max() < 0.01
    ahead = scan[18]  # azimuth 0: down to the floor at height / sin(20 deg)
    assert ahead == pytest.approx(state[2] / math.sin(pitch), abs=0.01)
    # the altimeter along the tilted body axis, from the underside
    alt = st.snapshot.reading("cf", "altimeter")[0]
    assert alt == pytest.approx((state[2] - 0.0145 * math.cos(pitch)) / math.cos(pitch),
                                abs=0.01)


def test_the_altimeter_sees_a_box_below_and_proximity_a_wall_in_3d():
    under = box("under", 0.0, 0.0, size=(0.6, 0.6))  # 0.5 m tall
    wall = box("wall", 0.5, 1.0, size=(0.2, 0.6))  # its face at x = 0.4
    st = run([flyer("cf", 0.0, 0.0, 1.0),
              robot("e", 0.4 - 0.035 - 0.02, 1.0, 0.0, type="epuck")], [under, wall])
    assert st.snapshot.reading("cf", "altimeter")[0] == pytest.approx(0.5 - 0.0145, abs=0.01)
    from coopsim.plugins.modules.proximity import intensity
    ir = st.snapshot.reading("e", "proximity")
    assert ir[0] > 0 and ir[7] > 0  # the two front sensors see it, 2 cm off
    assert ir[7] == pytest.approx(intensity(0.02 / math.cos(math.radians(17)) + 0.035 * (
        1 / math.cos(math.radians(17)) - 1), 0.04, 0.01, 4095.0), rel=0.2)


@pytest.mark.parametrize("name, value", [("channels", 0), ("channels", 100000),
                                         ("vfov", 181.0), ("vfov", -1.0)])
def test_absurd_channels_are_refused(room, name, value):
    with pytest.raises(ParameterError):
        room.sim.set_param("cf", "lidar", name, value)
    assert room.sim.world.robot("cf").modules["lidar"]["channels"] == 16  # nothing changed


def test_more_rays_than_a_scan_may_cast_are_refused_with_the_file_line(tmp_path):
    from coopsim.formats.files import load_scenario
    from coopsim.model.errors import CoopsimError

    (tmp_path / "room.world").write_text("[FLOOR]\nsize 4 3 0.1\n")
    path = tmp_path / "big.scenario"
    path.write_text("[WORLD]\nfile room.world\n\n[ROBOT_1]\ntype turtlebot3\nname tb\n"
                    "position 0 0 0\nparam lidar.beams 4096\nparam lidar.channels 64\n"
                    "\n[SETTINGS]\nengine mujoco\n")
    with pytest.raises(CoopsimError, match=r"big.scenario:9: .*channels x beams is 262144"):
        load_scenario(path)


def _digest(engine: str, steps: int = 40) -> str:
    """SHA-256 of every sonar, lidar and proximity reading and lidar scan of 40 steps of a
    seeded, noisy 2D world with moving robots."""
    robots = [robot("s1", 0.0, 0.0, 0.3, type="single", params=[("sonar", "noise", 0.01)]),
              robot("t1", 1.0, 1.0, 1.0, type="turtlebot3",
                    params=[("lidar", "noise", 0.01), ("lidar", "dropout", 5.0)]),
              robot("e1", -1.0, -1.0, 2.0, type="epuck", params=[("proximity", "noise", 3.0)]),
              robot("t2", -3.0, 2.0, 0.0, type="thymio")]
    objects = [box("B", 2.0, 0.0, size=(0.5, 2.0)), cylinder("C", -1.08, -1.0, 0.1),
               box("M", 0.0, 0.5, size=(0.2, 0.2), mass=0.5)]
    scn = scenario(robots, objects, seed=5)
    scn = dataclasses.replace(scn, settings=dataclasses.replace(scn.settings, engine=engine))
    st = Stepper(Simulation(scn), mode="lockstep")
    h = hashlib.sha256()
    for _ in range(steps):
        st.sim.commands["motors"][:] = [[0.3, 0.2]] * len(st.sim.commands["motors"])
        st.tick()
        snap = st.snapshot
        for label in ("sonar", "lidar", "proximity"):
            h.update(np.ascontiguousarray(snap.readings[label]).tobytes())
        h.update(np.ascontiguousarray(snap.extra["lidar"].ranges).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("engine, digest", [
    ("pymunk", "1fb26a522f19824e7e72e3d888cb5189c323d49d8211e8c0f2bc344bfd6df4dd"),
    ("kinematic", "5abb8d518eba97b6b66246ce9460e6481611b19dce5925e155ca48cac0b5df21")])
def test_2d_worlds_read_bit_for_bit_what_they_did_before(engine, digest):
    """The digests were taken with the same code before range sensing
    went 3D: a 2D world's sonar, lidar and proximity readings have not moved by a bit since,
    but for the noise's one move (drawn counter-based from one key a step,
    coopsim.model.noise_kernels; the digests taken again then, nothing else changed)."""
    assert _digest(engine) == digest


CLOUD_WORLD = "[FLOOR]\nsize 4 3 0.05\n"
CLOUD_SCENARIO = """[WORLD]
file        cloud.world

[ROBOT_1]
type        turtlebot3
name        tb
position    0 0 0
param       lidar.rate 5
param       lidar.beams 60
param       lidar.channels 8
param       lidar.max_range 8

[SETTINGS]
dt          0.02
mode        lockstep
seed        2
engine      mujoco
"""


@pytest.fixture(scope="module")
def cloud_run(tmp_path_factory):
    """A recorded 0.4 s run of a TurtleBot3 on mujoco whose lidar has 8 channels."""
    from rechelpers import run_cli

    folder = tmp_path_factory.mktemp("cloud")
    (folder / "cloud.world").write_text(CLOUD_WORLD)
    (folder / "cloud.scenario").write_text(CLOUD_SCENARIO)
    rec = folder / "run.mcap"
    done = run_cli("run", str(folder / "cloud.scenario"), "--headless", "--port", "0",
                   "--duration", "0.4", "--record", str(rec))
    assert done.returncode == 0, done.stderr
    return folder, rec


def _in_room(points, length=4.0, width=3.0) -> np.ndarray:
    """How far each world point (m, 3) is off the floor or the room's walls, m."""
    return np.minimum.reduce([np.abs(points[:, 2]), np.abs(np.abs(points[:, 0]) - length / 2),
                              np.abs(np.abs(points[:, 1]) - width / 2)])


@pytest.mark.slow
def test_foxglove_export_carries_the_point_cloud(cloud_run):
    pytest.importorskip("foxglove")
    from rechelpers import run_cli
    from tests.foxglove.test_export import read_back

    folder, rec = cloud_run
    out = folder / "fox.mcap"
    done = run_cli("export", str(rec), "--foxglove", str(out))
    assert done.returncode == 0, done.stderr
    clouds = [(schema, m) for topic, schema, _, m in read_back(out)
              if topic == "/robots/tb/points"]
    assert len(clouds) == 3 and {s for s, _ in clouds} == {"foxglove.PointCloud"}  # 5 Hz
    cloud = clouds[-1][1]
    assert cloud.frame_id == "tb" and cloud.point_stride == 12
    assert [f.name for f in cloud.fields] == ["x", "y", "z"]
    points = np.frombuffer(cloud.data, dtype="<f4").reshape(-1, 3).astype(float)
    points += [cloud.pose.position.x, cloud.pose.position.y, cloud.pose.position.z]
    assert len(points) == 8 * 60  # the room is closed: every ray returns
    assert _in_room(points).max() < 0.02  # the robot at the origin, level


@pytest.mark.slow
def test_ros2_bag_export_carries_point_cloud2(cloud_run):
    pytest.importorskip("rosbags")
    from rechelpers import run_cli
    from tests.ros2.test_bag import read_bag

    folder, rec = cloud_run
    done = run_cli("export", str(rec), "--ros2", str(folder / "bag"), timeout=300)
    assert done.returncode == 0, done.stderr
    msgs = read_bag(folder / "bag")
    assert msgs["types"]["/tb/points"] == "sensor_msgs/msg/PointCloud2"
    _, cloud = msgs["/tb/points"][-1]
    assert cloud.header.frame_id == "tb/base_link" and cloud.point_step == 12
    assert [f.name for f in cloud.fields] == ["x", "y", "z"] and cloud.width == 8 * 60
    points = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(-1, 3).astype(float)
    assert _in_room(points).max() < 0.02


def test_a_robot_of_several_bodies_does_not_see_its_own_arm_but_sees_anothers():
    """The group swap (coopsim.physics.mujoco.rays): a mobile manipulator's rays skip every
    geom of its own tree (base, arm links, fingers), not only its chassis body."""
    st = run([robot("m", 0.0, 0.0, type="mobile_lwa"), robot("n", 1.5, 0.0, type="mobile_lwa")],
             floor=(6.0, 6.0))
    engine = st.sim.world.engine
    state = engine.state3d()
    up, side = np.array([[[0.0, 0.0, 1.0]]]), np.array([[[1.0, 0.0, 0.0]]])
    for row in (0, 1):  # straight up through its own arm: nothing (the room has no ceiling)
        origin = state[row:row + 1, :3] + [0.0, 0.0, 0.1]
        assert engine.cast3d(np.array([row]), origin, up, np.array([5.0]))[0, 0] == 5.0
    origin = state[0:1, :3] + [0.0, 0.0, 0.6]  # across to the other one's arm: seen
    assert engine.cast3d(np.array([0]), origin, side, np.array([5.0]))[0, 0] < 2.0
    assert engine._rays().spare >= 0 and not engine._rays().alone[0]


def test_a_crazyflie_resting_on_the_floor_reads_about_zero():
    """Its underside sits a hair below the floor's plane: the altimeter still reads ~0, not
    max_range (cast from the body's origin, measured from the underside)."""
    st = run([flyer("cf", 0.0, 0.0, 0.0)])
    for _ in range(20):
        st.tick()
    assert 0.0 <= st.snapshot.reading("cf", "altimeter")[0] < 0.01


def test_the_screened_cast_gives_mj_rays_bits_and_asks_it_where_a_geom_is_on_the_way():
    """Many rays of one or a few from each robot (100 altimeters) are screened by a compiled
    kernel: those that only the floor can stop are worked out there, the others go to
    ``mj_ray``; every distance is ``mj_ray``'s to the bit (the loop of one ``mj_ray`` a ray, the
    path of a robot whose cast swaps groups, is the reference)."""
    from coopsim.physics.mujoco import raykernel as mrk

    mrk._load()  # what a run's loaders do (numba's cache: a load, not a compile)
    cfs = [flyer(f"cf{i}", -1.2 + 0.6 * (i % 5), -0.6 + 0.6 * (i // 5), 1.0) for i in range(10)]
    st = run(cfs + [flyer("low", 0.0, 0.0, 0.3)], [box("under", 1.2, 0.0, size=(0.4, 0.4)),
                                                   cylinder("pole", -1.2, 0.0, 0.3)])
    engine = st.sim.world.engine
    rays = engine._rays()
    rng = np.random.default_rng(5)
    rows = np.repeat(np.arange(11), 3)  # 33 rays: from above the box, the pole, "low"...
    origins = engine.data.xpos[rays.body_ids[rows]] + rng.normal(0.0, 0.05, (33, 3))
    directions = rng.normal(0.0, 0.3, (33, 2, 3)) + [0.0, 0.0, -1.0]  # down, some slanted
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    reach = rng.uniform(0.2, 6.0, 33)
    screen = rays._screen(engine.data)
    marks = np.full(66, mrk.ASK)
    mrk.screen(np.repeat(origins, 2, axis=0), directions.reshape(66, 3),
               np.repeat(rays.body_ids[rows], 2), np.repeat(reach, 2), screen[0],
               engine.model.geom_bodyid, engine.data.geom_xpos, engine.data.geom_xmat,
               engine.model.geom_aabb, *screen[1:], marks)
    assert (marks == mrk.ASK).any() and (marks != mrk.ASK).sum() > 20  # both ways taken
    fast = rays.cast(engine.data, rows, origins, directions, reach)
    rays.swaps[:], rays.swapping = True, True  # the loop of one mj_ray a ray (both: the
    # fast path is taken unless `swapping` says some robot swaps groups)
    slow = rays.cast(engine.data, rows, origins, directions, reach)
    assert np.array_equal(fast.view(np.int64), slow.view(np.int64))
    assert (fast < reach[:, None]).sum() > 40  # most meet something (the floor, the box...)


def test_fewer_rays_than_the_screen_takes_give_the_loops_bits():
    """An altimeter's one ray from each of a few quadrotors (fewer than ``SCREEN``) goes
    through ``mj_ray`` one by one, capped on floats: the loop of one ``mj_ray`` a ray (a
    robot whose cast swaps groups) gives the same distances, hits and misses alike."""
    from coopsim.physics.mujoco import rays as mr

    cfs = [flyer(f"cf{i}", -1.2 + 0.6 * i, 0.0, 1.0) for i in range(4)]
    st = run(cfs, [box("under", -1.2, 0.0, size=(0.4, 0.4))])
    engine = st.sim.world.engine
    rays = engine._rays()
    rng = np.random.default_rng(8)
    rows = np.arange(4)
    origins = engine.data.xpos[rays.body_ids[rows]] + rng.normal(0.0, 0.05, (4, 3))
    directions = rng.normal(0.0, 0.3, (4, 1, 3)) + [0.0, 0.0, -1.0]
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    reach = np.array([5.0, 0.5, 2.0, 0.01])  # the second and fourth fall short of the floor
    assert len(rows) < mr.SCREEN
    fast = rays.cast(engine.data, rows, origins, directions, reach)
    rays.swaps[:], rays.swapping = True, True  # the loop of one mj_ray a ray
    slow = rays.cast(engine.data, rows, origins, directions, reach)
    assert np.array_equal(fast.view(np.int64), slow.view(np.int64))
    assert fast[1, 0] == 0.5 and fast[3, 0] == 0.01 and fast[0, 0] < 1.0  # the box's top
