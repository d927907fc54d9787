"""Shared control of ground squads, walls that repel, and the feedback recorded.

One recorded lockstep run (pymunk) on a corridor read from a map (its walls are the map's):
a column of three differential-drive robots (``single``, ``motors``) is steered along the
corridor and towards its left wall, a pair of holonomic robots (``velocity``) ahead is steered
along it. The squads keep their formations, never touch a wall, and their feedback points away
from the wall; the recording (format 7) gives back every step's feedback as the live run had
it, in a replay's snapshots, ``coopsim export --feedback-csv`` and the ROS 2 bag's
WrenchStamped. The floor's edge walls push on their own (the law, without a run).
"""

from __future__ import annotations

import csv
import io
from types import MappingProxyType

import msgpack
import numpy as np
import pytest
from mcap.reader import make_reader

from coopsim.client import Client
from coopsim.formats.files import load
from coopsim.model.errors import RecordingError
from coopsim.model.steering import RECORD_FIELDS, Steer
from coopsim.recording import format as rf
from coopsim.recording.encoding import FrameEncoder
from coopsim.recording.feedbackcsv import export_feedback_csv
from coopsim.recording.reader import Recording
from coopsim.replay.player import _with_feedback, recorded_steps
from coopsim.replay.servers import Replay
from coopsim.ros2.bag import export_ros2
from coopsim.ros2.feedback import topic, wrench
from coopsim.swarm.shared import SharedLaw, edge_walls, obstacle_push

from rechelpers import record, run_cli

FACE = 0.7  # m: the corridor's walls' faces are at y = +-FACE (map rows of 0.1 m)
RADIUS = 0.2  # m: the single robot's chassis
STEPS = 350
SPACING = 0.6
STEERS = {"convoy": (0.4, 0.3, 0.0), "pair": (0.3, 0.0, 0.0)}

SCENARIO = """[WORLD]
map corridor.yaml
{robots}
[SQUAD_1]
name convoy
robots g1 g2 g3
formation column
spacing 0.6

[SQUAD_2]
name pair
robots h1 h2
formation column
spacing 0.6

[SETTINGS]
dt 0.01
seed 3
"""


def _corridor(folder) -> None:
    """A 12 x 3 m map: 0.8 m of wall along each long side, 1.4 m free between them."""
    w, h = 120, 30
    rows = [" ".join(["0" if r < 8 or r >= h - 8 else "254"] * w) for r in range(h)]
    (folder / "corridor.pgm").write_text(f"P2\n{w} {h}\n255\n" + "\n".join(rows) + "\n")
    (folder / "corridor.yaml").write_text(
        "image: corridor.pgm\nresolution: 0.1\norigin: [-6.0, -1.5, 0.0]\nnegate: 0\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\n")
    robots = [("g1", "single", -5.0, 0.3), ("g2", "single", -4.4, -0.2),
              ("g3", "single", -3.8, 0.1), ("h1", "holonomic", 1.0, -0.2),
              ("h2", "holonomic", 1.6, 0.2)]
    text = "".join(f"\n[ROBOT_{k}]\ntype {t}\nname {n}\nposition {x} {y} 0\ndriver shared "
                   "hold 60\n" for k, (n, t, x, y) in enumerate(robots, 1))
    (folder / "ground.scenario").write_text(SCENARIO.format(robots=text))


def _steer(stepper) -> None:
    """The person's commands, once (the driver's hold, 60 s, outlasts the run)."""
    stepper.sim.extra["steer"] = MappingProxyType({
        name: Steer(name, k, v, 0.0, stepper.sim.time)
        for k, (name, v) in enumerate(STEERS.items(), 1)})


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ground")
    _corridor(folder)
    spec = load(folder / "ground.scenario")
    path = folder / "ground.mcap"
    _, truth = record(path, STEPS, spec=spec, drive=False, events={0: _steer})
    return path, truth


@pytest.mark.slow
def test_the_map_walls_are_obstacles_and_the_squads_keep_formation_off_them(run):
    _, truth = run
    last = truth[-1]
    assert sum(o.startswith("MAP_") for o in last.objects) == 2
    y = np.array([s.poses[:, 1] for s in truth[1:]])
    assert (FACE - np.abs(y)).min() - RADIUS > 0.1  # never within 10 cm of a wall
    pose = {n: last.poses[i] for i, n in enumerate(last.robots)}
    for squad in (("g1", "g2", "g3"), ("h1", "h2")):
        xs = np.sort([pose[n][0] for n in squad])
        assert np.diff(xs) == pytest.approx([SPACING] * (len(squad) - 1), abs=0.06)
        assert np.ptp([pose[n][1] for n in squad]) < 0.05  # one behind the other
    moved = {n: pose[n][0] - truth[0].poses[truth[0].index[n]][0] for n in pose}
    assert min(moved.values()) > 1.0  # along the corridor, as steered


def test_the_feedback_points_away_from_the_wall_steered_into(run):
    _, truth = run
    convoy = [s.extra["feedback"]["convoy"] for s in truth[1:]]
    pushed = [fb for fb in convoy if np.linalg.norm(fb.force) > 0.05]
    assert len(pushed) > STEPS // 2
    assert all(fb.force[1] < 0 and abs(fb.force[0]) < 1e-9 for fb in pushed)  # -y: back
    assert convoy[-1].steer == (0.4, 0.3, 0.0, 0.0) and convoy[-1].seq == 1
    pair = truth[-1].extra["feedback"]["pair"]
    assert np.linalg.norm(pair.force) < 0.05  # in the middle of the corridor: little


