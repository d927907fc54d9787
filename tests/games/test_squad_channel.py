"""The squad event channel on real sockets: /squads checks and numbers orders and publishes them
on /squads/events (topic = squad); unknown squads are dropped and counted in /sim state; an
unreachable point is refused with its reason and the squad holds; in-process squad drivers get
the orders through the snapshot's board and move."""

from __future__ import annotations

import math
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
import zmq

from coopsim.client import Client, RemoteError
from coopsim.client.squads import Squads, Subscription
from coopsim.formats.files import load
from coopsim.model.specs import DriverSetting
from coopsim.net.protocol import Message

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nethelpers import live, until_heard  # noqa: E402

SCENARIO = Path(__file__).resolve().parent / "data" / "ctf_view.scenario"
WAIT = 10.0


def raw_subscriber(client: Client, prefix: bytes) -> zmq.Socket:
    sub = client._ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, prefix)
    sub.connect(client.lookup("/squads/events", "pub"))
    return sub


def test_orders_are_numbered_published_by_squad_topic_and_counted():
    with live(load(SCENARIO)) as run, Client(run.network.endpoint) as client:
        squads = Squads(client)
        assert set(squads.list()) == {"A", "Ad", "B", "Bd"}
        assert squads.list()["Ad"] == {"robots": ["a4", "a5"], "formation": "line",
                                        "spacing": 0.6}
        sub = raw_subscriber(client, b"A")  # a prefix: A and Ad
        exact = Subscription(client, ["A"])
        probes = until_heard(squads, sub, exact)
        first = squads.send("A", "goto", (-5.0, -4.0), "wedge")
        second = squads.send("Ad", "defend", (-8.0, 0.0), radius=1.5)
        assert second.seq == first.seq + 1
        frames = [sub.recv_multipart() for _ in range(2)] if sub.poll(int(WAIT * 1000)) else []
        topics = [f[0] for f in frames]
        msgs = [Message.from_wire(f[1]) for f in frames]
        assert topics == [b"A", b"Ad"]
        assert (msgs[0].text, msgs[0].command, msgs[0].params[0], msgs[0].data) == \
            ("A goto wedge", 2, first.seq, (-5.0, -4.0))
        assert msgs[1].text == "Ad defend" and msgs[1].data == (-8.0, 0.0, 1.5)
        got = exact.poll(WAIT)  # the exact subscription drops Ad's
        assert [(o.squad, o.verb, o.seq) for o in got] == [("A", "goto", first.seq)]

        with pytest.raises(RemoteError) as err:
            squads.send("Z", "goto", (0.0, 0.0))
        assert err.value.code == 5 and "no squad named 'Z'" in err.value.text
        assert not sub.poll(500)  # dropped: nothing published
        state = client.sim().state()["squad_orders"]
        assert (state["published"], state["unknown"], state["refused"]) == (2 + probes, 1, 0)
        assert state["orders"]["A"]["point"] == [-5.0, -4.0]
        assert squads.counts() == {"published": 2 + probes, "unknown": 1, "refused": 0}
        sub.close(0)
        exact.close()


@pytest.mark.parametrize("point", [(0.0, 0.2), (40.0, 0.0)])
def test_an_unreachable_point_is_refused_with_the_reason_and_the_squad_holds(point):
    with live(load(SCENARIO)) as run, Client(run.network.endpoint) as client:
        squads = Squads(client)
        sub = raw_subscriber(client, b"B")
        until_heard(squads, sub, squad="B")
        held = squads.send("B", "goto", (5.0, 4.0))
        assert sub.poll(int(WAIT * 1000)) and sub.recv_multipart()  # this one is published
        with pytest.raises(RemoteError) as err:
            squads.send("B", "goto", point)  # the middle of the river; off the floor
        assert err.value.code == 8
        assert err.value.text.startswith("unreachable: ") and "holds its previous" in \
            err.value.text
        assert not sub.poll(500)
        reply = client.request(squads.endpoint, 3, "B")
        assert (reply.text, reply.params[0]) == ("B goto", held.seq)
        assert client.sim().state()["squad_orders"]["refused"] == 1
        sub.close(0)


