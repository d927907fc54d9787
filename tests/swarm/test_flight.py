"""The cascaded flight controller (coopsim.swarm.flight) on its own: the mixer against the X
frame's geometry by hand, the fixed-point grid, the references' derivatives, and the whole
cascade closing the loop around a rigid body integrated here (no engine)."""

import math

import numpy as np
import pytest

from coopsim.plugins.robots.crazyflie import Crazyflie, Quadrotor
from coopsim.swarm import flight

CF = flight.Airframe(**{k: v for k, v in Crazyflie.defaults["rotors"].items()
                        if k in ("mass", "arm", "kf", "km", "max_speed")},
                     inertia=Crazyflie.INERTIA)
QUAD = flight.Airframe(**{k: v for k, v in Quadrotor.defaults["rotors"].items()
                          if k in ("mass", "arm", "kf", "km", "max_speed")},
                       inertia=Quadrotor.INERTIA)


def test_the_wrench_of_four_speeds_by_hand():
    w = np.array([[1000.0, 1100.0, 1200.0, 1300.0]])
    force, torque = flight.wrench(w, CF.arm, CF.kf, CF.km)
    f = CF.kf * w[0] ** 2
    d = CF.arm / math.sqrt(2)
    assert force[0].tolist() == pytest.approx([0.0, 0.0, f.sum()])
    # rotor 1 front right (+d, -d), 2 back right, 3 back left, 4 front left: tau = r x (0, 0, f)
    assert torque[0, 0] == pytest.approx(d * (-f[0] - f[1] + f[2] + f[3]))
    assert torque[0, 1] == pytest.approx(-d * (f[0] - f[1] - f[2] + f[3]))
    # 1 and 3 turn clockwise: their drag turns the body counter-clockwise (+z)
    assert torque[0, 2] == pytest.approx(CF.km * (w[0, 0] ** 2 - w[0, 1] ** 2 + w[0, 2] ** 2
                                                  - w[0, 3] ** 2))


def test_mix_inverts_the_wrench_and_saturates_at_the_rotor_limits():
    thrust = np.array([0.3, 0.2])
    torque = np.array([[1e-4, -2e-4, 3e-6], [0.0, 0.0, 0.0]])
    speeds = flight.mix(thrust, torque, CF.arm, CF.kf, CF.km, CF.max_speed)
    force, back = flight.wrench(speeds, CF.arm, CF.kf, CF.km)
    assert force[:, 2] == pytest.approx(thrust)
    assert back == pytest.approx(torque, abs=1e-12)
    flat = flight.mix(np.array([10.0]), np.zeros((1, 3)), CF.arm, CF.kf, CF.km, CF.max_speed)
    assert flat.tolist() == [[CF.max_speed] * 4]  # more than the rotors give: all at the cap
    none = flight.mix(np.array([0.0]), np.array([[1e-3, 0, 0]]), CF.arm, CF.kf, CF.km,
                      CF.max_speed)
    assert (none >= 0).all() and none[0, 0] == 0.0  # no negative thrust


def test_quantize_is_an_int16_q_format():
    assert flight.quantize(1.0, 11) == 1.0
    assert flight.quantize(1.0 + 2 ** -13, 11) == 1.0  # below half a step: rounded away
    assert flight.quantize(1.0 + 2 ** -11, 11) == 1.0 + 2 ** -11
    assert flight.quantize(100.0, 11) == 32767 / 2048  # saturates at +16 - 2^-11
    assert flight.quantize(-100.0, 11) == -16.0


def test_fixed_point_changes_the_inner_loop_by_at_most_its_grid():
    q = np.array([[math.cos(0.05), math.sin(0.05), 0.0, 0.0]])
    sp = np.array([[0.0123456, -0.0201, 0.3]])
    gyro = np.array([[0.01234, -0.5, 0.1]])
    exact = flight.rate_loop(flight.Gains(), np.array([CF.inertia]),
                             flight.attitude_loop(flight.Gains(), sp, q), gyro)
    g = flight.Gains(fixed_point=True)
    fixed = flight.rate_loop(g, np.array([CF.inertia]), flight.attitude_loop(g, sp, q), gyro)
    assert not np.array_equal(exact, fixed)
    # the grids: angle 2^-11 through gains of 12 and 60, then the 1/32 acceleration step
    assert fixed == pytest.approx(exact, abs=float(np.max(CF.inertia)) * (60 * 13 * 2 ** -11
                                                                            + 2 ** -5))


