"""The ``aerial`` engine: rigid-body flight against closed forms and against MuJoCo, the floor,
the walls, ground robots beside flying ones, numba and numpy bits, thread bits, refusals.

The first run compiles the numba kernels (some seconds); numba's disk cache spares later runs.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from coopsim.model import compiled
from coopsim.model.errors import SimulationError
from coopsim.model.plugins import ENGINES
from coopsim.model.robot_type import Assembly, BodySpec, JointSpec, MemberSpec, ShapeSpec
from coopsim.model.specs import FloorSpec, ObjectSpec, RobotSpec
from coopsim.physics.aerial import kernels as aerial_kernels
from coopsim.physics.aerial.engine import AerialEngine
from coopsim.physics.kinematic.engine import KinematicEngine
from coopsim.plugins.robots.single import Single

G = aerial_kernels.GRAVITY
MASS, INERTIA, HEIGHT, RADIUS = 0.027, (1.4e-5, 1.4e-5, 2.17e-5), 0.03, 0.05  # a Crazyflie


def flyer(name, x=0.0, y=0.0, z=1.0, yaw=0.0, mass=MASS, inertia=INERTIA, drive="rotors",
          free=True) -> Assembly:
    """A one-body quadrotor-like robot ``name`` at (x, y, z), yaw rad."""
    body = BodySpec("body", "dynamic", mass, (ShapeSpec("circle", radius=RADIUS),), (x, y), yaw,
                    free=free, z=z, height=HEIGHT, inertia=inertia)
    return Assembly((MemberSpec(name, "body", (), RADIUS, drive=drive),), (body,))


def make(assemblies, floor=(20.0, 20.0), drives=None):
    """An engine holding ``assemblies`` (one member each), rows in their order."""
    engine = AerialEngine(FloorSpec(*floor))
    handles = [next(iter(engine.add_assembly(a, k + 1).robots.values()))
               for k, a in enumerate(assemblies)]
    engine.set_robots(handles, drives or [a.members[0].drive for a in assemblies])
    return engine


def set_rates(engine, row, w):
    """Give row ``row`` body rates ``w`` (rad/s) directly: a test's initial condition."""
    engine.state3d()  # applies the layout
    engine.state[row, 10:13] = w


def hold(engine, force, torque=(0.0, 0.0, 0.0), rows=None):
    rows = np.arange(len(engine.state3d())) if rows is None else np.asarray(rows)
    engine.apply_wrench(rows, np.tile(force, (len(rows), 1)), np.tile(torque, (len(rows), 1)))


def test_free_fall_is_semi_implicit_euler_at_g():
    engine, dt, n = make([flyer("a", z=10.0)]), 0.002, 500
    for _ in range(n):
        engine.step(dt)
    s = engine.state3d()[0]
    assert s[9] == pytest.approx(-G * n * dt, rel=1e-12)
    assert s[2] == pytest.approx(10.0 - G * dt * dt * n * (n + 1) / 2, rel=1e-12)
    assert s[2] == pytest.approx(10.0 - G * (n * dt) ** 2 / 2, abs=G * n * dt * dt)  # the law
    np.testing.assert_array_equal(s[[0, 1, 7, 8, 10, 11, 12]], 0.0)


def test_m_g_of_thrust_hovers_even_when_turned_about_z():
    engine = make([flyer("a", z=1.0, yaw=0.7)])
    hold(engine, (0.0, 0.0, MASS * G))
    for _ in range(1000):
        engine.step(0.002)
    s = engine.state3d()[0]
    np.testing.assert_allclose(s[:3], (0.0, 0.0, 1.0), atol=1e-12)
    np.testing.assert_allclose(s[7:], 0.0, atol=1e-12)
    assert engine.robot_state()[0, 2] == pytest.approx(0.7, abs=1e-12)


def test_a_torque_about_body_x_accelerates_at_tau_over_ixx():
    engine, tau, dt = make([flyer("a", z=2.0, yaw=1.1)]), 1e-5, 0.002
    hold(engine, (0.0, 0.0, MASS * G), (tau, 0.0, 0.0))
    for _ in range(10):
        engine.step(dt)
    s = engine.state3d()[0]
    assert s[10] == pytest.approx(tau / INERTIA[0] * 10 * dt, rel=1e-12)
    assert s[11] == s[12] == 0.0
    # the roll angle: semi-implicit Euler sums the rates after each update
    qw, qx, qy, qz = s[3:7]
    up = (2 * (qx * qz + qw * qy), 2 * (qy * qz - qw * qx), 1 - 2 * (qx * qx + qy * qy))
    roll = np.arctan2(np.hypot(up[0], up[1]), up[2])  # the body's z axis from the vertical
    assert roll == pytest.approx(tau / INERTIA[0] * dt * dt * 10 * 11 / 2, rel=1e-9)


