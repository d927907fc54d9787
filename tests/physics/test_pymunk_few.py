"""The pymunk engine's few-robot paths (up to ``pymunk.engine._FEW`` robots: the drive's
velocities made and written body by body in Python, contacts() with no touching pair making no
array) give the bits of its batch paths: three robots driven into a wall and into each other,
every step's state and contact flags compared with the same run on the batch paths."""

from __future__ import annotations

import math

import numpy as np

from coopsim.model.specs import FloorSpec, RobotSpec
from coopsim.physics.pymunk import engine as pymunk_engine
from coopsim.physics.pymunk.engine import PymunkEngine
from coopsim.plugins.robots.single import Single

from helpers import box

STARTS = ((-1.0, 0.0, 0.0), (0.2, 0.9, -math.pi / 2), (0.2, -0.9, math.pi / 2))


def _run(steps: int = 240) -> tuple[list[bytes], int]:
    """(each step's robot state and contact flags as bytes, steps with some contact)."""
    engine = PymunkEngine(FloorSpec(6.0, 4.0))
    engine.add_object(box("wall", 1.2, 0.0, size=(0.3, 3.0)))
    handles = [engine.add_assembly(Single.build(RobotSpec("single", f"r{k}", (x, y, 0), yaw)),
                                   k + 1).robots[f"r{k}"]
               for k, (x, y, yaw) in enumerate(STARTS)]
    engine.set_robots(handles, ["differential"] * len(handles))
    rows = np.arange(len(handles))
    out, touching = [], 0
    for k in range(steps):
        forward = np.array([0.3, 0.25 + 0.001 * k, 0.2])  # all towards the middle and the wall
        turn = np.array([0.1 * math.sin(0.05 * k), -0.2, 0.3])
        engine.drive(rows, forward, turn)
        engine.step(0.02)
        state = engine.robot_state()
        flags = engine.contacts(state[:, :3])
        touching += bool(flags.any())
        out.append(state.tobytes() + flags.tobytes())
    return out, touching


def test_the_few_robot_paths_give_the_batch_paths_bits(monkeypatch):
    assert len(STARTS) <= pymunk_engine._FEW  # noqa: SLF001 -- the paths under test
    few, touching = _run()
    assert touching > 10  # the contact flags were exercised, not only the empty case
    monkeypatch.setattr(pymunk_engine, "_FEW", 0)  # every robot through the batch copy
    batch, _ = _run()
    assert few == batch
