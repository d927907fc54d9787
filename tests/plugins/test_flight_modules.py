"""The flyers' modules (rotors, imu, mocap, altimeter) against hand computations, on frames made
here (no engine): the motor lag and the wrench handed to the engine, refused commands (error 4),
the accelerometer's specific force, the altimeter's slanted ray, the mocap's noise."""

import math

import numpy as np
import pytest

from coopsim.model.commands import OUT_OF_RANGE
from coopsim.model.errors import ParameterError, ProtocolError, SimulationError
from coopsim.model.module import Frame
from coopsim.model.params import ParamValues
from coopsim.plugins.modules.altimeter import Altimeter
from coopsim.plugins.modules.imu import Imu
from coopsim.plugins.modules.mocap import Mocap
from coopsim.plugins.modules.rotors import Rotors
from coopsim.plugins.robots.crazyflie import Crazyflie


class Physics:
    """Records the wrenches a module hands to the engine."""

    def __init__(self):
        self.calls = []

    def apply_wrench(self, rows, force, torque):
        self.calls.append((rows.tolist(), np.array(force), np.array(torque)))


def state(z=1.0, q=(1.0, 0.0, 0.0, 0.0), v=(0.0, 0.0, 0.0), w=(0.0, 0.0, 0.0)):
    return np.array([[0.0, 0.0, z, *q, *v, *w]])


def frame(s, dt=0.01, time=0.0, extra=None, physics=None, flight=True):
    n = len(s)
    return Frame(dt, np.zeros((n, 3)), np.zeros((n, 3)), np.full(n, 0.07), np.zeros(n),
                 np.zeros(n, np.int64), {}, {}, np.zeros((0, 2)), np.zeros((n, 2)), None,
                 physics or Physics(), {} if extra is None else extra, 0, ("cf1",)[:n] or (),
                 time=time, state3d=s if flight else None)


def params(module, **changes):
    """(n=1) parameter arrays: the module's defaults, the Crazyflie's, then ``changes``."""
    values = {p.name: p.default for p in module.params}
    values.update(Crazyflie.defaults.get(module.label, {}))
    values.update(changes)
    return {k: np.array([float(v)]) for k, v in values.items()}


def cmd(name):
    return next(c for c in Rotors.commands if c.name == name)


def rotor_params():
    return {k: v[0] for k, v in params(Rotors).items()}


def test_set_rotors_runs_the_motor_lag_and_hands_the_x_frame_wrench_to_the_engine():
    p = params(Rotors)
    row = Rotors.command_row(cmd("set_rotors"), (1000.0, 1200.0, 1000.0, 1200.0), rotor_params(),
                             None)
    physics, extra = Physics(), {}
    f = frame(state(), dt=0.01, extra=extra, physics=physics)
    carried = Rotors.actuate(f, np.array([0]), p, np.array([row]))  # the command carried out
    assert carried[0, 0] == 1.0 and carried[0, 5:].tolist() == list(row[5:])
    speeds = carried[:, 1:5]  # u1..u4: the propellers' speeds after the lag
    alpha = 1 - math.exp(-0.01 / 0.072)
    assert speeds[0] == pytest.approx(alpha * np.array([1000.0, 1200.0, 1000.0, 1200.0]))
    kf, km = 2.22e-8, 2.22e-8 * 0.005964552
    w2 = speeds[0] ** 2
    rows, force, torque = physics.calls[-1]
    assert rows == [0] and force[0] == pytest.approx([0.0, 0.0, kf * w2.sum()])
    # symmetric pairs: no roll or pitch; 2 and 4 (counter-clockwise) faster: yaw torque < 0
    assert torque[0, :2] == pytest.approx([0.0, 0.0], abs=1e-15)
    assert torque[0, 2] == pytest.approx(km * (w2[0] - w2[1] + w2[2] - w2[3]))
    again = Rotors.actuate(f, np.array([0]), p, np.array([row]))[:, 1:5]  # the lag goes on
    assert again[0] == pytest.approx((1 - (1 - alpha) ** 2) * np.array([1e3, 1.2e3, 1e3, 1.2e3]))
    reading = Rotors.sense(f, np.array([0]), p, np.zeros((1, 5)))  # the speeds it keeps
    assert reading[0, :4] == pytest.approx(again[0])
    assert reading[0, 4] == pytest.approx(kf * (again[0] ** 2).sum())


def test_the_reference_rides_along_and_stop_zeroes_everything():
    row = Rotors.command_row(cmd("set_rotors"), (1.0, 2.0, 3.0, 4.0, 0.5, -0.5, 1.0),
                             rotor_params(), None)
    assert row == (1.0, 1.0, 2.0, 3.0, 4.0, 0.5, -0.5, 1.0, 1.0)
    assert Rotors.command_row(cmd("stop"), (), rotor_params(), None) == (0.0,) * 9


