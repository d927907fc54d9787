"""Range finders in Foxglove: a TurtleBot3's lidar scans as foxglove.LaserScan, per robot, at
the lidar's rate, in the export (from the recorded scans) and live through the bridge; the
sonar stays drawn as rays (no scan topic); nothing in coopsim/foxglove names a module."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fxclient import FoxgloveClient
from rechelpers import run_cli

from coopsim.app.run import Run, RunOptions, load_scenario_or_world
from coopsim.recording.reader import Recording
from coopsim.replay.player import recorded_steps

pytest.importorskip("foxglove")

WORLD = """[FLOOR]
size        6 6 0.05

[WALL_1]
type        box
size        0.2 4 0.5
position    1.5 0 0.25
"""

SCENARIO = """[WORLD]
file        scans.world

[ROBOT_1]
type        turtlebot3
name        tb
position    0 0 0
param       lidar.rate 5
param       lidar.beams 90
param       lidar.fov 270

[ROBOT_2]
type        single
name        sonar_bot
position    -2 -2 0

[SETTINGS]
dt          0.02
mode        {mode}
seed        2
"""


def _files(folder, mode="lockstep"):
    (folder / "scans.world").write_text(WORLD)
    path = folder / "scans.scenario"
    path.write_text(SCENARIO.format(mode=mode))
    return path


@pytest.mark.slow
def test_the_export_draws_each_lidar_scan_at_its_rate(tmp_path):
    from test_export import read_back

    rec, out = tmp_path / "run.mcap", tmp_path / "fox.mcap"
    done = run_cli("run", str(_files(tmp_path)), "--headless", "--port", "0", "--duration", "1",
                   "--record", str(rec))
    assert done.returncode == 0, done.stderr
    done = run_cli("export", str(rec), "--foxglove", str(out))
    assert done.returncode == 0, done.stderr
    messages = read_back(out)
    scans = [(ns, m) for topic, schema, ns, m in messages if topic == "/robots/tb/scan"]
    assert {schema for topic, schema, _, _ in messages if topic == "/robots/tb/scan"} == {
        "foxglove.LaserScan"}
    assert not any(topic.endswith("/scan") and "sonar_bot" in topic for topic, *_ in messages)
    assert len(scans) == 6  # 5 Hz over 1 s: at 0, 0.2, ..., 1.0 s
    with Recording(rec) as recording:
        truth = {round(frame.position * 1e9): snap.extra["lidar"].of("tb")
                 for frame, _, snap in recorded_steps(recording)}
    for ns, scan in scans:
        assert scan.frame_id == "tb" and scan.timestamp.ToNanoseconds() == ns
        assert scan.pose.position.x == pytest.approx(-0.032)  # the Burger's LDS mount
        assert scan.start_angle == pytest.approx(-math.radians(135))
        assert scan.end_angle == pytest.approx(math.radians(135))
        ranges = np.array(scan.ranges)
        mine = truth[ns]
        assert len(ranges) == 90
        hit = (mine >= 0.12) & (mine < 3.5)  # returns; the rest (nothing seen) are NaN
        assert np.isnan(ranges[~hit]).all() and hit.any() and (~hit).any()
        assert ranges[hit] == pytest.approx(mine[hit])
    ahead = np.array(scans[0][1].ranges)[45]  # the beam along the axis: the wall 1.4 m off
    assert ahead == pytest.approx(1.4 + 0.032, abs=0.002)


def test_the_live_bridge_publishes_scans_to_whoever_listens(tmp_path):
    options = RunOptions(mode="realtime", port=0, controllers=False, foxglove=0,
                         foxglove_rate=20.0)
    with Run(load_scenario_or_world(_files(tmp_path, "realtime")), options) as run:
        run.start()
        with FoxgloveClient(run.foxglove.url, lambda t: t.endswith("/scan")) as client:
            got = client.receive(lambda g: len(g.get("/robots/tb/scan", ())) >= 3)
            schemas = {c["topic"]: c["schemaName"] for c in client.channels.values()}
    assert schemas["/robots/tb/scan"] == "foxglove.LaserScan"
    assert "/robots/sonar_bot/scan" not in schemas
    ns, scan = got["/robots/tb/scan"][-1]
    assert len(scan.ranges) == 90 and scan.frame_id == "tb"
    stamps = [n for n, _ in got["/robots/tb/scan"]]
    assert stamps == sorted(stamps)
