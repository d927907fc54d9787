"""Drivers: in-process controllers with the network client's robot API, one source for two
hosts, typed parameters settable over the network, every-N-steps calls, errors that pause."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.client import Client, run_controller
from coopsim.model.driver import Driver, StepInfo
from coopsim.model.errors import ParameterError, SimulationError
from coopsim.model.params import ParamSpec
from coopsim.model.plugins import DRIVERS
from coopsim.model.specs import DriverSetting
from coopsim.net import protocol as p
from coopsim.plugins.drivers.wander import Wander
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario, target
from nethelpers import live


def driven(name="r1", label="wander", x=0.0, y=0.0, yaw=0.0, member="", **settings):
    spec = robot(name, x, y, yaw)
    return spec.__class__(**{**spec.__dict__, "drivers": (
        DriverSetting(label, tuple(settings.items()), member),)})


def test_wander_driver_moves_the_robot_in_process():
    stepper = Stepper(Simulation(scenario([driven()], [box("W", 3, 0, size=(0.5, 6))])),
                      mode="lockstep")
    for _ in range(300):
        stepper.tick()
    x, y, _ = stepper.snapshot.poses[0]
    assert math.hypot(x, y) > 0.5
    assert stepper.snapshot.reading("r1", "motors")[0] != 0.0
    assert x < 3 - 0.25 - 0.2 + 0.01  # never through the wall


@pytest.mark.slow
def test_goto_target_driver_reaches_its_colour_in_process():
    scn = scenario([driven(label="goto_target", color="blue")],
                   targets=[target("red", -3, 3), target("blue", 3, 2)])
    stepper = Stepper(Simulation(scn), mode="lockstep")
    for _ in range(2500):
        stepper.tick()
    x, y, _ = stepper.snapshot.poses[0]
    assert math.hypot(x - 3, y - 2) < 0.5


def test_the_same_driver_over_the_network_takes_the_same_path():
    """One source, two hosts: wander in-process and over the network, lockstep, same seed."""
    walls = [box("W", 2.5, 0.3, size=(0.5, 4))]
    inproc = Stepper(Simulation(scenario([driven()], walls, seed=3)), mode="lockstep")
    for _ in range(120):
        inproc.tick()
    with live(scenario([robot("r1")], walls, seed=3), mode="lockstep") as run, \
            Client(run.network.endpoint) as client:
        bot = client.robot("r1")
        driver = Wander(Wander.values(), np.random.default_rng(3))
        driver.setup(bot)
        for _ in range(120):  # attached after the first command: the run waits for each
            driver.step(bot)
        pose = client.sim().robots()["r1"]
    # each network command is computed from the reading of the step before, as in-process
    assert pose == pytest.approx(tuple(inproc.snapshot.poses[0]), abs=1e-12)


def test_run_controller_hosts_a_driver_by_label_until_its_steps_are_done():
    scn = scenario([robot("r1")], targets=[target("red", 2, 0)])
    with live(scn, paused=True, mode="lockstep") as run:
        run.stepper.resume()
        done = run_controller("goto_target", "r1", {"color": "red"}, steps=50,
                              nameserver=run.network.endpoint)
        assert done == 50 and run.stepper.snapshot.poses[0][0] > 0.05
        assert run.stepper.slots.attached() == []  # the loop detached on leaving
    with pytest.raises(TypeError):
        run_controller(int)


def test_every_n_steps_and_parameters_are_validated():
    with pytest.raises(ParameterError, match="out of range"):
        Simulation(scenario([driven(cruise=9.0)]))
    calls = []

    class Counter(Driver):
        label = "counter_test"
        params = (ParamSpec("speed", "float", "m/s", 0.1, 0.0, 1.0),)

        def step(self, bot):
            calls.append(bot.step)
            assert isinstance(bot.motors.set_speeds(self.p["speed"], self.p["speed"]),
                              StepInfo)

    if "counter_test" not in DRIVERS:
        DRIVERS.register("counter_test")(Counter)
    stepper = Stepper(Simulation(scenario([driven(label="counter_test", every=5)])))
    for _ in range(20):
        stepper.tick()
    assert calls == [0, 5, 10, 15]
    assert stepper.sim.set_param("r1", "driver", "speed", 0.4) == 0.4
    assert stepper.sim.world.robot("r1").driver[1]["speed"] == 0.4


def test_a_driver_that_raises_pauses_the_run_naming_itself():
    class Broken(Driver):
        label = "broken_test"

        def step(self, bot):
            raise ValueError("bad gain")

    if "broken_test" not in DRIVERS:
        DRIVERS.register("broken_test")(Broken)
    stepper = Stepper(Simulation(scenario([driven(label="broken_test")])), mode="lockstep")
    stepper.start()
    try:
        for _ in range(50):
            if stepper.paused:
                break
            stepper.wait_step(stepper.snapshot.step, 0.1)
        assert stepper.paused and stepper.running
        assert "driver broken_test on r1 raised ValueError: bad gain" in stepper.error
    finally:
        stepper.stop()


def test_peers_are_read_only_and_unknown_commands_say_so():
    class Peeker(Driver):
        label = "peeker_test"

        def step(self, bot):
            other = bot.peer("r2")
            self.seen = list(other.gps.read())
            with pytest.raises(SimulationError, match="peer"):
                other.motors.set_speeds(1, 1)
            with pytest.raises(AttributeError, match="no command 'fly'"):
                bot.motors.fly()

    if "peeker_test" not in DRIVERS:
        DRIVERS.register("peeker_test")(Peeker)
    sim = Simulation(scenario([driven(label="peeker_test"), robot("r2", 2, 1)]))
    Stepper(sim).tick()
    driver = sim.drivers._hosted["r1"][0]
    assert driver.seen == pytest.approx([2.0, 1.0])


def test_driver_parameters_over_the_network():
    scn = scenario([driven(label="goto_target", color="red")], targets=[target("red", 2, 0)])
    with live(scn, paused=True) as run, Client(run.network.endpoint) as client:
        bot, sim = client.robot("r1"), client.sim()
        assert bot.get_param("driver", "color") == "red"
        assert bot.set_param("driver", "arrived", 0.3) == 0.3
        assert sim.set_param("r1", "driver", "color", "blue") == "blue"
        assert bot.get_param("driver", "color") == "blue"
        assert run.stepper.sim.world.robot("r1").driver[1]["color"] == "blue"
        with pytest.raises(p.ProtocolError) as info:
            bot.set_param("driver", "arrived", 99.0)
        assert info.value.code == p.OUT_OF_RANGE
        assert "driver" not in bot.modules()


def test_batch_drivers_get_one_call_for_all_their_robots():
    class Spin(Driver):
        label = "spin_batch_test"
        batch = True
        calls = 0

        def step_batch(self, bots):
            Spin.calls += 1
            n = len(bots.names)
            bots.set("motors", np.tile((-0.2, 0.2), (n, 1)))

    if "spin_batch_test" not in DRIVERS:
        DRIVERS.register("spin_batch_test")(Spin)
    robots = [driven(f"r{i}", "spin_batch_test", x=i - 2.0) for i in range(5)]
    stepper = Stepper(Simulation(scenario(robots)))
    for _ in range(10):
        stepper.tick()
    assert Spin.calls == 10
    assert np.all(stepper.snapshot.velocities[:, 2] > 0.5)  # all turn left


def test_a_batch_driver_keeps_its_state_over_a_layout_sync_and_not_over_a_reset():
    """A grasp (a weld) syncs the drivers; a batch's driver then goes on with its state, as a
    robot's own driver does (arm_pick's moves and its cache of angles); a reset starts anew."""
    class Count(Driver):
        label = "count_batch_test"
        batch = True

        def __init__(self, params, rng):
            super().__init__(params, rng)
            self.steps = 0

        def step_batch(self, bots):
            self.steps += 1

    if "count_batch_test" not in DRIVERS:
        DRIVERS.register("count_batch_test")(Count)
    robots = [driven(f"r{i}", "count_batch_test", x=i - 2.0) for i in range(3)]
    stepper = Stepper(Simulation(scenario(robots)))
    for _ in range(5):
        stepper.tick()
    (first, _, _, _), = stepper.sim.drivers._batches
    stepper.sim.drivers.sync(stepper.sim)
    stepper.tick()
    (kept, _, _, _), = stepper.sim.drivers._batches
    assert kept is first and kept.steps == 6
    stepper.reset()
    stepper.tick()
    (fresh, _, _, _), = stepper.sim.drivers._batches
    assert fresh is not first and fresh.steps == 1


def test_a_batch_gets_its_rows_worked_out_once_per_layout_not_per_call():
    """``Batch.rows`` is the same read-only array at every call while the layout stays (no
    lookup per robot per call) and follows the robots when one is removed."""
    class Rows(Driver):
        label = "rows_batch_test"
        batch = True
        seen: list = []

        def step_batch(self, bots):
            Rows.seen.append((tuple(bots.names), bots.rows))

    if "rows_batch_test" not in DRIVERS:
        DRIVERS.register("rows_batch_test")(Rows)
    robots = [robot("free", -3.0, 0.0)] + [driven(f"r{i}", "rows_batch_test", x=i - 2.0)
                                           for i in range(3)]
    stepper = Stepper(Simulation(scenario(robots)))
    for _ in range(3):
        stepper.tick()
    (names, rows), *others = Rows.seen
    assert names == ("r0", "r1", "r2") and rows.tolist() == [1, 2, 3]
    assert all(r is rows for _, r in others) and not rows.flags.writeable
    stepper.sim.world.remove_robot("free")
    stepper.refresh()
    stepper.tick()
    assert Rows.seen[-1][1].tolist() == [0, 1, 2]
    assert stepper.sim.snapshot.robots[0] == "r0"


def test_a_batch_reads_copies_of_its_own_rows_and_commands_only_them():
    """Robots in consecutive rows (read as a block) and in scattered rows (gathered) alike:
    ``read`` gives their rows of the snapshot as the caller's own array (writing it changes no
    snapshot) and ``set`` stores their rows' commands and no other robot's."""
    class Mark(Driver):
        batch = True
        seen: dict = {}

        def step_batch(self, bots):
            got = bots.read("odometry")
            expected = bots.snapshot.readings["odometry"][bots.rows]
            assert np.array_equal(got, expected) and got.flags.writeable
            got[:] = 99.0
            assert not np.any(bots.snapshot.readings["odometry"][bots.rows] == 99.0)
            Mark.seen.setdefault(self.label, []).append(bots.rows.tolist())
            bots.set("motors", np.tile(self.p["speed"], (len(bots.names), 2)))

    for label in ("block_batch_test", "gather_batch_test"):
        if label not in DRIVERS:
            DRIVERS.register(label)(type(label, (Mark,), {"label": label, "params": (
                ParamSpec("speed", "float", "m/s", 0.0),)}))
    # rows 0..7: free, gather, free, gather, block, block, block, free
    kinds = ["", "gather", "", "gather", "block", "block", "block", ""]
    robots = [driven(f"r{i}", f"{k}_batch_test", x=i - 4.0, speed=0.1 if k == "gather" else
                     0.2) if k else robot(f"r{i}", i - 4.0, 0.0) for i, k in enumerate(kinds)]
    stepper = Stepper(Simulation(scenario(robots)))
    for _ in range(3):
        stepper.tick()
    assert Mark.seen["gather_batch_test"][-1] == [1, 3]
    assert Mark.seen["block_batch_test"][-1] == [4, 5, 6]
    motors = stepper.sim.commands["motors"]
    want = {1: 0.1, 3: 0.1, 4: 0.2, 5: 0.2, 6: 0.2}
    for row in range(8):
        assert np.all(motors[row] == want.get(row, 0.0)), row
