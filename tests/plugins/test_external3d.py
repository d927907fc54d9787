"""External robots in 3D: a pose with a height and an attitude holds the
body there on ``mujoco`` (immovable: a simulated Crazyflie climbing into it is stopped and does
not move it) and on ``aerial`` (its dynamics skipped), interpolated with slerp between poses;
its lidar casts from that pose; a stale stream leaves it held where it was; on a 2D engine the
body stays planar and ``/sim state`` keeps the streamed pose; the 3D checks (height,
quaternion) refuse with error 14. Lockstep runs of real engines, poses through
``ExternalRobots.receive`` (the socket path is tests/net/test_external3d_process.py)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from coopsim.model import held
from coopsim.model.errors import ProtocolError
from coopsim.model.specs import ExternalSpec
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import robot, scenario
from test_ranges3d import LENGTH, WIDTH, expected_scan, flyer

ROLL = math.radians(20.0)
#: 1 m up, rolled 20 degrees and turned 0.4 rad: the attitude yaw then roll (body axes)
POSE = (0.3, -0.2, 1.0, *held.quat_mul(held.yaw_quat(0.4), (math.cos(ROLL / 2),
                                                            math.sin(ROLL / 2), 0.0, 0.0)).tolist())
LIDAR = [("beams", 90), ("channels", 8), ("vfov", 30.0), ("max_range", 8.0), ("x", 0.0)]
DT = 0.01


def stepper(robots, engine: str) -> Stepper:
    scn = scenario(robots, floor=(LENGTH, WIDTH), seed=3, dt=DT)
    scn = dataclasses.replace(scn, settings=dataclasses.replace(scn.settings, engine=engine))
    return Stepper(Simulation(scn), mode="lockstep")


def external(spec, stale: float = 0.3):
    return dataclasses.replace(spec, external=ExternalSpec(stale=stale, max_speed=2.0))


def angle(q0, q1) -> float:
    """The angle (degrees) between two attitudes."""
    return math.degrees(2 * math.acos(min(1.0, abs(float(np.dot(q0, q1))))))


def assert_at(pose3d, want) -> None:
    assert np.abs(np.asarray(pose3d[:3]) - want[:3]).max() < 1e-3
    assert angle(pose3d[3:], want[3:]) < 0.1


def stream(st: Stepper, name: str, pose, steps: int, wall: float, every: int = 2) -> float:
    """Send ``pose`` every ``every`` steps (wall clock advanced in step with the simulation)
    while taking ``steps`` steps; the last wall time."""
    for k in range(steps):
        if k % every == 0:
            wall += every * DT
            st.sim.external.receive(name, pose, wall=wall)
        st.tick()
    return wall


@pytest.fixture(scope="module")
def flying():
    """A Crazyflie with a lidar, external, in the walled room on mujoco, streamed at POSE."""
    st = stepper([external(flyer("ext", 0.0, 0.0, 0.5, LIDAR))], "mujoco")
    wall = stream(st, "ext", POSE, 6, 0.0)
    return st, wall


def test_a_pose_1_m_up_rolled_20_degrees_holds_the_body_and_its_lidar_casts_from_there(flying):
    st, _ = flying
    snap = st.snapshot
    assert_at(snap.pose3d[snap.index["ext"]], POSE)
    assert np.abs(snap.twist3d[snap.index["ext"]]).max() < 1e-6  # held still
    scan = snap.extra["lidar"].of("ext")
    want = expected_scan(np.asarray(POSE), 90, 8, 30.0, 8.0)
    assert np.abs(scan - want).max() < 0.01


def test_between_poses_the_body_follows_the_line_and_the_slerp(flying):
    st, wall = flying
    turn = tuple(held.quat_mul(held.yaw_quat(0.3), POSE[3:]).tolist())  # 0.3 rad more about z
    far = (POSE[0] + 0.1, POSE[1], POSE[2] + 0.05, *turn)
    st.sim.external.receive("ext", far, wall=wall + 0.1)  # a 10 Hz stream: 0.1 s to get there
    for k in range(1, 12):
        st.tick()
        snap = st.snapshot
        got = snap.pose3d[snap.index["ext"]]
        f = min(1.0, k * DT / 0.1)
        assert_at(got, held.lerp_pose(POSE, far, f))
        assert angle(got[3:], POSE[3:]) == pytest.approx(f * angle(turn, POSE[3:]), abs=0.1)
    st.sim.external.receive("ext", POSE, wall=wall + 0.2)
    for _ in range(12):
        st.tick()


def test_a_stale_stream_leaves_the_body_held_where_it_was(flying):
    st, _ = flying
    for _ in range(40):  # 0.4 s > its stale 0.3 s without a pose
        st.tick()
    state = st.sim.external.state()["robots"]["ext"]
    assert state["status"] == "stale" and "ext" in st.snapshot.extra["external_stale"]
    snap = st.snapshot
    assert_at(snap.pose3d[snap.index["ext"]], POSE)  # not fallen


def test_a_simulated_crazyflie_climbing_into_it_is_stopped_and_does_not_move_it():
    over = (0.0, 0.0, 0.6, math.cos(ROLL / 2), math.sin(ROLL / 2), 0.0, 0.0)
    climber = dataclasses.replace(robot("cf", type="crazyflie"), position=(0.0, 0.0, 0.05),
                                  drivers=(_hover(),))
    st = stepper([external(robot("ext", type="crazyflie"), stale=5.0), climber], "mujoco")
    st.sim.external.receive("ext", over, wall=0.0)
    highest = 0.0
    for k in range(150):  # 1.5 s: the hover at 1 m would take it through the external one
        st.tick()
        snap = st.snapshot
        assert_at(snap.pose3d[snap.index["ext"]], over)
        highest = max(highest, snap.pose3d[snap.index["cf"], 2])
    assert 0.45 < highest < 0.6  # it climbed up to it and stopped under it


def _hover():
    from coopsim.model.specs import DriverSetting

    return DriverSetting("flight", (("shape", "hover"), ("height", 1.0)))


def test_on_aerial_the_pose_is_held_at_its_height_and_attitude_a_ground_robot_planar():
    st = stepper([external(flyer("ext", 0.0, 0.0, 0.5, LIDAR)),
                  external(robot("rover", x=-1.0))], "aerial")
    rover = (-1.0, 0.5, *POSE[2:])
    for k in range(20):
        if k % 2 == 0:
            st.sim.external.receive("rover", rover, wall=k * DT)
        st.tick()
    stream(st, "ext", POSE, 20, 0.0)
    snap = st.snapshot
    assert_at(snap.pose3d[snap.index["ext"]], POSE)
    level = (-1.0, 0.5, 0.0, *held.yaw_quat(float(held.planar([*rover, *[0.0] * 6])[0, 2])))
    assert_at(snap.pose3d[snap.index["rover"]], level)  # on the floor, level, its yaw


def test_on_a_2d_engine_the_body_is_planar_and_the_state_keeps_the_3d_pose():
    st = stepper([external(robot("ext", x=0.3, y=-0.2))], "pymunk")
    stream(st, "ext", POSE, 4, 0.0)
    snap = st.snapshot
    x, y, yaw = snap.poses[snap.index["ext"]]
    assert (x, y) == pytest.approx(POSE[:2], abs=1e-3)
    assert yaw == pytest.approx(held.planar(np.array([*POSE, *[0.0] * 6]))[0, 2], abs=1e-3)
    assert st.sim.external.state()["robots"]["ext"]["last_pose"] == pytest.approx(list(POSE))


@pytest.mark.parametrize("data, why", [
    ((0.0, 0.0, -0.2, 1.0, 0.0, 0.0, 0.0), "below the floor"),
    ((0.0, 0.0, 5000.0, 1.0, 0.0, 0.0, 0.0), "too far above"),
    ((0.0, 0.0, 1.0, 1.5, 0.0, 0.0, 0.0), "not a unit one"),
])
def test_3d_poses_out_of_bounds_are_refused_with_14(data, why):
    st = stepper([external(robot("ext"))], "pymunk")
    with pytest.raises(ProtocolError, match=why) as caught:
        st.sim.external.receive("ext", data, wall=0.0)
    assert caught.value.code == 14
    st.sim.external.receive("ext", (0.0, 0.0, 1.0, 1.05, 0.0, 0.0, 0.0), wall=0.0)  # noise
    assert st.sim.external.state()["robots"]["ext"]["last_pose"][3] == 1.0  # normalised


def test_on_mujoco_a_ground_robot_driving_into_an_external_one_cannot_push_it():
    from coopsim.plugins.modules.motors import Motors

    st = stepper([external(robot("real", x=0.5), stale=5.0), robot("pusher", x=-0.5)],
                 "mujoco")
    sim = st.sim
    sim.external.receive("real", (0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0), wall=0.0)
    cmd = next(c for c in Motors.commands if c.name == "set_speeds")
    taken = {("pusher", "motors"): Motors.command_row(
        cmd, (0.4, 0.4), sim.world.robot("pusher").modules["motors"], None)}
    for _ in range(250):  # 2.5 s at 0.4 m/s: it reaches the external robot after about 1.5 s
        sim.command(taken)
        taken = {}
        sim.actuate()
        sim.physics()
        snap = sim.sense()
    assert snap.poses[snap.index["real"]] == pytest.approx((0.5, 0.0, 0.0), abs=1e-6)
    assert 0.0 < snap.poses[snap.index["pusher"], 0] < 0.2  # up against it, stopped
