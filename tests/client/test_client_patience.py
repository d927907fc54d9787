"""The Python client waits for a reply as long as the simulator is there: through a simulator
process stopped for longer than the client's timeout (SIGSTOP, as a debugger or a suspended
laptop does) a lockstep step and a read simply come late; a simulator that died fails the
request at once with error 9 saying so."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from coopsim.client import Client
from coopsim.model.errors import ProtocolError
from coopsim.net import protocol as p

from nethelpers import simulator_process

TIMEOUT = 0.3  # s: the client's timeout, far below the stop
STOPPED = 2.0  # s the simulator stays stopped

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture
def simulator():
    with simulator_process() as running:
        yield running


def _stop(proc) -> None:
    """SIGSTOP ``proc`` and wait until the kernel shows it stopped (state T): the signal is
    delivered asynchronously, and on a loaded machine a just-continued process may otherwise
    still answer a request sent right after the kill."""
    os.kill(proc.pid, signal.SIGSTOP)
    stat = f"/proc/{proc.pid}/stat"
    while open(stat).read().rpartition(")")[2].split()[0] not in ("T", "t"):
        threading.Event().wait(0.01)


def _stop_for(proc, seconds: float, continued: threading.Event) -> threading.Thread:
    _stop(proc)

    def resume():
        threading.Event().wait(seconds)
        continued.set()
        os.kill(proc.pid, signal.SIGCONT)
    thread = threading.Thread(target=resume)
    thread.start()
    return thread


def test_requests_wait_through_a_stopped_simulator(simulator):
    proc, endpoint = simulator
    with Client(endpoint, timeout=TIMEOUT) as client:
        bot = client.robot("robot1")
        first = bot.motors.set_speeds(0.1, 0.1).step
        continued = threading.Event()
        thread = _stop_for(proc, STOPPED, continued)
        step = bot.motors.set_speeds(0.1, 0.1).step  # waits for the step, not for the timeout
        assert continued.is_set(), "the reply came from a stopped process?"
        assert step == first + 1
        thread.join()
        continued = threading.Event()
        thread = _stop_for(proc, STOPPED, continued)
        assert len(bot.gps.read()) == 2 and continued.is_set()
        thread.join()


def test_a_dead_simulator_fails_the_request_at_once_with_error_9(simulator):
    proc, endpoint = simulator
    with Client(endpoint, timeout=TIMEOUT) as client:
        bot = client.robot("robot1")
        bot.motors.set_speeds(0.1, 0.1)
        _stop(proc)  # stopped before the request, not while it is answered
        killer = threading.Timer(1.0, proc.kill)  # dies while the request waits
        killer.start()
        with pytest.raises(ProtocolError) as info:
            bot.motors.set_speeds(0.1, 0.1)
        killer.join()
        assert info.value.code == p.TIMEOUT
        assert "its connection closed (the server stopped or crashed)" in info.value.text


def test_an_impatient_client_keeps_its_fixed_deadline(simulator):
    proc, endpoint = simulator
    with Client(endpoint, timeout=TIMEOUT, patient=False) as client:
        bot = client.robot("robot1")
        _stop(proc)  # stopped before the read, not while it is answered
        try:
            with pytest.raises(ProtocolError) as info:
                bot.gps.read()
            assert info.value.code == p.TIMEOUT and f"within {TIMEOUT:g} s" in info.value.text
        finally:
            os.kill(proc.pid, signal.SIGCONT)


def test_the_gateway_waits_through_a_stopped_simulator_too(simulator):
    import json
    import socket

    from coopsim.net.gateway import Gateway

    proc, endpoint = simulator
    gateway = Gateway(endpoint, timeout=TIMEOUT).start()
    try:
        with socket.create_connection(gateway.address, timeout=60) as sock:
            lines = sock.makefile("rb")

            def ask(line):
                sock.sendall(json.dumps(line).encode() + b"\n")
                return json.loads(lines.readline())
            assert ask(["/robot1/motors", 0, "", 100, [], [0.1, 0.1]])[1] == "lockstep"
            continued = threading.Event()
            thread = _stop_for(proc, STOPPED, continued)
            reply = ask(["/robot1/motors", 0, "", 100, [], [0.1, 0.1]])
            assert reply[:2] == [0, "lockstep"] and continued.is_set(), reply
            thread.join()
            _stop(proc)
            threading.Timer(1.0, proc.kill).start()
            error, text, *_ = ask(["/robot1/motors", 0, "", 100, [], [0.1, 0.1]])
            assert error == p.TIMEOUT and "its connection closed" in text, text
    finally:
        gateway.close()
