"""Replay: a playback process that looks like a live run (/sim, /sim/state), /playback with
seeking and speed, read-only refusals, and the CLI on good and bad files."""

import json
import time

import numpy as np
import pytest
import zmq

from coopsim.net import protocol as p
from coopsim.client import Client, RemoteError
from coopsim.net.protocol import Message
from coopsim.recording.reader import Recording
from coopsim.replay.servers import MODE_INDEX, Replay
from coopsim.app.run import Run, RunOptions
from coopsim.net.statestream import decode_state

from helpers import box
from rechelpers import record, run_cli, small_scenario, start_cli, stop, wait_endpoint

STREAM_WAIT = 5.0  # s for a state message that should come at once (a failure if longer)
READ_ONLY = ("status", "pause", "resume", "step", "reset", "set_speed", "list_robots",
             "list_objects", "list_targets", "state")


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """300 steps of three robots; an object is inserted before step 150."""
    path = tmp_path_factory.mktemp("replay") / "run.mcap"
    events = {150: lambda st: st.sim.world.add_object(box("late", -2.0, 3.0, mass=0.5))}
    record(path, 300, events=events)
    return path


@pytest.fixture()
def replay(recording):
    with Replay(str(recording), port=0, paused=True) as rp, Client(rp.endpoint) as client:
        yield rp, client


class _Stream:
    """A SUB socket on /sim/state."""

    def __init__(self, client: Client) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.SUB)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.SUBSCRIBE, p.STATE_TOPIC)
        self.sock.connect(client.lookup("/sim/state"))

    def until(self, accept):
        """The first state frame ``accept`` takes."""
        deadline = time.monotonic() + STREAM_WAIT
        while time.monotonic() < deadline:
            if self.sock.poll(100):
                topic, payload = self.sock.recv_multipart()
                frame = decode_state(Message.from_wire(payload))
                if accept(frame):
                    return frame
        raise AssertionError("no matching state frame")

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()


def _shape(reply: Message) -> tuple:
    return reply.error, len(reply.params), len(reply.data)


def test_sim_answers_like_a_live_run(replay):
    rp, client = replay
    spec = small_scenario()
    with Run(spec, RunOptions(port=0, controllers=False)) as live, Client(live.network.endpoint) \
            as live_client:
        for name in READ_ONLY[:1] + READ_ONLY[6:]:
            cmd = next(c.id for c in p.SIM_COMMANDS.values() if c.name == name)
            ours = client.request(client.lookup("/sim"), cmd)
            theirs = live_client.request(live_client.lookup("/sim"), cmd)
            assert _shape(ours) == _shape(theirs), name
        state, live_state = client.sim().state(), live_client.sim().state()
    assert set(live_state) <= set(state)
    assert state["mode"] == "playback" and state["dt"] == 0.02
    assert [r["name"] for r in state["robots"]] == ["r0", "r1", "r2"]
    status = client.sim().status()
    assert status["mode"] == "playback" and status["mode_index"] == MODE_INDEX
    assert status["paused"] == 1 and status["robots"] == 3 and status["step"] == 0


def test_world_changing_commands_are_not_allowed(replay):
    rp, client = replay
    sim = client.lookup("/sim")
    for command in p.SIM_COMMANDS.values():
        if command.name in READ_ONLY or command.id == 0:
            continue
        msg = Message(0, "x y" if command.text else "", command.id,
                      tuple([1] * command.params[0]), tuple([0.5] * command.data[0]))
        with pytest.raises(RemoteError) as err:
            client.request(sim, msg.command, msg.text, msg.params, msg.data)
        assert err.value.code == p.NOT_ALLOWED, command.name
        assert "not allowed in playback" in err.value.text


def test_seek_clamps_and_says_so(replay):
    rp, client = replay
    pb = client.lookup("/playback")
    status = client.request(pb, 1)
    assert status.params[:3] == (0, 0, 301) and status.data[:2] == (0.0, pytest.approx(6.0))
    inside = client.request(pb, 4, data=(2.345,))
    assert inside.data[0] == pytest.approx(2.34) and "clamped" not in inside.text
    assert inside.params[1] == 117 and inside.params[3] == 117
    late = client.request(pb, 4, data=(99.0,))
    assert "clamped to 6 s" in late.text and late.params[1] == 300
    early = client.request(pb, 4, data=(-1.0,))
    assert "clamped to 0 s" in early.text and early.params[1] == 0


