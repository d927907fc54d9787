"""Tests of ``/sim``: every command, its errors, and the robot servers following the world's layout;
and of the state stream ``/sim/state``."""

from __future__ import annotations

import json
import math

import msgpack
import pytest
import zmq

from coopsim.net import protocol as p
from coopsim.net.protocol import Message
from coopsim.net.statestream import decode_state

from helpers import box, robot, scenario, target
from nethelpers import ROOT, Peer, live, lookup, wait_until

SMALL = ROOT / "tests" / "data" / "files" / "small.scenario"


def _world(mode="realtime"):
    return scenario(robots=[robot("r1", -2.0, 0.0), robot("r2", 2.0, 2.0, yaw=math.pi / 2)],
                    objects=[box("crate", 0.0, 3.0, mass=1.0)],
                    targets=[target("red", 3.0, 0.0)], mode=mode, seed=7)


@pytest.fixture()
def run(tmp_path):
    # load and record reach only the data folders: the test data and this test's folder
    with live(_world(), paused=True, data_dirs=(str(SMALL.parent), str(tmp_path))) as run:
        yield run


def _status(sim: Peer) -> dict:
    _, mode, _, params, data = sim.ok(1)
    keys = ("step", "paused", "mode_index", "missed", "robots", "attached",
            "time", "dt", "speed", "rtf", "wall", "lease")
    return dict(zip(keys, params + data), mode=mode)


def _listing(reply: list) -> dict[str, list[float]]:
    names, data = reply[1].splitlines(), reply[4]
    assert reply[3] == [len(names)]
    width = len(data) // len(names) if names else 0
    return {n: data[width * i:width * (i + 1)] for i, n in enumerate(names)}


def _fails(sim: Peer, code: int, command: int, text="", params=(), data=()) -> str:
    error, sentence, cmd, reply_params, reply_data = sim.ask(command, text, params, data)
    assert (error, cmd, reply_params, reply_data) == (code, command, [], []), sentence
    assert sentence
    return sentence


# --- time -----------------------------------------------------------------------------------------

def test_hello(sim):
    assert sim.ok(0) == [0, "/sim", 0, [p.PROTOCOL_VERSION], []]


def test_status(sim):
    st = _status(sim)
    assert (st["mode"], st["mode_index"], st["paused"], st["robots"], st["attached"]) == (
        "realtime", 0, 1, 2, 0)
    assert (st["dt"], st["speed"], st["lease"]) == (0.01, 1.0, 3.0)


def test_pause_step_resume(sim):
    assert _status(sim)["step"] == 0
    after = sim.ok(4, params=[5])
    assert after[3][:2] == [5, 1] and after[4][0] == pytest.approx(0.05)
    assert sim.ok(4)[3][0] == 6, "no params: one step"
    resumed = sim.ok(3)
    assert resumed[3][1] == 0
    wait_until(lambda: _status(sim)["step"] > 20)
    paused = sim.ok(2)
    assert paused[3][1] == 1
    assert _status(sim)["step"] == paused[3][0], "a pause reply tells where the run stopped"


def test_step_takes_steps_of_a_paused_sim_only(sim):
    sim.ok(3)
    wait_until(lambda: _status(sim)["step"] > 2)
    assert "pause it first" in _fails(sim, p.NOT_ALLOWED, 4, params=[3])
    assert _status(sim)["paused"] == 0, "a refused step leaves the run running"
    paused = sim.ok(2)[3][0]
    reply = sim.ok(4, params=[3])
    assert reply[3][1] == 1 and reply[3][0] == paused + 3


def test_step_errors(sim):
    for n in (0, -1, 1_000_001):
        assert "step count" in _fails(sim, p.OUT_OF_RANGE, 4, params=[n])
    _fails(sim, p.WRONG_ARITY, 4, params=[1, 2])


def test_reset_restores_the_scenario(run, sim):
    r1 = Peer(lookup(run.network.endpoint, "/r1"))
    start = _listing(sim.ok(10))
    r1.ok(100, data=[0.5, 0.3])
    sim.ok(4, params=[50])
    sim.ok(13, "extra box", data=[0.5, 0.5, 0.5, 1, 1, 0.25, 0, 0])
    assert _listing(sim.ok(10)) != start
    reply = sim.ok(5)
    assert reply[3][0] == 0 and reply[3][1] == 1, "back to step 0, still paused"
    assert _listing(sim.ok(10)) == start
    assert list(_listing(sim.ok(11))) == ["crate"]
    assert lookup(run.network.endpoint, "/r1") == r1.endpoint, "robot servers stay put"
    assert r1.ok(103)[4] == [0.0] * 4


