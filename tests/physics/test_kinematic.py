"""The ``kinematic`` engine: motion, overlap resolution, contacts, layout, refusals, both paths.

The first test run compiles the numba kernels (tens of seconds); numba's disk cache spares
later runs.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from coopsim.model import threads
from coopsim.model.errors import SimulationError
from coopsim.model.robot_type import Assembly
from coopsim.model.specs import FloorSpec, RobotSpec
from coopsim.physics.kinematic import engine as kinematic, kernels as kinematic_kernels
from coopsim.physics.kinematic.engine import KinematicEngine
from coopsim.plugins.robots.single import CHASSIS_RADIUS as R, Single, chassis
from coopsim.plugins.robots.team2 import Team2
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
from coopsim.sim.world import World

from helpers import box, cylinder, robot, scenario

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-6  # m: what a resolved overlap may leave


def make(poses, objects=(), floor=(10.0, 10.0), drives=None):
    """An engine with ``single`` chassis at ``poses`` [(x, y, yaw)] and static ``objects``."""
    engine = KinematicEngine(FloorSpec(*floor))
    for spec in objects:
        engine.add_object(spec)
    handles = [engine.add_assembly(Single.build(RobotSpec("single", f"r{k}", (x, y, 0), yaw)),
                                   k + 1).robots[f"r{k}"] for k, (x, y, yaw) in enumerate(poses)]
    engine.set_robots(handles, drives or ["differential"] * len(handles))
    return engine, handles


def run(engine, steps, dt, forward=None, turn=None, velocity=None):
    """Step with constant commands for every robot; returns the last robot_state."""
    rows = np.arange(len(engine.robot_state()))
    for _ in range(steps):
        if velocity is not None:
            engine.set_velocity(rows, np.broadcast_to(velocity, (len(rows), 3)))
        else:
            engine.drive(rows, np.broadcast_to(forward, len(rows)),
                         np.broadcast_to(0.0 if turn is None else turn, len(rows)))
        engine.step(dt)
    return engine.robot_state()


def swarm(n, seed=1, steps=25):
    """A dense jostling swarm among boxes and cylinders; returns (states, contacts) per step."""
    rng = np.random.default_rng(seed)
    side = math.ceil(math.sqrt(n))
    half = side * 0.5 / 2 + 1.0
    poses = [(-half + 1 + (k % side) * 0.5 + rng.uniform(-0.1, 0.1),
              -half + 1 + (k // side) * 0.5 + rng.uniform(-0.1, 0.1), rng.uniform(-3, 3))
             for k in range(n)]
    objects = [box(f"B{k}", *rng.uniform(-half + 1, half - 1, 2), size=(0.6, 0.3),
                   yaw=rng.uniform(0, 3)) for k in range(n // 40)]
    objects += [cylinder(f"C{k}", *rng.uniform(-half + 1, half - 1, 2)) for k in range(n // 40)]
    engine, _ = make(poses, objects, (2 * half, 2 * half))
    out, rows = [], np.arange(n)
    for step in range(steps):
        if step % 5 == 0:
            wheels = rng.uniform(-0.6, 0.6, (n, 2))
        engine.drive(rows, wheels.mean(axis=1), (wheels[:, 1] - wheels[:, 0]) / 0.34)
        engine.step(0.1)
        out.append((engine.robot_state(), engine.contacts(engine.robot_state()[:, :3])))
    return out


def gaps(engine):
    """Smallest centre distance minus radii over all robot pairs, m."""
    d = np.hypot(*(engine.pos[:, None, :] - engine.pos[None, :, :]).transpose(2, 0, 1))
    d += np.eye(len(d)) * 1e9
    return (d - engine.radius[:, None] - engine.radius[None, :]).min()


# --- motion ---------------------------------------------------------------------------------------

def test_straight_driving_covers_v_times_t():
    engine, _ = make([(-2.0, -1.0, 0.3)])
    state = run(engine, 50, 0.02, forward=0.5)  # 1 s
    assert state[0, :3] == pytest.approx([-2 + 0.5 * math.cos(0.3), -1 + 0.5 * math.sin(0.3),
                                          0.3], abs=1e-12)
    assert state[0, 3:] == pytest.approx([0.5 * math.cos(0.3), 0.5 * math.sin(0.3), 0.0])


def test_turning_on_the_spot_and_along_an_arc():
    engine, _ = make([(0.0, 0.0, 0.0), (2.0, 2.0, 0.0)])
    rows = np.arange(2)
    for _ in range(100):  # 1 s at 2 rad/s; the second robot also at 0.4 m/s
        engine.drive(rows, np.array([0.0, 0.4]), np.array([2.0, 2.0]))
        engine.step(0.01)
    state = engine.robot_state()
    assert state[0, :2] == pytest.approx([0, 0], abs=1e-12)
    assert state[:, 2] == pytest.approx([2.0, 2.0]) and state[:, 5] == pytest.approx([2, 2])
    # exact arc of radius v / w = 0.2 m about (2, 2.2)
    assert state[1, :2] == pytest.approx([2 + 0.2 * math.sin(2.0), 2.2 - 0.2 * math.cos(2.0)])
    assert math.hypot(*state[1, 3:5]) == pytest.approx(0.4 * math.sin(0.01) / 0.01, rel=1e-9)


def test_yaw_is_reported_within_minus_pi_to_pi():
    engine, _ = make([(0.0, 0.0, 3.0)])
    for _ in range(30):
        yaw = run(engine, 10, 0.1, forward=0.0, turn=3.0)[0, 2]
        assert -math.pi <= yaw <= math.pi


def test_velocity_drive_moves_in_the_world_frame():
    engine, _ = make([(0.0, 0.0, 1.0)], drives=["velocity"])
    state = run(engine, 20, 0.05, velocity=np.array([0.3, -0.2, 0.5]))
    assert state[0, :3] == pytest.approx([0.3, -0.2, 1.5], abs=1e-12)
    assert state[0, 3:] == pytest.approx([0.3, -0.2, 0.5])


def test_non_finite_commands_stop_and_huge_ones_stay_on_the_floor():
    engine, _ = make([(0.0, 0.0, 0.0), (1.0, 1.0, 0.0)])
    engine.drive(np.arange(2), np.array([np.nan, 1e300]), np.array([np.inf, 0.0]))
    engine.step(0.1)
    state = engine.robot_state()
    assert np.isfinite(state).all() and state[0].tolist() == [0, 0, 0, 0, 0, 0]
    assert state[1, :2].tolist() == [5 - R, 1.0]


def test_undriven_robots_are_not_moved_by_commands():
    body, member = chassis("u", "chassis", 1.0, 1.0, 0.0)
    engine = KinematicEngine(FloorSpec(10, 10))
    handle = engine.add_assembly(Assembly((replace(member, drive=""),), (body,)), 1).robots["u"]
    engine.set_robots([handle], [""])
    state = run(engine, 10, 0.1, forward=0.5)
    assert state[0] == pytest.approx([1, 1, 0, 0, 0, 0])


# --- overlaps -------------------------------------------------------------------------------------

def test_robots_driven_into_each_other_stop_without_overlapping():
    engine, _ = make([(-1.0, 0.0, 0.0), (1.0, 0.0, math.pi)])
    for _ in range(30):  # 3 s at 0.6 m/s each: they meet after ~1 s
        state = run(engine, 1, 0.1, forward=0.6)
        assert gaps(engine) > -TOL
    assert math.hypot(*(state[0, :2] - state[1, :2])) == pytest.approx(2 * R, abs=TOL)
    assert np.abs(state[:, 3:5]).max() < 0.01  # stopped (up to sliding off, no friction)
    assert engine.contacts(state[:, :3]).tolist() == [[1.0, 0.0], [1.0, 0.0]]


@pytest.mark.parametrize("dt, yaw", [(0.01, 0.0), (0.1, 0.0), (0.1, 0.5)])
def test_a_robot_stops_at_a_box_face_without_tunnelling(dt, yaw):
    wall = box("W", 1.0, 0.0, size=(0.2, 3.0), yaw=yaw)  # a turned wall: oblique approach
    engine, _ = make([(0.0, 0.0, 0.0)], [wall])
    state = run(engine, int(round(5 / dt)), dt, forward=0.6)
    local_x = (state[0, 0] - 1.0) * math.cos(yaw) + state[0, 1] * math.sin(yaw)
    assert local_x == pytest.approx(-0.1 - R, abs=TOL)  # edge on the face, never beyond
    assert engine.contact[0].tolist() == [1.0, 0.0]


def test_fast_robots_do_not_tunnel_through_a_thin_wall_or_each_other():
    wall = box("W", 1.0, 0.0, size=(0.01, 3.0))
    engine, _ = make([(0.0, 0.0, 0.0), (-2.0, 2.0, 0.0), (2.0, 2.0, 0.0)], [wall],
                     drives=["velocity"] * 3)
    rows = np.arange(3)
    for _ in range(30):  # 5 m/s, dt 0.1: 0.5 m a step, more than a diameter
        engine.set_velocity(rows, np.array([[5.0, 0, 0], [5.0, 0, 0], [-5.0, 0, 0]]))
        engine.step(0.1)
        assert engine.pos[0, 0] <= 1.0 - 0.005 - R + TOL
        assert engine.pos[1, 0] < engine.pos[2, 0]
    assert engine.pos[0, 0] == pytest.approx(1.0 - 0.005 - R, abs=TOL)


def test_robots_are_pushed_out_of_cylinders():
    engine, _ = make([(0.0, 0.05, 0.0)], [cylinder("C", 1.0, 0.0, diameter=0.5)])
    state = run(engine, 40, 0.1, forward=0.6)
    assert math.hypot(state[0, 0] - 1.0, state[0, 1]) >= 0.25 + R - TOL
    assert state[0, 1] > 0.05  # slid off to its side (no friction)


@pytest.mark.parametrize("yaw", [0.0, math.pi / 2, math.pi, -math.pi / 2])
def test_floor_edges_hold(yaw):
    engine, _ = make([(0.0, 0.0, yaw)], floor=(4.0, 3.0))
    state = run(engine, 100, 0.1, forward=0.6)
    edge = np.array([2.0 - R, 1.5 - R])
    assert np.abs(state[0, :2]) == pytest.approx(edge * np.abs([math.cos(yaw),
                                                                  math.sin(yaw)]), abs=1e-9)
    assert engine.contact[0].tolist() == [1.0, 0.0]


def test_a_crowd_pressed_into_a_corner_stays_on_the_floor_and_nearly_apart():
    poses = [(x, y, math.atan2(-1.5 - y, -1.5 - x)) for x in np.arange(-1.0, 1.6, 0.5)
             for y in np.arange(-1.0, 1.6, 0.5)]
    engine, _ = make(poses, floor=(4.0, 4.0))
    state = run(engine, 500, 0.02, forward=0.6)
    assert (np.abs(state[:, :2]) <= 2.0 - R + 1e-12).all()
    assert gaps(engine) > -0.005  # a jam: the passes leave a little each step


# --- contacts -------------------------------------------------------------------------------------

def test_contacts_front_and_rear():
    wall = box("W", 0.0, 0.0, size=(0.2, 4.0))
    engine, _ = make([(-1.0, 0.0, 0.0), (1.0, 0.0, 0.0), (-4.0, 3.5, 0.0)], [wall])
    rows = np.arange(3)
    for _ in range(30):  # the first drives forward into the wall, the second backs into it
        engine.drive(rows, np.array([0.6, -0.6, 0.6]), np.zeros(3))
        engine.step(0.1)
    assert engine.contacts(engine.robot_state()[:, :3]).tolist() == [[1, 0], [0, 1], [0, 0]]
    run(engine, 3, 0.1, forward=0.0)  # resting against it: still touching
    assert engine.contacts(None)[:2].tolist() == [[1, 0], [0, 1]]


# --- determinism and the two paths ----------------------------------------------------------------

def test_two_runs_are_bit_identical():
    a, b = swarm(600), swarm(600)
    for (sa, ca), (sb, cb) in zip(a, b):
        assert np.array_equal(sa, sb) and np.array_equal(ca, cb)


@pytest.mark.skipif(kinematic_kernels.numba is None, reason="needs numba")
def test_one_thread_and_two_threads_are_bit_identical(monkeypatch):
    if kinematic_kernels.numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here")
    monkeypatch.setattr(kinematic_kernels, "PARALLEL_MIN", 0)  # prange on every thread
    n = 3000
    try:
        threads.use(1)
        one = swarm(n, steps=10)
        threads.use(2)
        two = swarm(n, steps=10)
    finally:
        threads.use(None)
    assert any(c.any() for _, c in one)  # they did collide
    for (s1, c1), (s2, c2) in zip(one, two):
        assert np.array_equal(s1, s2) and np.array_equal(c1, c2)


@pytest.mark.skipif(kinematic_kernels.numba is None, reason="needs numba")
@pytest.mark.parametrize("n", [1, 2, 40])
def test_a_small_worlds_one_call_step_equals_the_kernel_by_kernel_step(n, monkeypatch):
    def steps():
        if n > 1:
            return swarm(n, steps=40)
        engine, _ = make([(0.0, 0.0, 0.3)], [box("B", 1.0, 0.0, size=(0.2, 2.0))], (3.0, 3.0),
                         "numba")  # into the box, then along it and into the floor's edge
        out = []
        for _ in range(60):
            engine.drive(np.arange(1), np.array([0.5]), np.array([0.4]))
            engine.step(0.05)
            out.append((engine.robot_state(), engine.contacts(None)))
        return out

    small = steps()  # n <= SMALL_N: kinematic.small.step_small
    monkeypatch.setattr(kinematic, "SMALL_N", 0)
    general = steps()
    assert any(c.any() for _, c in small)  # robots, walls or the box pushed
    for (s1, c1), (s2, c2) in zip(small, general, strict=True):
        assert np.array_equal(s1, s2) and np.array_equal(c1, c2)


def test_a_robot_row_out_of_range_is_refused_by_either_drive():
    engine, _ = make([(0.0, 0.0, 0.0)])  # numba: drive_small at any size
    with pytest.raises(IndexError):
        engine.drive(np.array([1]), np.array([0.3]), np.array([0.0]))
    engine.drive(np.array([-1]), np.array([0.3]), np.array([np.nan]))  # numpy's last row
    assert engine.cmd.tolist() == [[0.3, 0.0, 0.0]]


# --- layout ---------------------------------------------------------------------------------------

def test_layout_changes_keep_poses_and_velocities():
    world = World(scenario([robot("a", -2, 0), robot("b", 2, 0, yaw=math.pi / 2)]), "kinematic")
    engine = world.engine
    run(engine, 10, 0.1, forward=0.3)
    before = engine.robot_state()
    world.add_robot(robot("c", 0, -3))  # new rows; a and b keep theirs by handle
    after = engine.robot_state()
    assert np.array_equal(after[:2], before) and after[2, :3].tolist() == [0, -3, 0]
    handle_a = world.robot("a").handle
    world.remove_robot("a")
    assert np.array_equal(engine.robot_state()[0], before[1])
    assert np.array_equal(engine.poses([handle_a])[0], before[0, :3])  # kept in its handle
    assert np.array_equal(engine.poses([world.robot("b").handle])[0], before[1, :3])


def test_static_objects_added_and_removed_at_run_time():
    world = World(scenario([robot("a", 0, 0)], [box("far", -4, -4)]), "kinematic")
    engine = world.engine
    world.add_object(box("W", 1.5, 0, size=(0.2, 2.0)))
    x = run(engine, 50, 0.1, forward=0.6)[0, 0]
    assert x == pytest.approx(1.4 - R, abs=TOL)
    assert len(engine.static_geometry()[2]) == 4 + 4 + 4  # two boxes and the floor edges
    world.remove_object("W")
    assert run(engine, 5, 0.1, forward=0.6)[0, 0] == pytest.approx(x + 0.3)
    assert world.object_poses().tolist() == [[-4, -4, 0]]


# --- refusals -------------------------------------------------------------------------------------

def test_team2_is_refused_with_a_reason_and_movable_objects_stand_still():
    engine = KinematicEngine(FloorSpec(10, 10))
    team = Team2.build(RobotSpec("team2", "t", (0.0, 0.0, 0.0), 0.0))
    assert KinematicEngine.refuses_assembly(team) == "the kinematic engine has no joints"
    with pytest.raises(SimulationError, match="no joints"):
        engine.add_assembly(team, 1)
    world = World(scenario([robot("r", 0.0, 0.0)], [box("B", 1.0, 0.0, mass=2.0)]), "kinematic")
    run(world.engine, 50, 0.1, forward=0.6)  # into the crate: it is not pushed
    assert world.object_poses().tolist() == [[1.0, 0.0, 0.0]]
    assert world.engine.robot_state()[0, 0] == pytest.approx(1.0 - 0.5 - 0.2, abs=0.02)
    with pytest.raises(SimulationError, match="no joints"):
        World(scenario([robot("t", type="team2")]), "kinematic")


@pytest.mark.parametrize("section, line, reason", [
    ("[ROBOT_1]\ntype team2\nname t\nposition 0 0 0\n", 5,
     "robot t (team2): the kinematic engine has no joints"),
])
@pytest.mark.slow
def test_cli_run_refuses_with_file_and_line(tmp_path, section, line, reason):
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 10 10 0.1\n")
    path = tmp_path / "k.scenario"
    path.write_text("[WORLD]\nfile w.world\n[SETTINGS]\nengine kinematic\n" + section)
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    result = subprocess.run([sys.executable, "-m", "coopsim", "run", str(path), "--headless",
                             "--port", "0", "--no-controllers"], capture_output=True, text=True,
                            timeout=120, cwd=ROOT, env=env)
    assert result.returncode == 2, result.stderr
    assert f"{path}:{line}: {reason}" in result.stderr  # one line: "coopsim: file:line: why"
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


# --- a whole simulation ---------------------------------------------------------------------------

def test_simulation_on_the_kinematic_engine_senses_sensibly():
    scn = scenario([robot("a", 0, 0), robot("b", 0, 1.0)], [box("W", 2.0, 0, size=(0.2, 4.0))])
    stepper = Stepper(Simulation(scn, engine="kinematic"), mode="lockstep")
    stepper.tick()
    snap = stepper.snapshot
    sonar = snap.reading("a", "sonar")
    assert sonar[5] == pytest.approx(1.9 - R, abs=1e-9)  # straight ahead: the wall's face
    assert sonar[10] == pytest.approx(1.0 - 2 * R, abs=1e-9)  # to the left: robot b's chassis
    assert sonar[0] == pytest.approx(2.0)  # to the right: nothing within range
    for _ in range(400):  # 4 s at 0.6 m/s into the wall
        stepper.slots.put("a", "motors", (0.6, 0.6), attach=False)
        stepper.tick()
    snap = stepper.snapshot
    assert snap.poses[0][0] == pytest.approx(1.9 - R, abs=TOL)
    assert snap.reading("a", "sonar")[5] == pytest.approx(0.0, abs=TOL)
    assert snap.reading("a", "bumper").tolist() == [1.0, 0.0]
    assert snap.reading("b", "bumper").tolist() == [0.0, 0.0]
    assert snap.reading("a", "motors")[2:] == pytest.approx([0.0, 0.0], abs=1e-6)  # stalled
