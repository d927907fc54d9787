"""A lease that cannot hold a run hostage, over real sockets: beside a fast
controller, one that answers every step but slowly (under its lease, so the lease never
lapses) is detached once the steps waited for it alone pass its patience; it is told so in the
reply to its next command (error 6) and the run's log says it; the fast one is never detached
and the run goes on at its pace. Conditions only: the slow client's pauses are the behaviour
under test, every assertion waits on steps and counts."""

from __future__ import annotations

import logging
import threading

from coopsim.net import protocol as p

from helpers import robot, scenario
from nethelpers import Peer, live, lookup, wait_until

SPEEDS, SET_LEASE, CLAIM = 100, 9, 4
LEASE = 1.0  # s: the slow client answers well within it
SLOW_PAUSE = 0.5  # s the slow client thinks before each command
MOST_SLOW_STEPS = 60  # far more than the patience allows (about 3 here)


def test_a_slow_but_alive_client_cannot_stall_a_lockstep_run_and_a_fast_one_stays(caplog):
    caplog.set_level(logging.WARNING, logger="coopsim.sim.slots")
    spec = scenario(robots=[robot("fast", -2.0, 0.0), robot("slow", 2.0, 0.0)],
                    mode="lockstep", dt=0.01, seed=3)
    with live(spec) as run:
        Peer(lookup(run.network.endpoint, "/sim")).ok(SET_LEASE, data=[LEASE])
        fast = Peer(lookup(run.network.endpoint, "/fast"))
        slow = Peer(lookup(run.network.endpoint, "/slow"))
        stop, fast_errors, fast_steps = threading.Event(), [], [0]

        def drive_fast():
            while not stop.is_set():
                reply = fast.ask(SPEEDS, data=[0.1, 0.1])
                if reply[0]:
                    fast_errors.append(reply)
                fast_steps[0] += 1

        driver = threading.Thread(target=drive_fast, daemon=True)
        driver.start()
        refused = None
        for _ in range(MOST_SLOW_STEPS):
            reply = slow.ask(SPEEDS, data=[0.1, 0.1])
            if reply[0]:
                refused = reply
                break
            threading.Event().wait(SLOW_PAUSE)  # alive, within its lease, but slow
        assert refused is not None, "the slow client held the run for ever"
        assert refused[0] == p.NOT_ALLOWED and refused[2] == SPEEDS, refused
        assert "slow was detached from lockstep" in refused[1], refused[1]
        assert "claims the robot again" in refused[1]
        # the run goes on at the fast client's pace, the slow one no longer waited for
        seen = fast_steps[0]
        wait_until(lambda: fast_steps[0] > seen + 300)
        assert run.stepper.slots.attached() == ["fast"]
        # a claim attaches it again, knowingly
        assert slow.ok(CLAIM)[0] == 0 and slow.ask(SPEEDS, data=[0.1, 0.1])[0] == 0
        stop.set()
        driver.join(60)
    assert not fast_errors, fast_errors
    log = run.stepper.slots.detached_log
    assert any(entry.startswith("slow: slow was detached from lockstep") for entry in log), log
    assert not any(entry.startswith("fast:") for entry in log), log
    assert any("slow was detached from lockstep" in r.getMessage() for r in caplog.records)
