"""Per-step Python work grows with module kinds, not robots: one tick of a world of
``single`` robots (motors, sonar, target, odometry, gps, compass, bumper) driven by a batch
driver runs about as many Python lines at 1,000 robots as at 100, and not many more than at
one (a small world takes the engine's one-call path instead, a fixed difference). Counted by
tracing, so a per-robot loop anywhere in the step (a list comprehension over the robots
included) shows as ~1,000 more lines."""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import pytest

from coopsim.app.bench import swarm_scenario
from coopsim.model.driver import Driver
from coopsim.model.plugins import DRIVERS
from coopsim.model.specs import DriverSetting
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper


class Spin(Driver):
    """Turns every robot of its batch and reads their sonars and poses."""

    label = "spin_lines_test"
    batch = True

    def step_batch(self, bots):
        bots.set("motors", np.tile((-0.2, 0.2), (len(bots.names), 1)))
        bots.read("sonar")
        bots.poses()


def lines(n: int, engine: str) -> int:
    """Python line events in one tick of ``n`` robots (after five ticks' warm-up)."""
    if Spin.label not in DRIVERS:
        DRIVERS.register(Spin.label)(Spin)
    scn = swarm_scenario(n)
    scn = replace(scn, robots=tuple(replace(r, drivers=(DriverSetting(Spin.label, (), ""),))
                                    for r in scn.robots))
    st = Stepper(Simulation(scn, engine=engine), mode="lockstep")
    for _ in range(5):
        st.tick()
    count = [0]

    def tracer(frame, event, arg):
        count[0] += 1
        return tracer
    sys.settrace(tracer)
    try:
        st.tick()
    finally:
        sys.settrace(None)
    return count[0]


@pytest.mark.parametrize("engine", ["kinematic", "pymunk"])
def test_a_tick_runs_about_as_many_python_lines_at_1000_robots_as_at_100_and_1(engine):
    one, hundred, thousand = (lines(n, engine) for n in (1, 100, 1000))
    assert thousand - hundred < 300, (one, hundred, thousand)  # 900 more robots: no loop
    assert thousand < one + 900, (one, hundred, thousand)
