"""The Python client: a documented helper for every /sim and /playback command (checked against
the declarations docs/reference/protocol.md is generated from), each one called against a real
run or replay, and a Client that keeps working after a request over the size limit went
unanswered."""

from __future__ import annotations

from pathlib import Path

import pytest

from coopsim.client import Client, Playback, RemoteError, Sim
from coopsim.model.errors import ProtocolError
from coopsim.net import protocol as p
from coopsim.replay.servers import Replay

from helpers import box, robot, scenario, target
from nethelpers import live
from rechelpers import record

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("table, cls", [(p.SIM_COMMANDS, Sim), (p.PLAYBACK_COMMANDS, Playback)])
def test_every_documented_command_has_a_documented_helper(table, cls):
    """The tables docs/reference/protocol.md is generated from: a helper for each command."""
    documented = {c.id: c.name for c in table.values()}
    for name in documented.values():
        helper = getattr(cls, name, None)
        assert callable(helper), f"{cls.__name__} has no {name}()"
        assert helper.__doc__ and len(helper.__doc__.split()) >= 4, f"{name}() is undocumented"


class _Counting(Client):
    """A Client that notes the command id of every request."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[int] = []

    def request(self, endpoint, command, text="", params=(), data=()):
        self.sent.append(command)
        return super().request(endpoint, command, text, params, data)


def _spec():
    return scenario(robots=[robot("r1", -2.0, 0.0)], objects=[box("wall", 3.0, 3.0)],
                    targets=[target("red", 2.0, -2.0)])


def _time_and_mode(sim: Sim) -> None:
    assert sim.hello() == (p.PROTOCOL_VERSION, "/sim")
    assert set(sim.status()) >= {"step", "paused", "mode", "time", "dt", "lease"}
    assert sim.pause()["paused"] == 1
    step = sim.status()["step"]
    assert sim.step(2)["step"] == step + 2
    assert sim.resume()["paused"] == 0
    assert sim.pause()["paused"] == 1
    assert sim.set_mode("realtime")["mode"] == "realtime"
    assert sim.set_mode("lockstep")["mode_index"] == 1
    assert sim.set_speed(0)["speed"] == 0 and sim.set_speed(1)["speed"] == 1
    assert sim.set_dt(0.02)["dt"] == 0.02
    assert sim.set_lease(1.5)["lease"] == 1.5


def _world_changes(sim: Sim) -> None:
    assert list(sim.list_robots()) == ["r1"] and sim.robots() == sim.list_robots()
    assert list(sim.list_objects()) == ["wall"]
    assert sim.list_targets() == [("red", (2.0, -2.0, 0.0))]
    crate = sim.insert_object("crate", "box", (0.5, 0.4, 0.3), (1.0, 1.0, 0.15), 0.3, 1.0,
                              color=(200, 0, 0))["crate"]
    assert crate == pytest.approx((1.0, 1.0, 0.3), abs=1e-6)
    moved = sim.update_object("crate", "cylinder", (0.4, 0.4, 0.3), (-1.0, 2.0, 0.15))
    assert moved["crate"][:2] == pytest.approx((-1.0, 2.0), abs=1e-6)
    assert "crate" not in sim.remove_object("crate")
    assert sim.insert_robot("r2", "single", (2.0, 2.0, 0.0), 1.0)["r2"] == pytest.approx(
        (2.0, 2.0, 1.0), abs=1e-6)
    assert sim.update_robot("r2", "single", (-3.0, 3.0, 0.0))["r2"][:2] == pytest.approx(
        (-3.0, 3.0), abs=1e-6)
    assert list(sim.remove_robot("r2")) == ["r1"]
    assert sim.insert_target("blue", (1.0, 2.0, 0.0)) == 1
    assert sim.update_target(1, "green", (1.0, 2.5, 0.0))[1] == ("green", (1.0, 2.5, 0.0))
    assert sim.remove_target(1) == [("red", (2.0, -2.0, 0.0))]


def _robots_and_files(sim: Sim, tmp_path: Path) -> None:
    assert sim.state()["robots"][0]["name"] == "r1"
    assert sim.detach("r1") is False
    with pytest.raises(RemoteError) as info:
        sim.detach("nobody")
    assert info.value.code == p.UNKNOWN_NAME
    assert sim.set_param("r1", "sonar", "noise", 0.01) == 0.01
    with pytest.raises(RemoteError) as info:  # a world without meshes (one with them:
        sim.mesh("MESH_1")  # tests/viewer/test_view3d_meshes.py)
    assert info.value.code == p.UNKNOWN_NAME
    path = tmp_path / "on_demand.mcap"
    assert sim.record(True, str(path)) == str(path)
    assert sim.state()["recording"] == str(path)
    assert sim.record(False) == str(path) and sim.state()["recording"] == ""
    assert sim.load(str(ROOT / "scenarios" / "one_robot.scenario"))["robots"] == 1
    assert list(sim.robots()) == ["robot1"]
    assert sim.reset()["step"] == 0


def test_every_sim_helper_against_a_live_run(tmp_path):
    # record() goes to tmp_path: a data folder of the run (/sim record is confined to them)
    with live(_spec(), paused=True, data_dirs=(str(tmp_path),)) as run, \
            _Counting(run.network.endpoint) as client:
        sim = client.sim()
        _time_and_mode(sim)
        _world_changes(sim)
        _robots_and_files(sim, tmp_path)
        assert set(client.sent) >= set(p.SIM_COMMANDS), \
            f"not called: {sorted(set(p.SIM_COMMANDS) - set(client.sent))}"


def test_every_playback_helper_against_a_replay(tmp_path):
    path = tmp_path / "short.mcap"
    record(path, 60)
    with Replay(str(path), port=0, paused=True) as rp, _Counting(rp.endpoint) as client:
        pb = client.playback()
        assert pb.hello() == (p.PROTOCOL_VERSION, "/playback")
        first = pb.status()
        assert first["playing"] is False and first["count"] == 61
        assert pb.play()["playing"] is True
        assert pb.pause()["playing"] is False
        assert pb.seek(0.5)["position"] == pytest.approx(0.5, abs=0.021)
        assert pb.step(-3)["index"] == pb.seek(0.5)["index"] - 3
        assert pb.set_speed(-2.0)["speed"] == -2.0
        with pytest.raises(RemoteError) as info:
            pb.set_speed(5000)
        assert info.value.code == p.OUT_OF_RANGE
        assert set(client.sent) >= set(p.PLAYBACK_COMMANDS)


@pytest.mark.parametrize("server", ["/sim", "/r1"])
def test_the_client_recovers_after_an_oversize_request(server):
    """A request over 65,536 bytes is dropped by the server with its connection (or refused);
    the same Client, the same socket, then works (REQ_RELAXED and REQ_CORRELATE)."""
    with live(_spec(), paused=True) as run, Client(run.network.endpoint, timeout=1.0) as client:
        endpoint = client.lookup(server)
        with pytest.raises(ProtocolError) as info:
            client.request(endpoint, 1, "x" * (p.MAX_MESSAGE_BYTES + 10))
        assert info.value.code in (p.TIMEOUT, p.BAD_MESSAGE)
        client.timeout = 5.0
        for _ in range(3):
            assert client.request(endpoint, 0).text == server
        assert client.sim().status()["robots"] == 1