def test_set_mode(sim):
    st = sim.ok(6, "lockstep")
    assert (st[1], st[3][2]) == ("lockstep", 1)
    assert sim.ok(6, "realtime")[1] == "realtime"
    assert "realtime, lockstep" in _fails(sim, p.OUT_OF_RANGE, 6, "fast")
    _fails(sim, p.WRONG_ARITY, 6)
    assert _status(sim)["mode"] == "realtime"


def test_set_speed(sim):
    assert sim.ok(7, data=[2])[4][2] == 2.0
    assert sim.ok(7, data=[0.0])[4][2] == 0.0
    for bad in (-1.0, 1000.5, math.inf):
        _fails(sim, p.OUT_OF_RANGE, 7, data=[bad])
    _fails(sim, p.WRONG_ARITY, 7)
    assert _status(sim)["speed"] == 0.0


def test_slow_motion_does_not_hold_up_requests(sim):
    sim.ok(3)
    sim.ok(7, data=[0.001])  # one step every 10 s of wall time
    assert sim.ok(2)[3][1] == 1, "a pause is carried out between two steps, not 10 s later"
    assert sim.ok(3)[3][1] == 0


def test_set_dt(sim):
    assert sim.ok(8, data=[0.02])[4][1] == 0.02
    assert sim.ok(4, params=[2])[4][0] == pytest.approx(0.04)
    for bad in (0.0, 0.2, -0.01, math.nan):
        _fails(sim, p.OUT_OF_RANGE, 8, data=[bad])
    assert _status(sim)["dt"] == 0.02


def test_set_lease(sim):
    assert sim.ok(9, data=[0.5])[4][5] == 0.5
    for bad in (0.01, 4000.0, -1.0):
        _fails(sim, p.OUT_OF_RANGE, 9, data=[bad])
    assert _status(sim)["lease"] == 0.5


def test_detach(sim):
    assert sim.ok(24, "r1")[1:4] == ["was not attached", 24, [0]]
    _fails(sim, p.WRONG_ARITY, 24)


# --- listing and state ----------------------------------------------------------------------------

def test_list_robots_objects_targets(sim):
    robots = _listing(sim.ok(10))
    assert list(robots) == ["r1", "r2"]
    assert robots["r1"] == pytest.approx([-2.0, 0.0, 0.0])
    assert robots["r2"] == pytest.approx([2.0, 2.0, math.pi / 2])
    assert _listing(sim.ok(11)) == {"crate": pytest.approx([0.0, 3.0, 0.0])}
    assert sim.ok(12) == [0, "red", 12, [1], [3.0, 0.0, 0.0]]


def test_state_is_json(sim):
    sim.ok(4, params=[3])
    _, text, _, params, _ = sim.ok(23)
    state = json.loads(text)
    assert [r["name"] for r in state["robots"]] == ["r1", "r2"]
    assert [o["name"] for o in state["objects"]] == ["crate"]
    assert state["targets"][0]["color"] == "red"
    assert (state["step"], state["mode"], state["paused"], state["seed"]) == (3, "realtime",
                                                                             True, 7)
    assert params == [3, state["layout_version"]]


# --- objects --------------------------------------------------------------------------------------

def test_insert_update_remove_object(sim):
    reply = sim.ok(13, "ball sphere", params=[255, 0, 0], data=[0.3, 0.3, 0.3, -1, -1, 0.15, 0, 2])
    assert list(_listing(reply)) == ["crate", "ball"], "the reply already shows it"
    assert _listing(sim.ok(11))["ball"] == pytest.approx([-1.0, -1.0, 0.0])
    ball = [o for o in json.loads(sim.ok(23)[1])["objects"] if o["name"] == "ball"][0]
    assert (ball["shape"], ball["color"], ball["mass"]) == ("sphere", [255, 0, 0], 2.0)
    moved = sim.ok(14, "ball sphere", data=[0.3, 0.3, 0.3, 1, -1, 0.15, 0, 2])
    assert _listing(moved)["ball"] == pytest.approx([1.0, -1.0, 0.0])
    assert list(_listing(sim.ok(15, "ball"))) == ["crate"]
    assert list(_listing(sim.ok(11))) == ["crate"]