def test_euler_and_rotate_agree_with_a_hand_made_turn():
    yaw, pitch = 0.7, 0.2
    qz = np.array([math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)])
    qy = np.array([math.cos(pitch / 2), 0, math.sin(pitch / 2), 0])
    w1, v1, w2, v2 = qz[0], qz[1:], qy[0], qy[1:]
    q = np.array([[w1 * w2 - v1 @ v2, *(w1 * v2 + w2 * v1 + np.cross(v1, v2))]])
    assert flight.euler(q)[0] == pytest.approx([0.0, pitch, yaw])
    x = flight.rotate(q, np.array([[1.0, 0.0, 0.0]]))[0]
    assert x == pytest.approx([math.cos(yaw) * math.cos(pitch), math.sin(yaw) * math.cos(pitch),
                               -math.sin(pitch)])
    assert flight.rotate_back(q, flight.rotate(q, np.array([[0.1, 0.2, 0.3]]))) == \
        pytest.approx(np.array([[0.1, 0.2, 0.3]]))


@pytest.mark.parametrize("plane, second", [("horizontal", 1), ("vertical", 2)])
def test_the_eight_reference_is_consistent_with_its_derivatives(plane, second):
    s = np.array([0.3, 1.7, 4.1])
    centre = np.array([[1.0, -1.0, 1.5]] * 3)
    h = 1e-6
    ref = flight.eight(s, centre, 2.0, 8.0, plane, 0.1, 0.5)
    ahead = flight.eight(s + h, centre, 2.0, 8.0, plane, 0.1, 0.5)
    assert (ahead[:, 0:3] - ref[:, 0:3]) / h == pytest.approx(ref[:, 3:6], abs=1e-4)
    assert (ahead[:, 3:6] - ref[:, 3:6]) / h == pytest.approx(ref[:, 6:9], abs=1e-3)
    other = 2 if second == 1 else 1
    assert ref[:, other] == pytest.approx(centre[:, other])  # flat in the other axis
    assert ref[:, 9] == pytest.approx(flight.wrap(0.1 + 0.5 * s))
    before = flight.eight(np.array([-1.0]), centre[:1], 2.0, 8.0, plane)
    assert before[0, :3].tolist() == centre[0].tolist() and not before[0, 3:9].any()


def _quat_step(q, w, dt):
    """Quaternions advanced by body rates w over dt (exact for constant rates)."""
    angle = np.linalg.norm(w, axis=1) * dt
    axis = w / np.maximum(np.linalg.norm(w, axis=1), 1e-12)[:, None]
    d = np.column_stack((np.cos(angle / 2), axis * np.sin(angle / 2)[:, None]))
    out = np.column_stack((q[:, :1] * d[:, :1] - np.sum(q[:, 1:] * d[:, 1:], 1, keepdims=True),
                           q[:, :1] * d[:, 1:] + d[:, :1] * q[:, 1:]
                           + np.cross(q[:, 1:], d[:, 1:])))
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def fly(frames, ref_at, seconds, dt=0.002, tau=0.03, gains=flight.Gains(), start=None):
    """Integrate rigid quadrotors with motor lag under the cascade; every step's error, m."""
    n = len(frames)
    p = np.zeros((n, 3)) if start is None else start.copy()
    v, w = np.zeros((n, 3)), np.zeros((n, 3))
    q = np.tile([1.0, 0, 0, 0], (n, 1))
    speeds = np.zeros((n, 4))
    inertia = np.array([f.inertia for f in frames])
    mass = np.array([f.mass for f in frames])
    arm, kf, km = (np.array([getattr(f, k) for f in frames]) for k in ("arm", "kf", "km"))
    est, errors = flight.Estimate.empty(n), []
    accel = np.tile([0.0, 0.0, flight.GRAVITY], (n, 1))
    for k in range(int(round(seconds / dt))):
        est = flight.estimate(est, np.column_stack((p, q)), accel, dt if k else 0.0)
        ref = ref_at(k * dt)
        want = flight.control(gains, list(frames), est, q, w, ref, dt)
        speeds += (1 - math.exp(-dt / tau)) * (want - speeds)
        force, torque = flight.wrench(speeds, arm, kf, km)
        a_world = flight.rotate(q, force) / mass[:, None] - [0.0, 0.0, flight.GRAVITY]
        w_dot = (torque - np.cross(w, inertia * w)) / inertia
        v, p = v + a_world * dt, p + (v + a_world * dt) * dt
        w = w + w_dot * dt
        q = _quat_step(q, w, dt)
        accel = flight.rotate_back(q, a_world + [0.0, 0.0, flight.GRAVITY])
        errors.append(np.linalg.norm(p - ref[:, :3], axis=1))
    return np.array(errors), p


