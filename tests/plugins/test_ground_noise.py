"""The ground kinds' noise comes from the sensing plan's one draw a step: odometry's
wheel slip and the IR proximity's noise read their blocks (``frame.normals``), the values are
their formulas' over those very draws, and the same seed gives the same run."""

from __future__ import annotations

import numpy as np

from coopsim.plugins.modules import proximity as prox
from coopsim.plugins.modules.odometry import Odometry
from coopsim.plugins.modules.proximity import Proximity
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario

WALL = box("W", 1.5, 0, size=(1.0, 8.0))  # its face at x = 1.0


def watched(monkeypatch, cls, steps, scn, command=("motors", (0.2, 0.3))):
    """Run ``scn`` for ``steps`` steps on the plain path recording, at each ``cls.measure``,
    (its frame's normals block, the prev reading, the reading returned, the frame); the
    composed step gives the same bits (tests/sim/test_compose_ground.py)."""
    from coopsim.sim import fused

    monkeypatch.setattr(fused, "ENABLED", False)
    seen, measure = [], cls.measure.__func__

    def spy(c, frame, rows, p, prev, rng):
        out = measure(c, frame, rows, p, prev, rng)
        seen.append((frame.normals(c.label), prev.copy(), out.copy(), frame, rows, p))
        return out
    monkeypatch.setattr(cls, "measure", classmethod(spy))
    st = Stepper(Simulation(scn), mode="lockstep")
    for name in st.sim.snapshot.robots:
        st.slots.put(name, *command, attach=False)
    snaps = [st.tick() for _ in range(steps)]
    return seen, snaps


def test_odometry_slip_is_drawn_by_the_plan_and_applied_by_its_formula(monkeypatch):
    bots = [robot(f"r{i}", -2.0 + i, 0.0, 0.3 * i, params=[("odometry", "slip", 5.0 * i)])
            for i in range(3)]
    seen, snaps = watched(monkeypatch, Odometry, 5, scenario(bots, seed=9))
    assert len(seen) >= 5
    for block, prev, out, frame, rows, p in seen[-5:]:
        assert block is not None and block.shape == (3, 2)  # two wheels, every robot
        assert not block.flags.writeable
        wheels = _wheel_speeds(frame, rows) * frame.dt
        wheels = wheels * (1.0 + block * p["slip"][:, None] / 100)
        assert np.array_equal(out[:, 3:], prev[:, 3:] + wheels)  # the travel: bit for bit
    again, snaps2 = watched(monkeypatch, Odometry, 5, scenario(bots, seed=9))
    assert all(np.array_equal(a.readings["odometry"], b.readings["odometry"])
               for a, b in zip(snaps, snaps2))


def _wheel_speeds(frame, rows) -> np.ndarray:
    """(len(rows), 2) actual left, right wheel speeds, m/s, from the chassis' motion in numpy:
    forward = vx cos + vy sin, then -/+ yaw rate * axle / 2."""
    vel, yaw = frame.velocity[rows], frame.pose[rows, 2]
    forward = vel[:, 0] * np.cos(yaw) + vel[:, 1] * np.sin(yaw)
    half = vel[:, 2] * frame.axle[rows] / 2
    return np.column_stack((forward - half, forward + half))


def test_no_slip_no_draw(monkeypatch):
    seen, _ = watched(monkeypatch, Odometry, 3, scenario([robot("r1")]))
    assert Odometry.noise_draws({"slip": np.zeros(1)}) == 0
    assert all(block is None for block, *_ in seen)


def test_proximity_noise_is_the_plan_s_block_over_its_eight_slots(monkeypatch):
    bots = [robot(f"t{i}", 0.9, -1.0 + 0.5 * i, 0.0, type="thymio",
                  params=[("proximity", "noise", 40.0 * (i + 1))]) for i in range(3)]
    seen, _ = watched(monkeypatch, Proximity, 4, scenario(bots, [WALL], seed=2))
    for block, prev, out, frame, rows, p in seen[-3:]:
        assert block is not None and block.shape == (3, prox.SLOTS)
        clean = Proximity.sense(frame, rows, p, prev)
        expect = Proximity.clip(clean + block * p["noise"][:, None], p)
        expect[:, 7] = 0.0  # a Thymio's eighth slot is not in use: 0, noiseless
        assert np.array_equal(out, expect)
        assert (out[:, :7] > 0).any()  # the wall is seen
