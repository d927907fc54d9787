"""``--ports LOW-HIGH``: every port a run binds (each endpoint the name
server lists, the name server itself with ``--port 0``, the JSON-lines gateway with
``--json-port 0``, robots inserted later) lies in the range a lab's firewall opens, and a range
too small for the world is refused at start-up with exit status 2 and one sentence."""

from __future__ import annotations

import os

import pytest

from coopsim.app.run import Run, RunOptions
from coopsim.client import Client
from coopsim.net import ports

from helpers import robot, scenario
from nethelpers import Peer, lookup
from rechelpers import run_cli, start_cli, stop, wait_endpoint

LIST = 2
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _span(width: int) -> tuple[int, int]:
    """A range below the OS's ephemeral ports, its place by process id (parallel runs differ)."""
    low = 20000 + (os.getpid() % 200) * 50
    return low, low + width - 1


def _port(endpoint: str) -> int:
    return int(endpoint.rsplit(":", 1)[1])


def test_every_endpoint_the_name_server_lists_is_in_the_range():
    low, high = span = _span(50)
    spec = scenario(robots=[robot("a"), robot("b", 2.0, 0.0)], mode="realtime")
    options = RunOptions(port=0, controllers=False, json_port=0, ports=span)
    with Run(spec, options) as run:
        run.start()
        assert low <= _port(run.network.endpoint) <= high
        assert low <= run.gateway.address[1] <= high
        peer = Peer(run.network.endpoint)
        try:
            text = peer.ok(LIST, "", params=(1,))[1]
            listed = [line.split() for line in text.splitlines()]
            names = {name for name, *_ in listed}
            assert {"/sim", "/sim/state", "/a", "/b", "/squads", "/external"} <= names, names
            outside = [(n, e) for n, e, *_ in listed if not low <= _port(e) <= high]
            assert outside == []
        finally:
            peer.close()
        with Client(run.network.endpoint) as client:  # a robot inserted later: in it too
            client.sim().insert_robot("c", "single", (-2.0, 0.0, 0.0))
        assert low <= _port(lookup(run.network.endpoint, "/c")) <= high
    assert ports.current() is None  # the range ends with the run


@pytest.mark.slow
def test_a_range_too_small_for_the_world_is_refused_with_exit_2_and_one_sentence():
    low, high = _span(3)
    out = run_cli("run", "--headless", "--port", "0", "--ports", f"{low}-{high}",
                  "--no-controllers", "--duration", "1",
                  os.path.join(ROOT, "scenarios", "one_robot.scenario"), timeout=120)
    assert out.returncode == 2, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith(f"coopsim: the port range {low}-{high} (--ports, $COOPSIM_PORTS) is "
                           "too small for this world"), out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_a_replay_binds_in_the_range_too_given_by_the_environment(monkeypatch):
    low, high = _span(20)
    monkeypatch.setenv(ports.ENV, f"{low}-{high}")  # the child's environment
    proc = start_cli("replay", os.path.join(ROOT, "recordings", "sample.mcap"), "--headless",
                     "--port", "0")
    try:
        endpoint = wait_endpoint(proc, 120.0)  # a loaded machine starts a replay slowly
        peer = Peer(endpoint)
        try:
            listed = [line.split() for line in peer.ok(LIST, "")[1].splitlines()]
        finally:
            peer.close()
        assert {"/sim", "/playback"} <= {name for name, _ in listed}
        assert all(low <= _port(e) <= high for _, e in [("ns", endpoint), *listed]), listed
    finally:
        stop(proc)


@pytest.mark.parametrize("text", ["20000", "20100-20000", "0-10", "a-b", "20000-70000"])
def test_a_malformed_range_is_a_usage_error(text):
    with pytest.raises(ValueError, match="LOW-HIGH"):
        ports.parse(text)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("width", [1, 2, 4])
def test_a_start_up_refused_for_the_range_closes_every_socket_it_bound(width):
    # the servers bound before the range ran out stayed open with their context: its term()
    # (at exit, or wherever the collector reached it) then waited for them for ever
    import threading

    from coopsim.net.network import Network

    spec = scenario(robots=[robot("a")], mode="realtime")
    with Run(spec, RunOptions(port=0, controllers=False)) as run:
        before = _open_descriptors()
        refused: list = []

        def start() -> None:
            with ports.confined(_span(width)):
                try:
                    Network(run.stepper, port=0)
                except ports.PortRangeError as exc:
                    refused.append(exc)

        worker = threading.Thread(target=start, daemon=True)
        worker.start()
        worker.join(120.0)  # a hang guard, not a speed limit: term() never returns otherwise
        assert not worker.is_alive(), "the refused start-up hung closing its context"
        assert refused and "too small" in str(refused[0])
        assert _open_descriptors() == before
