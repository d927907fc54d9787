"""The dead man: a ``coopsim teleop`` process killed (SIGKILL) or frozen
(SIGSTOP) while a key is held stops its robot within the deadline, measured in simulated time;
so does a network controller that asked for a dead man (claim data [T]) and falls silent, while
one that did not keeps its speeds (the classic lab controller). A teleop claim on an external
robot is refused with error 17; a second teleop on the same robot makes the first
wait, and the first gets the robot back when the second lets go."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.sim.deadman import DEAD_MAN

from helpers import robot, scenario
from nethelpers import Peer, live, lookup, wait_until

ROOT = Path(__file__).resolve().parents[2]
MOTORS_READ, SPEEDS, CLAIM, RELEASE = 103, 100, 4, 5
SLACK = 1.0  # s of simulated time for the stepper to see it and the test to read it


@pytest.fixture(scope="module")
def run():
    world = scenario(robots=[robot("r1", -3.0, 0.0), robot("r2", 0.0, 3.0),
                             robot("r3", 0.0, -3.0)], floor=(40.0, 40.0), mode="realtime",
                     dt=0.01, seed=5)
    with live(world) as run:
        yield run


def _commanded(peer: Peer) -> tuple[tuple[float, float], float]:
    """((left, right) commanded wheel speeds m/s, the simulated time of the reading, s)."""
    reply = peer.ok(MOTORS_READ)
    return (reply[4][0], reply[4][1]), reply[3][0] * 0.01


def _sim_time(run) -> float:
    return run.stepper.snapshot.time


class Terminal:
    """``coopsim teleop ROBOT`` in a real pty, a real process."""

    def __init__(self, run, name: str, *args: str) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coopsim", "teleop", name, "--nameserver",
             run.network.endpoint, "--speed", "0.2", *args], stdin=slave, stdout=slave, stderr=slave,
            env=env, cwd=ROOT)
        os.close(slave)
        self.out = bytearray()

    def said(self, text: bytes) -> bool:
        while True:
            try:
                if not select.select([self.master], [], [], 0.05)[0]:
                    return text in self.out
                self.out.extend(os.read(self.master, 4096))
            except OSError:
                return text in self.out

    def hold(self, key: bytes, reader: Peer, want) -> bool:
        """The key pressed again (a keyboard's auto-repeat); True once ``want(speeds)``."""
        os.write(self.master, key)
        return want(_commanded(reader)[0])

    def close(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def _driving(term: Terminal, reader: Peer) -> None:
    wait_until(lambda: term.said(b"currently:"), timeout=60)
    wait_until(lambda: term.hold(b"i", reader, lambda c: c[0] > 0.19 and c[1] > 0.19),
               every=0.05)


def _stops_within(reader: Peer, since: float, deadline: float) -> None:
    """The robot's commanded speeds go to 0 at a simulated time at most ``deadline`` (+ the
    slack) after ``since``."""
    stopped = wait_until(lambda: (lambda c: c[0] == (0.0, 0.0) and c)(_commanded(reader)),
                         timeout=60, every=0.02)
    assert stopped[1] - since <= deadline + SLACK, (stopped, since)


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGSTOP], ids=["SIGKILL", "SIGSTOP"])
def test_a_teleop_killed_or_frozen_with_a_key_held_stops_its_robot(run, how):
    reader = Peer(lookup(run.network.endpoint, "/r1"))
    deadline = DEAD_MAN if how == signal.SIGKILL else 0.4  # the default, and --dead-man's
    term = Terminal(run, "r1", *(() if deadline == DEAD_MAN else ("--dead-man", "0.4")))
    try:
        _driving(term, reader)
        assert f"with a {deadline:g} s dead man".encode() in term.out
        os.kill(term.proc.pid, how)
        since = _sim_time(run)  # its last command came before this
        _stops_within(reader, since, deadline)
        assert any("r1: stopped:" in line for line in run.stepper.slots.dead.log)
        if how == signal.SIGSTOP:
            os.kill(term.proc.pid, signal.SIGCONT)  # woken: its key is long released
            os.write(term.master, b"\x03")
            assert term.proc.wait(60) in (0, 2), term.out.decode(errors="replace")
    finally:
        term.close()
        reader.close()


def test_a_controller_that_asked_for_a_dead_man_stops_when_silent(run):
    endpoint = lookup(run.network.endpoint, "/r2")
    mine, reader = Peer(endpoint), Peer(endpoint)
    try:
        claimed = mine.ok(CLAIM, data=[1.0])
        assert "with a 1 s dead man" in claimed[1]
        mine.ok(SPEEDS, data=[0.1, 0.1])
        since = _sim_time(run)
        wait_until(lambda: _commanded(reader)[0] == (0.1, 0.1))
        _stops_within(reader, since, 1.0)
        mine.ok(SPEEDS, data=[0.1, 0.1])  # alive again: it drives again
        wait_until(lambda: _commanded(reader)[0] == (0.1, 0.1))
        mine.ok(CLAIM, data=[0.0])  # disarmed: its speeds hold as before protocol 12
        mine.ok(SPEEDS, data=[0.1, 0.1])
        after = _sim_time(run)
        wait_until(lambda: _sim_time(run) > after + 1.0 + SLACK, timeout=60)
        assert _commanded(reader)[0] == (0.1, 0.1)
        bad = mine.ask(CLAIM, data=[-1.0])
        assert bad[0] == 4 and "dead man" in bad[1]
        mine.ok(SPEEDS, data=[0.0, 0.0])
        mine.ok(RELEASE)
    finally:
        mine.close()
        reader.close()


