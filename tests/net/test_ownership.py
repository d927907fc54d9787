"""Robot ownership over real sockets: the first connection to command a robot's motion owns
it; others get error 11 naming the owner until it releases, detaches, disconnects or its lease
lapses; reads stay open; claim with force takes it; the probe's attacks are neutralised."""

from __future__ import annotations

import threading

import pytest

from coopsim.net import protocol as p

from helpers import robot, scenario
from nethelpers import Peer, live, lookup, wait_until

SPEEDS = 100  # motors set_speeds
CLAIM, RELEASE, DETACH = 4, 5, 2


def _world(mode: str = "realtime", robots=("r1",)):
    return scenario(robots=[robot(name, -3.0, 1.5 * i) for i, name in enumerate(robots)],
                    mode=mode, dt=0.01, seed=3)


def _peers(run, name="r1", n=2) -> list[Peer]:
    endpoint = lookup(run.network.endpoint, f"/{name}")
    return [Peer(endpoint) for _ in range(n)]


def _status(sim: Peer) -> dict:
    _, mode, _, params, data = sim.ok(1)
    return {"step": params[0], "attached": params[5], "lease": data[5]}


def test_a_second_client_is_refused_with_error_11_naming_the_first():
    with live(_world()) as run:
        first, second = _peers(run)
        first.ok(SPEEDS, data=[0.2, 0.2])  # the first motion command owns the robot
        reply = second.ask(SPEEDS, data=[-0.2, -0.2])
        assert reply[0] == p.OWNED == 11 and reply[2] == SPEEDS
        assert "r1 is owned by the connection from 127.0.0.1:" in reply[1], reply[1]
        assert run.stepper.slots.owner("r1").split(":")[-1] in reply[1]
        assert second.ask(102)[0] == 11, "stop is a motion command too"
        assert second.ask(CLAIM)[0] == 11
        # reads stay open to everyone
        assert second.ask(500)[0] == 0 and second.ask(200)[0] == 0 and second.ask(103)[0] == 0
        assert first.ok(SPEEDS, data=[0.1, 0.1])[1] == "realtime"


def test_release_detach_and_disconnect_hand_the_robot_over():
    with live(_world()) as run:
        first, second = _peers(run)
        assert first.ok(CLAIM)[1].startswith("claimed by the connection from 127.0.0.1:")
        assert second.ask(SPEEDS, data=[0.1, 0.1])[0] == 11
        assert second.ask(RELEASE)[0] == 11, "only the owner releases"
        assert first.ok(RELEASE)[3] == [1]
        assert second.ok(SPEEDS, data=[0.1, 0.1])[0] == 0  # free: the second owns it now
        assert first.ask(SPEEDS, data=[0.1, 0.1])[0] == 11
        second.ok(DETACH)  # detach gives it up as well
        first.ok(SPEEDS, data=[0.1, 0.1])
        first.close()  # a closed connection frees what it owned, at once
        wait_until(lambda: run.stepper.slots.owner("r1") == "")
        assert second.ask(SPEEDS, data=[0.1, 0.1])[0] == 0


def test_the_lease_lapses_and_force_takes_the_robot():
    with live(_world()) as run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        first, second, operator = _peers(run, n=3)
        first.ok(SPEEDS, data=[0.1, 0.1])
        forced = operator.ok(CLAIM, params=[1])
        assert forced[3] == [1] and "taken from the connection from" in forced[1]
        assert first.ask(SPEEDS, data=[0.1, 0.1])[0] == 11, "the operator owns it now"
        sim.ok(9, data=[0.2])  # a short lease: the operator falls silent
        wait_until(lambda: second.ask(SPEEDS, data=[0.1, 0.1])[0] == 0, every=0.05)
        assert "lapsed" in run.stepper.slots.detached_log[-1]
        # /sim detach (an operator's) frees a robot from its owner
        sim.ok(24, "r1")
        assert first.ok(SPEEDS, data=[0.1, 0.1])[0] == 0


def test_set_lease_is_capped_at_60_seconds():
    with live(_world()) as run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        reply = sim.ask(9, data=[3600])
        assert reply[0] == p.OUT_OF_RANGE and "0.05..60 s" in reply[1]
        assert _status(sim)["lease"] == 3.0
        assert sim.ok(9, data=[60])[0] == 0 and _status(sim)["lease"] == 60.0


