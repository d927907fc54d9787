"""The wire protocol matches docs/protocol.md byte for byte where first clients tripped:

* a request that decodes but has fields of the wrong type is answered error 1 with ITS command
  id, at every kind of server; -1 only when the command itself cannot be read;
* ``/sim detach`` (24) of a name that is no robot is error 5, of a robot that was not attached
  ``[0, "was not attached", 24, [0]]``;
* robot hello, param get/set texts, and a request whose error code is not 0 (served as if 0);
* the start-up lines of ``coopsim run`` and a clean stop on SIGTERM.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
import zmq

from coopsim.net import protocol as p
from coopsim.replay.servers import Replay

from helpers import robot, scenario, target
from nethelpers import Peer, live
from rechelpers import record

ROOT = Path(__file__).resolve().parents[2]

# (what is wrong, the request with command 1 or 0 in place of CMD): decodes, wrong field type
WRONG_TYPES = [
    ("params not integers", lambda cmd: [0, "", cmd, ["a"], []]),
    ("data not numbers", lambda cmd: [0, "", cmd, [], ["x"]]),
    ("text not a string", lambda cmd: [0, 5, cmd, [], []]),
    ("error code not an integer", lambda cmd: ["0", "", cmd, [], []]),
    ("params not an array", lambda cmd: [0, "", cmd, 3, []]),
]
# the command id itself cannot be read: -1
UNREADABLE = [b"\xc1", msgpack.packb([0, "", "1", [], []]), msgpack.packb([0, "", 1.5, [], []]),
              msgpack.packb([0, "", 1, []]), msgpack.packb({"command": 1}),
              msgpack.packb([0, "", True, [], []])]


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Endpoints of every kind of server: name server, /sim, a robot, /playback, and the
    gateway's address; plus the live run's name server."""
    path = tmp_path_factory.mktemp("polish") / "short.mcap"
    record(path, 20)
    spec = scenario(robots=[robot("r1", -1.0, 0.0)], targets=[target("red", 2.0, 2.0)])
    with live(spec, paused=True, json_port=0) as run, \
            Replay(str(path), port=0, paused=True) as rp:
        names = Peer(run.network.endpoint)
        lookup = lambda ns, name: ns.ok(1, name)[1]  # noqa: E731
        ends = {"nameserver": run.network.endpoint, "sim": lookup(names, "/sim"),
                "robot": lookup(names, "/r1"),
                "playback": lookup(Peer(rp.endpoint), "/playback")}
        yield ends, run.gateway.address


KINDS = ("nameserver", "sim", "robot", "playback")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", [c[1] for c in WRONG_TYPES], ids=[c[0] for c in WRONG_TYPES])
def test_wrong_field_types_echo_the_command(servers, kind, case):
    peer = Peer(servers[0][kind])
    for command in (1, 0, 99999):  # a real command, hello, and one this server lacks
        error, text, echoed, params, data = peer.raw(msgpack.packb(case(command)))
        assert (error, echoed, params, data) == (p.BAD_MESSAGE, command, [], []), text
        assert text
    peer.close()


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreadable_command_is_minus_one(servers, kind):
    peer = Peer(servers[0][kind])
    for frame in UNREADABLE:
        error, text, command, *_ = peer.raw(frame)
        assert (error, command) == (p.BAD_MESSAGE, -1), (frame, text)
    assert peer.ok(0)[2] == 0  # still served
    peer.close()


def _gateway(address, line: bytes) -> list:
    with socket.create_connection(address, timeout=30) as sock, sock.makefile("rb") as f:
        sock.sendall(line + b"\n")
        return json.loads(f.readline())


@pytest.mark.parametrize("line, command", [
    (b'["/sim", 0, "", 7, ["a"], []]', 7),
    (b'["/r1", 0, "", 200, [], ["x"]]', 200),
    (b'["/nameserver", 0, 5, 1, [], []]', 1),
    (b'["/sim", 0, "", 7, [], [123456789012345678901234567890]]', 7),
    (b'["/sim", 0, "", "7", [], []]', -1),
    (b'["/sim", 0, "", 7, []]', -1),
])
def test_gateway_echoes_the_command_of_a_wrongly_typed_line(servers, line, command):
    reply = _gateway(servers[1], line)
    assert reply[0] == p.BAD_MESSAGE and reply[2] == command, reply


