"""Every server of a run started with keys is a CurveZMQ server that serves listed keys only.

A live run bound on a non-loopback address of this machine (a veth into a namespace of the test's
own; 127.0.0.2 where that cannot be had, see tests/curvehelpers.py) is tried by clients with no
keys, with a wrong server key, with a key pair the servers do not list, and with a listed one, on
the name server, ``/sim``, a robot endpoint and the state stream, and on a replay's servers. The
outcome of each handshake is read from the client socket's monitor (ZeroMQ's own events), so a
refused client is known to be refused by the handshake, not merely slow.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time

import msgpack
import pytest
import zmq

from coopsim.client import Client
from coopsim.model.errors import ProtocolError
from coopsim.formats.files import load
from coopsim.net.security import ClientKeys, create_keys
from coopsim.replay.servers import Replay

from curvehelpers import EXPECTED, handshake, key_cases, keys, net  # noqa: F401 -- fixtures
from nethelpers import ROOT, SCENARIOS, live

HELLO = msgpack.packb([0, "", 0, [8], []])
CASES = list(EXPECTED)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module")
def run(net, keys):
    with live(load(str(SCENARIOS / "one_robot.scenario")), bind=net.host,
              keys=str(keys)) as running:
        yield running


@pytest.fixture(scope="module")
def names(run, keys):
    with Client(run.network.endpoint, keys=keys / "clients" / "alice") as client:
        return client.names()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("server", ["/nameserver", "/sim", "/robot1"])
def test_a_request_server_answers_listed_keys_only(names, keys, server, case):
    outcome, reply = handshake(names[server], key_cases(keys)[case], request=HELLO)
    assert outcome in EXPECTED[case]
    if case == "listed key":
        assert msgpack.unpackb(reply[0]) == [0, server, 0, [8], []]
    else:
        assert reply is None


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("stream", ["/sim/state", "/sim/state1"])
def test_the_state_streams_publish_to_listed_keys_only(names, keys, case, stream):
    outcome, frames = handshake(names[stream], key_cases(keys)[case], kind=zmq.SUB)
    assert outcome in EXPECTED[case]
    if case == "listed key":  # the topic frame, or the one-frame message alone
        assert frames[0] == b"state" if stream == "/sim/state" else len(frames) == 1
    else:
        assert frames is None


def test_a_refused_client_times_out_on_every_request_and_never_hangs(run):
    """After a refused handshake ZeroMQ does not reconnect: the socket has nowhere to send, and
    a send without a timeout would wait forever. Every request must end in error 9."""
    codes = []

    def ask_twice():
        with Client(run.network.endpoint, timeout=1.0, keys=None) as client:
            for _ in range(2):
                try:
                    client.hello()
                except ProtocolError as exc:
                    codes.append(exc.code)
    asker = threading.Thread(target=ask_twice, daemon=True)
    asker.start()
    asker.join(30)
    assert not asker.is_alive(), "a request hung"
    assert codes == [9, 9]


def test_every_endpoint_handed_out_is_on_the_bound_address(run, names, net):
    assert run.network.endpoint.startswith(f"tcp://{net.host}:")
    assert {"/nameserver", "/sim", "/sim/state", "/robot1", "/robot1/motors"} <= set(names)
    assert all(e.startswith(f"tcp://{net.host}:") for e in names.values()), names


def test_a_client_drives_a_robot_with_its_listed_keys(run, keys):
    with Client(run.network.endpoint, keys=keys / "clients" / "alice") as client:
        bot = client.robot("robot1")
        assert len(bot.sonar.read()) == 11
        assert client.sim().status()["robots"] == 1


def test_keys_added_or_revoked_count_from_the_next_connection(run, keys, tmp_path):
    copy = tmp_path / "bob"
    create_keys(keys, ("bob",))  # while the run is serving
    shutil.copytree(keys / "clients" / "bob", copy)
    bob = ClientKeys.load(copy)
    assert handshake(run.network.endpoint, bob, request=HELLO)[0] == "ok"
    (keys / "authorized" / "bob.key").unlink()
    assert handshake(run.network.endpoint, bob, request=HELLO) == ("denied", None)


def test_the_runs_own_key_pair_is_accepted_and_reaches_launched_controllers(net, keys,
                                                                            tmp_path):
    """A scenario's controller gets the run's own keys in its environment, unasked."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os\nfrom coopsim.client import Client\n"
        "with Client(timeout=10) as c:\n"
        "    reads = c.robot(os.environ['COOPSIM_ROBOT']).sonar.read()\n"
        "open('done.txt', 'w').write(f'{len(reads)} {os.environ[\"COOPSIM_CLIENT_KEY\"]}')\n")
    scenario = tmp_path / "probe.scenario"
    scenario.write_text((SCENARIOS / "one_robot.scenario").read_text().replace(
        "../worlds/", f"{ROOT / 'worlds'}/").replace(
        "color       40 90 230", "color 40 90 230\ncontroller python probe.py"))
    with live(load(str(scenario)), bind=net.host, keys=str(keys), controllers=True) as running:
        assert handshake(running.network.endpoint, running.network.local_keys,
                         request=HELLO)[0] == "ok"
        deadline = time.monotonic() + 30
        while not (tmp_path / "done.txt").exists():
            assert time.monotonic() < deadline, f"the controller did not finish: " \
                                                f"{running.controllers.exited()}"
            time.sleep(0.1)
        count, key_file = (tmp_path / "done.txt").read_text().split()
        assert count == "11"
        assert not key_file.startswith(str(keys))  # the run's own pair, not a listed one
    assert not (tmp_path / key_file).exists()  # its private folder went with the run


