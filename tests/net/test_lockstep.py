"""Lockstep over sockets: controllers in separate processes, a dead controller and its lease,
mode switches with a controller connected, and bit-identical runs."""

from __future__ import annotations

import logging
import os
import random
import signal
import time

import pytest

from coopsim.client import Client

from helpers import box, robot, scenario, target
from nethelpers import Lines, Peer, controller, live, lookup, wait_until

DT = 0.01


def _world(mode: str, robots=("r1",)):
    return scenario(robots=[robot(name, -3.0, 1.5 * i) for i, name in enumerate(robots)],
                    objects=[box("crate", 0.0, 0.0, size=(0.4, 0.4), mass=0.5)],
                    targets=[target("red", 3.0, 0.0)], mode=mode, dt=DT, seed=3)


def _status(sim: Peer) -> dict:
    _, mode, _, params, data = sim.ok(1)
    return {"step": params[0], "attached": params[5], "mode": mode, "time": data[0]}


def _x(run, name="r1") -> float:
    return Peer(lookup(run.network.endpoint, f"/{name}")).ok(500)[4][0]


@pytest.mark.slow
def test_a_controller_process_drives_a_robot_in_lockstep():
    with live(_world("lockstep")) as run:
        x0 = _x(run)
        proc = controller("drive.py", run.network.endpoint, "r1", "--steps", "150")
        out = Lines(proc)
        code, err = out.finish()
        assert code == 0, err
        records = out.records()
        assert len(records) == 150 and out.items[-1] == "done"
        steps = [r["step"] for r in records]
        assert steps == list(range(steps[0], steps[0] + 150)), "one step per iteration"
        assert all(r["note"] == "lockstep" for r in records)
        assert [r for r in records[1:] if r["read"] != r["step"] - 1] == [], \
            "a read answers from the last completed step; the motor reply after the next"
        assert all(r["time"] == pytest.approx(r["step"] * DT) for r in records)
        assert _x(run) - x0 > 0.3  # 1.5 s at up to 0.3 m/s
        assert _status(Peer(lookup(run.network.endpoint, "/sim")))["attached"] == 0


@pytest.mark.slow
def test_a_controller_process_drives_a_robot_in_realtime():
    with live(_world("realtime")) as run:
        x0 = _x(run)
        proc = controller("drive.py", run.network.endpoint, "r1", "--steps", "40")
        out = Lines(proc)
        code, err = out.finish()
        assert code == 0, err
        records = out.records()
        assert len(records) == 40 and all(r["note"] == "realtime" for r in records)
        assert records[-1]["step"] > records[0]["step"]
        assert _x(run) - x0 > 0.1


@pytest.mark.slow
def test_a_killed_controller_is_detached_when_its_connection_closes(caplog):
    caplog.set_level(logging.INFO, logger="coopsim.sim.slots")
    with live(_world("lockstep", robots=("r1", "r2"))) as run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        sim.ok(9, data=[60])  # the longest lease: the closed connection detaches, not the lease
        procs = [controller("drive.py", run.network.endpoint, name) for name in ("r1", "r2")]
        outs = [Lines(proc) for proc in procs]
        for out in outs:
            out.wait(lambda records: len(records) > 20)
        assert _status(sim)["attached"] == 2
        os.kill(procs[0].pid, signal.SIGKILL)
        procs[0].wait(5)
        wait_until(lambda: _status(sim)["attached"] == 1)
        stalled_at = _status(sim)["step"]
        wait_until(lambda: _status(sim)["step"] > stalled_at + 20)
        assert any("r1" in r.getMessage() and "connection closed" in r.getMessage()
                   for r in caplog.records)
        assert run.stepper.slots.owner("r1") == "", "a closed connection frees its robot"
        survivor = len(outs[1].records())
        outs[1].wait(lambda records: len(records) > survivor + 20)
        procs[1].terminate()
        procs[1].wait(5)


