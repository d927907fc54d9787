"""The ``kinematic`` engine's static grid cache (physics/kinematic/static.py): a reset over the
same walls bins nothing again, and a process going through many wall layouts keeps the grids
of two at most (it kept eight: memory held for the process's life)."""

from __future__ import annotations

import numpy as np

from coopsim.model.specs import FloorSpec, RobotSpec
from coopsim.physics.kinematic import engine as kinematic, static as kinematic_static
from coopsim.physics.kinematic.engine import KinematicEngine
from coopsim.plugins.robots.single import Single

from helpers import box


def _engine(walls) -> KinematicEngine:
    """A 10 m x 10 m kinematic engine with one ``single`` robot and boxes at ``walls`` (x, y)."""
    engine = KinematicEngine(FloorSpec(10.0, 10.0))
    for k, (x, y) in enumerate(walls):
        engine.add_object(box(f"w{k}", x, y))
    handle = engine.add_assembly(Single.build(RobotSpec("single", "r0", (0.0, 0.0, 0), 0.0)),
                                 1).robots["r0"]
    engine.set_robots([handle], ["differential"])
    return engine


def test_the_cache_keeps_two_layouts_however_many_pass():
    first = _engine([(2.0, 2.0)])._static_grid()
    assert _engine([(2.0, 2.0)])._static_grid()[4] is first[4]  # a reset: binned once
    for k in range(20):  # twenty more layouts, as a sweep or a curriculum would build
        _engine([(-3.0 + 0.25 * k, 1.0), (2.0, -2.0)])._static_grid()
        assert len(kinematic_static._BINNED) <= 2
    again = _engine([(2.0, 2.0)])._static_grid()  # forgotten, binned again: the same grid
    assert again[4] is not first[4]
    for old, new in zip(first, again):
        assert np.array_equal(old, new)


def test_the_names_are_still_importable_from_the_engine_module():
    for name in ("static_grid", "static_shapes", "binned", "STATIC_CELLS"):
        assert getattr(kinematic, name) is getattr(kinematic_static, name)
