"""The step's path (coopsim.sim.fused) for flyers: a world of Crazyflies on ``aerial`` is
composed (coopsim.sim.compose: the kinds' kernels, the engine's step inside the acting call, the
altimeter's cast inside the sensing one) and gives the plain path's bits, every snapshot column,
at 1, 2 and 4 numba threads and where a robot diverges; a world with a kind that has no kernel
runs it as a stage, one with a timed kind keeps the plain path and says why."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.model import threads as policy
from coopsim.model.specs import (DriverSetting, FloorSpec, ParamSetting, RobotSpec,
                                 ScenarioSpec, Settings, WorldSpec)
from coopsim.physics.aerial import kernels as aerial_kernels
from coopsim.sim import compose, fused
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper


NOISY = {"imu": {"accel_noise": 0.01, "gyro_noise": 0.002},
         "mocap": {"noise": 0.001, "angle_noise": 0.002}, "altimeter": {"noise": 0.005}}


def _flyers(n: int, params: dict | None = None, engine: str = "aerial") -> ScenarioSpec:
    """``n`` Crazyflies 0.5 m apart hovering at 1 m under the ``flight`` driver at 100 Hz,
    with noisy imus and mocaps (``params``: module -> name -> value on every robot)."""
    hover = (DriverSetting("flight", (("shape", "eight"), ("height", 1.0), ("every", 5),
                                      ("takeoff", 0.2), ("period", 2.0))),)
    chosen = NOISY if params is None else params
    settings = tuple(ParamSetting(m, k, v) for m, values in chosen.items()
                     for k, v in values.items())
    robots = tuple(RobotSpec("crazyflie", f"cf{k}", (0.5 * k - 1.0, 0.25 * k, 0.0),
                             drivers=hover, params=settings) for k in range(n))
    return ScenarioSpec(WorldSpec(FloorSpec(6.0, 6.0)), robots=robots,
                        settings=Settings(dt=0.002, mode="lockstep", seed=7, engine=engine))


def _run(spec: ScenarioSpec, steps: int, fuse: bool, monkeypatch) -> tuple[list, int, str]:
    """Every snapshot's columns over ``steps`` ticks, how many ticks took the fused pass, and
    the plan's path."""
    monkeypatch.setattr(fused, "ENABLED", fuse)
    sim = Simulation(spec)
    stepper, out, took = Stepper(sim, mode="lockstep"), [], 0
    for _ in range(steps):
        snap = stepper.tick()
        took += sim._fusing
        out.append(_columns(snap))
    return out, took, sim.step_path


def _columns(snap) -> dict:
    cols = {"pose3d": snap.pose3d, "twist3d": snap.twist3d, "poses": snap.poses,
            "velocities": snap.velocities}
    cols.update({f"reading {k}": v for k, v in snap.readings.items()})
    cols.update({f"command {k}": v for k, v in snap.commands.items()})
    return {k: np.array(v).tobytes() for k, v in cols.items()}


def _same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for step, (x, y) in enumerate(zip(a, b)):
        assert x.keys() == y.keys()
        for k in x:
            assert x[k] == y[k], f"step {step + 1}: {k} differs"


PATH = "composed (rotors, altimeter, compass, gps, imu, mocap)"


def test_a_crazyflie_world_is_composed_and_gives_the_plain_paths_bits(monkeypatch):
    spec = _flyers(3)
    fast, took, path = _run(spec, 400, True, monkeypatch)
    assert path == PATH
    assert took == 400
    plain, none, plain_path = _run(spec, 400, False, monkeypatch)
    assert none == 0 and plain_path == "plain (composing off)"
    _same(fast, plain)


@pytest.mark.slow
@pytest.mark.parametrize("count", [2, 4])
def test_the_same_bits_on_more_threads(monkeypatch, count):
    """With the engine's threads sharing big steps (a low PARALLEL_MIN), those steps take the
    plain parallel step, the others the composed call: the run is still the one-thread one."""
    spec = _flyers(5)
    policy.use(1)
    one, _, _ = _run(spec, 150, True, monkeypatch)
    monkeypatch.setattr(aerial_kernels, "PARALLEL_MIN", 4)
    try:
        if policy.use(count) < 2:
            pytest.skip("one core: no threads to share the rows")
        many, took, _ = _run(spec, 150, True, monkeypatch)
    finally:
        policy.use(1)
    assert took == 150  # composed, the engine's parallel step after the acting call
    _same(one, many)


