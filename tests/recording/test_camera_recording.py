"""Camera blobs in a recording (format 3): recorded once per camera update, compactly, and
rebuilt step by step for exports; format 2 files (no blobs) still read, lidar scans and all."""

from pathlib import Path

import numpy as np
import pytest

from coopsim.recording.reader import Recording
from coopsim.replay.player import recorded_steps

from helpers import box, robot, scenario, target
from rechelpers import RECDATA, record


def _spec():
    cams = [robot(f"e{i}", -1.0 + i, 0.0, 0.5 * i, type="epuck",
                  params=[("camera", "fov", 360.0), ("camera", "range", 3.0),
                          ("camera", "rate", 10.0)]) for i in range(3)]
    crate = box("crate", 0.0, 1.0, (0.2, 0.2), mass=0.5)
    crate = crate.__class__(**{**crate.__dict__, "color": (200, 0, 200)})
    return scenario(cams, [crate], targets=[target("green", 0.0, -1.0)], floor=(5.0, 5.0),
                    dt=0.02)


def test_blobs_are_recorded_at_the_cameras_rate_and_come_back_in_exports(tmp_path):
    path = tmp_path / "camera.mcap"
    _, snaps = record(path, 30, spec=_spec())
    with Recording(path) as rec:
        assert rec.meta["format"] == "7"
        entries = [(n, s) for f in rec.iter_frames() if f.modules.get("camera")
                   for n, s in zip(f.modules["camera"]["robots"], f.modules["camera"]["steps"])]
        assert len(entries) == len(set(entries))  # each update once
        # at load (step 0) and every 5th step after, for each of the 3 cameras: 30 steps
        assert len(entries) == 3 * 7
        live = {s.step: s for s in snaps}
        checked = 0
        for frame, _, snap in recorded_steps(rec):
            truth = live[frame.step].extra["camera"].seen
            got = snap.extra["camera"].seen
            assert set(got) == set(truth)
            for name, blobs in truth.items():
                assert got[name].shape == blobs.shape
                assert got[name][:, :3].tolist() == blobs[:, :3].tolist()  # exact colours
                assert got[name][:, 3] == pytest.approx(blobs[:, 3], abs=0.0005)  # mm
                assert got[name][:, 4:] == pytest.approx(blobs[:, 4:], abs=0.00005)
                checked += len(blobs)
        assert checked > 0


def test_a_format_2_recording_without_blobs_still_reads_and_exports_its_scans():
    path = Path(RECDATA) / "format2.mcap"  # written by format 2's coopsim: scans, no blobs
    with Recording(path) as rec:
        assert rec.meta["format"] == "2"
        steps = list(recorded_steps(rec))
        assert len(steps) == rec.info().frames == 61
        last = steps[-1][2]
        assert "camera" not in last.extra  # nothing recorded, nothing made up
        scan = last.extra["lidar"].of("t0")
        assert scan is not None and len(scan) == 90 and np.nanmax(scan) > 0.0


def test_the_docs_decoding_of_the_blobs_gives_what_the_cameras_saw(tmp_path):
    """docs/recording-format.md section 4, *Module records*, followed by hand: four int32 per
    blob (colour, mm, 1e-4 rad, 1e-4 rad), counts per robot, the step each was taken at."""
    path = tmp_path / "camera.mcap"
    _, snaps = record(path, 12, spec=_spec())
    live = {s.step: s for s in snaps}
    decoded = 0
    with Recording(path) as rec:
        for frame in rec.iter_frames():
            entry = frame.modules.get("camera")
            if not entry:
                continue
            words = np.frombuffer(entry["blobs"], dtype="<i4").reshape(-1, 4)
            at = 0
            for name, step, count in zip(entry["robots"], entry["steps"], entry["counts"]):
                mine, at = words[at:at + count], at + count
                truth = live[step].extra["camera"].seen[name]
                rgb = np.stack((mine[:, 0] >> 16, (mine[:, 0] >> 8) & 255, mine[:, 0] & 255), 1)
                assert rgb.tolist() == truth[:, :3].astype(int).tolist()
                assert mine[:, 1] / 1000.0 == pytest.approx(truth[:, 3], abs=0.0005)
                assert mine[:, 2:] / 1e4 == pytest.approx(truth[:, 4:], abs=0.00005)
                decoded += count
            assert at == len(words)
    assert decoded > 0
