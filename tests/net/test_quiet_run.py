"""A run nobody listens to builds nothing for listeners: the state stream knows
whether anyone subscribes (XPUB), and the run's watcher is woken when it ends, not every step."""

import threading

import zmq

from coopsim.net.protocol import Message
from coopsim.net.statestream import StatePublisher, decode_state
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import finishes, robot, scenario
from nethelpers import wait_until


def _publisher(stepper):
    ctx = zmq.Context()
    return ctx, StatePublisher(ctx, stepper, rate=0)


def test_the_stream_is_built_only_for_a_subscriber_and_stops_when_it_leaves(monkeypatch):
    stepper = Stepper(Simulation(scenario([robot()])), mode="lockstep")
    ctx, pub = _publisher(stepper)
    built = []
    monkeypatch.setattr(stepper, "stats", lambda _s=stepper.stats: built.append(1) or _s())
    try:
        pub(stepper.tick())
        assert not pub.listened() and built == []  # nobody subscribes: no message built
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.SUBSCRIBE, b"state")
        sub.connect(pub.endpoint)
        wait_until(pub.listened)
        snap = stepper.tick()
        pub(snap)
        assert sub.poll(10_000)
        topic, wire = sub.recv_multipart()
        assert topic == b"state" and decode_state(Message.from_wire(wire)).step == snap.step
        assert built == [1]
        sub.close(0)  # its connection closes: the unsubscription comes up
        wait_until(lambda: not pub.listened())
        pub(stepper.tick())
        assert built == [1]
    finally:
        pub.close()
        ctx.term()


def test_the_latest_state_socket_counts_as_listened_to():
    stepper = Stepper(Simulation(scenario([robot()])), mode="lockstep")
    ctx, pub = _publisher(stepper)
    try:
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.CONFLATE, 1)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(pub.latest_endpoint)
        wait_until(pub.listened)
        pub(stepper.tick())
        assert sub.poll(10_000) and decode_state(Message.from_wire(sub.recv())).step == 1
        sub.close(0)
    finally:
        pub.close()
        ctx.term()


def test_the_watcher_sleeps_through_steps_and_wakes_when_the_run_ends():
    stepper = Stepper(Simulation(scenario([robot()])), mode="lockstep")
    woken = []
    original = stepper._ended.notify_all
    stepper._ended.notify_all = lambda: (woken.append(stepper.snapshot.step), original())[1]
    stepper.start(max_steps=300)
    try:
        assert finishes(stepper)  # as `coopsim run` watches a run
        assert stepper.snapshot.step == 300 and stepper.finished == "300 steps taken"
        assert 1 <= len(woken) <= 3, woken  # its end, not each of its 300 steps
    finally:
        stepper.stop()
    assert not stepper.running and not threading.current_thread() is stepper._thread
