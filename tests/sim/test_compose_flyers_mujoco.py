"""The composed step around MuJoCo's own (coopsim.sim.compose): a world of Crazyflies on
``mujoco`` takes the composed calls (the rotors' kernel, the wrench to the engine, its step, the
altimeter's view by the engine's cast, one compiled call for the readings) and gives the plain
path's bits, every snapshot column, with noise, objects under the altimeters, a diverged robot,
and the screened cast of many; a sonar casting in 3D (on ``mujoco`` and ``aerial``) is composed
too, its fans cast before the call."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from coopsim.model.specs import (DriverSetting, FloorSpec, ObjectSpec, ParamSetting, RobotSpec,
                                 ScenarioSpec, Settings, WorldSpec)
from coopsim.sim import fused
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
from tests.sim.test_fused import _columns, _same  # every snapshot column, compared

pytest.importorskip("mujoco")

ROOT = Path(__file__).resolve().parents[2]

NOISY = (ParamSetting("imu", "accel_noise", 0.01), ParamSetting("imu", "gyro_noise", 0.002),
         ParamSetting("imu", "accel_walk", 0.001), ParamSetting("mocap", "noise", 0.001),
         ParamSetting("mocap", "angle_noise", 0.002), ParamSetting("altimeter", "noise", 0.005))
PATH = "composed (rotors, altimeter, compass, gps, imu, mocap)"


def _flyers(n: int, objects: tuple = (), params: tuple = NOISY, z: float = 0.0,
            driven: bool = True) -> ScenarioSpec:
    """``n`` Crazyflies 0.5 m apart flying a small eight at 1 m under the ``flight`` driver
    every step on ``mujoco``, at height ``z`` to start."""
    eight = (DriverSetting("flight", (("shape", "eight"), ("height", 1.0), ("takeoff", 0.3),
                                      ("period", 2.0), ("size", 0.3))),) if driven else ()
    robots = tuple(RobotSpec("crazyflie", f"cf{k}", (0.5 * (k % 4) - 0.75,
                                                    0.5 * (k // 4) - 0.5, z),
                             drivers=eight, params=params) for k in range(n))
    return ScenarioSpec(WorldSpec(FloorSpec(6.0, 6.0)), robots=robots, objects=objects,
                        settings=Settings(dt=0.002, mode="lockstep", seed=11, engine="mujoco"))


def _run(spec: ScenarioSpec, steps: int, fuse: bool, monkeypatch, each=None) -> tuple:
    """Every snapshot's columns over ``steps`` ticks, how many were composed, the path and
    the simulation (``each(sim)`` before every tick)."""
    monkeypatch.setattr(fused, "ENABLED", fuse)
    sim = Simulation(spec)
    assert not fuse or sim.plan().fused is not None
    stepper, out, took = Stepper(sim, mode="lockstep"), [], 0
    for _ in range(steps):
        if each is not None:
            each(sim)
        out.append(_columns(stepper.tick()))
        took += sim._fusing
    return out, took, sim.step_path, sim


@pytest.mark.slow
def test_crazyflies_over_boxes_are_composed_and_give_the_plain_paths_bits(monkeypatch):
    """Three noisy Crazyflies fly off the floor and over two boxes (the altimeter's cast meets
    them): every column of every step is the plain path's."""
    boxes = tuple(ObjectSpec(f"BOX_{k}", "box", (0.2, 0.3, h), (x, -0.5, h / 2))
                  for k, (x, h) in enumerate(((-0.45, 0.4), (0.05, 0.2))))  # the eights' ends
    spec = _flyers(3, boxes)
    fast, took, path, sim = _run(spec, 500, True, monkeypatch)
    assert path == PATH and took == 500
    plain, none, plain_path, other = _run(spec, 500, False, monkeypatch)
    assert none == 0 and plain_path == "plain (composing off)"
    _same(fast, plain)
    alt = sim.snapshot.readings["altimeter"][:, 0]
    assert 0.0 < alt.min() and alt.max() < 4.0  # off the floor, something below each
    assert sim.snapshot.readings["imu"].tobytes() == other.snapshot.readings["imu"].tobytes()


def test_many_crazyflies_cast_through_the_screen_with_the_same_bits(monkeypatch):
    """Nine altimeters (from ``mujoco.rays.SCREEN`` rays on, the compiled screen in front of
    ``mj_ray``), noiseless: the composed and the plain path agree."""
    from coopsim.physics.mujoco import raykernel as mrk

    mrk._load()
    monkeypatch.setattr(mrk.WARM, "ready", True)
    spec = _flyers(9, params=())
    fast, took, _, _ = _run(spec, 200, True, monkeypatch)
    plain, _, _, _ = _run(spec, 200, False, monkeypatch)
    assert took == 200
    _same(fast, plain)


@pytest.mark.slow
def test_a_robot_that_diverges_is_put_back_alike_either_way(monkeypatch):
    """cf0 spun up by two rotors at full speed high above the floor passes the angular rate
    bound; the engine puts it back and the run goes on as the plain one does."""
    def spin(sim):
        sim.commands["rotors"][0] = (1.0, 2500.0, 2500.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    spec = _flyers(2, params=NOISY[:1], z=50.0, driven=False)
    fast, took, _, sim = _run(spec, 1000, True, monkeypatch, spin)
    assert "cf0" in sim.extra["diverged"] and took == 1000
    plain, _, _, other = _run(spec, 1000, False, monkeypatch, spin)
    assert "cf0" in other.extra["diverged"]
    _same(fast, plain)


def test_a_kind_at_a_rate_stays_composed_with_the_plain_paths_bits(monkeypatch):
    spec = _flyers(2, params=NOISY + (ParamSetting("imu", "rate", 100.0),
                                      ParamSetting("altimeter", "rate", 50.0)))
    fast, took, path, _ = _run(spec, 200, True, monkeypatch)
    assert path == PATH and took == 200
    plain, _, _, _ = _run(spec, 200, False, monkeypatch)
    _same(fast, plain)


@pytest.mark.parametrize("engine", ["mujoco", "aerial"])
def test_a_sonar_casting_in_3d_is_composed_with_the_plain_paths_bits(engine, monkeypatch):
    """``land_on_rover`` with a noisy sonar and a box in the rover's way: the sonar's fan is
    cast in 3D before the composed call, the world stays composed, every column of every
    step is the plain path's, the box is seen."""
    from coopsim.formats.files import load

    spec = load(str(ROOT / "scenarios" / "land_on_rover.scenario"))
    noisy = (ParamSetting("sonar", "noise", 0.01),)
    spec = dataclasses.replace(
        spec, robots=(dataclasses.replace(spec.robots[0], params=noisy), spec.robots[1]),
        objects=(ObjectSpec("BOX", "box", (0.3, 0.3, 0.3), (1.5, 0.6, 0.15)),),
        settings=dataclasses.replace(spec.settings, engine=engine))
    seen = []
    fast, took, path, sim = _run(spec, 300, True, monkeypatch,
                                 lambda sim: seen.append(sim.snapshot.readings["sonar"]))
    assert path.startswith("composed (") and "sonar" in path and took == 300
    plain, none, _, _ = _run(spec, 300, False, monkeypatch)
    assert none == 0
    _same(fast, plain)
    seen = np.array(seen[1:])[:, 0]  # (steps, 11): the rover's, m
    assert seen.min() < 0.7 and seen.max() > 1.9  # the box ahead; open space (max_range 2)