def test_a_dead_man_holder_whose_connection_closes_stops_at_once(run):
    endpoint = lookup(run.network.endpoint, "/r3")
    mine, reader = Peer(endpoint), Peer(endpoint)
    try:
        mine.ok(CLAIM, data=[30.0])  # a long deadline: only the closing stops it
        mine.ok(SPEEDS, data=[0.1, 0.1])
        wait_until(lambda: _commanded(reader)[0] == (0.1, 0.1))
        mine.close()
        since = _sim_time(run)
        _stops_within(reader, since, 0.0)
    finally:
        reader.close()


def test_a_second_teleop_makes_the_first_wait_then_gives_the_robot_back(run):
    """Item 10: a second teleop session on the same robot displaces the first (a teleop claim
    displaces whoever owns it); the first's commands get error 13 and its client waits; when
    the second lets go, the first owns the robot again and drives on, without a claim."""
    from coopsim.client import Client
    from coopsim.client.teleop import Teleop, TeleopThread
    from coopsim.model.teleop import Intent

    reader = Peer(lookup(run.network.endpoint, "/r2"))
    with Client(run.network.endpoint) as one, Client(run.network.endpoint) as two:
        first = TeleopThread(Teleop(one, "r2")).start()
        try:
            first.set(Intent(forward=1.0))
            wait_until(lambda: _commanded(reader)[0][0] > 0.4)  # 0.5 m/s, the top speed
            second = Teleop(two, "r2")  # the viewer's T and its gamepad drive through it too
            said = second.take()
            assert "taken from the connection from" in said and "with a 0.5 s dead man" in said
            second.apply(Intent(forward=-1.0))
            wait_until(lambda: _commanded(reader)[0][0] < -0.4)
            assert first.alive, "the first waits (error 13), it does not end"
            second.close()  # stops the robot, gives it back to the first
            wait_until(lambda: _commanded(reader)[0][0] > 0.4)  # the first drives again
        finally:
            first.stop()
    wait_until(lambda: _commanded(reader)[0] == (0.0, 0.0))
    reader.close()


def test_in_lockstep_a_slow_holder_is_never_stopped_and_a_silent_one_at_the_lease():
    """Lockstep: an attached holder that commands every step is never silent in simulated
    time, however slow (the run waits for it: the deadline does not make the run depend on
    the machine); one that falls silent is stopped when the lease detaches it, at the step
    after its last command."""
    import time

    world = scenario(robots=[robot("r1", 0.0, 0.0)], mode="lockstep", dt=0.01, seed=5)
    with live(world) as run:
        run.stepper.slots.lease = 1.0
        endpoint = lookup(run.network.endpoint, "/r1")
        mine, reader = Peer(endpoint), Peer(endpoint)
        try:
            mine.ok(CLAIM, data=[0.05])  # a deadline of five steps
            for _ in range(3):
                mine.ok(SPEEDS, data=[0.1, 0.1])  # answered after the step using it
                time.sleep(0.3)  # a slow controller: six times the deadline between steps
                assert _commanded(reader)[0] == (0.1, 0.1)
            assert run.stepper.slots.dead.expired == 0
            snap = run.stepper.snapshot  # the run waits for its next command here
            x0 = snap.poses[snap.index["r1"], 0]
            stopped = wait_until(lambda: (lambda c: c[0] == (0.0, 0.0) and c)(
                _commanded(reader)), timeout=60)  # silent: the 1 s lease detaches it
            wait_until(lambda: run.stepper.snapshot.time > stopped[1] + 1.0, timeout=60)
            snap = run.stepper.snapshot  # the run went on alone, as fast as it can
            assert abs(snap.poses[snap.index["r1"], 0] - x0) < 0.005  # not one step more
            assert any("r1: stopped: the lease detached it" in line
                       for line in run.stepper.slots.detached_log)
        finally:
            mine.close()
            reader.close()


def test_the_safe_commands_stop_wheels_and_level_a_quadrotor():
    """What an expired dead man stores per module (coopsim.sim.deadman.safe_row): a module's
    ``stop``, but a multirotor's ``rotors`` level at the hover thrust m g, yaw rate 0 (its
    ``stop`` would drop it); a module with no ``stop`` has none."""
    from coopsim.model.plugins import MODULES
    from coopsim.sim.deadman import safe_row

    def defaults(label):
        return {spec.name: spec.default for spec in MODULES.get(label).params}

    assert safe_row(MODULES.get("motors"), defaults("motors"), None) == (0.0, 0.0)
    rotors = defaults("rotors")
    row = safe_row(MODULES.get("rotors"), rotors, None)
    assert row[0] == 3.0  # set_thrust_attitude's mode
    assert row[1] == pytest.approx(rotors["mass"] * 9.81) and row[2:5] == (0.0, 0.0, 0.0)
    assert safe_row(MODULES.get("sonar"), defaults("sonar"), None) is None