def test_a_kind_without_a_pass_runs_as_a_stage_even_at_a_rate(monkeypatch):
    monkeypatch.setattr(fused, "ENABLED", True)
    ground = ScenarioSpec(WorldSpec(FloorSpec(4.0, 4.0)),
                          robots=(RobotSpec("kilobot", "r0", (0.0, 0.0, 0.0)),),
                          settings=Settings(dt=0.02, seed=1, engine="kinematic"))
    sim = Simulation(ground)  # kernels (composed) with a radio and a light sensor
    assert sim.plan().fused is not None
    assert sim.step_path.endswith(" + stages (light, radio)"), sim.step_path
    assert sim.plan().before == ()  # neither acts
    assert [e[0] for e in sim.plan().after] == ["light", "radio"]
    timed = ScenarioSpec(ground.world, robots=(RobotSpec(
        "kilobot", "r0", (0.0, 0.0, 0.0), params=(ParamSetting("light", "rate", 10.0),)),),
        settings=ground.settings)
    fast, took, path = _run(timed, 60, True, monkeypatch)
    assert path.endswith(" + stages (light, radio)") and took == 60
    _same(fast, _run(timed, 60, False, monkeypatch)[0])


def test_a_timed_flying_kind_stays_composed_with_the_plain_paths_bits(monkeypatch):
    timed = _flyers(2, {**NOISY, "imu": {**NOISY["imu"], "rate": 100.0},
                        "altimeter": {"rate": 50.0}})
    fast, took, path = _run(timed, 200, True, monkeypatch)
    assert path == PATH and took == 200
    _same(fast, _run(timed, 200, False, monkeypatch)[0])


def test_the_aerial_engines_step_and_cast_run_inside_the_calls(monkeypatch):
    """On ``aerial`` the rotors' wrench, the engine's step and its check run inside the acting
    call (the engine's own step is never called) and the altimeter's cast inside the sensing
    call; an altimeter over the floor reads its clearance."""
    monkeypatch.setattr(fused, "ENABLED", True)
    sim = Simulation(_flyers(2, {}))
    found = sim.plan().fused
    assert isinstance(found, compose.ComposedPass) and found.in_call and found.below == "call"
    engine = sim.world.engine
    stepped = []
    monkeypatch.setattr(type(engine), "step", lambda self, dt: stepped.append(dt))
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(5):
        stepper.tick()
    assert stepped == [] and sim.step == 5
    alt = sim.snapshot.readings["altimeter"][:, 0]
    assert np.all((0.0 <= alt) & (alt < 0.05))  # on the floor


@pytest.mark.slow
def test_a_step_where_a_robot_diverges_gives_the_plain_paths_bits(monkeypatch):
    """cf0 spun up by two rotors at full speed, high above the floor, passes the angular rate
    bound (step 972): the composed call steps it, the engine puts it back, the step's sensors
    run after its containment on the same draw, and the run goes on as the plain one does."""
    runs = []
    for fuse in (True, False):
        monkeypatch.setattr(fused, "ENABLED", fuse)
        robots = tuple(RobotSpec("crazyflie", f"cf{k}", (0.5 * k, 0.0, 100.0),
                                 params=(ParamSetting("imu", "accel_noise", 0.01),))
                       for k in range(2))
        sim = Simulation(ScenarioSpec(WorldSpec(FloorSpec(6.0, 6.0)), robots=robots,
                                      settings=Settings(dt=0.002, seed=3, engine="aerial")))
        stepper, out, took = Stepper(sim, mode="lockstep"), [], 0
        for _ in range(1000):
            sim.commands["rotors"][0] = (1.0, 2500.0, 2500.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            out.append(_columns(stepper.tick()))
            took += sim._fusing
        assert "cf0" in sim.extra["diverged"]
        runs.append((out, took))
    (fast, took), (plain, none) = runs
    assert took == 1000 and none == 0  # the composed path, the step where cf0 diverged too
    _same(fast, plain)