@pytest.mark.parametrize("case", CASES)
def test_a_replays_servers_answer_listed_keys_only(net, keys, case):
    with Replay(str(ROOT / "recordings" / "sample.mcap"), bind=net.host, port=0, paused=True,
                keys=str(keys)) as replay:
        with Client(replay.endpoint, keys=keys / "clients" / "alice") as client:
            names = client.names()
        assert set(names) == {"/nameserver", "/sim", "/sim/state", "/sim/state1", "/playback"}
        for name, endpoint in names.items():
            if name.startswith("/sim/state"):
                outcome, reply = handshake(endpoint, key_cases(keys)[case], kind=zmq.SUB)
            else:
                outcome, reply = handshake(endpoint, key_cases(keys)[case], request=HELLO)
            assert outcome in EXPECTED[case], name
            assert (reply is not None) == (case == "listed key"), name


def test_a_run_bound_to_every_address_advertises_its_primary_address(net, keys, tmp_path):
    """``coopsim run --bind 0.0.0.0`` in the other namespace (as on another machine) hands out
    its veth address, its default route's; a client here reaches it there with listed keys."""
    if net.netns is None:
        pytest.skip("no network namespace could be made here (needs root and ip netns)")
    proc = subprocess.Popen(net.in_netns(
        sys.executable, "-m", "coopsim", "run", str(SCENARIOS / "one_robot.scenario"),
        "--headless", "--port", "0", "--no-controllers", "--bind", "0.0.0.0", "--keys",
        str(keys)), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert line.startswith(f"name server: tcp://{net.peer}:"), line
        endpoint = line.split()[2]
        with Client(endpoint, timeout=10, keys=keys / "clients" / "alice") as client:
            assert all(e.startswith(f"tcp://{net.peer}:") for e in client.names().values())
            assert len(client.robot("robot1").sonar.read()) == 11
        outcome, reply = handshake(endpoint, None, request=HELLO)
        assert outcome in EXPECTED["no keys"] and reply is None
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_client_in_another_namespace_reaches_the_run_with_env_keys(run, net, keys):
    """A client process on the far end of the veth, keys given as $COOPSIM_SERVER_KEY and
    $COOPSIM_CLIENT_KEY files, as a launched controller gets them."""
    if net.netns is None:
        pytest.skip("no network namespace could be made here (needs root and ip netns)")
    alice = keys / "clients" / "alice"
    code = ("from coopsim.client import Client\n"
            "with Client(timeout=10) as c: print(c.sim().status()['robots'])\n")
    env = {"COOPSIM_NAMESERVER": run.network.endpoint, "PATH": "/usr/bin:/bin",
           "COOPSIM_SERVER_KEY": str(alice / "server.key"),
           "COOPSIM_CLIENT_KEY": str(alice / "client.key_secret")}
    done = subprocess.run(net.in_netns(sys.executable, "-c", code), env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


def test_a_listed_key_is_its_owners_identity(run, keys, tmp_path):
    """With keys, the Curve key names the owner: alice's second connection drives her robot,
    carol is refused with error 11 naming alice's key, the run's own pair is per connection."""
    from coopsim.client import RobotOwned

    create_keys(keys, ("carol",))
    with Client(run.network.endpoint, keys=keys / "clients" / "alice") as alice, \
            Client(run.network.endpoint, keys=keys / "clients" / "alice") as alice2, \
            Client(run.network.endpoint, keys=keys / "clients" / "carol") as carol:
        assert alice.robot("robot1").claim().startswith("claimed by client key 'alice' (")
        alice2.robot("robot1").motors.stop()  # the same key: the same owner
        with pytest.raises(RobotOwned) as info:
            carol.robot("robot1").motors.stop()
        assert info.value.text.startswith("robot1 is owned by client key 'alice' ("), info.value
        with Client(run.network.endpoint, keys=run.network.local_keys) as own:
            with pytest.raises(RobotOwned):
                own.robot("robot1").motors.stop()
            assert "(taken from client key 'alice'" in own.robot("robot1").claim(force=True)
            with Client(run.network.endpoint, keys=run.network.local_keys) as own2:
                with pytest.raises(RobotOwned) as info:  # the run's pair: one owner per connection
                    own2.robot("robot1").motors.stop()
                assert "the connection from" in info.value.text
            assert own.robot("robot1").release()
