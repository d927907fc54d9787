"""The squad channel of a run started with keys: /squads and /squads/events are CurveZMQ servers
like every other socket of the run (docs/protocol.md section 8). A listed client sends an order and
gets it on its subscription (the Python client's Subscription and subscribe_state set the keys on
their SUB sockets, and the stream carries the game's metrics); clients without keys or with an unlisted key fail the handshake on both."""

from __future__ import annotations

from pathlib import Path

import msgpack
import numpy as np
import pytest
import zmq

from coopsim.client import Client
from coopsim.client.squads import Squads, Subscription
from coopsim.formats.files import load

from curvehelpers import EXPECTED, handshake, key_cases, keys  # noqa: F401 -- fixture
from nethelpers import live, until_heard

SCENARIO = Path(__file__).resolve().parent / "data" / "ctf_view.scenario"
HELLO = msgpack.packb([0, "", 0, [8], []])


@pytest.fixture(scope="module")
def run(keys):
    with live(load(SCENARIO), keys=str(keys)) as running:
        yield running


@pytest.fixture(scope="module")
def names(run, keys):
    with Client(run.network.endpoint, keys=keys / "clients" / "alice") as client:
        return client.names()


def test_a_listed_client_orders_a_squad_and_hears_it_and_the_state(run, keys):
    with Client(run.network.endpoint, timeout=10, keys=keys / "clients" / "alice") as client:
        sub = Subscription(client, ["A"])
        try:
            until_heard(Squads(client), sub)  # the subscription reaches the publisher
            sent = Squads(client).send("A", "goto", (-5.0, -4.0), "wedge")
            got = sub.poll(10.0)
        finally:
            sub.close()  # an open socket would hang the client's close
        assert [(o.squad, o.verb, o.point, o.seq) for o in got] == \
            [("A", "goto", (-5.0, -4.0), sent.seq)]
        frame = next(client.subscribe_state())  # the state stream, with the same keys
        assert frame.robots.shape == (10, 3)
        game = dict(zip(client.sim().state()["metrics"], frame.metrics))  # the ctf rule's
        assert (game["ctf.A.flag_x"], game["ctf.B.flag_x"], game["ctf.B.score"]) == (-8, 8, 0)
        assert np.isnan(game["ctf.A.carrier"]) and game["ctf.tagged"] == 0


@pytest.mark.parametrize("case", ["no keys", "unlisted key"])
def test_squads_and_its_events_refuse_unlisted_clients(names, keys, case):
    outcome, reply = handshake(names["/squads"], key_cases(keys)[case], request=HELLO)
    assert outcome in EXPECTED[case] and reply is None
    outcome, frames = handshake(names["/squads/events"], key_cases(keys)[case], kind=zmq.SUB)
    assert outcome in EXPECTED[case] and frames is None


def test_a_listed_key_completes_the_handshake_on_both(names, keys):
    outcome, reply = handshake(names["/squads"], key_cases(keys)["listed key"], request=HELLO)
    assert outcome == "ok" and msgpack.unpackb(reply[0]) == [0, "/squads", 0, [8], []]
    assert handshake(names["/squads/events"], key_cases(keys)["listed key"], kind=zmq.SUB,
                     listen=False)[0] == "ok"  # it publishes on orders only (heard above)
