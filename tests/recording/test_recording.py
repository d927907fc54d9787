"""The recording format and reader: round trip, keyframes and seeking, layouts, resets, the
mcap package's own reader, info and CSV export, and every kind of bad file."""

import csv
import io
import json
import math

import msgpack
import numpy as np
import pytest

from coopsim.model.plugins import module_columns
from mcap.reader import make_reader
from mcap.records import Message as McapMessage
from mcap.writer import Writer

from coopsim.recording import format as rf
from coopsim.recording.encoding import FrameEncoder
from coopsim.model.errors import RecordingError
from coopsim.recording.index import read_chunk, read_index
from coopsim.recording.csvexport import CSV_HEADER, export_csv
from coopsim.recording.reader import Recording, format_info

from helpers import box
from rechelpers import record

POSE_TOL = 0.5e-4 + 1e-9  # half the 0.1 mm / 1e-4 rad quantum
RATE_TOL = 0.5e-3 + 1e-9  # half the 1 mm/s quantum (velocities, commands, sonar)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """A 450-step recording of three robots (5 chunks of 100 steps at most)."""
    path = tmp_path_factory.mktemp("rec") / "plain.mcap"
    rec, truth = record(path, 450)
    return path, rec, truth


BUILTIN_COLUMNS = ["x", "y", "yaw", "vx", "vy", "omega", "left_cmd", "right_cmd",
                   *(f"sonar{i}" for i in range(11))]


def _robot_values(snap):
    """The BUILTIN_COLUMNS of every robot of ``snap``."""
    return np.hstack((snap.poses, snap.velocities, snap.commands["motors"],
                      snap.readings["sonar"]))


def _builtin(recording):
    """Indices of BUILTIN_COLUMNS in a recording's robot columns (installed plugin packages
    add columns of their own modules)."""
    names = [c.name for c in recording.robot_columns]
    return [names.index(n) for n in BUILTIN_COLUMNS]


def test_every_step_round_trips_within_its_quantum(plain):
    path, rec, truth = plain
    assert rec.frames == len(truth) == 451 and rec.dropped == 0
    with Recording(path) as r:
        frames, builtin = list(r.iter_frames()), _builtin(r)
    assert [f.step for f in frames] == [s.step for s in truth]
    assert [f.index for f in frames] == list(range(451))
    for f, s in zip(frames, truth):
        assert f.time == s.time
        assert f.position == pytest.approx(s.time, abs=1e-9)  # the recording starts at 0
        err = np.abs(f.robots[:, builtin] - _robot_values(s))
        assert err[:, :3].max() <= POSE_TOL and err[:, 3:].max() <= RATE_TOL
        assert np.abs(f.bodies - s.object_poses).max() <= POSE_TOL
    assert np.abs(frames[-1].robots[:, :2] - frames[0].robots[:, :2]).max() > 0.1  # it moved


def test_every_chunk_starts_with_a_keyframe(plain):
    path, _, _ = plain
    with open(path, "rb") as f:
        index = read_index(f, path.stat().st_size)
        frames_id = next(i for i, c in index.channels.items() if c.topic == "/frames")
        assert index.complete and len(index.chunks) >= 5
        for ref in index.chunks:
            first = next(m for m in read_chunk(f, ref)
                         if isinstance(m, McapMessage) and m.channel_id == frames_id)
            assert msgpack.unpackb(first.data)["k"] is True


def test_seek_by_time_returns_the_last_step_at_or_before_it(plain):
    path, _, truth = plain
    times = np.array([s.time for s in truth])
    rng = np.random.default_rng(5)
    with Recording(path) as r:
        for t in rng.uniform(0.0, r.end, 60):
            expected = int(np.searchsorted(times, t + 1e-12, side="right")) - 1
            assert r.frame_at(float(t)).index == expected
        assert r.frame_at(-3.0).index == 0
        assert r.frame_at(1e9).index == r.frame_count - 1
        assert r.frame_at(math.nan).index == 0


def test_seek_by_index_across_chunks_matches_iteration(plain):
    path, _, truth = plain
    with Recording(path, cache=1) as r:
        for i in (450, 0, 99, 100, 101, 377, 250, 5, 449):
            f = r.frame(i)
            assert f.index == i and f.step == truth[i].step
        assert r.frame(-5).index == 0 and r.frame(10_000).index == 450