@pytest.mark.parametrize("text, data, code", [
    ("A fly", (), 5), ("A goto", (1.0,), 3), ("A goto star", (1.0, 1.0), 5),
    ("A defend", (1.0, 1.0, -2.0), 4), ("A", (), 3), ("A hold wedge", (), 3),
])
def test_malformed_orders_get_their_error_code(text, data, code):
    with live(load(SCENARIO)) as run, Client(run.network.endpoint) as client:
        with pytest.raises(RemoteError) as err:
            client.request(client.lookup("/squads"), 2, text, data=data)
        assert err.value.code == code


def squad_a_driven():
    """The scenario with squad A's robots (a1-a3) driven in process by the squad driver."""
    spec = load(SCENARIO)
    driven = DriverSetting("squad", (("role", "none"),))
    return replace(spec, robots=tuple(replace(r, drivers=(driven,)) if r.name in
                                      ("a1", "a2", "a3") else r for r in spec.robots))


@pytest.mark.slow
def test_in_process_squad_drivers_carry_out_a_published_order():
    with live(squad_a_driven(), speed=0.0) as run, Client(run.network.endpoint) as client:
        Squads(client).send("A", "goto", (-5.0, -4.0), "line")
        while True:  # bounded by simulated time, not the wall clock (a loaded machine is slow)
            state = client.sim().state()
            where = {r["name"]: (r["x"], r["y"]) for r in state["robots"]}
            centre = [sum(where[n][k] for n in ("a1", "a2", "a3")) / 3 for k in (0, 1)]
            if math.dist(centre, (-5.0, -4.0)) < 0.3:
                break
            assert state["time"] < 200.0, ("the squad did not get there", centre)
            time.sleep(0.2)
        assert where["b1"] == pytest.approx((9.0, 0.0), abs=0.01)  # B has no driver


def test_status_answers_an_accepted_order_while_the_stepper_is_busy_and_a_reset_clears_it():
    with live(load(SCENARIO)) as run, Client(run.network.endpoint) as client:
        squads = Squads(client)
        busy = run.stepper.call(time.sleep, 3.0)  # a long step: the board waits for it
        time.sleep(0.2)
        sent = squads.send("A", "goto", (-5.0, -4.0), "wedge")
        reply = client.request(squads.endpoint, 3, "A")
        assert (reply.text, reply.params[0], reply.data) == ("A goto wedge", sent.seq,
                                                              (-5.0, -4.0))
        assert client.sim().state()["squad_orders"]["orders"]["A"]["seq"] == sent.seq
        busy.result(WAIT)
        client.sim().reset()
        reply = client.request(squads.endpoint, 3, "A")
        assert (reply.text, reply.params[0]) == ("", 0)
        assert client.sim().state()["squad_orders"]["orders"] == {}


