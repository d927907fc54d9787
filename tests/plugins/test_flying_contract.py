"""The flying kinds (rotors, imu, mocap, altimeter) on the ModuleKernel contract: each computes
by its compiled kernels only (the base Module runs them), the core makes the views they read
(``clock``, ``full_state``, ``below``) and hands the rotors' wrench to the engine in blocks."""

import math

import numpy as np
import pytest

from coopsim.model import kernel
from coopsim.model.capabilities import kernels_of
from coopsim.model.module import Frame, Module
from coopsim.model.plugins import MODULES  # the registry: a frame's state tables by label
from coopsim.plugins.modules import flying
from coopsim.plugins.modules.altimeter import Altimeter
from coopsim.plugins.modules.imu import Imu
from coopsim.plugins.modules.mocap import Mocap
from coopsim.plugins.modules.rotors import Rotors
from coopsim.swarm import flight_kernels


def _frame(s, physics=None, time=0.0, dt=0.01):
    n = 1 if s is None else len(s)
    return Frame(dt, np.zeros((n, 3)), np.zeros((n, 3)), np.full(n, 0.07), np.zeros(n),
                 np.zeros(n, np.int64), {}, {}, np.zeros((0, 2)), np.zeros((n, 2)), None,
                 physics, {}, 0, tuple(f"cf{k}" for k in range(n)), time=time, state3d=s)


def _params(module, n=1, **changes):
    values = {p.name: p.default for p in module.params}
    values.update(changes)
    return {k: np.full(n, float(v)) for k, v in values.items()}


def test_the_flying_kinds_compute_by_their_kernels_only():
    assert kernels_of(Rotors) == (flight_kernels.rotors_sense, flight_kernels.rotors_actuate,
                                  ("apply_wrench", (3, 3)))
    assert kernels_of(Imu)[0] is flying.imu_sense
    assert kernels_of(Mocap)[0] is flying.mocap_sense
    assert kernels_of(Altimeter)[0] is flying.altimeter_sense
    base = {name: getattr(Module, name).__func__ for name in ("sense", "actuate", "clip")}
    for kind in (Rotors, Imu, Mocap, Altimeter):
        for name, func in base.items():
            assert getattr(kind, name).__func__ is func, f"{kind.label}.{name}"


