"""The wheel and target modules' compiled kernels (plugins/modules/kernels.py) give their numpy
code's bits: random and edge inputs (yaws past +-pi, NaN, infinities, signed zeros, commands
beyond the limits, a zero axle), every robot's rows and a gather of some, through the modules'
own methods on a real simulation's frame, once with the kernels and once without. (A NaN may
come out with the other sign bit: still NaN.)"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from coopsim.app.bench import swarm_scenario
from coopsim.model import compiled
from coopsim.plugins.modules import kernels
from coopsim.plugins.modules.motors import Motors
from coopsim.plugins.modules.odometry import Odometry
from coopsim.plugins.modules.target import Target
from coopsim.plugins.modules.velocity import Velocity
from coopsim.sim.sensing import ParamArrays
from coopsim.sim.simulation import Simulation

pytestmark = [pytest.mark.skipif(not compiled.COMPILED, reason="the kernels need numba"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]  # NaN and inf on purpose

N = 64
EDGES = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, np.pi, -np.pi, 3 * np.pi, -3 * np.pi,
         1e300, -1e300, np.nextafter(np.pi, 4.0), np.nextafter(-np.pi, -4.0)]


@pytest.fixture(scope="module")
def sim():
    kernels._load()  # compiles the kernels, or loads them from numba's cache
    return Simulation(swarm_scenario(N, seed=3), engine="kinematic")


def values(rng, n: int, scale: float) -> np.ndarray:
    """``n`` random numbers of about ``scale``, the edge values among them."""
    out = rng.normal(0.0, scale, n)
    out[:len(EDGES)] = EDGES
    return rng.permutation(out)


def frame(sim, rng, geometry: bool = True):
    """The simulation's own frame over a random state (poses, yaws and velocities with edges)."""
    state = np.column_stack([values(rng, N, s) for s in (3.0, 3.0, 10.0, 1.0, 1.0, 4.0)])
    return sim._frame(state, {"motors": values(rng, 2 * N, 0.5).reshape(N, 2)}, geometry)


def both(monkeypatch, call):
    """``call()`` with the kernels off, then on: the two results."""
    out = []
    for ready in (False, True):
        monkeypatch.setattr(kernels.WARM, "ready", ready)
        out.append(call())
    return out