def test_insertions_removals_and_resets_are_recorded(tmp_path):
    events = {
        40: lambda st: st.sim.world.add_object(box("late", -2.0, 3.0, mass=0.5)),
        90: lambda st: st.sim.world.remove_robot("r1"),
        130: lambda st: st.reset(),
    }
    rec, truth = record(tmp_path / "events.mcap", 170, events=events)
    with Recording(tmp_path / "events.mcap") as r:
        assert r.layout_count == 4  # start, insertion, removal, reset
        names = [[o["name"] for o in r.layout(i)["objects"]] for i in range(4)]
        assert names == [["crate", "wall"], ["crate", "wall", "late"],
                         ["crate", "wall", "late"], ["crate", "wall"]]
        assert [x["name"] for x in r.layout(2)["robots"]] == ["r0", "r2"]
        frames = list(r.iter_frames())
        assert [f.layout for f in (frames[40], frames[41], frames[91], frames[131])] == \
            [0, 1, 2, 3]
        assert frames[91].robots.shape[0] == 2 and frames[131].robots.shape[0] == 3
        positions = [f.position for f in frames]
        assert all(b > a for a, b in zip(positions, positions[1:]))  # grows across the reset
        assert frames[131].step == 1 and frames[131].time == pytest.approx(0.02)


def test_record_every_keeps_layout_steps(tmp_path):
    events = {41: lambda st: st.sim.world.add_object(box("late", -2.0, 3.0))}
    rec, truth = record(tmp_path / "every.mcap", 100, every=10, events=events)
    with Recording(tmp_path / "every.mcap") as r:
        steps = [f.step for f in r.iter_frames()]
    assert steps == [0, 10, 20, 30, 40, 42, 50, 60, 70, 80, 90, 100]  # 42: the insertion


def test_the_mcap_package_reads_a_recording(plain):
    path, rec, _ = plain
    with open(path, "rb") as f:
        reader = make_reader(f)
        header = reader.get_header()
        summary = reader.get_summary()
        messages = list(reader.iter_messages())
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
        attachments = list(reader.iter_attachments())
    assert header.profile == "coopsim"
    topics = {c.topic for c in summary.channels.values()}
    assert topics == {"/frames", "/layout"}
    assert {c.message_encoding for c in summary.channels.values()} == {"msgpack"}
    assert all(ci.compression == "zstd" for ci in summary.chunk_indexes)
    assert len(messages) == summary.statistics.message_count
    assert metadata["coopsim"]["format"] == "7" and metadata["coopsim.end"]["frames"] == "451"
    assert attachments == []  # the scenario was built in code: there is no file text


def test_scenario_and_world_texts_are_attached(tmp_path):
    from coopsim.formats.files import load_scenario

    from rechelpers import RECDATA

    spec = load_scenario(RECDATA / "two_robots.scenario")
    record(tmp_path / "files.mcap", 10, spec=spec)
    with Recording(tmp_path / "files.mcap") as r:
        assert r.attachment("scenario_file") == spec.text
        assert r.attachment("world_file") == spec.world.text
        assert r.info().scenario == "two_robots" and r.info().seed == 7


def test_info_and_its_text(plain):
    path, _, _ = plain
    with Recording(path) as r:
        info = r.info()
    assert info.frames == 451 and info.complete and info.dropped == 0
    assert info.duration == pytest.approx(450 * 0.02)
    assert info.robots == ("r0", "r1", "r2") == info.robots_end
    assert info.size == path.stat().st_size
    text = format_info(info)
    assert "451 recorded" in text and "r0, r1, r2" in text
    assert json.loads(json.dumps(info.to_dict()))["frames"] == 451


def test_csv_export_has_a_row_per_robot_per_step(plain):
    path, _, truth = plain
    out = io.StringIO()
    with Recording(path) as r:
        rows = export_csv(r, out)
    table = list(csv.reader(io.StringIO(out.getvalue())))
    assert tuple(table[0]) == CSV_HEADER and rows == len(table) - 1 == 451 * 3
    last = {row[1]: row for row in table[-3:]}
    snap = truth[-1]
    x, y, yaw = snap.poses[1]
    row = last["r1"]
    assert float(row[0]) == pytest.approx(snap.time)
    assert float(row[2]) == pytest.approx(x, abs=1e-4) and float(row[3]) == pytest.approx(y,
                                                                                         abs=1e-4)
    wrapped = math.atan2(math.sin(yaw), math.cos(yaw))
    assert float(row[4]) == pytest.approx(wrapped, abs=2e-4)
    assert -math.pi < min(float(r[4]) for r in table[1:]) and max(float(r[4]) for r in
                                                                 table[1:]) <= math.pi
    assert float(row[8]) == pytest.approx(snap.commands["motors"][1][0], abs=1e-3)


# -- bad files -------------------------------------------------------------------------------------

def _other_profile(path):
    with open(path, "wb") as f:
        w = Writer(f)
        w.start(profile="ros2", library="test")
        w.finish()


def _no_metadata(path):
    with open(path, "wb") as f:
        w = Writer(f)
        w.start(profile="coopsim", library="test")
        ch = w.register_channel("/frames", "msgpack", 0)
        w.add_message(ch, 0, b"\x80", 0)
        w.finish()