def test_the_recording_gives_back_the_live_feedback_step_for_step(run):
    path, truth = run
    live = {s.step: s.extra.get("feedback") for s in truth}
    with Recording(path) as rec:
        assert rec.meta["format"] == str(rf.FORMAT_VERSION) == "7"
        replayed = [(frame, snap) for frame, _, snap in recorded_steps(rec)]
    assert len(replayed) == STEPS + 1
    for frame, snap in replayed[1:]:
        assert dict(snap.extra["feedback"]) == dict(live[frame.step])
        assert snap.extra["steer"]["convoy"].velocity == STEERS["convoy"]


def test_a_replay_shows_the_recorded_feedback_in_sim_state(run):
    path, truth = run
    with Replay(str(path), port=0, paused=True) as replay, Client(replay.endpoint) as client:
        client.playback().seek(truth[-1].time)
        state = client.sim().state()
    steered = state["squad_orders"]["steered"]
    fb = truth[-1].extra["feedback"]["convoy"]
    assert set(steered) == {"convoy", "pair"}
    assert steered["convoy"] == {"step": fb.step, "seq": 1,
                                 "force": [round(f, 6) for f in fb.force]}


@pytest.mark.slow
def test_export_writes_the_feedback_csv_and_the_bag_the_wrenches(run, tmp_path):
    path, truth = run
    out = tmp_path / "squads.csv"
    result = run_cli("export", str(path), "--csv", str(tmp_path / "ground.csv"),
                     "--feedback-csv", str(out))
    assert result.returncode == 0, result.stderr
    assert f"{2 * STEPS} feedback rows written to {out}" in result.stderr
    assert not (tmp_path / "ground.feedback.csv").exists()  # not beside: where it was told
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["time", "squad", *("sim_time" if c == "time" else c
                                          for c in RECORD_FIELDS)]
    last = truth[-1].extra["feedback"]["convoy"]
    mine = [r for r in rows[1:] if r[1] == "convoy"][-1]
    assert int(mine[2]) == last.step and float(mine[10]) == last.force[1]
    with Recording(path) as rec:
        export_ros2(rec, tmp_path / "bag")
    with open(tmp_path / "bag" / "bag_0.mcap", "rb") as f:
        sent = [(m.log_time, m.data) for _, c, m in make_reader(f).iter_messages()
                if c.topic == topic("convoy")]
    assert len(sent) == STEPS
    assert sent[-1][1] == wrench(round(last.time * 1e9), last.force)


def test_a_recorded_feedback_that_is_not_numbers_is_refused():
    frame = rf.Frame(3, 0.0, 3, 0.03, 0, np.zeros((0, 6)), np.zeros((0, 3)),
                     feedback={"convoy": ["junk"]})
    with pytest.raises(RecordingError, match="step 3's shared-control feedback"):
        _with_feedback({}, frame)


def test_the_floor_edge_walls_push_back_into_the_floor():
    law = SharedLaw()
    walls = edge_walls(8.0, 4.0)
    p = np.array([[3.7, 0.0, 1.0], [0.0, -1.8, 0.2], [0.0, 0.0, 1.0]])
    push = obstacle_push(p, walls, law)
    assert push[0, 0] < 0 and push[0, 1:] == pytest.approx([0, 0])  # from the +x edge, -x
    assert push[1, 1] > 0 and abs(push[1, 0]) < 1e-12  # from the -y edge, +y
    assert np.all(push[2] == 0.0)  # 2 m from every edge: beyond the influence


def test_a_map_of_many_walls_pushes_as_its_near_walls_alone():
    law = SharedLaw()
    near = np.array([(0, 5.0, 0.0, 0.0, 0.0, 5.0, 0.05, 1.0),  # 10 m long: its end is near
                     (1, -0.5, 0.6, 0.0, 0.0, 0.2, 0.2, 1.0)])
    far = np.array([(0, 20.0 + k, 20.0, 0.0, 0.0, 0.5, 0.5, 1.0) for k in range(100)])
    p = np.array([[-0.3, 0.0, 0.0], [-0.6, 0.1, 0.0]])
    alone = obstacle_push(p, near, law)
    assert np.linalg.norm(alone, axis=1).min() > 0.1  # both robots are pushed
    assert obstacle_push(p, np.vstack((far[:50], near, far[50:])), law) == \
        pytest.approx(alone, abs=1e-12)


def test_a_block_whose_feedback_is_no_list_of_maps_is_refused():
    block = msgpack.unpackb(FrameEncoder(rf.CORE_COLUMNS).encode(
        0, [1], [0.01], [0], 0, np.zeros((6, 1, 0)), np.zeros((3, 1, 0)), key=True))
    block["F"] = "junk"
    with pytest.raises(RecordingError, match=r"feedback \(F\) is not a list of maps"):
        rf.decode_frames([msgpack.packb(block)], rf.CORE_COLUMNS)
    frame = rf.Frame(0, 0.0, 1, 0.01, 0, np.zeros((0, 6)), np.zeros((0, 3)),
                     feedback={"convoy": [1.0, "x"]})
    with pytest.raises(RecordingError, match="step 0's shared-control feedback"):
        export_feedback_csv(_OneFrame(frame), io.StringIO())


class _OneFrame:
    """A recording of one decoded step (what the feedback CSV reads of a Recording)."""

    frame_count = 1

    def __init__(self, frame) -> None:
        self._frame = frame

    def frame(self, index: int):
        return self._frame

    def iter_frames(self):
        return iter([self._frame])
