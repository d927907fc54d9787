"""The ground robot's kinds compute by their compiled kernels only (the ModuleKernel contract):
``motors`` (its reading from the wheels driven, kept in its state), ``odometry``, ``bumper``,
``target`` and ``sonar`` declare no ``sense``/``measure``/``clip`` of their own, and their
readings in a real world (the plain path) are the formulas' over the frame: the target's angle
by libm's ``atan2``, the sonar's the fan cast for its beams (the ``ranges`` view), clipped."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model.capabilities import kernel_of
from coopsim.plugins.modules.contact import Bumper
from coopsim.plugins.modules.motors import Motors
from coopsim.plugins.modules.odometry import Odometry
from coopsim.plugins.modules.sonar import ANGLES, Sonar
from coopsim.plugins.modules.target import Target
from coopsim.sim import fused
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario, target


@pytest.mark.parametrize("kind", (Motors, Odometry, Bumper, Target, Sonar))
def test_each_kind_computes_by_its_kernel_alone(kind):
    assert kernel_of(kind) is not None and kind.kernel_sense is not None
    assert not {"sense", "measure", "clip"} & set(vars(kind))


def _wrap(a: float) -> float:
    return a if -math.pi < a <= math.pi else -((-a + math.pi) % (2 * math.pi) - math.pi)


def _world(monkeypatch, command=(0.2, 0.3), efficiency=50.0):
    """One robot before a wall with two targets, on the plain path, driven at ``command``."""
    monkeypatch.setattr(fused, "ENABLED", False)
    spec = scenario([robot("r1", 0.0, 0.0, 0.7, params=[("motors", "efficiency", efficiency)])],
                    [box("W", 1.2, 0.0, size=(0.4, 4.0))],
                    [target("red", 2.0, 1.5), target("blue", -1.0, -2.5)])
    st = Stepper(Simulation(spec, engine="kinematic"), mode="lockstep")
    st.slots.put("r1", "motors", command, attach=False)
    return st


def test_the_readings_are_the_kinds_formulas_over_the_frame(monkeypatch):
    st = _world(monkeypatch)
    for _ in range(30):
        snap = st.tick()
    sim = st.sim
    x, y, yaw = sim.world.engine.robot_state()[0, :3]
    expect = []
    for t in sim.world.targets:
        dx, dy = t.position[0] - x, t.position[1] - y
        expect += [math.hypot(dx, dy), _wrap(math.atan2(dy, dx) - yaw)]
    assert snap.readings["target"][0].tolist() == expect  # libm's atan2, bit for bit
    # motors: the wheels driven (the command times efficiency), kept in its state
    assert snap.readings["motors"][0, :2].tolist() == [0.1, 0.15]
    assert sim.states.get("motors").arrays["driven"][0].tolist() == [0.1, 0.15]
    # sonar: its beams' fan from the chassis edge, within [0, max_range]
    frame = sim._frame(sim.world.engine.robot_state(), {}, geometry=True)
    rows, reach = np.arange(1), np.full(1, 2.0)
    cast = frame.geometry.cast_fan(rows, ANGLES, reach)
    assert np.array_equal(snap.readings["sonar"], np.clip(cast, 0.0, reach[:, None]))
    assert snap.readings["sonar"].min() < 2.0  # the wall is seen
    assert Sonar.kernel_beams == tuple(ANGLES.tolist())
