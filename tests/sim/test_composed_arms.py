"""The composed step of arms around MuJoCo's own (coopsim.sim.compose): a world of arms on
``mujoco`` composes the arm kinds' kernels (``joints``, ``tool``, ``force``, ``gripper``,
``pose``: coopsim.plugins.modules.armkernels, on the views of coopsim.model.armviews) with the
joints' plans a stage before the call, and gives the plain path's bits, every snapshot column,
with ``arm_pick`` grabbing and placing, two kinds of arm, joint commands of every kind, noise,
and a diverged object; a kind at a rate stays composed."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.model.specs import (COLORS, DriverSetting, FloorSpec, ObjectSpec, ParamSetting,
                                 RobotSpec, ScenarioSpec, Settings, WorldSpec)
from coopsim.plugins.modules.joints import MAX_JOINTS, MAX_POINTS, POINT
from coopsim.plugins.modules.joints import POSITIONS, STOP, TRAJECTORY, VELOCITIES, WIDTH
from coopsim.sim import fused
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
from tests.sim.test_fused import _columns, _same  # every snapshot column, compared

pytest.importorskip("mujoco")

PATH = "composed (force, gripper, joints, pose, tool) + stages (joints)"
PICK = (DriverSetting("arm_pick", (("speed", 1.0),)),)


def _arms(types: tuple, dt: float = 0.002, driven: bool = True, params: tuple = (),
          extra: tuple = ()) -> ScenarioSpec:
    """Arms of ``types`` 1.5 m apart on ``mujoco``, each with a 4 cm cube 0.3 m ahead and
    0.12 m left (the suite's arms world), under ``arm_pick`` when ``driven``."""
    robots, cubes = [], []
    for k, kind in enumerate(types):
        x = 1.5 * k - 0.75 * (len(types) - 1)
        robots.append(RobotSpec(kind, f"arm{k}", (x, 0.0, 0.0), params=params,
                                drivers=PICK if driven else ()))
        cubes.append(ObjectSpec(f"CUBE_{k}", "box", (0.04,) * 3, (x + 0.3, 0.12, 0.02),
                                mass=0.1, color=COLORS["red"]))
    return ScenarioSpec(WorldSpec(FloorSpec(6.0, 6.0)), robots=tuple(robots),
                        objects=(*cubes, *extra),
                        settings=Settings(dt=dt, mode="lockstep", seed=3, engine="mujoco"))


def _run(spec: ScenarioSpec, steps: int, fuse: bool, monkeypatch, each=None) -> tuple:
    """Every snapshot's columns over ``steps`` ticks, how many were composed, the path, the
    steps something was held, and the simulation (``each(sim, k)`` before tick k)."""
    monkeypatch.setattr(fused, "ENABLED", fuse)
    sim = Simulation(spec)
    stepper, out, took, held = Stepper(sim, mode="lockstep"), [], 0, 0
    for k in range(steps):
        if each is not None:
            each(sim, k)
        snap = stepper.tick()
        out.append(_columns(snap) | {"held": repr(sorted(snap.extra["held"].items())),
                                     "objects": np.array(snap.object_poses).tobytes()})
        took += sim._fusing
        held += bool(snap.extra["held"])
    return out, took, sim.step_path, held, sim


@pytest.mark.slow
def test_an_irb120_picking_at_1khz_gives_the_plain_paths_bits(monkeypatch):
    """The suite's world (one IRB 120, ``arm_pick``, 1 kHz) over a grab, a carry and a
    release: every column of every step, the held board and the cube's pose are the plain
    path's."""
    spec = _arms(("irb120",), dt=0.001)
    fast, took, path, held, sim = _run(spec, 4000, True, monkeypatch)
    assert path == PATH and took == 4000
    plain, none, plain_path, _, other = _run(spec, 4000, False, monkeypatch)
    assert none == 0 and plain_path == "plain (composing off)"
    assert 100 < held < 4000 and sim.snapshot.extra["arm_pick_placed"] >= 1  # it grabbed
    _same(fast, plain)
    assert other.snapshot.readings["gripper"].tobytes() == \
        sim.snapshot.readings["gripper"].tobytes()


@pytest.mark.slow
def test_two_kinds_of_arm_give_the_plain_paths_bits(monkeypatch):
    """An IRB 120 and an MH5 (two groups of the tool's chain) and an IRB 120 at rest."""
    spec = _arms(("irb120", "mh5", "irb120"))
    fast, took, path, held, _ = _run(spec, 1500, True, monkeypatch)
    plain, _, _, _, _ = _run(spec, 1500, False, monkeypatch)
    assert path == PATH and took == 1500 and held
    _same(fast, plain)


def _row(mode: float, speed: float = 0.0, points=()) -> np.ndarray:
    row = np.zeros(WIDTH)
    row[:3] = mode, speed, len(points)
    for k, point in enumerate(points):
        row[3 + k * POINT: 3 + k * POINT + len(point)] = point
    return row


@pytest.mark.slow
def test_joint_commands_of_every_kind_give_the_plain_paths_bits(monkeypatch):
    """Undriven arms sent a move, rates held into a limit, a trajectory and a stop by their
    command tables (the stored rows the network would leave): the same bits."""
    orders = {10: _row(POSITIONS, 0.7, [(0.0, 0.5, -0.3, 0.2, 0.1, 0.4, -0.2)]),
              300: _row(VELOCITIES, 0.0, [(0.0, 2.0, 0.5, 0.0, 0.0, 0.0, 3.0)]),
              700: _row(TRAJECTORY, 0.0, [(0.2, 0.1, 0.1, 0.1, 0.0, 0.0, 0.0),
                                          (0.5, -0.4, 0.2, 0.3, 0.5, 0.2, 1.0)]),
              1100: _row(STOP)}
    assert MAX_POINTS * POINT + 3 == WIDTH and MAX_JOINTS == 7

    def send(sim, k):
        if k in orders:
            sim.commands["joints"][k % 2] = orders[k]

    spec = _arms(("irb120", "irb120"), driven=False)
    fast, took, _, _, sim = _run(spec, 1300, True, monkeypatch, send)
    plain, _, _, _, _ = _run(spec, 1300, False, monkeypatch, send)
    assert took == 1300
    _same(fast, plain)
    assert np.abs(sim.snapshot.readings["joints"][:, 1:7]).max() > 0.1  # they moved


@pytest.mark.slow
def test_noisy_lossy_arm_readings_give_the_plain_paths_bits(monkeypatch):
    """Noise and lost data on ``force`` and ``pose`` are drawn inside the composed call from
    the step's key: the plain path's bits."""
    params = (ParamSetting("force", "noise", 0.1), ParamSetting("force", "lost", 20.0),
              ParamSetting("pose", "noise", 0.01))
    spec = _arms(("irb120", "irb120"), params=params)
    fast, took, path, _, sim = _run(spec, 300, True, monkeypatch)
    plain, _, _, _, _ = _run(spec, 300, False, monkeypatch)
    assert path == PATH and took == 300
    _same(fast, plain)
    assert np.abs(sim.snapshot.readings["force"][:, 0]).max() > 1e-3  # the noise is there


def test_a_kind_at_a_rate_stays_composed_with_the_plain_paths_bits(monkeypatch):
    spec = _arms(("irb120", "irb120"), params=(ParamSetting("tool", "rate", 100.0),
                                               ParamSetting("force", "noise", 0.1),
                                               ParamSetting("force", "rate", 125.0)))
    fast, took, path, _, _ = _run(spec, 200, True, monkeypatch)
    assert path == PATH and took == 200
    plain, _, _, _, _ = _run(spec, 200, False, monkeypatch)
    _same(fast, plain)


@pytest.mark.slow
def test_an_object_put_back_by_the_guard_gives_the_plain_paths_bits(monkeypatch):
    """A cube moved below the floor's depth is contained (the guard's loop over a few free
    bodies) and the arms go on alike either way."""
    def sink(sim, k):
        if k == 50:  # before arm0 reaches it
            h = sim.world.objects["CUBE_0"][1]
            sim.world.engine.data.qpos[h.qadr + 2] = -20.0

    spec = _arms(("irb120", "irb120"))
    fast, took, _, _, sim = _run(spec, 800, True, monkeypatch, sink)
    plain, _, _, _, other = _run(spec, 800, False, monkeypatch, sink)
    assert took == 800
    _same(fast, plain)
    for run in (sim, other):  # put back where the step started, each step again
        assert [d.label for d in run.world.engine.diverged()] == ["object CUBE_0"]
