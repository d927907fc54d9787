"""Tests of the Python client (coopsim.client) against live servers and a silent one."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import msgpack
import pytest
import zmq

from coopsim.net import protocol as p
from coopsim.client import Client, RemoteError, StepInfo
from coopsim.model.errors import ProtocolError

from helpers import robot, scenario, target
from nethelpers import ROOT, live


def _world(mode="realtime"):
    return scenario(robots=[robot("r1", -2.0, 0.0), robot("t", 0.0, -3.0, type="team2")],
                    targets=[target("red", 3.0, 0.0), target("blue", -2.0, 2.0)], mode=mode)


@pytest.fixture()
def run():
    with live(_world(), paused=True) as run:
        yield run


@pytest.fixture()
def client(run):
    with Client(run.network.endpoint, timeout=5.0) as client:
        yield client


@pytest.mark.slow
def test_import_does_not_pull_in_the_simulator():
    code = ("import sys, coopsim.client; "
            "print(sorted(m for m in ('pymunk', 'pyglet', 'coopsim.sim.world') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_nameserver_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("COOPSIM_NAMESERVER", "tcp://127.0.0.1:1234")
    with Client() as c:
        assert c.nameserver == "tcp://127.0.0.1:1234"
    monkeypatch.delenv("COOPSIM_NAMESERVER")
    with Client() as c:
        assert c.nameserver == p.DEFAULT_NAMESERVER


def test_hello_lookup_and_names(client, run):
    assert client.hello() == (p.PROTOCOL_VERSION, "/nameserver")
    assert client.hello("/sim") == (p.PROTOCOL_VERSION, "/sim")
    assert client.hello("/r1/motors") == (p.PROTOCOL_VERSION, "/r1")
    assert client.lookup("/sim") == run.network.sim.endpoint
    names = client.names("/r1")
    assert names["/r1/sonar"] == names["/r1"] and "/sim" not in names


def test_remote_errors_carry_code_and_sentence(client):
    with pytest.raises(RemoteError) as info:
        client.lookup("/nobody")
    assert info.value.code == p.UNKNOWN_NAME and "/nobody" in info.value.text
    bot = client.robot("r1")
    cases = [(lambda: bot.set_param("sonar", "max_range", 50.0), p.OUT_OF_RANGE),
             (lambda: bot.get_param("sonar", "range"), p.UNKNOWN_NAME),
             (lambda: bot.target.read_color("green"), p.UNKNOWN_NAME),
             (lambda: bot.call(800), p.UNKNOWN_COMMAND),
             (lambda: bot.motors.set_speeds(200.0, 0.0), p.OUT_OF_RANGE),
             (lambda: bot.call(100, data=(1.0,)), p.WRONG_ARITY),
             (lambda: client.sim().set_mode("turbo"), p.OUT_OF_RANGE),
             (lambda: client.request(client.nameserver, 0, params=(p.PROTOCOL_VERSION + 1,)),
              p.VERSION_MISMATCH)]
    for call, code in cases:
        with pytest.raises(RemoteError) as info:
            call()
        assert info.value.code == code and info.value.text, info.value


def test_robot_modules(client, run):
    bot = client.robot("r1")
    sim = client.sim()
    assert bot.modules() == ["motors", "sonar", "target", "odometry", "gps", "compass",
                             "bumper"]
    info = bot.motors.set_speeds(0.3, 0.3)
    assert isinstance(info, StepInfo) and not info.lockstep and info.note == "realtime"
    assert bot.last is info
    with pytest.raises(AttributeError, match="has no module 'support'"):
        bot.support.read()
    sim.step(20)
    assert bot.motors.read()[:2] == [0.3, 0.3]
    assert len(bot.sonar.read()) == 11
    targets = bot.target.read()
    assert targets.text.split(",") == ["red", "blue"] and targets.step == sim.status()["step"]
    assert bot.target.read_color("blue") == pytest.approx(targets[2:4])
    assert bot.odometry.read()[0] > 0.0
    bot.odometry.reset()
    assert bot.odometry.read() == [0.0] * 5
    x, y = bot.gps.read()
    assert x > -2.0 and bot.compass.read() == [pytest.approx(0.0, abs=1e-6)]
    assert bot.bumper.read() == [0.0, 0.0]
    assert len(client.robot("t_leader").support.read()) == 2
    assert bot.motors.stop().step == sim.status()["step"]


def test_robot_parameters(client):
    bot = client.robot("r1")
    assert bot.params("sonar") == {"max_range": 2.0, "noise": 0.0, "lost": 0.0, "rate": 0.0}
    assert bot.set_param("sonar", "noise", 0.05) == 0.05
    assert bot.get_param("sonar", "noise") == 0.05


def test_sim_handle(client):
    sim = client.sim()
    st = sim.status()
    assert (st["step"], st["paused"], st["mode"], st["robots"], st["lease"]) == (
        0, 1, "realtime", 3, 3.0)
    sim.step(4)
    assert sim.status()["step"] == 4
    assert set(sim.robots()) == {"r1", "t_leader", "t_helper"}
    assert sim.robots()["r1"][0] == pytest.approx(-2.0)
    assert sim.objects() == {}
    state = sim.state()
    assert state["step"] == 4 and len(state["targets"]) == 2
    sim.set_speed(2.0)
    sim.set_mode("lockstep")
    assert (sim.status()["speed"], sim.status()["mode"]) == (2.0, "lockstep")
    sim.reset()
    assert sim.status()["step"] == 0
    sim.resume()
    assert sim.status()["paused"] == 0
    sim.pause()
    assert sim.status()["paused"] == 1


def test_loop_in_lockstep_is_one_step_per_iteration_and_detaches_at_the_end():
    with live(_world(mode="lockstep")) as run, Client(run.network.endpoint) as client:
        bot, sim = client.robot("r1"), client.sim()
        steps = []
        for i in bot.loop(steps=10):
            bot.sonar.read()
            steps.append(bot.motors.set_speeds(0.2, 0.2))
            assert sim.status()["attached"] == 1
        assert all(s.lockstep for s in steps)
        assert [s.step - steps[0].step for s in steps] == list(range(10))
        assert steps[-1].time == pytest.approx(steps[-1].step * 0.01)
        assert sim.status()["attached"] == 0, "loop() detaches on leaving"


class _SilentServer:
    """A ROUTER that answers only what it is told to: for timeouts and late replies."""

    def __init__(self) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.endpoint = f"tcp://127.0.0.1:{self.sock.bind_to_random_port('tcp://127.0.0.1')}"

    def receive(self) -> list[bytes]:
        assert self.sock.poll(5000)
        return self.sock.recv_multipart()

    def answer(self, frames: list[bytes], text: str) -> None:
        self.sock.send_multipart(frames[:-1] + [msgpack.packb([0, text, 0, [], []])])

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()


def test_timeout_is_a_protocol_error_not_a_remote_error():
    silent = _SilentServer()
    try:
        with Client(silent.endpoint, timeout=0.2, patient=False) as client:
            with pytest.raises(ProtocolError) as info:
                client.hello()
            assert info.value.code == p.TIMEOUT and not isinstance(info.value, RemoteError)
            assert "0.2 s" in info.value.text
    finally:
        silent.close()


def test_a_late_reply_is_discarded_and_the_socket_stays_usable():
    silent = _SilentServer()
    try:
        with Client(silent.endpoint, timeout=0.3, patient=False) as client:
            with pytest.raises(ProtocolError):
                client.request(silent.endpoint, 0, "first")
            first = silent.receive()
            result = {}
            thread = threading.Thread(target=lambda: result.update(
                reply=client.request(silent.endpoint, 0, "second")))
            thread.start()
            second = silent.receive()
            silent.answer(first, "late answer to the first")
            silent.answer(second, "answer to the second")
            thread.join(5)
            assert result["reply"].text == "answer to the second"
    finally:
        silent.close()


def test_no_server_at_all_times_out():
    with Client("tcp://127.0.0.1:9", timeout=0.2) as client:
        with pytest.raises(ProtocolError) as info:
            client.lookup("/sim")
        assert info.value.code == p.TIMEOUT


def test_changing_the_timeout_applies_to_open_sockets():
    silent = _SilentServer()
    try:
        with Client(silent.endpoint, timeout=0.2, patient=False) as client:
            with pytest.raises(ProtocolError):
                client.request(silent.endpoint, 0, "first")  # opens the socket: 0.2 s timeout
            silent.receive()
            client.timeout = 5.0

            def answer_late():
                frames = silent.receive()
                time.sleep(0.6)  # well past the old 0.2 s: only the new timeout lets it through
                silent.answer(frames, "late but in time")
            thread = threading.Thread(target=answer_late)
            thread.start()
            assert client.request(silent.endpoint, 0, "second").text == "late but in time"
            thread.join(5)
    finally:
        silent.close()
