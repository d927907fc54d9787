"""A full disk while recording is said at once -- one line on the terminal, ``recording_error`` in
``/sim state``, the viewer's status bar -- the run goes on, and the summary counts right: steps
written, dropped (the disk fell behind) and lost to the failure.

The disk is filled at the OS edge: the run is a real process under RLIMIT_FSIZE (tests/
prochelpers.py), so its writes past the limit fail with EFBIG ("File too large"), as they would
with ENOSPC on a full disk; nothing in coopsim is mocked.
"""

from __future__ import annotations

import re
import signal
import time

import pytest

from coopsim.client import Client
from coopsim.client.connection import RemoteError
from coopsim.net import protocol as p
from coopsim.recording.reader import Recording

from prochelpers import ROOT, Coopsim

SCENARIO = str(ROOT / "scenarios" / "demo.scenario")

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _wait(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_full_disk_mid_run_is_said_at_once_and_counted_right(tmp_path):
    out = tmp_path / "full.mcap"
    run = Coopsim("run", SCENARIO, "--headless", "--no-controllers", "--port", "0",
                  "--speed", "0", "--duration", "100000", "--record", str(out), cwd=tmp_path,
                  fsize=24 * 1024)
    try:
        endpoint = run.endpoint()
        line = run.wait_for(r"coopsim: recording to .* failed after \d+ steps written: "
                            r"File too large; the run goes on without recording").group(0)
        assert str(out) in line
        assert run.proc.poll() is None  # the run goes on
        with Client(endpoint) as client:
            state = client.sim().state()
            assert state["recording"] == str(out)
            assert state["recording_error"] == line[len("coopsim: "):]
            steps = client.sim().status()["step"]
            _wait(lambda: client.sim().status()["step"] > steps + 100)  # still stepping
        _viewer_shows(endpoint, line[len("coopsim: "):])
        run.proc.send_signal(signal.SIGTERM)
        assert run.finish() == 0
    finally:
        run.kill()
    summary = next(x for x in run.err if x.startswith("recording: ") and "written" in x)
    match = re.fullmatch(rf"recording: (\d+) steps written to {re.escape(str(out))}"
                         r"(?:; (\d+) dropped \(the disk fell behind\))?"
                         r"; (\d+) lost when writing failed: File too large"
                         rf" \('coopsim repair {re.escape(str(out))}' indexes the steps "
                         r"written\)", summary)
    assert match, summary
    written, dropped, lost = (int(g or 0) for g in match.groups())
    taken = int(next(re.fullmatch(r"steps\s+(\d+)", x) for x in run.out
                     if x.startswith("steps")).group(1))
    assert written + dropped + lost == taken + 1  # every step, and the state it started from
    assert written > 0 and lost > 0
    with Recording(out) as rec:  # complete chunks reached the file; a cut one does not count
        assert written <= rec.info().frames <= written + 100


def _viewer_shows(endpoint: str, error: str) -> None:
    """The viewer's status bar (its link to the run, its status line) shows the failure."""
    pytest.importorskip("imgui_bundle")
    from coopsim.viewer.connection import Link
    from coopsim.viewer.hud import status_parts, status_text

    link = Link(endpoint).start()
    try:
        _wait(lambda: link.connected and link.frame is not None
              and (link.run or {}).get("recorder_error"))
        parts = status_parts(link)
        assert (f"RECORDER ERROR: {error}", "error") in parts
        assert f"RECORDER ERROR: {error}" in status_text(parts)
    finally:
        link.close()


def test_record_on_a_full_disk_is_a_clear_error_and_leaves_no_file(tmp_path):
    run = Coopsim("run", str(ROOT / "scenarios" / "one_robot.scenario"), "--headless",
                  "--no-controllers", "--port", "0", cwd=tmp_path, fsize=1024)
    try:
        with Client(run.endpoint()) as client:
            sim = client.sim()
            with pytest.raises(RemoteError) as info:
                sim.record(True, "big.mcap")
            assert info.value.code == p.FAILED
            assert info.value.text == (f"cannot record to {tmp_path / 'recordings' / 'big.mcap'}"
                                       ": File too large (nothing was recorded; the file was "
                                       "removed)")
            assert list((tmp_path / "recordings").iterdir()) == []
            assert sim.state()["recording"] == "" and sim.state()["recording_error"] == ""
            assert sim.status()["step"] >= 0  # /sim still answers
    finally:
        run.kill()