def test_an_intruder_cannot_hold_a_lockstep_run():
    """The probe: one set_speeds to robot2 every 2.5 s held a 3-robot lockstep run at 0.4
    steps/s. Now the intruder is refused and the owners' run goes at their pace."""
    with live(_world("lockstep", robots=("r1", "r2"))) as run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        owners = [_peers(run, name, 1)[0] for name in ("r1", "r2")]
        intruder = _peers(run, "r2", 1)[0]
        stop = threading.Event()

        def drive(peer):
            while not stop.is_set():
                peer.ok(SPEEDS, data=[0.1, 0.1])
        for peer in owners:
            peer.ok(SPEEDS, data=[0.1, 0.1])
        # the owners' own pace is not under test: once both are attached, a lease long enough
        # that a starved driving thread (a loaded machine, this process's GIL) is not detached
        sim.ok(9, data=[60])
        threads = [threading.Thread(target=drive, args=(peer,)) for peer in owners]
        for thread in threads:
            thread.start()
        try:
            start = _status(sim)["step"]
            for _ in range(3):
                reply = intruder.ask(SPEEDS, data=[0.0, 0.0])
                assert reply[0] == 11, reply
                before = _status(sim)["step"]
                wait_until(lambda: _status(sim)["step"] > before + 20)
            assert _status(sim)["attached"] == 2
            assert _status(sim)["step"] > start + 60
        finally:
            stop.set()
            for thread in threads:
                thread.join(10)


def test_a_long_lease_then_a_disconnect_does_not_stall_the_run():
    """The probe: set_lease 3600, attach, disconnect: the run stalled for up to an hour. The
    lease is capped, and a closed connection detaches its robot at once."""
    with live(_world("lockstep")) as run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        assert sim.ask(9, data=[3600])[0] == p.OUT_OF_RANGE
        sim.ok(9, data=[60])
        peer = _peers(run, n=1)[0]
        peer.ok(SPEEDS, data=[0.1, 0.1])
        assert _status(sim)["attached"] == 1
        peer.ask(SPEEDS, data=[0.1, 0.1])
        peer.close()
        wait_until(lambda: _status(sim)["attached"] == 0)
        before = _status(sim)["step"]
        wait_until(lambda: _status(sim)["step"] > before + 50)
        assert run.stepper.slots.owner("r1") == ""


@pytest.mark.parametrize("kind", ["motion", "claim"])
def test_ownership_follows_a_reset_and_reads_never_wait(kind):
    with live(_world("lockstep")) as run:
        first, second = _peers(run)
        if kind == "claim":
            first.ok(CLAIM)
        else:
            first.ok(SPEEDS, data=[0.1, 0.1])
        Peer(lookup(run.network.endpoint, "/sim")).ok(5)  # reset: the owner keeps its robot
        assert second.ask(SPEEDS, data=[0.1, 0.1])[0] == 11
        assert second.ask(500)[0] == 0


def test_the_python_client_claims_releases_and_raises_robot_owned():
    from coopsim.client import Client, RobotOwned

    with live(_world()) as run, Client(run.network.endpoint) as a, \
            Client(run.network.endpoint) as b:
        mine, theirs = a.robot("r1"), b.robot("r1")
        assert mine.claim().startswith("claimed by the connection from 127.0.0.1:")
        with pytest.raises(RobotOwned) as info:
            theirs.motors.set_speeds(0.1, 0.1)
        assert info.value.code == 11 and "r1 is owned by" in info.value.text
        assert len(theirs.gps.read()) == 2  # reads stay open
        assert "taken from" in theirs.claim(force=True)
        with pytest.raises(RobotOwned):
            mine.motors.stop()
        assert theirs.release() is True and theirs.release() is False
        mine.motors.stop()


def test_the_state_document_names_every_owner():
    from coopsim.client import Client

    with live(_world(robots=("r1", "r2"))) as run, Client(run.network.endpoint) as client:
        sim = client.sim()
        assert sim.state()["owners"] == {}
        client.robot("r2").claim()
        owners = sim.state()["owners"]
        assert list(owners) == ["r2"] and owners["r2"].startswith("the connection from 127.")
