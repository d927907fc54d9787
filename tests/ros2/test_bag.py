"""``coopsim export FILE --ros2 OUT``: a rosbag2 folder read back by an independent
implementation (the ``rosbags`` library) and checked against ``coopsim export --csv``."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from coopsim.replay.player import recorded_steps
from coopsim.recording.reader import Recording
from tests.rechelpers import run_cli

rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) reads the bag back")
from rosbags.highlevel import AnyReader  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "recordings" / "sample.mcap"  # the demo: 4 robots, 10 s at 0.01 s

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module")
def bag(tmp_path_factory):
    out = tmp_path_factory.mktemp("bag")
    done = run_cli("export", str(SAMPLE), "--ros2", str(out / "demo"),
                   "--csv", str(out / "demo.csv"), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ROS 2 bag" in done.stderr
    return out / "demo", out / "demo.csv"


def read_bag(path: Path) -> dict:
    """topic -> [(time ns, message)] as rosbags decodes them with the bag's own schemas."""
    out: dict = {}
    with AnyReader([path]) as reader:
        for conn, ns, raw in reader.messages():
            out.setdefault(conn.topic, []).append((ns, reader.deserialize(raw, conn.msgtype)))
        out["types"] = {c.topic: c.msgtype for c in reader.connections}
    return out


def test_the_bag_has_the_bridge_topics_and_types(bag):
    folder, _ = bag
    assert sorted(p.name for p in folder.iterdir()) == ["demo_0.mcap", "metadata.yaml"]
    msgs = read_bag(folder)
    types = msgs["types"]
    assert types["/robot1/odom"] == "nav_msgs/msg/Odometry"
    assert types["/robot1/scan"] == "sensor_msgs/msg/LaserScan"
    assert types["/tf"] == types["/tf_static"] == "tf2_msgs/msg/TFMessage"
    assert types["/map"] == "nav_msgs/msg/OccupancyGrid"
    assert types["/clock"] == "rosgraph_msgs/msg/Clock"
    with Recording(SAMPLE) as rec:
        frames = rec.info().frames
    assert len(msgs["/clock"]) == len(msgs["/robot4/odom"]) == frames  # every recorded step
    assert 95 <= len(msgs["/robot1/scan"]) <= 105  # 10 Hz over 10 s
    assert msgs["/clock"][0][0] == 0 and msgs["/clock"][-1][0] == 10_000_000_000  # sim time


def test_odometry_composed_with_tf_static_is_the_csv_pose(bag):
    folder, csv_path = bag
    msgs = read_bag(folder)
    starts = {t.child_frame_id.split("/")[0]: t.transform
              for t in msgs["/tf_static"][0][1].transforms if t.header.frame_id == "map"}
    rows = list(csv.DictReader(open(csv_path)))
    by_key = {(round(float(r["time"]) * 1e9), r["robot"]): r for r in rows}
    checked = 0
    for robot in ("robot1", "robot2", "robot3", "robot4"):
        s = starts[robot]
        yaw0 = 2 * math.atan2(s.rotation.z, s.rotation.w)
        for ns, odom in msgs[f"/{robot}/odom"][::50]:
            p, q = odom.pose.pose.position, odom.pose.pose.orientation
            x = s.translation.x + p.x * math.cos(yaw0) - p.y * math.sin(yaw0)
            y = s.translation.y + p.x * math.sin(yaw0) + p.y * math.cos(yaw0)
            yaw = math.remainder(yaw0 + 2 * math.atan2(q.z, q.w), 2 * math.pi)
            row = by_key[(ns, robot)]
            assert abs(x - float(row["x"])) < 1e-4 and abs(y - float(row["y"])) < 1e-4
            assert abs(math.remainder(yaw - float(row["theta"]), 2 * math.pi)) < 1e-4
            assert odom.header.frame_id == f"{robot}/odom"
            checked += 1
    assert checked >= 80


def test_scans_are_the_recorded_sonar_from_the_chassis_centre(bag):
    folder, _ = bag
    scans = dict(read_bag(folder)["/robot2/scan"])
    with Recording(SAMPLE) as rec:
        for frame, layout, snap in recorded_steps(rec):
            ns = round(frame.position * 1e9)
            if ns not in scans:
                continue
            scan = scans[ns]
            sonar = snap.reading("robot2", "sonar")
            radius = layout["robots"][1]["radius"]
            expect = np.where(sonar >= 2.0 - 1e-9, np.inf, sonar + radius).astype(np.float32)
            assert np.array_equal(scan.ranges, expect)
            assert math.isclose(scan.range_min, radius, rel_tol=1e-6)
            assert math.isclose(scan.angle_min, -math.pi / 2, rel_tol=1e-6)
    assert scan.header.frame_id == "robot2/laser"


def test_the_map_marks_the_floor_walls(bag):
    grid = read_bag(bag[0])["/map"][0][1]
    cells = np.asarray(grid.data).reshape(grid.info.height, grid.info.width)
    assert (cells[0] == 100).all() and (cells[:, -1] == 100).all()
    assert (cells[1:-1, 1:-1] == 0).mean() > 0.5
    assert math.isclose(grid.info.origin.position.x, -grid.info.width * grid.info.resolution / 2,
                        rel_tol=1e-6)


def test_an_existing_folder_is_never_overwritten(bag, tmp_path):
    target = tmp_path / "taken"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    done = run_cli("export", str(SAMPLE), "--ros2", str(target))
    assert done.returncode == 2 and "already exists" in done.stderr
    assert "Traceback" not in done.stderr
    assert (target / "keep.txt").read_text() == "mine"


def test_a_turtlebots_recorded_lidar_scans_are_its_bag_scans(tmp_path):
    """The lidar records each scan once (its own block); the export rebuilds them step by step
    (Module.replay) and writes them as /tb3/scan at the lidar's rate."""
    rec = tmp_path / "tb3.mcap"
    done = run_cli("run", str(ROOT / "scenarios" / "turtlebot3_wall_follow.scenario"),
                   "--headless", "--port", "0", "--mode", "lockstep", "--duration", "1.2",
                   "--record", str(rec), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "bag"
    done = run_cli("export", str(rec), "--ros2", str(out), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    scans = read_bag(out)["/tb3/scan"]
    assert 5 <= len(scans) <= 8  # 5 Hz over 1.2 s
    with Recording(rec) as recording:
        taken = {round(f.position * 1e9): s.extra["lidar"].of("tb3")
                 for f, _, s in recorded_steps(recording) if "lidar" in s.extra}
    for ns, msg in scans:
        want = taken[ns]
        assert len(msg.ranges) == len(want) == 360
        finite = np.isfinite(msg.ranges)
        assert np.allclose(msg.ranges[finite], want[finite], atol=1e-3)


def test_every_topic_offers_a_qos_profile_list(bag):
    """rosbag2 writes each topic's offered QoS as a YAML list; ``ros2 bag play`` re-offers it.
    /map and /tf_static are transient local, the rest volatile, all reliable."""
    from rosbags.interfaces import QosDurability, QosReliability
    folder, _ = bag
    with AnyReader([folder]) as reader:
        offered = {c.topic: c.ext.offered_qos_profiles for c in reader.connections}
    assert len(offered) >= 12
    for topic, profiles in offered.items():
        assert len(profiles) == 1, topic
        (qos,) = profiles
        assert qos.reliability == QosReliability.RELIABLE, topic
        latched = topic in ("/map", "/tf_static")
        assert qos.durability == (QosDurability.TRANSIENT_LOCAL if latched
                                  else QosDurability.VOLATILE), topic
