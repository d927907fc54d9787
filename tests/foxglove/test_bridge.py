"""The live Foxglove bridge of a real run and of a replay, through a real WebSocket client: the
channels, decoded messages whose poses match /sim, playback control from the client, and
clients that misbehave without touching the run."""

from __future__ import annotations

import math
import re
import socket
import time

import pytest

from fxclient import ENDED, PAUSED, PLAYING, FoxgloveClient
from rechelpers import RECDATA, run_cli, start_cli, stop

from coopsim.app.run import Run, RunOptions, load_scenario_or_world
from coopsim.client import Client
from coopsim.model.errors import CoopsimError
from coopsim.recording.reader import Recording

SCENARIO = RECDATA / "foxglove.scenario"
TOPICS = {"/scene/world", "/scene/bodies", "/tf", "/robots/alpha/pose", "/robots/beta/pose",
          "/sim/state", "/metrics/monitors/gap", "/metrics/monitors/fast"}


def _have(*topics, count: int = 1):
    return lambda got: all(len(got.get(t, ())) >= count for t in topics)


@pytest.fixture(scope="module")
def live():
    """A realtime run of two wandering robots with the bridge at 20 Hz on a free port."""
    options = RunOptions(mode="realtime", port=0, controllers=False, foxglove=0,
                         foxglove_rate=20.0)
    with Run(load_scenario_or_world(SCENARIO), options) as run:
        run.start()
        yield run


def test_channels_and_decoded_messages_of_a_live_run(live):
    with FoxgloveClient(live.foxglove.url) as client:
        got = client.receive(_have(*TOPICS, count=3))
        schemas = {c["topic"]: c["schemaName"] for c in client.channels.values()}
    assert schemas["/scene/bodies"] == "foxglove.SceneUpdate"
    assert schemas["/tf"] == "foxglove.FrameTransforms"
    assert schemas["/robots/alpha/pose"] == "foxglove.PoseInFrame"
    assert schemas["/events"] == "foxglove.Log"
    world = got["/scene/world"][-1][1]
    assert {e.id for e in world.entities} >= {"floor", "target/0", "zone/ZONE_1", "zone/ZONE_2"}
    pond = next(e for e in world.entities if e.id == "zone/ZONE_1")
    assert [(p.x, p.y) for p in pond.triangles[0].points][:2] == [(-2.5, -2.5), (-1.5, -2.5)]
    assert len(pond.triangles[0].indices) == 3 * 4 and len(pond.lines[0].points) == 6
    state = got["/sim/state"][-1][1]
    assert state["robots"] == 2 and state["step"] > 0
    assert got["/metrics/monitors/gap"][-1][1]["value"] > 0
    ns = [n for n, _ in got["/scene/bodies"]]
    assert ns == sorted(ns) and abs(ns[-1] / 1e9 - time.time()) < 30  # live: wall-clock time


def test_scene_poses_match_sim_once_paused(live):
    with FoxgloveClient(live.foxglove.url, lambda t: t == "/scene/bodies") as client, \
            Client(live.network.endpoint) as sim_client:
        client.receive(_have("/scene/bodies", count=3))
        sim = sim_client.sim()
        sim.pause()
        try:
            got = _drain(client, 1.0)  # the bridge publishes the paused step within 1/20 s
            robots = sim.list_robots()
        finally:
            sim.resume()
    scene = got["/scene/bodies"][-1][1]
    entities = {e.id: e for e in scene.entities}
    assert set(robots) == {"alpha", "beta"}
    for name, (x, y, yaw) in robots.items():
        body = entities[f"robot/{name}"].cylinders[0].pose
        assert (body.position.x, body.position.y) == pytest.approx((x, y), abs=1e-9)
        drawn = 2 * math.atan2(body.orientation.z, body.orientation.w)
        assert math.remainder(drawn - yaw, 2 * math.pi) == pytest.approx(0.0, abs=1e-9)
        arrow = entities[f"robot/{name}"].arrows[0].pose
        assert (arrow.position.x, arrow.position.y) == pytest.approx((x, y), abs=1e-9)


def _drain(client, seconds: float) -> dict:
    end = time.monotonic() + seconds
    got = client.receive(lambda g: time.monotonic() >= end, timeout=seconds + 20)
    assert got.get("/scene/bodies"), "no scene after the pause"
    return got


