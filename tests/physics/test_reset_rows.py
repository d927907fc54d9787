"""Engine.reset_rows: the public way to put robots back between steps, on every
shipped engine (a batched world's episode reset uses it instead of writing engine arrays)."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.model.errors import SimulationError
from coopsim.model.plugins import ENGINES
from coopsim.model.specs import FloorSpec, RobotSpec
from coopsim.physics.engine import Engine
from coopsim.plugins.robots.single import Single


def make(label, poses):
    """An engine ``label`` with driven ``single`` robots at ``poses`` [(x, y, yaw)]."""
    engine = ENGINES.get(label)(FloorSpec(10.0, 10.0))
    handles = [engine.add_assembly(Single.build(RobotSpec("single", f"r{k}", (x, y, 0), yaw)),
                                   k + 1).robots[f"r{k}"] for k, (x, y, yaw) in enumerate(poses)]
    engine.set_robots(handles, ["differential"] * len(handles))
    return engine


@pytest.mark.parametrize("label", ["kinematic", "pymunk", "aerial"])
def test_reset_rows_moves_the_rows_only_and_drops_their_command(label):
    engine = make(label, [(-3.0, 0.0, 0.0), (0.0, 3.0, 0.0), (3.0, -3.0, 1.0)])
    rows = np.arange(3)
    for _ in range(10):
        engine.drive(rows, np.full(3, 0.4), np.full(3, 0.5))
        engine.step(0.05)
    before = engine.robot_state()
    state = np.array([[-2.0, -2.0, 0.3, 0.0, 0.0, 0.0], [2.0, 2.0, -1.2, 0.0, 0.0, 0.0]])
    engine.reset_rows(np.array([0, 2]), state)
    after = engine.robot_state()
    np.testing.assert_allclose(after[[0, 2]], state, atol=1e-12)
    np.testing.assert_array_equal(after[1], before[1])
    for _ in range(5):  # no command since the reset: the reset robots stay put
        engine.drive(np.array([1]), np.array([0.4]), np.array([0.0]))
        engine.step(0.05)
    np.testing.assert_allclose(engine.robot_state()[[0, 2], :3], state[:, :3], atol=1e-6)
    assert engine.robot_state()[1, 1] != before[1, 1]  # the others go on


def test_an_engine_without_reset_rows_says_so():
    class Old(Engine):  # an engine written before reset_rows (only the abstract methods)
        label = "old"
    for name in Old.__abstractmethods__:
        setattr(Old, name, lambda self, *a: None)
    Old.__abstractmethods__ = frozenset()
    with pytest.raises(SimulationError, match="old engine cannot reset"):
        Old(FloorSpec(1.0, 1.0)).reset_rows(np.array([0]), np.zeros((1, 6)))