@pytest.mark.parametrize("name, data, words", [
    ("set_rotors", (100.0, 100.0, 100.0, 2600.0), "[0, 2500] rad/s, got 2600"),
    ("set_rotors", (100.0, -1.0, 100.0, 100.0), "[0, 2500] rad/s, got -1"),
    ("set_rotors", (100.0, math.nan, 100.0, 100.0), "got nan"),
    ("set_thrust_rates", (1.0, 0.0, 0.0, 0.0), "thrust must be within [0, 0.55"),
    ("set_thrust_rates", (0.2, 60.0, 0.0, 0.0), "body rates must be within [-50, 50]"),
    ("set_thrust_attitude", (0.2, 2.0, 0.0, 0.0), "roll and pitch must be within"),
])
def test_bad_rotor_commands_are_refused_with_error_4_and_the_range(name, data, words):
    with pytest.raises(ProtocolError) as err:
        Rotors.command_row(cmd(name), data, rotor_params(), None)
    assert err.value.code == OUT_OF_RANGE and words in str(err.value)


def test_rotor_parameters_have_ranges():
    values = ParamValues(Rotors.params)
    with pytest.raises(ParameterError, match=r"mass = 0.0 is out of range \[0.001, 100.0\]"):
        values.set("mass", 0.0)
    values.set("mass", 1.5)


def test_set_thrust_rates_closes_the_rate_loop_with_the_inertia():
    p = params(Rotors, tau=0.0)
    row = Rotors.command_row(cmd("set_thrust_rates"), (0.3, 1.0, 0.0, 0.0), rotor_params(), None)
    physics = Physics()
    Rotors.actuate(frame(state(), physics=physics), np.array([0]), p, np.array([row]))
    _, force, torque = physics.calls[-1]
    assert force[0, 2] == pytest.approx(0.3)
    # at rest: torque = Ixx * rate_gain * (1 - 0) about x, nothing else
    assert torque[0] == pytest.approx([Crazyflie.INERTIA[0] * 60.0, 0.0, 0.0], rel=1e-6, abs=1e-12)


def test_set_thrust_attitude_turns_an_attitude_error_into_a_rate_then_a_torque():
    p = params(Rotors, tau=0.0)
    row = Rotors.command_row(cmd("set_thrust_attitude"), (0.3, 0.0, 0.1, 0.0), rotor_params(),
                             None)
    physics = Physics()
    Rotors.actuate(frame(state(), physics=physics), np.array([0]), p, np.array([row]))
    torque = physics.calls[-1][2][0]
    assert torque == pytest.approx([0.0, Crazyflie.INERTIA[1] * 60.0 * 12.0 * 0.1, 0.0], rel=1e-6, abs=1e-12)


def test_rotors_refuse_to_step_in_a_2d_world():
    with pytest.raises(SimulationError, match="flight feature"):
        Rotors.actuate(frame(state(), flight=False), np.array([0]), params(Rotors),
                       np.zeros((1, 9)))


def quiet_imu():
    return params(Imu, accel_noise=0, gyro_noise=0, accel_walk=0, gyro_walk=0)


def test_imu_at_rest_reads_gravity_up_and_no_rate():
    extra = {}
    f = frame(state(), extra=extra)
    first = Imu.measure(f, np.array([0]), quiet_imu(), np.zeros((1, 6)), np.random.default_rng(0))
    assert first[0].tolist() == pytest.approx([0, 0, 9.81, 0, 0, 0])


def test_imu_reads_the_specific_force_in_the_body_frame_from_the_velocity_change():
    extra, p, rng = {}, quiet_imu(), np.random.default_rng(0)
    roll = 0.3  # turned about x by 0.3 rad
    q = (math.cos(roll / 2), math.sin(roll / 2), 0.0, 0.0)
    Imu.measure(frame(state(q=q, v=(0, 0, 0)), time=0.0, extra=extra), np.array([0]), p,
                np.zeros((1, 6)), rng)
    out = Imu.measure(frame(state(q=q, v=(0.1, 0.0, -0.05), w=(0.2, -0.1, 0.3)), time=0.01,
                            extra=extra), np.array([0]), p, np.zeros((1, 6)), rng)
    a_world = np.array([10.0, 0.0, -5.0 + 9.81])  # (dv / dt) + g
    c, s = math.cos(roll), math.sin(roll)
    body = np.array([a_world[0], c * a_world[1] + s * a_world[2], -s * a_world[1] + c * a_world[2]])
    assert out[0, :3] == pytest.approx(body)
    assert out[0, 3:] == pytest.approx([0.2, -0.1, 0.3])