def test_sim_detach_unknown_robot_is_error_5(servers):
    sim = Peer(servers[0]["sim"])
    error, text, command, params, data = sim.ask(24, "nobody")
    assert (error, command, params, data) == (p.UNKNOWN_NAME, 24, [], []) and "nobody" in text
    assert sim.ok(24, "r1")[1:4] == ["was not attached", 24, [0]]
    sim.close()


def test_sim_detach_an_attached_robot(servers):
    ends = servers[0]
    bot, sim = Peer(ends["robot"], zmq.DEALER), Peer(ends["sim"])
    bot.send_frames([msgpack.packb([0, "", 100, [], [0.0, 0.0]])])  # attaches (lockstep)
    sim.ok(4, params=[1])  # the step that uses it, so the reply comes
    bot.receive()
    assert sim.ok(24, "r1")[1:4] == ["detached", 24, [1]]
    bot.close()
    sim.close()


def test_robot_hello_and_param_texts(servers):
    bot = Peer(servers[0]["robot"])
    assert bot.ask(0) == [0, "/r1", 0, [14], []]
    assert bot.ask(0, params=[14]) == [0, "/r1", 0, [14], []]
    assert bot.ask(0, params=[13]) == [0, "/r1", 0, [13], []]  # protocol 14 only added
    assert bot.ask(0, params=[12]) == [0, "/r1", 0, [12], []]  # protocol 13 only added
    assert bot.ask(0, params=[11]) == [0, "/r1", 0, [11], []]  # protocol 12 only added
    assert bot.ask(0, params=[10]) == [0, "/r1", 0, [10], []]  # protocol 11 only added
    assert bot.ask(0, params=[9]) == [0, "/r1", 0, [9], []]  # protocol 10 only added
    assert bot.ask(0, params=[8]) == [0, "/r1", 0, [8], []]  # protocol 9 only added a key
    for old in (7, 6, 5, 4, 3, 2):  # protocol 8 changed the stream's columns: none is served
        assert bot.ask(0, params=[old])[0] == 7
    assert bot.ask(0, params=[1])[0] == p.VERSION_MISMATCH
    assert bot.ask(12, "sonar.noise")[:4] == [0, "sonar.noise", 12, []]
    assert bot.ask(13, "sonar.noise", data=[0.0])[:5] == [0, "sonar.noise", 13, [], [0.0]]
    bot.close()


@pytest.mark.parametrize("kind, request_", [
    ("nameserver", [7, "/sim", 1, [], []]),
    ("sim", [3, "", 1, [], []]),
    ("robot", [1, "", 500, [], []]),
    ("playback", [-4, "", 1, [], []]),
])
def test_a_request_with_a_nonzero_error_code_is_served_as_if_it_were_0(servers, kind,
                                                                       request_):
    peer = Peer(servers[0][kind])
    reply = peer.raw(msgpack.packb(request_))
    request_[0] = 0
    plain = peer.raw(msgpack.packb(request_))
    assert reply[0] == 0 and reply[2] == request_[2], reply
    assert reply[3] == plain[3] and (kind == "sim" or reply[4] == plain[4])  # sim: wall time
    peer.close()


@pytest.mark.slow
def test_start_up_lines_and_sigterm_stop_cleanly(tmp_path):
    path = tmp_path / "term.mcap"
    proc = subprocess.Popen(
        [sys.executable, "-m", "coopsim", "run", "--headless", "--port", "0", "--json-port", "0",
         "--no-controllers", "--record", str(path), "scenarios/one_robot.scenario"], cwd=ROOT,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stderr.readline() for _ in range(4)]
        assert lines[0] == f"recording: {path}\n", lines
        assert re.fullmatch(r"json gateway: 127\.0\.0\.1:\d+\n", lines[1]), lines
        assert re.fullmatch(r"name server: tcp://127\.0\.0\.1:\d+   \(Ctrl-C stops\)\n",
                            lines[2]), lines
        assert lines[3] == ("step: composed (motors, bumper, compass, gps, odometry, sonar, "
                            "target)\n"), lines
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "sim time" in out and "Traceback" not in err
    assert re.search(rf"recording: \d+ steps written to {re.escape(str(path))}", err), err