@pytest.mark.slow
@pytest.mark.parametrize("fixed", [False, True])
def test_the_cascade_lifts_a_crazyflie_and_a_quadrotor_to_their_hover_points(fixed):
    centre = np.array([[0.0, 0.0, 1.0], [2.0, 1.0, 1.5]])
    floor = centre * [1.0, 1.0, 0.0]  # each starts on the floor under its point
    errors, p = fly([CF, QUAD], lambda t: flight.hover(centre, 0.0), 5.0, dt=0.004,
                    gains=flight.Gains(fixed_point=fixed), start=floor)
    assert errors[-1] == pytest.approx([0.0, 0.0], abs=0.01)
    assert errors[-250:].max() < 0.02  # held over the last second


@pytest.mark.slow
def test_the_cascade_tracks_a_horizontal_eight_with_yaw_turning():
    centre = np.array([[0.0, 0.0, 1.0]])
    _, start = fly([CF], lambda t: flight.hover(centre, 0.0), 4.0)
    errors, _ = fly([CF], lambda t: flight.eight(np.array([t]), centre, 1.0, 8.0,
                                                 "horizontal", 0.0, 0.5), 8.0, start=start)
    assert errors.mean() < 0.05 and errors.max() < 0.3  # the lap starts at full speed


def test_the_estimator_learns_nothing_when_no_time_passed():
    """A network controller may read the same step twice (it polls faster than the run
    steps): dt = 0 must leave the estimate finite and unchanged, not divide by zero."""
    est = flight.Estimate.empty(1)
    mocap = np.array([[0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
    accel = np.array([[0.0, 0.0, flight.GRAVITY]])
    est = flight.estimate(est, mocap, accel, 0.01)
    moved = mocap.copy()
    moved[0, 0] = 0.05  # a reading that disagrees, at the same time
    again = flight.estimate(est, moved, accel, 0.0)
    assert np.isfinite(again.v).all() and np.array_equal(again.v, est.v)
    assert np.array_equal(again.p, est.p)


def test_the_neighbour_sensor_finds_what_a_distance_table_finds_in_its_order():
    """The sphere formation's range sensor (a k-d tree) against the N x N table it replaced:
    the same ordered pairs (sorted by i, then j), the same relative positions."""
    from coopsim.swarm.potentials import neighbours

    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 60, 400):
        p = rng.uniform(-6.0, 6.0, (n, 3))
        rel = p[None, :, :] - p[:, None, :]
        d2 = np.einsum("ijk,ijk->ij", rel, rel)
        np.fill_diagonal(d2, np.inf)
        want_i, want_j = np.nonzero(d2 <= 1.5 ** 2)
        i, j, got = neighbours(p, 1.5)
        assert np.array_equal(i, want_i) and np.array_equal(j, want_j)
        assert np.array_equal(got, rel[want_i, want_j])
        assert n < 400 or len(i) > n  # a crowd: the sensor sees pairs


def test_a_few_quadrotors_eight_on_floats_gives_the_array_paths_bits(monkeypatch):
    """Up to ``flight.FEW`` quadrotors the reference is worked out on floats: every entry is
    the array path's to the bit (signed zeros of a start at -0.0 and of the hold before it,
    both planes, a yaw rate or none, one yaw or one per quadrotor)."""
    rng = np.random.default_rng(4)
    cases = []
    for k in range(400):
        n = 1 + k % flight.FEW
        s = rng.uniform(-5.0, 40.0, n)
        s[0] = (-0.0, 0.0, -1.0, s[0])[k % 4]
        cases.append((s, rng.uniform(-3.0, 3.0, (n, 3)), rng.uniform(0.1, 3.0),
                      rng.uniform(0.5, 20.0), flight.PLANES[k % 2],
                      rng.uniform(-4.0, 4.0, n) if k % 3 else float(rng.uniform(-4, 4)),
                      rng.uniform(-2.0, 2.0) if k % 5 else 0.0))
    few = [flight.eight(*case) for case in cases]
    monkeypatch.setattr(flight, "FEW", 0)  # every case through the arrays
    for case, got in zip(cases, few):
        assert got.tobytes() == flight.eight(*case).tobytes()
