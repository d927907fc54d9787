"""The compiled cascade (coopsim.swarm.flight_kernels) against the numpy functions
they stand for (coopsim.swarm.flight), over many quadrotors in random states: the same figures
to 1e-12 (libm's atan2, asin, sin, cos and hypot may round an ulp apart from numpy's)."""

import numpy as np
import pytest

from coopsim.swarm import flight
from coopsim.swarm import flight_kernels as fk

pytestmark = pytest.mark.skipif(not fk.COMPILED, reason="needs numba")

N = 500


def random_swarm(rng, n=N):
    """Airframes around a Crazyflie's, estimates, readings and references, all random."""
    frames = [flight.Airframe(0.027 * s, 0.046 * s, 2.22e-8 * s, 1.3e-10 * s, 2500.0 / s,
                              tuple(1.6e-5 * s * (1 + 0.2 * rng.random(3))))
              for s in 0.5 + rng.random(n)]
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    mocap = np.column_stack((rng.normal(size=(n, 3)), q))
    imu = np.column_stack((rng.normal(0.0, 3.0, (n, 3)) + [0, 0, 9.81],
                           rng.normal(size=(n, 3))))
    est = flight.Estimate(rng.normal(size=(n, 3)), rng.normal(size=(n, 3)),
                          rng.normal(0.0, 0.5, (n, 3)), rng.random(n) < 0.8)
    ref = rng.normal(size=(n, 11))
    return flight.Fleet.of(frames), mocap, imu, est, ref


@pytest.mark.parametrize("dt", [0.002, 0.0])
def test_cascade_is_estimate_then_control(dt):
    rng = np.random.default_rng(7)
    fleet, mocap, imu, est, ref = random_swarm(rng)
    gains = flight.Gains(pos=2.5, vel=4.0, att=10.0, rate=55.0, rate_yaw=13.0)
    mine = flight.Estimate(est.p.copy(), est.v.copy(), est.integral.copy(), est.ready.copy())
    want_est = flight.estimate(est, mocap, imu[:, :3], dt)
    want = flight.control(gains, fleet, want_est, mocap[:, 3:7], imu[:, 3:6], ref, dt)
    out = np.full((N, 4), np.nan)
    fk.cascade(fk.gains_array(gains), fk.fleet_array(fleet), mine.p, mine.v, mine.integral,
               mine.ready, mocap, imu, ref, dt, out)
    for a, b in ((mine.p, want_est.p), (mine.v, want_est.v), (mine.integral, want_est.integral),
                 (out, want)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert mine.ready.all()
    assert (out > 0).any() and (out == 0).any()  # some rotors clipped at 0, some spinning