def test_the_gyroscopic_term_has_eulers_sign():
    """I = (1, 2, 3) mg m^2 spinning at w = (0, 1, 10) rad/s, no torque: Euler's equations give
    wx' = -(Izz - Iyy) wy wz / Ixx = -10 rad/s^2 and wy' = -(Ixx - Izz) wz wx / Iyy = 0."""
    engine, dt = make([flyer("a", z=5.0, inertia=(1e-3, 2e-3, 3e-3))]), 1e-4
    hold(engine, (0.0, 0.0, MASS * G))
    set_rates(engine, 0, (0.0, 1.0, 10.0))
    engine.step(dt)
    w = engine.state3d()[0, 10:13]
    assert w[0] == pytest.approx(-10.0 * dt, rel=1e-12)
    assert w[1] == 1.0 and w[2] == 10.0
    engine.step(dt)  # now wx < 0: wy' = -(1 - 3) * 10 * wx / 2 < 0, wz' = -(2 - 1) wx wy / 3 > 0
    w2 = engine.state3d()[0, 10:13]
    assert w2[1] < 1.0 and w2[2] > 10.0
    assert w2[1] - 1.0 == pytest.approx(-(1 - 3) * 10.0 * w[0] / 2 * dt, rel=1e-9)


def test_a_body_lands_rests_and_stays_where_it_landed():
    engine = make([flyer("a", z=0.5), flyer("b", x=2.0, z=0.5)])
    set_rates(engine, 1, (3.0, -2.0, 5.0))
    engine.state[1, 7:9] = (1.0, 0.5)  # b flies sideways and tumbles into the floor
    for _ in range(500):
        engine.step(0.002)
    s = engine.state3d()
    np.testing.assert_array_equal(s[:, 2], HEIGHT / 2)  # the clearance, no lower
    np.testing.assert_array_equal(s[:, 7:], 0.0)  # at rest: friction took the rest
    rest = s.copy()
    hold(engine, (0.0, 0.0, 0.5 * MASS * G), (1e-6, 0.0, 0.0))  # too little thrust: it stays
    for _ in range(200):
        engine.step(0.002)
    np.testing.assert_array_equal(engine.state3d(), rest)
    hold(engine, (0.0, 0.0, 2.0 * MASS * G))  # then it takes off at g
    engine.step(0.002)
    assert engine.state3d()[0, 9] == pytest.approx(G * 0.002, rel=1e-12)


def test_walls_clamp_and_stop_flying_and_ground_robots():
    engine = make([flyer("a", x=4.0, z=1.0), flyer("g", x=-4.0, free=False, drive="velocity")],
                  floor=(10.0, 10.0))
    hold(engine, (MASS * 10.0, 0.0, MASS * G), rows=[0])
    for _ in range(200):
        engine.set_velocity(np.array([1]), np.array([[-2.0, 0.0, 0.0]]))
        engine.step(0.01)
    s = engine.state3d()
    assert s[0, 0] == pytest.approx(5.0 - RADIUS) and s[0, 7] == 0.0
    assert s[1, 0] == pytest.approx(-5.0 + RADIUS) and s[1, 7] == 0.0


def test_ground_robots_drive_the_kinematic_engines_arcs():
    """A single robot driving an arc on the floor lands where the kinematic engine puts it."""
    single = Single.build(RobotSpec("single", "r", (0.5, -1.0, 0), 0.4))
    aerial = AerialEngine(FloorSpec(10.0, 10.0))
    kin = KinematicEngine(FloorSpec(10.0, 10.0))
    for engine in (aerial, kin):
        engine.set_robots([engine.add_assembly(single, 1).robots["r"]], ["differential"])
        for _ in range(100):
            engine.drive(np.array([0]), np.array([0.3]), np.array([0.8]))
            engine.step(0.02)
    np.testing.assert_allclose(aerial.robot_state(), kin.robot_state(), atol=1e-9)
    s = aerial.state3d()[0]
    assert s[2] == 0.0 and s[4] == s[5] == 0.0 and s[12] == 0.8


