"""The flying modules' compiled kernels (coopsim.plugins.modules.flying, and the rotors'
coopsim.swarm.flight_kernels.rotors) against the numpy code they stand for, over many robots
in random states, some rows only; and the per-kind state tables (a robot new mid-run starts
afresh, the others keep theirs)."""

import numpy as np
import pytest

from coopsim.model.module import Frame
from coopsim.plugins.modules import flying
from coopsim.plugins.modules.altimeter import Altimeter
from coopsim.plugins.modules.imu import Imu
from coopsim.plugins.modules.mocap import Mocap
from coopsim.plugins.modules.pose import Pose
from coopsim.plugins.modules.rotors import Rotors
from coopsim.sim.sensing import ParamArrays

pytestmark = pytest.mark.skipif(not flying.COMPILED, reason="needs numba")

N = 400


class Physics:
    """Keeps the last wrench a module hands to the engine."""

    def apply_wrench(self, rows, force, torque):
        self.last = (np.array(rows), np.array(force), np.array(torque))


def states(rng, n=N):
    """(n, 13) random STATE3D rows: unit quaternions, some upside down, some on the floor."""
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    s = np.column_stack((rng.normal(0, 2, (n, 3)), q, rng.normal(0, 3, (n, 3)),
                         rng.normal(0, 5, (n, 3))))
    s[: n // 10, 2] = -0.01
    return s


def frame(s, names, time=1.0, dt=0.002, extra=None):
    n = len(s)
    return Frame(dt, s[:, [0, 1, 2]], np.zeros((n, 3)), np.full(n, 0.07), np.zeros(n),
                 np.zeros(n, np.int64), {}, {}, np.zeros((0, 2)), np.zeros((n, 2)), None,
                 Physics(), {} if extra is None else extra, 0, names, time=time, state3d=s)


def params(module, rng, n, **spread):
    """The module's default parameter arrays, ``spread`` ones random in [0, hi)."""
    values = {p.name: np.full(n, float(p.default)) for p in module.params
              if p.type in ("float", "int", "bool")}
    for k, hi in spread.items():
        values[k] = rng.uniform(0, hi, n)
    return ParamArrays(values)


def test_imu_kernel_is_the_numpy_reading(monkeypatch):
    rng = np.random.default_rng(5)
    names = tuple(f"cf{k}" for k in range(N))
    p = params(Imu, rng, N, accel_noise=0.1, gyro_noise=0.01, accel_walk=0.01, gyro_walk=0.001)
    boards = {True: {}, False: {}}
    rows = np.arange(N)
    for step, time in enumerate((1.0, 1.002, 1.004)):
        s = states(rng)
        if step == 2:
            rows = np.sort(rng.choice(N, N // 3, replace=False))  # some due, the rest held
        normals = rng.standard_normal((len(rows), 12))
        outs = {}
        for compiled in (True, False):
            monkeypatch.setattr(flying, "COMPILED", compiled)
            f = frame(s, names, time, extra=boards[compiled])
            f.normals = lambda label, block=normals: block
            outs[compiled] = Imu.measure(f, rows, ParamArrays({k: v[rows] for k, v in p.items()}),
                                         np.zeros((len(rows), 6)), None)
        np.testing.assert_allclose(outs[True], outs[False], rtol=1e-12, atol=1e-12)
        for key in ("v", "t", "bias"):
            np.testing.assert_allclose(boards[True]["_kind_states"]["imu"].arrays[key],
                                       boards[False]["_kind_states"]["imu"].arrays[key], rtol=1e-12, atol=0)
    assert boards[True]["_kind_states"]["imu"].seen.all()


def test_imu_one_block_of_normals_a_parameter_at_zero_draws_none():
    p = params(Imu, np.random.default_rng(0), 3, accel_noise=0.1)
    p = ParamArrays({**p, "gyro_noise": np.zeros(3), "accel_walk": np.zeros(3)})
    assert Imu.noise_draws(p) == 6  # accel_noise 3, gyro_walk (default 1e-5) 3
    assert flying.columns(p, Imu.NOISE)[0].tolist() == [-1, 0, 3, -1]


def test_mocap_kernel_is_the_numpy_reading(monkeypatch):
    rng = np.random.default_rng(9)
    s = states(rng)
    names = tuple(f"cf{k}" for k in range(N))
    rows = np.sort(rng.choice(N, N // 2, replace=False))
    p = params(Mocap, rng, len(rows), noise=0.05, angle_noise=0.3)
    normals = rng.standard_normal((len(rows), 6))
    outs = {}
    for compiled in (True, False):
        monkeypatch.setattr(flying, "COMPILED", compiled)
        f = frame(s, names)
        f.normals = lambda label: normals
        outs[compiled] = Mocap.measure(f, rows, p, np.zeros((len(rows), 7)), None)
    np.testing.assert_allclose(outs[True], outs[False], rtol=1e-12, atol=1e-12)
    assert (outs[True][:, 3] >= 0).all()


def test_altimeter_and_pose_kernels_are_the_numpy_readings(monkeypatch):
    rng = np.random.default_rng(11)
    s = states(rng)
    names = tuple(f"cf{k}" for k in range(N))
    rows = np.arange(0, N, 3)
    for module in (Altimeter, Pose):
        p = params(module, rng, len(rows))
        outs = {}
        for compiled in (True, False):
            monkeypatch.setattr(flying, "COMPILED", compiled)
            outs[compiled] = module.sense(frame(s, names), rows, p, None)
        np.testing.assert_allclose(outs[True], outs[False], rtol=1e-12, atol=1e-12)
        assert np.isfinite(outs[True]).all()


def test_rotors_kernel_is_the_numpy_step(monkeypatch):
    """Every mode (stop, speeds, thrust and rates, thrust and attitude), two steps through the
    lag: the same speeds and wrench as the numpy step."""
    from coopsim.plugins.modules import rotors

    rng = np.random.default_rng(13)
    s = states(rng)
    s[:, 10:13] *= 0.1
    names = tuple(f"cf{k}" for k in range(N))
    p = params(Rotors, rng, N)
    p = ParamArrays({**p, "tau": np.where(rng.random(N) < 0.2, 0.0, p["tau"]),
                     "rate_gain": rng.uniform(10, 90, N)})
    cmd = np.zeros((N, 9))
    cmd[:, 0] = rng.integers(0, 4, N)
    cmd[:, 1] = rng.uniform(0, 0.5, N)
    cmd[:, 2:5] = rng.normal(0, 1, (N, 3))
    speeds_cmd = cmd[:, 0] == 1.0
    cmd[speeds_cmd, 1:5] = rng.uniform(0, 2500, (speeds_cmd.sum(), 4))
    boards, outs, wrenches = {True: {}, False: {}}, {}, {}
    real = rotors._kernels
    assert real() is not None
    for rows in (np.arange(N), np.arange(N), np.arange(1, N, 2)):  # all, all, some robots
        pick = ParamArrays({k: v[rows] for k, v in p.items()})
        for compiled in (True, False):
            monkeypatch.setattr(rotors, "_kernels", real if compiled else lambda: None)
            f = frame(s, names, extra=boards[compiled])
            outs[compiled] = Rotors.actuate(f, rows, pick, cmd[rows])
            wrenches[compiled] = f.physics.last
        np.testing.assert_allclose(outs[True], outs[False], rtol=1e-12, atol=1e-9)
        for a, b in zip(wrenches[True][1:], wrenches[False][1:]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert (outs[True] > 0).any() and (outs[True] == 0).any()


def test_a_robot_added_mid_run_gets_fresh_imu_state():
    """In a running swarm a Crazyflie added mid-run gets the imu's defaults (its
    first reading: gravity and no bias, as a robot never read); the others keep their state at
    their new rows (their next reading is no first one: it differences their velocity)."""
    from coopsim.model.specs import FloorSpec, RobotSpec, ScenarioSpec, Settings, WorldSpec
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    robots = tuple(RobotSpec("crazyflie", f"cf{k}", (k * 0.5, 0.0, 0.5)) for k in range(3))
    spec = ScenarioSpec(WorldSpec(FloorSpec(6, 6)), robots=robots,
                        settings=Settings(dt=0.002, mode="lockstep", seed=1, engine="aerial"))
    st = Stepper(Simulation(spec), mode="lockstep")
    for _ in range(5):
        st.tick()  # free fall from 0.5 m: every imu reads about 0 (specific force)
    kept = st.sim.states.get("imu")
    before = {n: kept.arrays["bias"][i].copy() for i, n in enumerate(st.sim.robots.names)}
    assert kept.seen.all() and any(b.any() for b in before.values())
    st.sim.world.add_robot(RobotSpec("crazyflie", "aa", (-1.0, 1.0, 0.5)))
    st.sim.relayout()
    table = st.sim.states.get("imu")
    names = st.sim.robots.names
    new = names.index("aa")
    assert not table.seen[new] and not table.arrays["bias"][new].any()
    assert table.arrays["t"][new] == 0.0
    for i, n in enumerate(names):
        if n != "aa":
            assert table.seen[i] and np.array_equal(table.arrays["bias"][i], before[n])
    snap = st.tick()
    imu = snap.readings["imu"]
    assert abs(imu[new, 2] - 9.81) < 0.05  # a first reading: gravity's opposite
    others = [i for i, n in enumerate(names) if n != "aa"]
    assert np.abs(imu[others, 2]).max() < 0.5  # still falling: about 0