@pytest.mark.parametrize("make, says", [
    (lambda p: p.write_bytes(b""), "empty file"),
    (lambda p: p.write_text("[WORLD]\nfile x.world\n"), "not an MCAP file"),
    (lambda p: p.write_bytes(b"\x89MCAP0\r\n"), "not an MCAP file"),
    (_other_profile, "not a coopsim recording"),
    (_no_metadata, "not a coopsim recording"),
])
def test_bad_files_raise_one_clear_error(tmp_path, make, says):
    path = tmp_path / "bad.mcap"
    make(path)
    with pytest.raises(RecordingError) as err:
        Recording(path)
    assert says in str(err.value) and str(path) in str(err.value)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(RecordingError, match="no such file"):
        Recording(tmp_path / "nope.mcap")
    with pytest.raises(RecordingError, match="folder"):
        Recording(tmp_path)


def test_truncated_anywhere_reads_what_is_complete_or_says_why(plain, tmp_path):
    path, _, truth = plain
    data = path.read_bytes()
    cut = tmp_path / "cut.mcap"
    counts = []
    for size in list(range(0, 400, 37)) + list(range(400, len(data), len(data) // 40)):
        cut.write_bytes(data[:size])
        try:
            with Recording(cut) as r:
                assert not r.complete
                frames = list(r.iter_frames())
                assert len(frames) == r.frame_count
                assert [f.step for f in frames] == [s.step for s in truth[:len(frames)]]
                counts.append(len(frames))
        except RecordingError as exc:
            assert "cut.mcap" in str(exc)
            counts.append(0)
    assert counts == sorted(counts) and counts[-1] > 350 and counts[0] == 0


@pytest.mark.slow
def test_damaged_bytes_never_raise_anything_but_a_recording_error(plain, tmp_path):
    path, _, _ = plain
    data = path.read_bytes()
    bad = tmp_path / "damaged.mcap"
    rng = np.random.default_rng(11)
    opened = 0
    for trial in range(150):
        damaged = bytearray(data)
        for i in rng.integers(0, len(data), rng.choice([1, 4, 16])):
            damaged[i] = rng.integers(0, 256)
        bad.write_bytes(bytes(damaged))
        try:
            with Recording(bad) as r:
                export_csv(r, io.StringIO())
                r.frame_at(3.3), r.frame(222), r.info()
                opened += 1
        except RecordingError as exc:
            assert str(exc).startswith(str(bad))
    assert 0 < opened < 150


def test_a_newer_format_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(rf, "FORMAT_VERSION", rf.FORMAT_VERSION + 1)  # as a later coopsim writes
    record(tmp_path / "new.mcap", 5)
    monkeypatch.undo()
    with pytest.raises(RecordingError, match="newer"):
        Recording(tmp_path / "new.mcap")


def test_frames_codec_handles_no_robots_and_large_values():
    columns = rf.robot_columns(module_columns())
    enc = FrameEncoder(columns)
    robots = np.zeros((len(columns), 3, 0))  # (columns, steps, robots)
    bodies = np.array([[[1e5, -2e5, 123.0]], [[1e5 + 1, -2e5, 124.0]], [[1e5, -2e5, 125.0]]])
    data = enc.encode(0, [1, 2, 3], [0.1, 0.2, 0.3], [0, 100, 200], 0, robots,
                      bodies.transpose(2, 0, 1), True)
    frames = rf.decode_frames([data], columns)
    assert [f.robots.shape for f in frames] == [(0, len(columns))] * 3
    assert np.abs(np.array([f.bodies for f in frames]) - bodies).max() < 1e-6


def test_a_robot_without_a_module_reads_nan_in_its_columns(tmp_path):
    """A robot type without sonar: its sonar columns are stored as 0 but read back as NaN."""
    import dataclasses

    from coopsim.recording.writer import Recorder
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper
    from helpers import robot, scenario
    from rechelpers import motors_only_type

    motors_only_type("bare_rec_test")
    spec = scenario([robot("full", -1, 0), dataclasses.replace(robot("bare", 1, 0),
                                                               type="bare_rec_test")])
    stepper = Stepper(Simulation(spec))
    rec = Recorder(tmp_path / "b.mcap", spec, spec.settings, 0, 0.01).attach(stepper)
    for _ in range(5):
        stepper.tick()
    rec.close()
    with Recording(tmp_path / "b.mcap") as r:
        frame = r.frame(3)
        names = [c.name for c in r.robot_columns]
        values = r.robot_values(frame)
        assert {c.module for c in r.robot_columns} >= {"", "motors", "sonar"}
        sonar = [names.index(f"sonar{i}") for i in range(11)]
        assert np.isnan(values[1, sonar]).all() and not np.isnan(values[0, sonar]).any()
        assert frame.robots[1, sonar].tolist() == [0.0] * 11  # what the file holds
        out = io.StringIO()
        export_csv(r, out)
    assert "nan" not in out.getvalue()