def _mujoco_run(n_steps, dt, wrenches, z0, yaw):
    """The same body in MuJoCo (Euler integrator, no contacts), under the same body-frame
    wrench sequence, applied as generalized forces of its free joint (world force, body
    torque). Returns (steps, 13) STATE3D rows."""
    mujoco = pytest.importorskip("mujoco")
    moments = " ".join(repr(i) for i in INERTIA)
    xml = f"""<mujoco><compiler angle="radian"/>
      <option timestep="{dt!r}" integrator="Euler" gravity="0 0 {-G!r}">
      <flag contact="disable"/></option><worldbody>
      <body name="q" pos="0 0 {z0!r}" euler="0 0 {yaw!r}"><freejoint/>
        <inertial pos="0 0 0" mass="{MASS!r}" diaginertia="{moments}"/>
      </body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    out = np.empty((n_steps, 13))
    rot = np.empty(9)
    for k in range(n_steps):
        mujoco.mju_quat2Mat(rot, data.qpos[3:7])
        data.qfrc_applied[:3] = rot.reshape(3, 3) @ wrenches[k, :3]
        data.qfrc_applied[3:] = wrenches[k, 3:]
        mujoco.mj_step(model, data)
        out[k, :7], out[k, 7:] = data.qpos, data.qvel
    return out


def test_a_free_body_follows_mujoco_under_the_same_wrenches():
    """Contact-free flight: 1,000 steps of a random wrench sequence (thrust about m g, torques
    that tumble it) from the same start give MuJoCo's states within 1e-9."""
    n, dt, z0, yaw = 1000, 0.002, 50.0, 0.3
    rng = np.random.default_rng(7)
    wrenches = np.zeros((n, 6))
    wrenches[:, 2] = MASS * G * rng.uniform(0.5, 1.6, n)
    wrenches[:, 0:2] = rng.normal(0.0, 0.02, (n, 2))
    wrenches[:, 3:6] = rng.normal(0.0, 2e-5, (n, 3)) + (1e-5, -2e-5, 5e-6)
    reference = _mujoco_run(n, dt, wrenches, z0, yaw)
    engine = make([flyer("a", z=z0, yaw=yaw)], floor=(100.0, 100.0))
    ours = np.empty((n, 13))
    for k in range(n):
        engine.apply_wrench(np.array([0]), wrenches[k:k + 1, :3], wrenches[k:k + 1, 3:])
        engine.step(dt)
        ours[k] = engine.state3d()[0]
    assert np.abs(reference[:, 10:]).max() > 1.0  # it tumbled: the gyroscopic term mattered
    assert reference[:, 2].min() > 1.0  # never near the floor
    sign = np.sign(reference[:, 3:4] * ours[:, 3:4])  # q and -q are one orientation
    ours[:, 3:7] *= sign
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-9)


def _mixed_world(n=60):
    """Flying and ground robots, some near the floor and the walls, with wrenches and commands
    that land, tumble, climb and hit walls."""
    rng = np.random.default_rng(3)
    assemblies = []
    for k in range(n):
        x, y = rng.uniform(-4.5, 4.5, 2)
        if k % 4 == 3:
            assemblies.append(flyer(f"g{k}", x, y, 0.0, rng.uniform(-3, 3), free=False,
                                    drive=("differential", "velocity", "")[k % 3]))
        else:
            assemblies.append(flyer(f"f{k}", x, y, rng.uniform(0.0, 0.6), rng.uniform(-3, 3)))
    engine = make(assemblies, floor=(10.0, 10.0))
    set_rates(engine, slice(None), rng.normal(0.0, 40.0, (n, 3)))  # some past the series
    engine.state[:, 7:9] = rng.normal(0.0, 8.0, (n, 2))  # some into the walls
    return engine, rng


def _drive_mixed(engine, rng, steps=300):
    n = len(engine.state3d())
    rows = np.arange(n)
    for _ in range(steps):
        force = np.column_stack([rng.normal(0, 0.05, (n, 2)),
                                 MASS * G * rng.uniform(0.0, 2.0, n)])
        engine.apply_wrench(rows, force, rng.normal(0.0, 5e-6, (n, 3)))
        engine.drive(rows[::2], rng.uniform(-1, 1, n)[::2], rng.uniform(-40, 40, n)[::2])
        engine.set_velocity(rows[1::2], rng.uniform(-2, 2, (n, 3))[1::2])
        engine.step(0.002)
    return engine.state3d()


RUN = r"""
import hashlib, sys
from coopsim.model import threads
assert threads.use(int(sys.argv[1])) == int(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from coopsim.physics.aerial import kernels as aerial_kernels
aerial_kernels.PARALLEL_MIN, aerial_kernels.CHUNK = 8, 4
import test_aerial_engine as t
engine, rng = t._mixed_world(n=400)
print(threads.count(), hashlib.sha256(t._drive_mixed(engine, rng, 100).tobytes()).hexdigest())
"""