def test_object_errors(sim):
    size_pose = [0.5, 0.5, 0.5, 1, 1, 0.25, 0, 1]
    _fails(sim, p.OUT_OF_RANGE, 13, "b cube", data=size_pose)
    _fails(sim, p.WRONG_ARITY, 13, "b", data=size_pose)
    _fails(sim, p.WRONG_ARITY, 13, "b box extra", data=size_pose)
    _fails(sim, p.WRONG_ARITY, 13, "b box", data=size_pose[:7])
    _fails(sim, p.OUT_OF_RANGE, 13, "b box", data=[0.5, -0.5, 0.5, 1, 1, 0.25, 0, 1])
    _fails(sim, p.OUT_OF_RANGE, 13, "b box", data=size_pose[:7] + [-1])
    _fails(sim, p.OUT_OF_RANGE, 13, "b box", params=[1, 2, 300], data=size_pose)
    _fails(sim, p.OUT_OF_RANGE, 13, "b box", params=[1, 2], data=size_pose)
    assert "floor" in _fails(sim, p.FAILED, 13, "b box", data=[0.5, 0.5, 0.5, 99, 0, 0.25, 0, 1])
    assert "exists" in _fails(sim, p.FAILED, 13, "crate box", data=size_pose)
    _fails(sim, p.UNKNOWN_NAME, 14, "nothing box", data=size_pose)
    _fails(sim, p.UNKNOWN_NAME, 15, "nothing")
    assert list(_listing(sim.ok(11))) == ["crate"], "nothing changed"


# --- robots ---------------------------------------------------------------------------------------

def test_an_inserted_robot_gets_a_server_at_once(sim, names):
    reply = sim.ok(16, "r3 single", params=[0, 200, 0], data=[0, -2, 0, math.pi])
    assert list(_listing(reply)) == ["r1", "r2", "r3"]
    r3 = Peer(names.ok(1, "/r3/sonar")[1])
    assert names.ok(1, "/r3")[1] == r3.endpoint
    assert r3.ok(0)[1] == "/r3"
    assert r3.ok(500)[3] == [0], "readable before the next step (zeros until it is sensed)"
    sim.ok(4)
    assert r3.ok(500)[4] == pytest.approx([0.0, -2.0], abs=1e-3)
    r3.ok(100, data=[0.2, 0.2])
    sim.ok(4, params=[10])
    assert r3.ok(500)[4][0] < -0.01, "it drives (towards -x)"
    assert _status(sim)["robots"] == 3


def test_a_removed_robot_leaves_the_name_server(sim, names):
    r2 = Peer(names.ok(1, "/r2")[1], zmq.DEALER)
    assert r2.ok(0)[1] == "/r2"
    assert list(_listing(sim.ok(18, "r2"))) == ["r1"]
    for name in ("/r2", "/r2/motors"):
        assert names.ask(1, name)[0] == p.UNKNOWN_NAME
    assert "/r2" not in names.ok(2)[1]
    r2.send_frames([Message(0, "", 0).to_wire()])
    assert not r2.sock.poll(500), "its server is gone"
    _fails(sim, p.UNKNOWN_NAME, 18, "r2")


def test_update_robot_keeps_its_endpoint(run, sim):
    before = lookup(run.network.endpoint, "/r1")
    moved = sim.ok(17, "r1 single", data=[1, 1, 0, 0.5])
    assert _listing(moved)["r1"] == pytest.approx([1.0, 1.0, 0.5])
    assert lookup(run.network.endpoint, "/r1") == before
    sim.ok(4)
    assert Peer(before).ok(500)[4] == pytest.approx([1.0, 1.0], abs=1e-3)
    _fails(sim, p.UNKNOWN_NAME, 17, "r9 single", data=[1, 1, 0, 0])


def test_team2_insert_and_remove(sim, names):
    robots = _listing(sim.ok(16, "t team2", data=[0, -3, 0, 0]))
    assert {"t_leader", "t_helper"} <= set(robots)
    for member in ("/t_leader", "/t_helper"):
        assert "support" in Peer(names.ok(1, member)[1]).ok(1)[1]
    assert list(_listing(sim.ok(18, "t"))) == ["r1", "r2"]
    assert names.ask(1, "/t_leader/support")[0] == p.UNKNOWN_NAME


