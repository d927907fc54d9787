"""Stepping makes no new ``pymunk.batch.Buffer``.

pymunk never frees a Buffer's C memory, so the engine that made one per step (to write the
control bodies' velocities) leaked about 160 bytes a step. The engine keeps three Buffers for its
life. The memory figure itself (bytes per step over 100,000 steps) is measured by
``benchmarks/suite/soak.py``, not here; this test counts constructions, which the old code fails
at the first step.
"""

from __future__ import annotations

import pytest
from pymunk import batch

from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, cylinder, robot, scenario


@pytest.fixture()
def made(monkeypatch):
    """A list that grows by one for every pymunk Buffer constructed (the real class still works)."""
    made = []

    class Counted(batch.Buffer):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(batch, "Buffer", Counted)
    return made


def test_stepping_with_moving_robots_and_contacts_makes_no_buffer(made):
    scn = scenario([robot("a", 0, 0), robot("b", 1.0, 0, yaw=3.14159)],
                   [box("wall", 3, 0), cylinder("can", 0.5, 0.6, mass=1.0)])
    stepper = Stepper(Simulation(scn, engine="pymunk"), mode="lockstep")
    built = len(made)
    assert built >= 3  # the engine's own Buffers, made once (and proof the count sees them)
    for _ in range(60):
        for name in ("a", "b"):
            stepper.slots.put(name, "motors", (0.4, 0.3), attach=False)
        stepper.tick()
    assert stepper.stats().steps == 60
    assert len(made) == built
