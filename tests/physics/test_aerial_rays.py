"""Range sensing in 3D on the ``aerial`` engine: its ``lidar``, ``sonar``,
``proximity`` and ``altimeter`` cast from the sensor's real 3D pose against the aerial world's
3D geometry (coopsim.physics.aerial.rays), and read what the ``mujoco`` engine reads in the same
world to 1 cm; the compiled kernel and its numpy twin give the same bits."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from coopsim.model.specs import ObjectSpec, ParamSetting, RobotSpec
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario

LENGTH, WIDTH = 4.0, 3.0  # m, the room
LIDAR = (("beams", 90), ("channels", 16), ("vfov", 30.0), ("max_range", 8.0), ("x", 0.0))


def flyer(name, x, y, z, params=(), yaw=0.0) -> RobotSpec:
    """A Crazyflie carrying a lidar and a sonar too (tests/plugins/test_ranges3d.py's type)."""
    from tests.plugins.test_ranges3d import flyer_type

    flyer_type()
    return RobotSpec("cf_ranges", name, (x, y, z), yaw,
                     params=tuple(ParamSetting("lidar", k, v) for k, v in params))


def run(engine, robots, objects=(), floor=(LENGTH, WIDTH), tilt=None, steps=1):
    """A lockstep run of ``steps`` steps on ``engine``; ``tilt`` (robot name, quaternion w x y
    z) sets a flyer's attitude first (nothing turns it within a step: no torque, no spin)."""
    scn = scenario(robots, objects, floor=floor, seed=3)
    scn = dataclasses.replace(scn, settings=dataclasses.replace(scn.settings, engine=engine))
    stepper = Stepper(Simulation(scn), mode="lockstep")
    if tilt is not None:
        eng = stepper.sim.world.engine
        eng.state3d()  # builds the layout (compiles mujoco's model)
        row = stepper.sim.robots.index[tilt[0]]
        if engine == "mujoco":
            body = eng._robots[row]
            eng.data.qpos[body.qadr + 3:body.qadr + 7] = tilt[1]
        else:
            eng.state[row, 3:7] = tilt[1]
    for _ in range(steps):
        stepper.tick()
    return stepper


def both(robots, objects=(), **kw):
    """The same world run on ``aerial`` and on ``mujoco``: their steppers."""
    return run("aerial", robots, objects, **kw), run("mujoco", robots, objects, **kw)


CLUTTER = (ObjectSpec("tall", "box", (0.4, 0.8, 1.6), (1.2, 0.6, 0.8), 0.5),
           ObjectSpec("post", "cylinder", (0.3, 0.3, 1.4), (-1.2, -0.7, 0.7)),
           ObjectSpec("ball", "sphere", (0.5, 0.5, 0.5), (-1.0, 0.8, 0.9)),
           box("low", 0.6, -0.9, size=(0.3, 0.3)))


@pytest.fixture(scope="module")
def cluttered():
    """A 16 x 90 lidar 1 m up in a room with a yawed box, a post, a ball in the air, a low
    box, another Crazyflie and a TurtleBot3, on both engines."""
    robots = [flyer("cf", 0.1, -0.1, 1.0, LIDAR, yaw=0.4), flyer("other", 0.6, 0.3, 1.05),
              robot("tb", -0.5, 0.2, type="turtlebot3", params=[("lidar", "max_range", 8.0)])]
    return both(robots, CLUTTER)


def test_a_lidar_1_m_up_in_a_cluttered_room_reads_what_mujoco_reads(cluttered):
    aerial, mujoco = (st.snapshot.extra["lidar"] for st in cluttered)
    for name, size in (("cf", 16 * 90), ("tb", 360)):
        a, m = aerial.of(name), mujoco.of(name)
        assert a.shape == m.shape == (size,)
        assert np.abs(a - m).max() < 0.01, name
        assert (a < 7.9).all()  # the room is closed: every ray returns
    scan = aerial.of("cf").reshape(16, 90)
    assert np.ptp(scan, axis=1).min() > 0.5  # not one flat slice: the channels differ


def test_the_other_readings_match_mujoco_too(cluttered):
    aerial, mujoco = (st.snapshot for st in cluttered)
    for name, label in (("cf", "sonar"), ("other", "sonar"), ("cf", "altimeter"),
                        ("other", "altimeter"), ("cf", "lidar")):
        a, m = aerial.reading(name, label), mujoco.reading(name, label)
        assert np.abs(np.asarray(a) - np.asarray(m)).max() < 0.01, (name, label)


def test_a_crazyflie_flies_over_a_low_wall_a_ground_robot_sees():
    low = box("low", 1.0, 0.0, size=(0.2, 2.8))  # 0.5 m tall, its face at x = 0.9
    robots = [flyer("cf", 0.0, 0.5, 1.0, [("beams", 4), ("max_range", 8.0)]),
              robot("tb", 0.0, -0.5, 0.0, type="turtlebot3",
                    params=[("lidar", "beams", 4), ("lidar", "x", 0.0),
                            ("lidar", "max_range", 8.0)])]
    for st in both(robots, [low]):
        scans = st.snapshot.extra["lidar"]
        assert scans.of("cf")[2] == pytest.approx(LENGTH / 2, abs=0.01)  # the room's wall
        assert scans.of("tb")[2] == pytest.approx(0.9, abs=0.01)  # the low wall
        assert st.snapshot.reading("cf", "sonar")[5] == pytest.approx(LENGTH / 2 - 0.0695,
                                                                      abs=0.01)
        assert st.snapshot.reading("cf", "altimeter")[0] == pytest.approx(1.0 - 0.0145,
                                                                          abs=0.01)


def test_tilted_20_degrees_the_beams_hit_the_floor_where_geometry_says():
    pitch = math.radians(20.0)  # nose down: a positive turn about the body's y axis
    q = (math.cos(pitch / 2), 0.0, math.sin(pitch / 2), 0.0)
    runs = both([flyer("cf", 0.0, 0.0, 1.0, [("beams", 36), ("max_range", 8.0), ("x", 0.0)])],
                floor=(8.0, 8.0), tilt=("cf", q))
    scans = []
    for st in runs:
        state = st.sim.world.engine.state3d()[0]
        scan = st.snapshot.extra["lidar"].of("cf")
        assert scan[18] == pytest.approx(state[2] / math.sin(pitch), abs=0.01)  # ahead
        alt = st.snapshot.reading("cf", "altimeter")[0]
        assert alt == pytest.approx((state[2] - 0.0145 * math.cos(pitch)) / math.cos(pitch),
                                    abs=0.01)
        scans.append(scan)
    assert np.abs(scans[0] - scans[1]).max() < 0.01


def test_the_altimeter_sees_a_box_and_a_robot_below_and_proximity_a_wall():
    under = box("under", 0.0, 0.0, size=(0.6, 0.6))  # 0.5 m tall
    wall = box("wall", 0.5, 1.0, size=(0.2, 0.6))  # its face at x = 0.4
    robots = [flyer("cf", 0.0, 0.0, 1.0), flyer("top", -1.0, -0.8, 1.5),
              flyer("below", -1.0, -0.8, 0.6), robot("e", 0.4 - 0.035 - 0.02, 1.0, type="epuck")]
    snaps = [st.snapshot for st in both(robots, [under, wall])]
    for snap in snaps:
        assert snap.reading("cf", "altimeter")[0] == pytest.approx(0.5 - 0.0145, abs=0.01)
        # from top's underside to below's top, both falling alike for one step
        assert snap.reading("top", "altimeter")[0] == pytest.approx(0.9 - 0.029, abs=0.01)
        ir = snap.reading("e", "proximity")
        assert ir[0] > 0 and ir[7] > 0  # the two front sensors see it, 2 cm off
    ir = [np.asarray(snap.reading("e", "proximity")) for snap in snaps]
    assert np.abs(ir[0] - ir[1]).max() < 0.02 * 4095  # 2 % of saturation


def test_random_rays_meet_what_mujoco_meets(cluttered):
    """Rays every way from each robot (other robots, the ball, the yawed box, the post, the
    walls, the floor) on both engines' cast3d, from the same origins."""
    aerial, mujoco = (st.sim.world.engine for st in cluttered)
    rng = np.random.default_rng(11)
    rows = np.repeat(np.arange(3), 100)
    origins = aerial.state[rows, :3] + rng.normal(0.0, 0.02, (300, 3))
    directions = rng.normal(0.0, 1.0, (300, 8, 3))
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    toward = aerial.state[[1, 0, 1]][rows, :3] - origins  # and some at another robot
    directions[:, 0] = toward / np.linalg.norm(toward, axis=1, keepdims=True)
    reach = np.full(300, 6.0)
    a = aerial.cast3d(rows, origins, directions, reach)
    m = mujoco.cast3d(rows, origins, directions, reach)
    assert np.abs(a - m).max() < 0.01
    assert (a[:, 0] < np.linalg.norm(toward, axis=1)).all()  # the robots aimed at are seen
    assert 0.5 < (a < reach[:, None]).mean() < 1.0  # no ceiling: some leave upwards


def test_ranges3d_false_casts_in_the_floor_slice_as_before():
    """The benchmark's baseline (Engine.ranges3d): the altimeter over a box then reads the
    floor's distance from the body's centre, as before."""
    scn = scenario([flyer("cf", 0.0, 0.0, 1.0)], [box("under", 0.0, 0.0, size=(0.6, 0.6))],
                   floor=(LENGTH, WIDTH))
    scn = dataclasses.replace(scn, settings=dataclasses.replace(scn.settings, engine="aerial"))
    stepper = Stepper(Simulation(scn), mode="lockstep")
    stepper.sim.world.engine.ranges3d = False
    stepper.sim._plan = None  # the switch is read as a plan is made (its fused pass casts)
    stepper.tick()
    z = stepper.sim.world.engine.state3d()[0, 2]
    assert stepper.snapshot.reading("cf", "altimeter")[0] == z
    stepper.sim.world.engine.ranges3d = True
    stepper.sim._plan = None
    stepper.tick()
    assert stepper.snapshot.reading("cf", "altimeter")[0] == pytest.approx(0.5 - 0.0145,
                                                                          abs=0.01)


def test_a_landed_crazyflie_reads_zero_and_the_point_cloud_matches_mujoco(cluttered):
    st = run("aerial", [flyer("cf", 0.0, 0.0, 0.0)])
    assert 0.0 <= st.snapshot.reading("cf", "altimeter")[0] < 0.001  # its underside on it
    clouds = []
    for st in cluttered:
        snap = st.snapshot
        info = snap.reading("cf", "lidar")
        clouds.append(snap.extra["lidar"].points("cf", info[3] + np.arange(90) * info[4]))
    assert clouds[0].shape == clouds[1].shape == (16 * 90, 3)
    assert np.abs(clouds[0] - clouds[1]).max() < 0.01
