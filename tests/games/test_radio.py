"""The radio module: range and bearing, loss drawn from the run's seed, per-step bandwidth, the
size limit and malformed payloads -- in-process (a Simulation stepped by hand, drivers' robot
API) and over the network (a live run's robot servers, the Python client)."""

from __future__ import annotations

import base64
import math
import sys
import time
from pathlib import Path

import pytest

from coopsim.client import Client, RemoteError
from coopsim.model.errors import ProtocolError
from coopsim.model.radio import Inbox, messages, pack, unpack
from coopsim.sim.drivers import LocalRobot
from coopsim.sim.simulation import Simulation

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import robot, scenario, step_by_hand  # noqa: E402
from nethelpers import live  # noqa: E402


def radio_sim(robots, seed=0, params=()):
    specs = [robot(n, x, y, yaw, "swarmbot", params) for n, x, y, yaw in robots]
    return Simulation(scenario(specs, seed=seed, dt=0.05))


def step(sim, n=1):
    step_by_hand(sim, n)


def test_a_broadcast_reaches_robots_in_range_with_range_and_bearing():
    sim = radio_sim([("s", 0, 0, 0), ("north", 0, 2, 0), ("east", 1.5, 0, math.pi / 2),
                     ("far", -3.5, 0, 0)])
    sender = LocalRobot(sim, "s")
    assert sender.radio.send(pack({"hello": [1, 2]})).startswith("queued")
    step(sim)
    north = messages(LocalRobot(sim, "north").radio.read())
    assert [(m.sender, m.value()) for m in north] == [("s", {"hello": [1, 2]})]
    assert north[0].range == pytest.approx(2.0, abs=1e-3)
    assert north[0].bearing == pytest.approx(-math.pi / 2, abs=1e-3)  # behind it, to its right
    east = messages(LocalRobot(sim, "east").radio.read())
    assert east[0].bearing == pytest.approx(math.pi / 2, abs=1e-3)  # facing +y: s on its left
    assert messages(LocalRobot(sim, "far").radio.read()) == []  # 3.5 m > the 3 m range
    assert messages(sender.radio.read()) == []  # not to itself
    radio = sim.snapshot.readings["radio"]
    assert radio[:, 1].tolist() == [1, 0, 0, 0] and radio[:, 0].tolist() == [0, 1, 1, 0]


def test_reads_default_to_the_latest_step_and_keep_the_window():
    sim = radio_sim([("s", 0, 0, 0), ("r", 1, 0, 0)])
    sender, receiver = LocalRobot(sim, "s"), LocalRobot(sim, "r")
    inbox = Inbox(receiver)
    for k in range(3):
        sender.radio.send(pack(k))
        step(sim)
    step(sim)
    assert messages(receiver.radio.read()) == []  # nothing delivered at the latest step
    assert [m.value() for m in inbox.poll()] == [0, 1, 2]  # all still kept (keep = 50)
    assert inbox.poll() == []  # and not read twice
    assert [m.step for m in messages(receiver.radio.read("1"))] == [2, 3]


def deliveries(seed):
    sim = radio_sim([("s", 0, 0, 0)] + [(f"r{i}", 1 + 0.1 * i, 0, 0) for i in range(10)],
                    seed=seed, params=[("radio", "loss", 50.0)])
    got = []
    for k in range(5):
        LocalRobot(sim, "s").radio.send(pack(k))
        step(sim)
        got.append(tuple(len(messages(LocalRobot(sim, f"r{i}").radio.read())) for i in range(10)))
    lost = sim.snapshot.readings["radio"][:, 3]
    return got, lost


def test_loss_is_drawn_from_the_run_seed():
    first, lost = deliveries(seed=4)
    again, _ = deliveries(seed=4)
    other, _ = deliveries(seed=5)
    assert first == again and first != other
    received = sum(map(sum, first))
    assert 10 <= received <= 40  # about half of the 50 deliveries
    assert lost.sum() > 0


def test_the_bandwidth_spreads_a_burst_over_steps():
    sim = radio_sim([("s", 0, 0, 0), ("r", 1, 0, 0)], params=[("radio", "bandwidth", 100)])
    sender, receiver = LocalRobot(sim, "s"), LocalRobot(sim, "r")
    payload = base64.b64encode(bytes(40)).decode()
    for _ in range(5):
        sender.radio.send(payload)
    counts = []
    for _ in range(4):
        step(sim)
        counts.append(len(messages(receiver.radio.read())))
    assert counts == [2, 2, 1, 0]  # 40 + 40 bytes fit 100 a step, a third would not
    assert sim.snapshot.readings["radio"][0, 2] == 0  # the queue has emptied


def test_a_payload_over_the_limit_or_not_base64_is_refused_and_nothing_is_sent():
    sim = radio_sim([("s", 0, 0, 0), ("r", 1, 0, 0)], params=[("radio", "max_bytes", 16)])
    sender = LocalRobot(sim, "s")
    for text in (base64.b64encode(bytes(17)).decode(), "not base64!"):
        with pytest.raises(ProtocolError) as err:
            sender.radio.send(text)
        assert err.value.code == 4
    step(sim)
    assert messages(LocalRobot(sim, "r").radio.read()) == []
    assert sim.snapshot.readings["radio"][0].tolist() == [0, 0, 0, 0]
    sender.radio.send(base64.b64encode(bytes(16)).decode())  # at the limit: fine
    step(sim)
    assert len(messages(LocalRobot(sim, "r").radio.read())) == 1


def test_over_the_network_send_and_read_and_the_error_code():
    spec = scenario([robot("s", 0, 0, 0, "swarmbot"), robot("r", 2, 0, math.pi, "swarmbot")],
                    dt=0.05, mode="realtime")
    with live(spec) as run, Client(run.network.endpoint) as client:
        s, r = client.robot("s"), client.robot("r")
        inbox = Inbox(r)
        assert Inbox(s).send({"x": 1.5}).startswith("queued")
        deadline = time.monotonic() + 10.0
        while not (got := inbox.poll()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [(m.sender, m.value()) for m in got] == [("s", {"x": 1.5})]
        assert got[0].range == pytest.approx(2.0, abs=0.05)
        assert abs(got[0].bearing) < 0.05  # r faces s
        with pytest.raises(RemoteError) as err:
            s.radio.send(pack("x" * 300))
        assert err.value.code == 4 and "max_bytes" in err.value.text
        assert unpack(pack([1, "a"])) == [1, "a"]
