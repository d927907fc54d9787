"""The step as a plan (coopsim.sim.plan): per step the core makes as many Python calls for 1,000
robots as for one (O(module kinds), not O(robots)); what no module asks for is never built (a
world without a ray sensor builds no ray geometry and asks for no contacts); the robot state is
read once a step; the frame's arrays are read-only."""

from __future__ import annotations

import collections
import sys
from dataclasses import replace

import numpy as np
import pytest

from coopsim.app.bench import swarm_scenario
from coopsim.model.specs import DriverSetting
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import robot, scenario, step_by_hand

#: Where the plan's own calls live: the core and the modules. The engines choose their kernels
#: by size (the small-world kernel for a few robots, threads for many), and so do the snapshots
#: (fresh copies below ``RING_ROWS`` robots, the ring's blocks from there on): their calls
#: differ between 1 and 1,000 robots by a constant, never by robot; they are checked from 1,000
#: to 2,000 robots instead, with everything else.
CORE = ("coopsim/sim/", "coopsim/plugins/", "coopsim/model/module.py", "coopsim/model/kernel.py",
        "coopsim/model/capabilities.py", "coopsim/swarm/")
BY_SIZE = ("coopsim/sim/snapshots.py",)
#: The same by single functions: a few quadrotors' figure-eight is worked out on floats (one
#: call, ``_eight_few``), many in arrays (one call of ``wrap`` among the array operations); the
#: composed step runs a small world's motors, drive and step in one call (``act_step``, from the
#: engine's ``SMALL_N`` robots down) and the sonar's cast inside the readings' call (a few pairs),
#: a large one hands the drive to the engine (``drive``) and casts on the caster's grid before
#: the call (``geometry``).
_COMPOSE = "coopsim/sim/compose.py"
BY_SIZE_CALLS = (("coopsim/swarm/flight.py", "_eight_few"), ("coopsim/swarm/flight.py", "wrap"),
                 (_COMPOSE, "_acting_state"), ("coopsim/sim/access.py", "drive"),
                 ("coopsim/sim/sensing.py", "geometry"), ("coopsim/sim/sensing.py", "__init__"),
                 ("coopsim/sim/sensing.py", "_fan"), ("coopsim/sim/sensing.py", "cast_fan"),
                 ("coopsim/sim/simulation.py", "access"), ("coopsim/sim/sensing.py", "fan_parts"),
                 # a large world's fans cast outside the sensing call are handed in as given
                 (_COMPOSE, "cast_given"),
                 # the shapes ``fan_parts`` asks for (a large world's declines to cast every
                 # pair: the geometry casts)
                 ("coopsim/sim/sensing.py", "_objects_now"),
                 ("coopsim/sim/sensing.py", "_bin_static"),
                 # a small world's health check inside the acting call (``act_step``), a large
                 # one's in Python
                 ("coopsim/sim/health.py", "checked"), ("coopsim/sim/health.py", "_planar"),
                 ("coopsim/plugins/modules/kernels.py", "_drive"),
                 # and its drive: a large world's handed to the engine after the call
                 ("coopsim/sim/compose.py", "_drive"), ("coopsim/model/kernel.py", "drive_parts"))


def _stepper(n: int, kind: str) -> Stepper:
    if kind == "aerial":   # Crazyflies under the flight driver: rotors, imu, mocap, altimeter
        spec = swarm_scenario(n, robot_type="crazyflie", dt=0.002)
        spec = replace(spec, robots=tuple(replace(r, drivers=(DriverSetting("flight", ()),))
                                          for r in spec.robots))
        return Stepper(Simulation(spec, engine="aerial"), mode="lockstep")
    st = Stepper(Simulation(swarm_scenario(n), engine="kinematic"), mode="lockstep")
    st.sim.commands["motors"][:] = (0.3, 0.25)  # every robot driving (a table, no loop)
    return st


def _calls(n: int, kind: str, steps: int = 3) -> collections.Counter:
    """Python function calls during ``steps`` ticks after a warm-up, by (file, function)."""
    st = _stepper(n, kind)
    for _ in range(6):  # the kernels loaded (compiled once) with the run and its first plan
        st.tick()
    seen: collections.Counter = collections.Counter()

    def count(frame, event, arg):
        if event == "call":
            seen[(frame.f_code.co_filename, frame.f_code.co_name)] += 1

    sys.setprofile(count)
    try:
        for _ in range(steps):
            st.tick()
    finally:
        sys.setprofile(None)
    return seen


def _core(calls: collections.Counter) -> dict:
    return {k: v for k, v in calls.items() if any(p in k[0].replace("\\", "/") for p in CORE)
            and not any(p in k[0].replace("\\", "/") for p in BY_SIZE)
            and not any(k[0].replace("\\", "/").endswith(f) and k[1] == name
                        for f, name in BY_SIZE_CALLS)}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["kinematic", "aerial"])
def test_a_step_makes_as_many_python_calls_for_a_thousand_robots_as_for_one(kind):
    one, thousand, more = _calls(1, kind), _calls(1000, kind), _calls(2000, kind)
    assert _core(one) == _core(thousand)
    assert sum(_core(one).values()) > 20  # the count saw the step's calls
    assert thousand == more  # engines and all: nothing grows with the robots


def _counting(engine, name: str, counts: dict) -> None:
    """Count the calls of the engine's method ``name`` (it still runs)."""
    method = getattr(engine, name)

    def counted(*args, **kwargs):
        counts[name] = counts.get(name, 0) + 1
        return method(*args, **kwargs)
    setattr(engine, name, counted)


def test_a_world_without_ray_sensors_builds_no_geometry_and_reads_the_state_once_a_step():
    spec = swarm_scenario(3, robot_type="crazyflie", dt=0.002)
    sim = Simulation(spec, engine="aerial")
    counts: dict = {}
    for name in ("moving_geometry", "static_geometry", "contacts", "robot_state"):
        _counting(sim.world.engine, name, counts)
    step_by_hand(sim, 10)
    assert counts == {"robot_state": 10}  # once a step: sensing's, shared with the actuators


def test_a_world_with_sonars_still_builds_its_geometry_once_a_step():
    sim = Simulation(scenario([robot(), robot("b", 1.0, 0.0)]), engine="kinematic")
    counts: dict = {}
    for name in ("moving_geometry", "robot_state"):
        _counting(sim.world.engine, name, counts)
    step_by_hand(sim, 4)
    assert counts == {"moving_geometry": 4, "robot_state": 4}


def test_the_frame_s_arrays_are_read_only_and_a_moved_body_is_read_again():
    sim = Simulation(scenario([robot(), robot("b", 1.0, 0.0)]), engine="kinematic")
    step_by_hand(sim, 1)
    frame = sim._acting_frame()
    with pytest.raises(ValueError):
        frame.pose[0, 0] = 5.0
    state = sim.world.engine.robot_state()
    state[0, :2] = (2.0, 2.0)
    sim.world.engine.reset_rows(np.array([0]), state[:1])
    sim.moved()  # told: the actuators read the bodies where they are now
    assert sim._acting_frame().pose[0, :2].tolist() == [2.0, 2.0]