def same(a, b) -> None:
    """The same numbers, bit for bit (signed zeros too); NaN where the other has NaN (its
    sign bit may differ: x86's arithmetic makes NaNs of either sign, numpy's loops and the
    kernels' order of operations differ there)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    nan = np.isnan(a)
    assert (np.isnan(b) == nan).all()
    assert a[~nan].tobytes() == b[~nan].tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_odometry_and_wheel_speeds_are_numpys_bit_for_bit(sim, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    fr = frame(sim, rng)
    fr = dataclasses.replace(fr, axle=np.where(rng.random(N) < 0.1, 0.0, fr.axle))
    prev = np.column_stack([values(rng, N, s) for s in (2.0, 2.0, 5.0, 3.0, 3.0)])
    prev.setflags(write=False)  # as the sealed readings are
    p = ParamArrays({"slip": np.zeros(N)})
    rows = np.arange(N)
    for rows in (np.arange(N), np.sort(rng.choice(N, 9, replace=False))):
        def measure(rows=rows):
            fresh = dataclasses.replace(fr, memo={})
            return (Motors.wheel_speeds(fresh, rows),
                    Odometry.measure(fresh, rows, p, prev[rows] if len(rows) < N else prev,
                                     None))
        (speeds0, odo0), (speeds1, odo1) = both(monkeypatch, measure)
        same(speeds0, speeds1)
        same(odo0, odo1)

        def motors_first(rows=rows):  # the motors' reading, then odometry from its speeds
            fresh = dataclasses.replace(fr, memo={})
            return (Motors.sense(fresh, rows, {}, None),
                    Odometry.measure(fresh, rows, p, prev[rows] if len(rows) < N else prev,
                                     None))
        (motors0, after0), (motors1, after1) = both(monkeypatch, motors_first)
        same(motors0, motors1)
        same(after0, after1)
        same(after0, odo0)
        if len(rows) == N:  # the wheel speeds driven this step (a gather's are not known)
            same(motors0[:, :2], fr.actuated["motors"])


@pytest.mark.parametrize("seed", range(4))
def test_the_motors_drive_is_numpys_bit_for_bit(sim, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    fr = frame(sim, rng, geometry=False)
    commands = values(rng, 2 * N, 2.0).reshape(N, 2)
    p = {"max_speed": np.abs(values(rng, N, 1.0)), "efficiency": rng.uniform(0, 100, N)}
    p["max_speed"][:4] = 0.0  # +-0 bounds and +-0 commands: np.clip's signed zeros
    commands[:4] = [(0.0, -0.0), (-0.0, 0.0), (0.0, 0.0), (-0.0, -0.0)]
    engine = sim.world.engine

    def drive():
        wheels = Motors.actuate(fr, np.arange(N), p, commands)
        return wheels, engine.cmd.copy()
    (wheels0, cmd0), (wheels1, cmd1) = both(monkeypatch, drive)
    same(wheels0, wheels1)
    same(cmd0, cmd1)  # the forward speeds and turn rates the engine got


@pytest.mark.parametrize("seed", range(4))
def test_the_target_reading_is_numpys_bit_for_bit(sim, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    fr = frame(sim, rng)
    fr = dataclasses.replace(fr, targets=rng.normal(0.0, 4.0, (3, 2)))
    for rows in (np.arange(N), np.sort(rng.choice(N, 5, replace=False))):
        a, b = both(monkeypatch, lambda rows=rows: Target.sense(fr, rows, {}, None))
        same(a, b)
        assert a.shape == (len(rows), 6)


@pytest.mark.parametrize("seed", range(4))
def test_the_velocity_drive_is_numpys_bit_for_bit(sim, monkeypatch, seed):
    """Commands and references with edges (NaN, infinities, signed zeros, beyond the caps),
    tracking on some robots, no lag on others, zero limits: the driven velocity and what the
    engine got are the numpy formula's bits, for every robot's rows and for a gather."""
    rng = np.random.default_rng(seed)
    fr = frame(sim, rng, geometry=False)
    p = {"max_speed": np.abs(values(rng, N, 2.0)), "max_accel": np.abs(values(rng, N, 4.0)),
         "tau": np.where(rng.random(N) < 0.2, 0.0, np.abs(rng.normal(0.2, 0.1, N))),
         "max_yaw_rate": np.abs(values(rng, N, 2.0)), "gain": rng.uniform(0.0, 5.0, N)}
    p["max_speed"][:3] = p["max_yaw_rate"][3:6] = 0.0  # zero caps: np.clip's signed zeros
    commands = np.column_stack([values(rng, N, s) for s in (2.0, 2.0, 2.0, 4.0, 4.0)]
                               + [rng.random(N) < 0.5])
    commands[:4, 2] = [0.0, -0.0, 0.0, -0.0]
    engine = sim.world.engine
    for rows in (np.arange(N), np.sort(rng.choice(N, 9, replace=False))):
        def drive(rows=rows):
            sub = {k: v[rows] for k, v in p.items()}
            out = Velocity.actuate(fr, rows, sub, commands[rows])
            return out, engine.cmd.copy()
        (out0, cmd0), (out1, cmd1) = both(monkeypatch, drive)
        same(out0, out1)
        same(cmd0, cmd1)  # the velocities the engine got
        assert np.isfinite(out0).sum() > len(rows)  # not all NaN: the formula was exercised


NO_NEW_VERSION = """
from coopsim.app.bench import swarm_scenario
from coopsim.plugins.modules import kernels
from coopsim.raycast import auto
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

assert auto.wait_ready(600) and kernels.WARM.ready  # the background warm-up loaded them
names = ("wheel_speeds", "odometry", "drive", "target_offsets", "target_bearings",
         "velocity")
before = {k: len(getattr(kernels, k).serial.signatures) for k in names}
for n in (1, 3):
    for engine in ("kinematic", "pymunk"):
        for kind, module, command in (("single", "motors", (0.3, 0.25)),
                                      ("holonomic", "velocity", (0.3, 0.1, 0.2, 0, 0, 0))):
            st = Stepper(Simulation(swarm_scenario(n, robot_type=kind), engine=engine),
                         mode="lockstep")
            for name in st.sim.snapshot.robots:
                st.slots.put(name, module, command, attach=False)
            for _ in range(20):
                st.tick()
after = {k: len(getattr(kernels, k).serial.signatures) for k in names}
print(before, after)
assert after == before, (before, after)
"""


@pytest.mark.slow
def test_the_kernels_load_in_the_background_and_no_step_compiles_another():
    """The background warm-up loads every version of the kernels a step passes (read-only or
    not, strided or not): ticks of 1 and 3 robots on both engines compile none. In a process
    of its own: this one's kernels have versions other tests made."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", NO_NEW_VERSION], capture_output=True,
                          text=True, timeout=900, env={**os.environ, "COOPSIM_JIT": "auto"})
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_warm_up_hands_the_gil_over_often_and_restores_the_interval_after_the_last():
    """compiled.polite: overlapping warm-ups (the caster's thread, a late plugin's) lower the
    interpreter's switch interval while any runs; the one found before is back after both."""
    import sys
    import threading

    before = sys.getswitchinterval()
    second, done = threading.Event(), threading.Event()

    def late() -> None:
        with compiled.polite():
            second.set()
            done.wait(10)

    with compiled.polite():
        assert sys.getswitchinterval() == pytest.approx(compiled.POLITE_SWITCH)
        thread = threading.Thread(target=late)
        thread.start()
        assert second.wait(10)
    assert sys.getswitchinterval() == pytest.approx(compiled.POLITE_SWITCH)  # the late one runs
    done.set()
    thread.join(10)
    assert sys.getswitchinterval() == before