def test_robot_errors(sim):
    _fails(sim, p.UNKNOWN_NAME, 16, "r3 hexapod", data=[0, 0, 0, 0])
    assert "exists" in _fails(sim, p.FAILED, 16, "r1 single", data=[0, 0, 0, 0])
    _fails(sim, p.FAILED, 16, "r3 single", data=[40, 0, 0, 0])
    _fails(sim, p.WRONG_ARITY, 16, "r3", data=[0, 0, 0, 0])
    _fails(sim, p.WRONG_ARITY, 16, "r3 single", data=[0, 0, 0])
    _fails(sim, p.OUT_OF_RANGE, 16, "r3 single", data=[0, 0, 0, math.inf])
    _fails(sim, p.UNKNOWN_NAME, 18, "nobody")
    assert list(_listing(sim.ok(10))) == ["r1", "r2"]


# --- targets --------------------------------------------------------------------------------------

def test_targets(run, sim):
    r1 = Peer(lookup(run.network.endpoint, "/r1"))
    assert sim.ok(19, "blue", data=[-2, 3, 0])[3] == [1]
    assert sim.ok(12)[1:4] == ["red\nblue", 12, [2]]
    assert r1.ok(300)[1] == "red,blue" and len(r1.ok(300)[4]) == 4
    sim.ok(4)
    assert r1.ok(301, "blue")[4] == pytest.approx([3.0, math.pi / 2])
    assert sim.ok(20, "green", params=[0], data=[3, 3, 0])[1] == "green\nblue"
    assert sim.ok(21, params=[1])[1:4] == ["green", 21, [1]]
    assert r1.ok(300)[1] == "green" and len(r1.ok(300)[4]) == 2


def test_target_errors(sim):
    _fails(sim, p.OUT_OF_RANGE, 19, "ultraviolet", data=[0, 0, 0])
    _fails(sim, p.WRONG_ARITY, 19, "blue", data=[0, 0])
    _fails(sim, p.UNKNOWN_NAME, 20, "blue", params=[5], data=[0, 0, 0])
    _fails(sim, p.UNKNOWN_NAME, 21, params=[5])
    _fails(sim, p.WRONG_ARITY, 21)
    assert sim.ok(12)[3] == [1]


# --- parameters -----------------------------------------------------------------------------------

def test_set_param(run, sim):
    assert sim.ok(25, "r2 sonar.max_range", data=[1]) == [0, "r2 sonar.max_range", 25, [],
                                                             [1.0]]
    assert Peer(lookup(run.network.endpoint, "/r2")).ok(12, "sonar.max_range")[4] == [1.0]
    _fails(sim, p.OUT_OF_RANGE, 25, "r2 sonar.max_range", data=[100])
    _fails(sim, p.UNKNOWN_NAME, 25, "r9 sonar.max_range", data=[1])
    _fails(sim, p.UNKNOWN_NAME, 25, "r2 laser.max_range", data=[1])
    _fails(sim, p.UNKNOWN_NAME, 25, "r2 sonar.range", data=[1])
    _fails(sim, p.WRONG_ARITY, 25, "r2 sonar", data=[1])
    _fails(sim, p.WRONG_ARITY, 25, "r2 sonar.max_range")


# --- load -----------------------------------------------------------------------------------------

def test_load_a_scenario_replaces_the_robots_and_their_servers(sim, names):
    r1 = names.ok(1, "/r1")[1]
    reply = sim.ok(22, str(SMALL))
    assert reply[3][0] == 0
    assert list(_listing(sim.ok(10))) == ["alpha", "beta-2"]
    assert names.ask(1, "/r1")[0] == p.UNKNOWN_NAME
    assert Peer(names.ok(1, "/alpha/gps")[1]).ok(500)[4] == pytest.approx([-1.0, -0.5])
    assert sim.ok(12)[1] == "red\nblue\nred"
    assert r1 not in names.ok(2)[1]