def test_dead_slow_and_hostile_clients_leave_the_run_alone(live):
    url = live.foxglove.url
    host, port = url.removeprefix("ws://").split(":")
    before = live.stepper.stats().steps
    with socket.create_connection((host, int(port)), timeout=5) as raw:  # not WebSocket at all
        raw.sendall(b"\x00\xff garbage\r\n\r\n" * 100)
    slow = FoxgloveClient(url)  # subscribes to everything, then never reads again
    slow.receive(_have("/scene/bodies"))
    rude = FoxgloveClient(url)
    rude.receive(_have("/scene/bodies"))
    rude.ws.send("{not json")
    rude.ws.send(b"\x03\x09short")  # a truncated playback request to a live server
    rude.ws.send(b"\x63" * 1000)
    dead = FoxgloveClient(url)
    dead.receive(_have("/scene/bodies"))
    dead.ws.socket.close()  # gone without a close frame
    time.sleep(1.0)
    assert live.stepper.running and live.stepper.stats().steps > before + 20
    assert live.foxglove.errors == 0
    with FoxgloveClient(url) as fresh:  # the server still serves newcomers
        fresh.receive(_have("/scene/bodies", "/tf", count=2))
    slow.ws.socket.close()
    rude.ws.socket.close()


@pytest.mark.slow
def test_a_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("run", str(RECDATA / "two_robots.scenario"), "--headless", "--port", "0",
                       "--duration", "0.1", "--foxglove", str(port))
    assert done.returncode == 2, done.stderr
    assert f"cannot serve Foxglove on 127.0.0.1:{port}" in done.stderr
    assert "in use" in done.stderr and "Traceback" not in done.stderr


def test_beyond_loopback_needs_insecure():
    options = RunOptions(port=0, bind="0.0.0.0", keys=None, insecure=False, foxglove=0,
                         network=False, controllers=False)
    with pytest.raises(CoopsimError, match="--insecure"):
        with Run(load_scenario_or_world(SCENARIO), options):
            pass


@pytest.mark.slow
def test_a_replay_plays_pauses_and_seeks_from_foxglove(tmp_path):
    rec = tmp_path / "rec.mcap"
    done = run_cli("run", str(SCENARIO), "--headless", "--port", "0", "--duration", "2",
                   "--record", str(rec))
    assert done.returncode == 0, done.stderr
    proc = start_cli("replay", str(rec), "--headless", "--port", "0", "--paused",
                     "--foxglove", "0")
    try:
        url = _foxglove_url(proc)
        with FoxgloveClient(url, lambda t: t in ("/scene/bodies", "/robots/beta/pose")) as c:
            got = c.receive(_have("/scene/bodies", "/robots/beta/pose"))
            assert {"playbackControl", "time"} <= set(c.server_info["capabilities"])
            seek = 1_500_000_000
            c.playback(play=False, seek_ns=seek)
            # the time message and the messages of that time come in either order
            got = c.receive(lambda g: seek in c.times and any(
                ns == seek for ns, _ in g.get("/robots/beta/pose", ())))
            pose = next(m for ns, m in got["/robots/beta/pose"] if ns == seek)
            with Recording(rec) as r:
                frame = r.frame_at(1.5)
                beta = r.robot_values(frame)[1]
            assert (pose.pose.position.x, pose.pose.position.y) == pytest.approx(
                (beta[0], beta[1]), abs=1e-9)
            assert (PAUSED, seek, 1.0, True, "r1") in c.states  # the answer to the seek
            c.playback(play=True, speed=2.0, request="go")
            later = c.receive(lambda g: any(s[0] == ENDED for s in c.states))
            assert later["/robots/beta/pose"][-1][0] > seek  # it played on from the seek
            assert (PLAYING, seek, 2.0, False, "go") in c.states
            assert c.states[-1][:3] == (ENDED, 2_000_000_000, 2.0)  # told when it ended
    finally:
        stop(proc)


def _foxglove_url(proc) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"foxglove: (ws://\S+)", line)
        if found:
            return found.group(1)
        assert line or proc.poll() is None, "replay ended before serving Foxglove"
    raise AssertionError("no foxglove line")