def test_step_and_speed(replay):
    rp, client = replay
    pb = client.lookup("/playback")
    client.request(pb, 4, data=(3.0,))
    assert client.request(pb, 5, params=(-7,)).params[1] == 143
    assert client.request(pb, 5, params=(12,)).params[1] == 155
    back = client.request(pb, 5, params=(-1000,))
    assert back.params[1] == 0 and "first" in back.text
    assert client.request(pb, 6, data=(-2.5,)).data[2] == -2.5
    with pytest.raises(RemoteError) as err:
        client.request(pb, 6, data=(0.0,))
    assert err.value.code == p.OUT_OF_RANGE
    version, name = client.hello("/playback")
    assert (version, name) == (p.PROTOCOL_VERSION, "/playback")


def test_state_stream_shows_the_recorded_step(replay, recording):
    rp, client = replay
    stream = _Stream(client)
    try:
        client.request(client.lookup("/playback"), 4, data=(4.0,))
        frame = stream.until(lambda f: f.step == 200)
        with Recording(recording) as r:
            expected = r.frame(200)
            names = [c.name for c in r.robot_columns]
        sonar = [names.index(f"sonar{i}") for i in range(11)]  # plugins may add columns
        layout = client.sim().state()  # the recorded layout: the replay's stream's columns
        streamed = layout["columns"]
        assert layout["layout_version"] == frame.layout_version
        # protocol 8: only the columns of modules the recorded robots carry (no arm, no LEDs)
        assert frame.columns.shape[1] == len(streamed) and "arm_q1" not in streamed
        on_stream = [streamed.index(f"sonar{i}") for i in range(11)]
        assert frame.mode == "playback" and frame.paused
        assert np.allclose(frame.robots, expected.robots[:, :3])
        assert np.allclose(frame.columns[:, on_stream], expected.robots[:, sonar])  # the sonar
        assert frame.objects.shape == (3, 3)  # the inserted object is there at 4 s
        before = client.request(client.lookup("/playback"), 4, data=(1.0,))
        assert before.params[1] == 50
        early = stream.until(lambda f: f.step == 50)
        assert early.objects.shape == (2, 3) and early.layout_version != frame.layout_version
        state = client.sim().state()
        assert [o["name"] for o in state["objects"]] == ["crate", "wall"]
        assert state["layout_version"] == early.layout_version
    finally:
        stream.close()


def test_play_runs_forward_and_sim_pause_stops_it(replay):
    rp, client = replay
    pb = client.lookup("/playback")
    client.request(pb, 6, data=(5.0,))
    assert client.request(pb, 2).params[0] == 1  # playing
    stream = _Stream(client)
    try:
        stream.until(lambda f: f.step > 20 and not f.paused and f.speed == 5.0)
    finally:
        stream.close()
    client.sim().pause()
    status = client.request(pb, 1)
    assert status.params[0] == 0 and status.text == "paused"
    client.sim().reset()  # rewinds a replay
    assert client.request(pb, 1).params[1] == 0


@pytest.mark.slow
def test_replay_process_plays_to_the_end_and_exits(recording):
    # paused until the test has looked: a replay playing at once could reach its end and exit
    # while a slow (loaded) test is still asking for the names (it got error 9, no reply)
    proc = start_cli("replay", str(recording), "--headless", "--port", "0", "--exit-at-end",
                     "--speed", "20", "--start", "3", "--paused")
    try:
        endpoint = wait_endpoint(proc)
        with Client(endpoint) as client:
            assert set(client.names()) == {"/nameserver", "/sim", "/sim/state", "/sim/state1",
                                          "/playback"}
            assert client.request(client.lookup("/playback"), 2).params[0] == 1  # playing
        assert proc.wait(120) == 0
        last = proc.stderr.read().strip().splitlines()[-1]  # it says why it ends
        with Recording(recording) as rec:
            steps = rec.frame_count
        assert last.startswith("replay ended: reached the recording's end at ")
        assert last.endswith(f"(step {steps} of {steps})")
    finally:
        stop(proc)


@pytest.mark.parametrize("content", [b"", b"hello\n", b"\x89MCAP0\r\n\x01"])
@pytest.mark.slow
@pytest.mark.parametrize("command", [("info",), ("replay", "--headless", "--port", "0"),
                                     ("export", "--csv", "-")])
def test_bad_files_exit_2_with_one_line(tmp_path, content, command):
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(content)
    done = run_cli(command[0], str(bad), *command[1:], timeout=30)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coopsim: ") and "bad.mcap" in lines[0]
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_info_json_of_a_recording_made_elsewhere(recording):
    done = run_cli("info", str(recording), "--json")
    facts = json.loads(done.stdout)
    assert facts["frames"] == 301 and facts["layouts"] == 2