def test_a_load_loads_the_kernels_its_world_registered_off_the_stepper(run, sim):
    """A loaded world's kernels are loaded (compiled, on a cold cache: minutes) on the load's
    own thread, before the world replaces the running one: the stepper's thread, which
    carries out the replacement, never compiles them (before, the stepper loaded them as it
    started the new world, and the run stopped stepping meanwhile)."""
    import threading

    from coopsim.model import compiled
    where = []
    warm = compiled.warmer(lambda: where.append(threading.current_thread()))
    sim.ok(22, str(SMALL))
    assert warm.ready and where and where[0] is not run.stepper._thread, where
    assert where[0].name == "coopsim/sim-load"


def test_load_a_world_leaves_no_robots(sim, names):
    sim.ok(22, str(ROOT / "worlds" / "maze.world"))
    assert sim.ok(10)[3] == [0]
    assert names.ok(2, "/r")[3] == [0]
    assert sim.ok(11)[3][0] > 0


def test_load_a_bad_file_changes_nothing(sim, tmp_path):
    bad = tmp_path / "bad.scenario"
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 10 10 0.1\n")
    bad.write_text("[WORLD]\nfile w.world\n[ROBOT_1]\ntype single\nname x\n"
                   "position 0 0\n")  # line 6: a position needs x y z
    text = _fails(sim, p.FAILED, 22, str(bad))
    assert text.startswith(f"{bad}:6: "), text
    broken = ROOT / "tests" / "data" / "files" / "broken.world"
    assert _fails(sim, p.FAILED, 22, str(broken)).startswith(f"{broken}:8: ")
    assert _fails(sim, p.FAILED, 22, str(tmp_path / "none.scenario")).startswith(
        f"{tmp_path / 'none.scenario'}:")
    _fails(sim, p.WRONG_ARITY, 22)
    assert list(_listing(sim.ok(10))) == ["r1", "r2"]


# --- the state stream -----------------------------------------------------------------------------

def test_state_stream(run, sim, names):
    sub = zmq.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, p.STATE_TOPIC)
    sub.connect(names.ok(1, "/sim/state")[1])
    sim.ok(3)
    try:
        frames = []
        while len(frames) < 3:
            assert sub.poll(5000), "the stream publishes while running"
            topic, body = sub.recv_multipart()
            frames.append(decode_state(Message.from_wire(body)))
        assert topic == p.STATE_TOPIC
        assert frames[0].step < frames[-1].step
        last = frames[-1]
        assert (last.mode, last.robots.shape, last.objects.shape, last.columns.shape) == (
            "realtime", (2, 3), (1, 3), (2, 11))  # protocol 8: the sonars; no arm, no LEDs
        assert last.layout_version == json.loads(sim.ok(23)[1])["layout_version"]
    finally:
        sub.close(0)


def test_bad_input_at_sim(sim):
    error, text, command, *_ = sim.raw(b"\x00\x01")
    assert (error, command) == (p.BAD_MESSAGE, -1) and "msgpack" in text
    assert sim.raw(msgpack.packb([0, "", 1, [], [], 0]))[0] == p.BAD_MESSAGE
    assert sim.ask(99)[0] == p.UNKNOWN_COMMAND
    assert sim.ok(1)[0] == 0


# --- recording on demand (the viewer's File > Record) ----------------------------------------------

def test_record_starts_and_stops_a_recording_between_steps(run, sim, tmp_path):
    from coopsim.recording.reader import Recording

    out = tmp_path / "on-demand.mcap"
    assert json.loads(sim.ok(23)[1])["recording"] == ""
    assert sim.ok(26, str(out), params=[1])[1:4] == [str(out), 26, [1]]
    assert json.loads(sim.ok(23)[1])["recording"] == str(out)
    assert sim.ok(26, "", params=[1])[1] == str(out)  # already recording: same file
    sim.ok(4, params=[20])
    assert sim.ok(26, params=[0])[1:4] == [str(out), 26, [0]]
    assert json.loads(sim.ok(23)[1])["recording"] == ""
    assert sim.ok(26, params=[0])[1] == ""  # nothing to stop
    with Recording(out) as rec:
        assert rec.info().frames >= 20
    _fails(sim, p.OUT_OF_RANGE, 26, params=[2])
    assert "new file ending in .mcap" in _fails(sim, p.FAILED, 26, str(out), params=[1])
    assert "ending in .mcap" in _fails(sim, p.FAILED, 26, str(tmp_path / "x.txt"), params=[1])