@pytest.mark.slow
def test_a_squad_that_arrives_in_formation_is_reported_on_the_channel_and_in_sim_state():
    """End to end: a real run, in-process squad drivers, a real subscriber and /sim state."""
    import numpy as np

    from coopsim.swarm.formations import Formation, shape_error

    with live(squad_a_driven(), speed=0.0) as run, Client(run.network.endpoint) as client:
        events = Subscription(client, ["A"])
        try:  # closed whatever happens: an open subscriber keeps the client's term() waiting
            until_heard(Squads(client), events)  # holds: no arrival to report
            sent = Squads(client).send("A", "goto", (-5.0, -4.0), "line")
            assert client.sim().state()["squad_orders"]["arrived"] == {}
            while not events.arrivals:
                events.poll(0.5)
                state = client.sim().state()
                assert state["time"] < 200.0, ("no arrival reported", state["squad_orders"])
            event = events.arrivals[0]
            assert (event["squad"], event["seq"]) == ("A", sent.seq)
            arrived = client.sim().state()["squad_orders"]["arrived"]["A"]
            assert {k: arrived[k] for k in ("seq", "step", "x", "y")} == \
                {k: event[k] for k in ("seq", "step", "x", "y")}
            assert math.dist((event["x"], event["y"]), (-5.0, -4.0)) < 0.3
            # the report is true: the line stands formed where the event was seen
            frame = run.stepper.snapshot
            pos = np.array([frame.poses[frame.index[n], :2] for n in ("a1", "a2", "a3")])
            rms = float(np.sqrt(np.mean(shape_error(pos, Formation("line", 0.6).offsets(3),
                                                    0.0) ** 2)))
            assert rms <= 0.1 and frame.step >= event["step"]
        finally:
            events.close()


@pytest.mark.slow
def test_an_arrival_wakes_the_squad_server_which_otherwise_sleeps(monkeypatch):
    """/squads publishes an arrival when the stepper's hook notes it, not at its next look: with
    its safety wake-up out of reach (30 s) the event still comes, and the run still stops."""
    from coopsim.net.squads import SquadServer

    monkeypatch.setattr(SquadServer, "poll_ms", 30_000)
    with live(squad_a_driven(), speed=0.0) as run, Client(run.network.endpoint) as client:
        events, server = Subscription(client, ["A"]), run.network.squads
        try:  # closed whatever happens: an open subscriber keeps the client's term() waiting
            until_heard(Squads(client), events)
            sent = Squads(client).send("A", "goto", (-5.0, -4.0), "line")
            for _ in range(int(WAIT / 0.5) * 6):  # /sim's state below: no request to /squads
                if events.arrivals:  # wakes it
                    break
                events.poll(0.5)
                state = client.sim().state()
                assert state["time"] < 200.0, ("no arrival published", state["squad_orders"])
            assert events.arrivals, ("no arrival published",
                                     client.sim().state()["squad_orders"])
            assert (events.arrivals[0]["squad"], events.arrivals[0]["seq"]) == ("A", sent.seq)
        finally:
            events.close()
    assert not server._thread.is_alive()  # stop() woke it: joined within its 2 s


@pytest.mark.slow
def test_sim_state_names_the_member_a_squad_waits_for_and_why():
    """A member that cannot move (its motors give nothing) is named in
    /sim state squad_orders blocked, with why; the squad goes on without it."""
    with live(squad_a_driven(), speed=0.0, paused=True) as run, \
            Client(run.network.endpoint) as client:
        client.sim().set_param("a2", "motors", "max_speed", 0.0)
        Squads(client).send("A", "goto", (-5.0, -4.0), "line")
        client.sim().resume()
        while True:  # bounded by simulated time, not the wall clock
            state = client.sim().state()
            blocked = state["squad_orders"]["blocked"]
            if blocked:
                break
            assert state["time"] < 120.0, ("nobody named", state["squad_orders"])
            time.sleep(0.2)
        assert list(blocked) == ["A"] and list(blocked["A"]) == ["a2"]
        why = blocked["A"]["a2"]  # where it stands, how far from its slot, since when
        assert why.startswith("has not ") and "slot" in why
        assert "A" not in state["squad_orders"]["arrived"]


def test_closing_the_client_closes_a_subscription_left_open():
    """A Subscription the user forgot to close no longer keeps ``Client.close()`` (its
    context's term()) waiting for ever."""
    with live(load(SCENARIO)) as run:
        client = Client(run.network.endpoint)
        events = Subscription(client, ["A"])
        closer = threading.Thread(target=client.close, daemon=True)
        closer.start()
        closer.join(30)
        assert not closer.is_alive(), "Client.close() hangs on an open Subscription"
        assert events.socket.closed
        events.close()  # a second close does nothing