@pytest.mark.slow
@pytest.mark.skipif(not compiled.COMPILED, reason="the threads are numba's")
def test_the_thread_count_changes_no_bit():
    """400 mixed rows shared among 1, 2 and 4 threads (8 rows from which they share, 4 a
    chunk), each count in a process of its own (numba's pool is fixed when it loads)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_NUM_THREADS",
                                                            "COOPSIM_THREADS")}
    out = set()
    for n in (1, 2, 4):
        done = subprocess.run([sys.executable, "-c", RUN, str(n), os.path.dirname(__file__)],
                              capture_output=True, text=True, timeout=900, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        count, digest = done.stdout.split()
        assert int(count) == n
        out.add(digest)
    engine, rng = _mixed_world(n=400)  # and the serial kernel in this process
    out.add(hashlib.sha256(_drive_mixed(engine, rng, 100).tobytes()).hexdigest())
    assert len(out) == 1


def test_same_inputs_same_bits_and_planar_projection():
    a, b = (_drive_mixed(*_mixed_world(), steps=50) for _ in range(2))
    assert a.tobytes() == b.tobytes()
    engine = make([flyer("a", z=1.0, yaw=2.5)])
    set_rates(engine, 0, (0.0, 0.0, 1.5))
    planar = engine.robot_state()[0]
    assert planar[2] == pytest.approx(2.5) and planar[5] == pytest.approx(1.5)


def test_refusals_say_why_in_one_sentence():
    floor = FloorSpec(10.0, 10.0)
    engine = AerialEngine(floor)
    with pytest.raises(SimulationError, match="no movable objects"):
        engine.add_object(ObjectSpec("crate", "box", (1, 1, 1), (0, 0, 0.5), mass=2.0))
    engine.add_object(ObjectSpec("pillar", "cylinder", (1, 1, 2), (2, 0, 1.0)))
    assert len(engine.static_geometry()[0]) == 1
    body = flyer("a").bodies[0]
    joint = Assembly(flyer("a").members, (body, BodySpec("b", "dynamic", 1.0, (), (0, 0))),
                     (JointSpec("j", "pivot", "body", "b"),))
    assert AerialEngine.refuses_assembly(joint) == "the aerial engine has no joints"
    assert "free=True" in AerialEngine.refuses_assembly(flyer("a", free=False))
    assert "wrench only" in AerialEngine.refuses_assembly(flyer("a", drive="velocity"))
    assert "flight" in KinematicEngine.refuses_assembly(flyer("a"))  # 2D engines refuse it
    assert ENGINES.get("aerial") is AerialEngine and "flight" in AerialEngine.features


def test_a_state_that_is_not_finite_is_put_back_naming_the_robot():
    engine = make([flyer("calm", z=1.0), flyer("wild", x=1.0, z=1.0)])
    alone = make([flyer("calm", z=1.0)])
    with pytest.raises(SimulationError, match="robot wild's wrench is not finite"):
        engine.apply_wrench(np.array([1]), np.array([[0.0, np.nan, 0.0]]), np.zeros((1, 3)))
    for e in (engine, alone):
        e.step(0.002)
    before = engine.state3d()[1].copy()
    engine.apply_wrench(np.array([1]), np.array([[0.0, 0.0, 1e308]]), np.zeros((1, 3)))
    for e in (engine, alone):
        e.step(0.002)  # 1e308 N / 0.027 kg overflows: wild is put back, calm goes on
    (found,) = engine.diverged()
    assert (found.row, found.label) == (1, "robot wild") and "non-finite" in found.why
    assert engine.state3d()[1, :7].tolist() == before[:7].tolist()  # where the step began
    assert engine.state3d()[1, 7:].tolist() == [0.0] * 6 and engine.wrench[1].tolist() == [0] * 6
    assert engine.state3d()[0].tobytes() == alone.state3d()[0].tobytes()
    engine.step(0.002)
    assert engine.diverged() == ()


def test_robots_keep_their_state_across_a_new_layout():
    engine = make([flyer("a", z=3.0), flyer("b", x=1.0, z=3.0)])
    hold(engine, (0.0, 0.0, 0.0), (1e-6, 0.0, 0.0))
    engine.step(0.01)
    handles = list(engine._bodies)
    before = engine.state3d()
    engine.set_robots(handles[::-1], ["rotors", "rotors"])
    np.testing.assert_array_equal(engine.state3d(), before[::-1])
    engine.set_robots(handles[:1], ["rotors"])
    engine.set_robots(handles, ["rotors", "rotors"])
    np.testing.assert_array_equal(engine.state3d(), before)
    np.testing.assert_array_equal(engine.wrench[:, 3], 1e-6)
