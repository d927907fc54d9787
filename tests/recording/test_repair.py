"""``coopsim repair``: a recording whose run was killed with SIGKILL opens in every MCAP reader
after it (mcap's own SeekingReader, which needs the summary, and coopsim's reader), keeping every
complete chunk; ``coopsim info`` on such a file says so and names the command."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from mcap.exceptions import McapError
from mcap.reader import SeekingReader, make_reader

from coopsim.model.errors import RecordingError
from coopsim.recording.index import read_index
from coopsim.recording.reader import Recording
from coopsim.recording.repair import repair

from prochelpers import ROOT, Coopsim

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _coopsim(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "coopsim", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def _index(path):
    with open(path, "rb") as f:
        return read_index(f, os.path.getsize(path))


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """A recording of the demo's four robots whose run was killed with SIGKILL mid-way."""
    path = tmp_path_factory.mktemp("killed") / "killed.mcap"
    run = Coopsim("run", str(ROOT / "scenarios" / "demo.scenario"), "--headless",
                  "--no-controllers", "--port", "0", "--duration", "100000", "--record",
                  str(path))
    try:
        run.endpoint()
        deadline = time.monotonic() + 60
        while not (path.exists() and len(_index(path).chunks) >= 4):
            assert time.monotonic() < deadline and run.proc.poll() is None, run.err
            time.sleep(0.2)
        os.kill(run.proc.pid, signal.SIGKILL)
        run.proc.wait(10)
    finally:
        run.kill()
    return path


def _all_messages(path) -> int:
    with open(path, "rb") as f:
        reader = make_reader(f, validate_crcs=True)
        assert isinstance(reader, SeekingReader)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        count = sum(1 for _ in reader.iter_messages())
        assert count == summary.statistics.message_count
        return count


def test_a_killed_recording_has_no_summary_until_repaired(killed, tmp_path):
    index = _index(killed)
    assert not index.complete
    with open(killed, "rb") as f:  # what indexed readers refuse: no summary to seek by
        try:
            summary = SeekingReader(f).get_summary()
        except McapError:
            summary = None
        assert summary is None
    out = tmp_path / "repaired.mcap"
    result = _coopsim("repair", str(killed), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"repaired {killed} -> {out}: {len(index.chunks)} chunks, ")
    fixed = _index(out)
    assert fixed.complete and len(fixed.chunks) == len(index.chunks)  # every complete chunk
    kept = sum(sum((c.counts or {}).values()) for c in index.chunks)
    assert _all_messages(out) == kept
    with Recording(killed) as before, Recording(out) as after:
        a, b = before.info(), after.info()
        assert (b.frames, b.end, b.robots, b.scenario) == (a.frames, a.end, a.robots, a.scenario)
        assert b.complete and not a.complete
        assert after.frame(b.frames - 1).step == before.frame(a.frames - 1).step


def test_repair_in_place_and_again(killed, tmp_path):
    copy = tmp_path / "copy.mcap"
    shutil.copy(killed, copy)
    report = repair(copy)
    assert (report.output, report.complete, report.damaged) == (str(copy), False, 0)
    assert _index(copy).complete
    assert [p.name for p in tmp_path.iterdir()] == ["copy.mcap"]  # no temporary file left
    again = _coopsim("repair", str(copy))
    assert again.returncode == 0 and "nothing to repair" in again.stdout


def test_info_on_a_killed_recording_names_the_repair_command(killed):
    result = _coopsim("info", str(killed))
    assert result.returncode == 0, result.stderr
    assert f"'coopsim repair {killed}' writes its summary and index" in result.stderr


def test_a_cut_and_a_damaged_chunk_are_left_out(killed, tmp_path):
    chunks = _index(killed).chunks
    data = bytearray(killed.read_bytes())
    second = chunks[1]
    data[second.offset + second.length] ^= 0xFF  # the last byte of its compressed data
    cut = chunks[-1].offset + 20  # the last chunk cut short
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(bytes(data[:cut]))
    report = repair(bad, tmp_path / "fixed.mcap")
    assert (report.chunks, report.damaged) == (len(chunks) - 2, 1)
    assert report.cut == 20
    assert len(_index(tmp_path / "fixed.mcap").chunks) == len(chunks) - 2
    _all_messages(tmp_path / "fixed.mcap")


def test_repair_refuses_what_it_cannot_repair(tmp_path, killed):
    (tmp_path / "text.mcap").write_text("not a recording")
    with pytest.raises(RecordingError, match="not an MCAP file"):
        repair(tmp_path / "text.mcap", tmp_path / "out.mcap")
    assert not (tmp_path / "out.mcap").exists()
    result = _coopsim("repair", str(killed), "-o", str(tmp_path / "text.mcap"))
    assert result.returncode == 2 and "exists" in result.stderr
    assert _coopsim("repair", str(tmp_path / "none.mcap")).returncode == 2