def test_imu_noise_has_the_density_over_root_h_and_the_bias_wanders():
    extra, rng = {}, np.random.default_rng(3)
    p = params(Imu, accel_noise=0.01, gyro_noise=0.001, accel_walk=0.0, gyro_walk=0.0)
    dt, reads = 0.01, []
    for k in range(2000):
        reads.append(Imu.measure(frame(state(), time=k * dt, extra=extra), np.array([0]), p,
                                 np.zeros((1, 6)), rng)[0])
    reads = np.array(reads[1:])
    assert reads[:, 2].std() == pytest.approx(0.01 / math.sqrt(dt), rel=0.1)
    assert reads[:, 4].std() == pytest.approx(0.001 / math.sqrt(dt), rel=0.1)
    assert reads[:, 2].mean() == pytest.approx(9.81, abs=0.01)
    walk = params(Imu, accel_noise=0.0, gyro_noise=0.0, accel_walk=0.0, gyro_walk=0.01)
    extra = {}
    for k in range(400):
        out = Imu.measure(frame(state(), time=k * dt, extra=extra), np.array([0]), walk,
                          np.zeros((1, 6)), rng)
    assert 0 < np.abs(out[0, 3:]).max() < 10 * 0.01 * math.sqrt(4.0)  # a walk of std 0.02
    assert out[0, :3].tolist() == pytest.approx([0, 0, 9.81])


def test_altimeter_ray_is_slanted_with_the_body_and_capped():
    p = params(Altimeter)
    tilt = 0.4
    q = (math.cos(tilt / 2), 0.0, math.sin(tilt / 2), 0.0)
    got = Altimeter.sense(frame(state(z=1.0, q=q)), np.array([0]), p, np.zeros((1, 1)))
    assert got[0, 0] == pytest.approx(1.0 / math.cos(tilt))
    assert Altimeter.sense(frame(state(z=9.0)), np.array([0]), p, None)[0, 0] == 4.0
    upside = (0.0, 1.0, 0.0, 0.0)
    assert Altimeter.sense(frame(state(z=1.0, q=upside)), np.array([0]), p, None)[0, 0] == 4.0


def test_mocap_reads_the_pose_and_adds_small_noise():
    q = (math.cos(0.2), 0.0, 0.0, math.sin(0.2))
    s = state(z=1.2, q=q)
    s[0, :2] = (0.5, -0.25)
    quiet = Mocap.measure(frame(s), np.array([0]), params(Mocap), np.zeros((1, 7)),
                          np.random.default_rng(0))
    assert quiet[0].tolist() == pytest.approx([0.5, -0.25, 1.2, *q])
    noisy = Mocap.measure(frame(s), np.array([0]), params(Mocap, noise=0.001, angle_noise=0.01),
                          np.zeros((1, 7)), np.random.default_rng(0))
    assert noisy[0, :3] == pytest.approx(quiet[0, :3], abs=0.006)
    assert noisy[0, :3].tolist() != quiet[0, :3].tolist()
    assert np.linalg.norm(noisy[0, 3:]) == pytest.approx(1.0)
    turn = 2 * math.acos(min(1.0, abs(float(noisy[0, 3:] @ quiet[0, 3:]))))
    assert 0 < turn < 0.08


def test_the_sensors_read_the_planar_state_in_a_2d_world():
    f = frame(state(), flight=False)
    f.pose[0] = (1.0, 2.0, 0.5)
    assert Mocap.sense(f, np.array([0]), params(Mocap), None)[0] == pytest.approx(
        [1.0, 2.0, 0.0, math.cos(0.25), 0, 0, math.sin(0.25)])
    assert Altimeter.sense(f, np.array([0]), params(Altimeter), None)[0, 0] == 0.0


def test_per_robot_state_follows_names_through_the_cached_rows():
    """ByName keeps the rows of the last names object it was asked: robots added, asked in
    another order or as a subset still get their own values, and a new robot its default."""
    from coopsim.plugins.modules.common import ByName, row_names

    board = ByName(v=np.zeros(2), t=-1.0)
    names = ("a", "b", "c")
    board.put(names, {"v": np.array([[1.0, 1], [2, 2], [3, 3]]), "t": np.array([1.0, 2, 3])})
    got, seen = board.get(names)
    assert seen.all() and got["v"][:, 0].tolist() == [1.0, 2.0, 3.0]
    got["v"][0] = 99.0  # a copy: the board keeps its own
    assert board.get(names)[0]["v"][0, 0] == 1.0
    more = ("c", "d", "a")  # a robot arrived, rows moved
    got, seen = board.get(more)
    assert seen.tolist() == [True, False, True]
    assert got["v"][:, 0].tolist() == [3.0, 0.0, 1.0] and got["t"].tolist() == [3.0, -1.0, 1.0]
    board.put(more, {"v": np.array([[30.0, 0], [40, 0], [10, 0]]), "t": np.zeros(3)})
    assert board.get(names)[0]["v"][:, 0].tolist() == [10.0, 2.0, 30.0]
    assert board.get(more)[0]["v"][:, 0].tolist() == [30.0, 40.0, 10.0]

    class F:
        names = ("x", "y", "z")
    assert row_names(F, np.arange(3)) is F.names  # every robot: the frame's own tuple
    assert row_names(F, np.array([2, 0])) == ("z", "x")
    assert row_names(F, np.array([0, 1])) == ("x", "y")
