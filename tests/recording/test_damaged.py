"""Damaged recordings: one policy for every reader, real files damaged two ways.

A real 3D recording (two crazyflies on mujoco, tests/data/wire3d/fly.scenario, recorded
in-process) is damaged as a disk or a bad copy would: a byte of a late chunk's compressed data
flipped (its CRC no longer checks); and recorded again by a faulty writer whose 3D block from
step 150 on is one robot short (its chunk's CRC checks, the block has the wrong shape). For
both: ``info`` lists the chunk (offset, times) and exits 2; ``export`` (CSV, metrics, Foxglove
and ROS 2 at once) writes nothing and exits 2; ``analyze`` refuses the file; ``replay
--exit-at-end`` plays the steps before the damage and exits 2, never waiting paused
(docs/recording-format.md section 7).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgpack
import pytest

pytest.importorskip("mujoco")

from coopsim.app.analyze import tracking_errors  # noqa: E402
from coopsim.formats.files import load  # noqa: E402
from coopsim.model.errors import RecordingError  # noqa: E402
from coopsim.recording import format as rf  # noqa: E402
from coopsim.recording.encoding import FrameEncoder  # noqa: E402
from coopsim.recording.index import read_index  # noqa: E402
from coopsim.recording.reader import Recording  # noqa: E402
from coopsim.replay.player import Player  # noqa: E402

from rechelpers import record, run_cli  # noqa: E402

FLY = Path(__file__).resolve().parents[1] / "data" / "wire3d" / "fly.scenario"
HANG_CAP = 120.0  # s: only guards against a hang (main waited paused forever)


@pytest.fixture(scope="module")
def flown(tmp_path_factory) -> Path:
    """A 3D recording of 5 chunks (2 crazyflies, 250 steps, a keyframe every 50)."""
    path = tmp_path_factory.mktemp("damaged") / "fly.mcap"
    record(path, 250, spec=load(str(FLY)), keyframe_every=50, drive=False)
    return path


def _chunks(path: Path):
    with open(path, "rb") as f:
        return read_index(f, path.stat().st_size).chunks


def flipped_late_chunk(source: Path, out: Path):
    """``source`` with one byte of its second-to-last chunk's compressed data flipped; return
    that chunk's ChunkRef."""
    chunk = _chunks(source)[-2]
    data = bytearray(source.read_bytes())
    data[chunk.offset + chunk.length] ^= 0xFF  # the last byte of its compressed data
    out.write_bytes(bytes(data))
    return chunk


def recorded_with_a_cut_3d_block(out: Path, first: int) -> int:
    """Record the flight again with the 3D values of the first /frames block from step
    ``first`` on one robot short, as a faulty writer would: every chunk's CRC checks, that
    block does not decode. Return the offset of the chunk that holds it."""
    encode, cut = FrameEncoder.encode, []

    def faulty(self, index, steps, times, stamps, *args, **kwargs):
        data = encode(self, index, steps, times, stamps, *args, **kwargs)
        if index >= first and not cut:
            cut.append(stamps[0])
            return _one_robot_short(data)
        return data

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(FrameEncoder, "encode", faulty)
        record(out, 250, spec=load(str(FLY)), keyframe_every=50, drive=False)
    return next(c.offset for c in _chunks(out) if c.start <= cut[0] <= c.end)


def _one_robot_short(data: bytes) -> bytes:
    block = msgpack.unpackb(data, raw=False)
    widths, raw = block["3"]
    block["3"] = [widths, raw[:len(raw) - sum(int(w) for w in widths) * len(block["s"])]]
    return msgpack.packb(block, use_bin_type=True)


@pytest.fixture(scope="module")
def damaged(flown, tmp_path_factory):
    """The two damaged copies, with the chunk each damage lies in."""
    folder = tmp_path_factory.mktemp("copies")
    late = flipped_late_chunk(flown, folder / "late.mcap")
    cut = recorded_with_a_cut_3d_block(folder / "cut3d.mcap", first=150)
    return {"late": (folder / "late.mcap", late.offset), "cut3d": (folder / "cut3d.mcap", cut)}


def test_every_chunk_is_checked_and_replay_keeps_to_the_readable_part(flown, damaged):
    with Recording(flown) as sound:
        assert sound.check() == () and sound.frame_count == 251
    for path, offset in damaged.values():
        with Recording(path) as rec:
            found = rec.check()
            assert [d.offset for d in found] == [offset], found
            # a chunk may hold one step (start == end): where chunks end depends on the flushes
            assert found[0].start <= found[0].end <= rec.end
            player = Player(rec)  # confines the recording to the steps before the damage
            assert rec.end < found[0].start and rec.frame_count < 251
            assert player.seek(100.0).endswith(f"clamped to {rec.end:g} s")
        with pytest.raises(RecordingError, match=f"the chunk at byte {offset} "):
            tracking_errors(str(path))  # coopsim analyze tracking: refused whole


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["late", "cut3d"])
def test_info_lists_the_damage_and_export_writes_nothing(damaged, kind, tmp_path):
    path, offset = damaged[kind]
    info = run_cli("info", str(path), "--json")
    assert info.returncode == 2, info.stderr
    listed = json.loads(info.stdout)["damaged"]
    assert [d["offset"] for d in listed] == [offset] and listed[0]["reason"]
    assert "damaged chunk" in info.stderr and "Traceback" not in info.stderr
    out = tmp_path / "out.csv"
    done = run_cli("export", str(path), "--csv", str(out), "--metrics-csv",
                   str(tmp_path / "m.csv"), "--foxglove", str(tmp_path / "fox.mcap"), "--ros2",
                   str(tmp_path / "bag"))
    assert done.returncode == 2, done.stderr
    assert f"the chunk at byte {offset} (" in done.stderr and "nothing was written" \
        in done.stderr
    assert list(tmp_path.iterdir()) == []  # no partial CSV, no .part left behind


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["late", "cut3d"])
def test_replay_exit_at_end_plays_up_to_the_damage_and_exits_2(damaged, kind):
    path, offset = damaged[kind]
    done = run_cli("replay", str(path), "--headless", "--port", "0", "--speed", "20",
                   "--exit-at-end", timeout=HANG_CAP)
    assert done.returncode == 2, done.stderr
    assert f"the chunk at byte {offset} (" in done.stderr
    assert "playback stopped at" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_sound_copy_still_exports_whole(flown, tmp_path):
    shutil.copy(flown, tmp_path / "ok.mcap")
    done = run_cli("export", str(tmp_path / "ok.mcap"), "--csv", str(tmp_path / "ok.csv"))
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "ok.csv").read_text().splitlines()) == 1 + 2 * 251
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.csv", "ok.mcap"]