def test_a_kind_drawing_its_own_noise_is_measured_with_it_without_a_noise_parameter():
    """The imu has no ``noise`` parameter: the plan still measures it with its draws (a kind
    declaring draws is not 'plain'), by the base measure running its kernel."""
    from coopsim.sim.sensing import ParamArrays, noise_plan

    assert MODULES.get("imu") is Imu
    assert Imu.measure.__func__ is Module.measure.__func__
    assert noise_plan(Imu, ParamArrays(_params(Imu, accel_noise=0.01)), 0) == (12, False)
    s = np.array([[0.0, 0.0, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])
    p = _params(Imu, accel_noise=0.01, gyro_noise=0.0, accel_walk=0.0, gyro_walk=0.0)
    quiet = Imu.sense(_frame(s), np.array([0]), p, np.zeros((1, 6)))
    noisy = Imu.measure(_frame(s), np.array([0]), p, np.zeros((1, 6)),
                        np.random.default_rng(1))
    assert quiet[0].tolist() == pytest.approx([0, 0, 9.81, 0, 0, 0])
    assert noisy[0, :3].tolist() != quiet[0, :3].tolist()
    assert noisy[0, 3:].tolist() == quiet[0, 3:].tolist()  # the gyroscope's noise is 0


def test_the_clock_and_full_state_views():
    f = _frame(None, time=1.5, dt=0.002)
    f.pose[0] = (1.0, 2.0, 0.5)
    f.velocity[0] = (0.1, -0.2, 0.3)
    clock, full = kernel.views_of(f, ("clock", "full_state"), Imu, np.array([0]), {})
    assert clock.tolist() == [1.5, 0.002] and not clock.flags.writeable
    assert full[0].tolist() == pytest.approx(
        [1.0, 2.0, 0.0, math.cos(0.25), 0, 0, math.sin(0.25), 0.1, -0.2, 0, 0, 0, 0.3])
    s = np.zeros((1, 13))
    own = kernel.views_of(_frame(s), ("full_state",))[0]  # a 3D engine's own state, read-only
    assert np.shares_memory(own, s) and own.shape == s.shape and not own.flags.writeable


class Caster:
    """An engine that casts in 3D: everything is ``hit`` m from each body's origin."""

    def __init__(self, hit, low=-0.02):
        self.hit, self.low, self.calls = hit, low, []

    def casts3d(self):
        return True

    def chassis_extent(self, rows):
        return np.array([[self.low, 0.01]] * len(rows))

    def cast3d(self, rows, origins, directions, reach):
        self.calls.append((origins.copy(), directions.copy(), reach.copy()))
        return np.minimum(np.full((len(rows), 1), self.hit), reach[:, None])


def test_the_altimeter_reads_the_cores_cast_from_the_underside_then_its_noise_and_caps():
    tilt = 0.4
    q = (math.cos(tilt / 2), 0.0, math.sin(tilt / 2), 0.0)
    s = np.array([[0.5, 0.0, 1.0, *q, 0, 0, 0, 0, 0, 0]])
    physics = Caster(1.25)
    p = _params(Altimeter, max_range=4.0)
    got = Altimeter.sense(_frame(s, physics), np.array([0]), p, None)
    assert got[0, 0] == pytest.approx(1.25 - 0.02)  # measured from the underside
    origin, down, reach = physics.calls[-1]
    assert origin[0].tolist() == [0.5, 0.0, 1.0] and reach.tolist() == [4.02]
    assert down[0, 0].tolist() == pytest.approx([-math.sin(tilt), 0.0, -math.cos(tilt)])
    far = Altimeter.sense(_frame(s, Caster(9.0)), np.array([0]), p, None)
    assert far[0, 0] == pytest.approx(4.0)  # nothing within max_range
    noisy = _params(Altimeter, max_range=4.0, noise=1.0)
    readings = [Altimeter.measure(_frame(s, Caster(0.03)), np.array([0]), noisy,
                                  np.zeros((1, 1)), np.random.default_rng(k))[0, 0]
                for k in range(40)]
    assert min(readings) == 0.0 and max(readings) > 0.01  # noisy, never below the floor


def test_the_rotors_hand_their_wrench_over_in_blocks_and_keep_the_engines_refusal():
    class Engine:
        def apply_wrench(self, rows, force, torque):
            if not (np.isfinite(force).all() and np.isfinite(torque).all()):
                raise kernel_error("robot cf0's wrench is not finite")
            self.got = (rows.tolist(), force.shape, torque.shape)

    from coopsim.model.errors import SimulationError as kernel_error

    s = np.array([[0.0, 0.0, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])
    s.setflags(write=False)
    engine = Engine()
    p = _params(Rotors)
    row = np.array([[1.0, 1000.0, 1000.0, 1000.0, 1000.0, 0.5, 0.5, 1.0, 1.0]])
    carried = Rotors.actuate(_frame(s, engine), np.array([0]), p, row)
    assert engine.got == ([0], (1, 3), (1, 3))
    assert carried[0, 5:].tolist() == [0.5, 0.5, 1.0, 1.0]  # the rest as commanded
    wild = _params(Rotors, kf=math.nan)  # no parameter check lets that through: the engine
    with pytest.raises(kernel_error, match="not finite"):  # refuses what it is handed
        Rotors.actuate(_frame(s, engine), np.array([0]), wild, row)
    drive = np.arange(12.0).reshape(2, 6)
    force, torque = kernel.drive_parts(("apply_wrench", (3, 3)), drive)
    assert force.tolist() == [[0, 1, 2], [6, 7, 8]] and torque.tolist() == [[3, 4, 5],
                                                                             [9, 10, 11]]
    assert [c.tolist() for c in kernel.drive_parts(("drive", 2), drive[:, :2])] == \
        [[0.0, 6.0], [1.0, 7.0]]
    assert kernel.drive_width(("apply_wrench", (3, 3))) == 6 and kernel.drive_width(()) == 0
