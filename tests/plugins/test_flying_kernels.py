"""The flying modules' noise columns (coopsim.plugins.modules.flying) and the per-kind state
tables (a robot new mid-run starts afresh, the others keep theirs)."""

import numpy as np

from coopsim.plugins.modules import flying
from coopsim.plugins.modules.imu import Imu
from coopsim.sim.sensing import ParamArrays


def params(module, rng, n, **spread):
    """The module's default parameter arrays, ``spread`` ones random in [0, hi)."""
    values = {p.name: np.full(n, float(p.default)) for p in module.params
              if p.type in ("float", "int", "bool")}
    for k, hi in spread.items():
        values[k] = rng.uniform(0, hi, n)
    return ParamArrays(values)


def test_imu_one_block_of_normals_a_parameter_at_zero_draws_none():
    p = params(Imu, np.random.default_rng(0), 3, accel_noise=0.1)
    p = ParamArrays({**p, "gyro_noise": np.zeros(3), "accel_walk": np.zeros(3)})
    assert Imu.noise_draws(p) == 6  # accel_noise 3, gyro_walk (default 1e-5) 3
    assert flying.columns(p, Imu.NOISE)[0].tolist() == [-1, 0, 3, -1]


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
