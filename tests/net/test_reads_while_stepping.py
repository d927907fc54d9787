"""While the stepper takes a step, a robot's reads are answered from the latest snapshot by the
hub's reading thread (coopsim.net.robothub: RobotHub.lend); requests that may change something
wait for the step's end and are served by the stepper, the one thread that writes the World."""

from __future__ import annotations

import dataclasses
import threading

import msgpack

from coopsim.model.driver import Driver
from coopsim.model.plugins import DRIVERS
from coopsim.model.specs import DriverSetting

from helpers import robot, scenario
from nethelpers import Peer, live, lookup

WAIT = 20.0  # s; a bound on failure, never reached by a passing run
HOLD = {"now": threading.Event(), "entered": threading.Event(), "release": threading.Event()}


class Hold(Driver):
    """Blocks the step it runs in (its commands phase) once the test asks, until released."""

    label = "hold_test"

    def step(self, bot):
        if HOLD["now"].is_set():
            HOLD["now"].clear()
            HOLD["entered"].set()
            HOLD["release"].wait(3 * WAIT)


if "hold_test" not in DRIVERS:
    DRIVERS.register("hold_test")(Hold)


def _spec():
    held = dataclasses.replace(robot("r1", -1.0, 0.0), drivers=(DriverSetting("hold_test", ()),))
    return scenario(robots=[held, robot("r2", 1.0, 1.0)], mode="realtime")


def test_a_read_is_answered_from_the_last_snapshot_while_a_step_runs():
    for event in HOLD.values():
        event.clear()
    with live(_spec()) as run:
        hub = run.network.hub
        hub.reads.lend_min, hub.reads.quiet = 0.0, 3 * WAIT  # lend every step (short ones)
        r2 = Peer(lookup(run.network.endpoint, "/r2"))
        other = Peer(lookup(run.network.endpoint, "/r2"))
        try:
            assert r2.ok(400)[0] == 0  # odometry read: the hub has been asked
            HOLD["now"].set()
            assert HOLD["entered"].wait(WAIT)  # the stepper is inside a step, held there
            before = run.stepper.snapshot.step
            other.send_frames([msgpack.packb([0, "", 4, [], []])])  # claim: waits for the step's end
            reply = r2.ask(400, timeout=WAIT)
            assert reply[0] == 0, reply
            assert reply[3][0] == before  # the previous snapshot's step
            assert not HOLD["release"].is_set() and run.stepper.snapshot.step == before
            assert other.sock.poll(0) == 0  # a claim is no read: not answered mid-step
            HOLD["release"].set()
            claimed = other.receive(timeout=WAIT)
            assert claimed[0] == 0 and "claimed" in claimed[1], claimed
            assert run.stepper.wait_step(before, WAIT) is not None  # the held step ended
        finally:
            HOLD["release"].set()
            r2.close()
            other.close()



def test_a_connections_replies_keep_its_order_while_a_step_runs():
    """A DEALER that sends a claim then a read mid-step gets the claim's reply first: its read
    waits behind its own deferred request (another connection's read does not)."""
    import zmq

    for event in HOLD.values():
        event.clear()
    with live(_spec()) as run:
        hub = run.network.hub
        hub.reads.lend_min, hub.reads.quiet = 0.0, 3 * WAIT
        r2 = Peer(lookup(run.network.endpoint, "/r2"))
        piped = Peer(lookup(run.network.endpoint, "/r2"), kind=zmq.DEALER)
        try:
            assert r2.ok(400)[0] == 0
            HOLD["now"].set()
            assert HOLD["entered"].wait(WAIT)
            piped.send_frames([msgpack.packb([0, "", 4, [], []])])  # claim: after the step
            piped.send_frames([msgpack.packb([0, "", 400, [], []])])  # read: behind the claim
            assert r2.ask(400, timeout=WAIT)[0] == 0  # the reading thread serves the others
            assert piped.sock.poll(0) == 0  # its read was not answered before its claim
            HOLD["release"].set()
            first, second = piped.receive(timeout=WAIT), piped.receive(timeout=WAIT)
            assert first[2] == 4 and "claimed" in first[1], first
            assert second[2] == 400 and second[0] == 0, second
        finally:
            HOLD["release"].set()
            r2.close()
            piped.close()
