"""``Engine.copy_template()``: what the copies batch backend reads of an
engine, through the front door: a frozen snapshot of the robots and the static layout, copies of
the engine's arrays; an engine without the ``copies`` feature refuses with a sentence."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from coopsim.model.errors import SimulationError
from coopsim.model.specs import FloorSpec, RobotSpec
from coopsim.physics.kinematic import engine as kinematic
from coopsim.physics.engine import CopyTemplate
from coopsim.physics.kinematic.engine import KinematicEngine
from coopsim.physics.pymunk.engine import PymunkEngine
from coopsim.plugins.robots.single import CHASSIS_RADIUS as R, Single

from helpers import box


def _engine():
    engine = KinematicEngine(FloorSpec(6.0, 4.0))
    engine.add_object(box("wall", 1.0, 0.0))
    handles = [engine.add_assembly(Single.build(RobotSpec("single", f"r{k}", (x, 0.5, 0), yaw)),
                                   k + 1).robots[f"r{k}"]
               for k, (x, yaw) in enumerate(((-2.0, 0.0), (-1.0, math.pi / 2)))]
    engine.set_robots(handles, ["differential", ""])
    return engine


def test_the_template_is_the_layout_as_the_kernels_take_it():
    tpl = _engine().copy_template()
    assert isinstance(tpl, CopyTemplate)
    assert np.array_equal(tpl.pos, [[-2.0, 0.5], [-1.0, 0.5]])
    assert np.allclose(tpl.yaw, [0.0, math.pi / 2]) and tpl.heading.shape == (2, 2)
    assert np.array_equal(tpl.radius, [R, R]) and tpl.driven.tolist() == [True, False]
    assert np.array_equal(tpl.half, [3.0, 2.0])
    shapes, kinds, geom, start, entries = tpl.static
    assert len(shapes) == 1 and kinds.tolist() == [kinematic.BOX] and start[-1] == len(entries)
    assert tpl.limits.tolist() == [R, R, kinematic.SUBSTEP_REACH, kinematic.MAX_SUBSTEPS,
                                   kinematic.CELL_RADII, kinematic.ITERATIONS]


def test_the_template_is_a_frozen_copy():
    engine = _engine()
    tpl = engine.copy_template()
    with pytest.raises(dataclasses.FrozenInstanceError):
        tpl.pos = np.zeros((2, 2))
    tpl.pos[:] = 99.0
    tpl.static[0][:] = 99.0
    again = engine.copy_template()
    assert again.pos[0, 0] == -2.0 and again.static[0][0, 0] == 1.0


def test_an_engine_without_the_copies_feature_refuses():
    engine = PymunkEngine(FloorSpec(6.0, 4.0))
    assert "copies" not in engine.features
    with pytest.raises(SimulationError, match="the pymunk engine has no copies feature"):
        engine.copy_template()
