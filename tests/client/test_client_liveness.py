"""The Python client's control loop notices a simulation that is gone and ends the controller with
one line, even a controller that rides out every error: by the simulator's process id
(``COOPSIM_SIM_PID``, set for launched controllers) or, without it, by requests that time out
while the name server does not answer either."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from helpers import robot, scenario
from nethelpers import ROOT, live, wait_until

STUBBORN = textwrap.dedent("""\
    import os
    from coopsim.client import Client
    from coopsim.model.errors import ProtocolError

    with Client(timeout=0.3) as client:
        bot = client.robot(os.environ["COOPSIM_ROBOT"])
        print("looping", flush=True)
        for _ in bot.loop(period=0.02):
            try:
                bot.motors.set_speeds(0.1, 0.1)
            except ProtocolError:
                pass  # rides out a slow simulation, and so would loop forever without a check
    """)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _controller(tmp_path, nameserver: str, **env) -> subprocess.Popen:
    script = tmp_path / "stubborn.py"
    script.write_text(STUBBORN)
    full = {k: v for k, v in os.environ.items() if k != "COOPSIM_SIM_PID"}
    full.update(COOPSIM_NAMESERVER=nameserver, COOPSIM_ROBOT="r1", PYTHONPATH=str(ROOT), **env)
    proc = subprocess.Popen([sys.executable, str(script)], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "looping"
    return proc


def _ends(proc: subprocess.Popen, timeout: float = 20.0) -> tuple[int, str]:
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("the controller went on after its simulation was gone") from None
    return code, proc.stderr.read()


def test_a_controller_ends_when_requests_time_out_and_the_name_server_is_gone(tmp_path):
    with live(scenario(robots=[robot("r1")], mode="realtime")) as run:
        nameserver = run.network.endpoint
        proc = _controller(tmp_path, nameserver)
        wait_until(lambda: run.stepper.stats().steps > 10)
    code, err = _ends(proc)
    assert code == 1
    assert err.strip() == (f"coopsim: the simulation at {nameserver} is gone (3 requests in a "
                           "row got no reply and the name server does not answer); the "
                           "controller of r1 stops")


def test_a_launched_controller_ends_when_the_simulator_process_is_gone(tmp_path):
    simulator = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        with live(scenario(robots=[robot("r1")], mode="realtime")) as run:
            proc = _controller(tmp_path, run.network.endpoint,
                               COOPSIM_SIM_PID=str(simulator.pid))
            simulator.kill()
            simulator.wait()
            code, err = _ends(proc)
            assert run.stepper.running  # the simulation this client talked to still answers
    finally:
        simulator.kill()
        simulator.wait()
    assert (code, err.strip()) == (1, f"coopsim: the simulation (pid {simulator.pid}) is gone; "
                                      "the controller of r1 stops")