@pytest.mark.slow
def test_a_hung_controller_stalls_the_run_no_longer_than_its_lease(caplog):
    lease = 1.0
    caplog.set_level(logging.WARNING, logger="coopsim.sim.slots")
    with live(_world("lockstep", robots=("r1", "r2"))) as run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        sim.ok(9, data=[lease])
        hung = Peer(lookup(run.network.endpoint, "/r1"))
        hung.ok(100, data=[0.1, 0.1])  # attached; its connection stays open, and silent
        out = Lines(controller("drive.py", run.network.endpoint, "r2"))
        out.wait(lambda records: len(records) > 20)
        assert _status(sim)["attached"] == 1
        assert any("r1" in r.getMessage() and "detached" in r.getMessage()
                   for r in caplog.records)
        assert "lease" in run.stepper.slots.detached_log[-1]
        out.proc.terminate()
        out.proc.wait(5)


def test_an_explicit_detach_lets_the_run_go_on():
    with live(_world("lockstep")) as run, Client(run.network.endpoint) as client:
        bot, sim = client.robot("r1"), client.sim()
        first = bot.motors.set_speeds(0.1, 0.1).step
        assert bot.motors.set_speeds(0.1, 0.1).step == first + 1
        assert sim.status()["attached"] == 1
        bot.detach()
        wait_until(lambda: sim.status()["step"] > first + 50)
        assert sim.status()["attached"] == 0


@pytest.mark.slow
def test_mode_switches_with_a_controller_connected(caplog):
    caplog.set_level(logging.WARNING, logger="coopsim.sim.slots")
    with live(_world("realtime")) as run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        sim.ok(9, data=[0.4])  # shorter than the realtime stretch below
        out = Lines(controller("drive.py", run.network.endpoint, "r1", "--seconds", "30",
                               "--period", "0.1"))  # in realtime: 0.1 s between commands
        out.wait(lambda records: len(records) > 3)
        assert _status(sim)["attached"] == 0
        sim.ok(6, "lockstep")
        records = out.wait(lambda rs: sum(r["note"] == "lockstep" for r in rs) > 30)
        steps = [r["step"] for r in records if r["note"] == "lockstep"][-30:]
        assert steps == list(range(steps[0], steps[0] + 30)), "lockstep follows the controller"
        assert _status(sim)["attached"] == 1
        sim.ok(6, "realtime")
        mark = len(out.records())
        records = out.wait(lambda rs: sum(r["note"] == "realtime" for r in rs[mark:]) > 3)
        later = [r["step"] for r in records[mark:] if r["note"] == "realtime"]
        assert later[-1] - later[0] > len(later), "realtime paces itself, not the controller"
        time.sleep(0.5)
        sim.ok(6, "lockstep")
        out.wait(lambda rs: sum(r["note"] == "lockstep" for r in rs[mark:]) > 5)
        assert not caplog.records, "a controller busy in realtime kept its lease"
        out.proc.terminate()
        assert out.proc.wait(5) is not None


def _scripted_run(seed: int) -> list:
    """A lockstep run driven by a fixed command script over the sockets; what it observed."""
    world = scenario(robots=[robot("r1", -0.6, 0.0, params=[("sonar", "noise", 0.02),
                                                             ("sonar", "lost", 10.0)])],
                     objects=[box("crate", 0.0, 0.0, size=(0.4, 0.4), mass=0.5)],
                     targets=[target("red", 3.0, 0.0)], mode="lockstep", dt=DT, seed=seed)
    script = random.Random(99)
    observed = []
    with live(world, start=False) as run, Client(run.network.endpoint) as client:
        bot, sim = client.robot("r1"), client.sim()
        bot.motors.set_speeds(0.4, 0.4)  # attaches before the first step; answered "queued"
        run.start()
        assert run.stepper.wait_step(0, 5.0)  # read what step 1 measured, on every run
        for _ in range(200):
            observed.append(bot.sonar.read())
            observed.append(bot.gps.read())
            left, right = script.uniform(-0.2, 0.6), script.uniform(-0.2, 0.6)
            observed.append(bot.motors.set_speeds(left, right).step)
        observed.append(sim.robots())
        observed.append(sim.objects())
    return observed


def test_same_seed_same_commands_same_run_bit_for_bit():
    first, second = _scripted_run(5), _scripted_run(5)
    assert first == second
    assert first[-1]["crate"] != (0.0, 0.0, 0.0), "the robot pushed the crate: physics ran"
    assert _scripted_run(6)[:-2] != first[:-2], "another seed draws other noise"
