"""``coopsim teleop ROBOT`` driven through a pty (a real terminal in raw mode, a real process,
real sockets): teleop_twist_keyboard's keys drive the robot, the dead-man stops it, Ctrl+C
gives it back to the controller it was taken from, which was told with error 13 meanwhile.
Also the client session on a holonomic robot, and the refusals."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coopsim.client import Client
from coopsim.client.teleop import Teleop
from coopsim.model.errors import ProtocolError
from coopsim.model.teleop import Intent

from helpers import robot, scenario
from nethelpers import Peer, live, lookup, wait_until

ROOT = Path(__file__).resolve().parents[2]
MOTORS_READ, SPEEDS, VELOCITY_READ = 103, 100, 903


@pytest.fixture(scope="module")
def run():
    world = scenario(robots=[robot("r1", -2.0, 0.0), robot("h1", 2.0, 0.0, type="holonomic")],
                     mode="realtime", dt=0.01, seed=5)
    with live(world) as run:
        yield run


def _commanded(peer: Peer) -> tuple[float, float]:
    data = peer.ok(MOTORS_READ)[4]
    return data[0], data[1]


@pytest.mark.slow
def test_terminal_keys_drive_and_the_robot_goes_back(run):
    endpoint = lookup(run.network.endpoint, "/r1")
    controller, reader = Peer(endpoint), Peer(endpoint)
    controller.ok(SPEEDS, data=[0.05, 0.05])
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "teleop", "r1", "--nameserver",
                             run.network.endpoint, "--speed", "0.3"], stdin=slave,
                            stdout=slave, stderr=slave, env=env, cwd=ROOT)
    os.close(slave)
    out = bytearray()
    try:
        def said(text: bytes) -> bool:
            while True:
                try:
                    import select
                    if not select.select([master], [], [], 0.05)[0]:
                        return text in out
                    out.extend(os.read(master, 4096))
                except OSError:
                    return text in out

        wait_until(lambda: said(b"currently:"), timeout=60)
        assert b"taken from the connection from" in out
        refused = controller.ask(SPEEDS, data=[0.05, 0.05])
        assert refused[0] == 13 and "is driven by teleop" in refused[1]

        def held(key: bytes, want) -> bool:  # a held key repeats, as a keyboard's auto-repeat
            os.write(master, key)
            return want(_commanded(reader))

        wait_until(lambda: held(b"i", lambda c: c[0] > 0.29 and c[1] > 0.29), every=0.1)
        wait_until(lambda: held(b"j", lambda c: c[1] > 0 > c[0]), every=0.1)  # turns left
        wait_until(lambda: _commanded(reader) == (0.0, 0.0), every=0.05)  # the dead-man
        os.write(master, b"q")
        wait_until(lambda: said(b"speed 0.33"))
        os.write(master, b"\x03")
        assert proc.wait(30) == 0, out.decode(errors="replace")
        said(b"released")
        assert b"released r1; the connection from" in out, out.decode(errors="replace")
        assert controller.ok(SPEEDS, data=[0.05, 0.05])[0] == 0, "given back, no claim"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        controller.close()
        reader.close()


@pytest.mark.slow
def test_not_a_terminal_and_no_robot_exit_2(run):
    base = [sys.executable, "-m", "coopsim", "teleop"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    piped = subprocess.run([*base, "r1", "--nameserver", run.network.endpoint],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env)
    assert piped.returncode == 2 and "stdin is not one" in piped.stderr, piped.stderr
    assert "Traceback" not in piped.stderr
    neither = subprocess.run([*base, "--nameserver", run.network.endpoint],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env)
    assert neither.returncode == 2 and "name one of them" in neither.stderr, neither.stderr
    master, slave = pty.openpty()  # a squad no shared control steers: refused, exit 2
    group = subprocess.run([*base, "--group", "nosquad", "--nameserver", run.network.endpoint],
                           stdin=slave, capture_output=True, text=True, env=env, timeout=60)
    os.close(slave)
    os.close(master)
    assert group.returncode == 2 and "Traceback" not in group.stderr, group.stderr
    assert "error" in group.stderr, group.stderr
    with Client(run.network.endpoint) as client, pytest.raises(ProtocolError) as missing:
        Teleop(client, "nobody")
    assert missing.value.code == 5


def test_a_holonomic_robot_moves_sideways_in_its_own_frame(run):
    with Client(run.network.endpoint) as client:
        session = Teleop(client, "h1")
        assert session.kind == "planar"
        session.take()
        session.apply(Intent(left=1.0))  # heading 0: body left is world +y
        reader = Peer(lookup(run.network.endpoint, "/h1"))
        wait_until(lambda: reader.ok(VELOCITY_READ)[4][1] > 0.1)
        vx = reader.ok(VELOCITY_READ)[4][0]
        assert abs(vx) < 1e-6
        session.close()
        assert reader.ok(SPEEDS - 100 + 902)[0] == 0, "released: free for anyone"
        reader.close()


def test_a_python_controller_waits_while_a_person_drives(run, capfd):
    import threading

    with Client(run.network.endpoint) as mine, Client(run.network.endpoint) as person:
        bot = mine.robot("r1")
        bot.motors.set_speeds(0.1, 0.1)
        session = Teleop(person, "r1")
        session.take()
        done = threading.Event()
        worker = threading.Thread(target=lambda: (bot.motors.set_speeds(0.2, 0.2), done.set()))
        worker.start()
        wait_until(lambda: "is driven by teleop" in capfd.readouterr().err)
        assert not done.is_set(), "it waits while the person drives"
        session.close()  # given back: the waiting command goes through
        worker.join(10)
        assert done.is_set()
        bot.wait_while_teleoperated = False
        session.take()
        with pytest.raises(ProtocolError) as told:
            bot.motors.stop()
        assert told.value.code == 13
        session.close()
