"""3D worlds on the wire, in recordings and in every export: a real
run of two crazyflies on the mujoco engine (tests/data/wire3d/fly.scenario) is recorded
(format 4), replayed with seeks, exported to CSV (z, roll, pitch), Foxglove (read back with the
mcap reader) and a ROS 2 bag (decoded by rosbags); its live ``/sim state`` carries z, quat and
twist over a real socket, a 2D run's does not."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import msgpack
import numpy as np
import pytest
from mcap.reader import make_reader

pytest.importorskip("mujoco")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.snapshot import quat_matrices, zyx_euler  # noqa: E402
from coopsim.recording import format as rf  # noqa: E402
from coopsim.recording.csvexport import CSV_HEADER  # noqa: E402
from coopsim.recording.reader import Recording  # noqa: E402
from coopsim.replay.player import recorded_steps  # noqa: E402

from fxclient import protobuf_class  # noqa: E402
from helpers import robot, scenario  # noqa: E402
from nethelpers import Peer, live  # noqa: E402
from rechelpers import run_cli  # noqa: E402

FLY = Path(__file__).resolve().parents[1] / "data" / "wire3d" / "fly.scenario"


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    """1 s of the two crazyflies recorded, then exported to CSV, Foxglove and a ROS 2 bag."""
    out = tmp_path_factory.mktemp("fly")
    rec = out / "fly.mcap"
    done = run_cli("run", str(FLY), "--headless", "--port", "0", "--duration", "1",
                   "--record", str(rec), timeout=300)
    assert done.returncode == 0, done.stderr
    done = run_cli("export", str(rec), "--csv", str(out / "fly.csv"), "--foxglove",
                   str(out / "fox.mcap"), "--ros2", str(out / "bag"), timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def _blocks(path: Path) -> list[dict]:
    with open(path, "rb") as f:
        return [msgpack.unpackb(m.data, raw=False) for _, c, m in make_reader(f).iter_messages()
                if c.topic == rf.FRAMES_TOPIC]


@pytest.mark.slow
def test_a_3d_recording_is_format_4_and_seeks_to_its_3d_poses(flown):
    with Recording(flown / "fly.mcap") as rec:
        assert rec.meta["format"] == "7" and rec.frame_count > 50
        last = rec.frame(rec.frame_count - 1)
        middle = rec.frame(rec.frame_count // 2)  # seek back into an earlier chunk
        first = rec.frame(0)
        for frame in (last, middle, first):
            assert frame.pose3d.shape == (2, 7) and frame.twist3d.shape == (2, 6)
            np.testing.assert_allclose(np.linalg.norm(frame.pose3d[:, 3:7], axis=1), 1.0)
            np.testing.assert_allclose(frame.pose3d[:, :2], frame.robots[:, :2])
        assert first.pose3d[:, 2] == pytest.approx([0.0, 0.0], abs=0.05)  # on the floor
        assert (last.pose3d[:, 2] > 0.2).all()  # took off
        tilted = np.abs(zyx_euler(np.concatenate([f.pose3d[:, 3:7] for f in
                                                  rec.iter_frames()]))[:, :2]).max()
        assert tilted > 0.01  # a real attitude, not a planar yaw
        steps = list(recorded_steps(rec))
    snap = steps[-1][2]
    assert np.array_equal(snap.pose3d, last.pose3d) and np.array_equal(snap.twist3d, last.twist3d)
    assert all("3" in b for b in _blocks(flown / "fly.mcap"))


@pytest.mark.slow
def test_a_2d_recording_has_no_3d_values(tmp_path):
    spec = tmp_path / "flat.scenario"
    spec.write_text(FLY.read_text().replace("engine      mujoco", "engine      pymunk")
                    .replace("crazyflie", "single").replace("driver      flight", "# ")
                    .replace("file        fly.world", f"file        {FLY.parent}/fly.world"))
    done = run_cli("run", str(spec), "--headless", "--port", "0", "--duration", "0.2",
                   "--record", str(tmp_path / "flat.mcap"))
    assert done.returncode == 0, done.stderr
    assert not any("3" in b for b in _blocks(tmp_path / "flat.mcap"))
    with Recording(tmp_path / "flat.mcap") as rec:
        assert rec.frame(0).pose3d is None and list(recorded_steps(rec))[0][2].pose3d is None


@pytest.mark.slow
def test_the_csv_adds_z_roll_and_pitch_for_a_3d_recording(flown):
    with open(flown / "fly.csv", newline="") as f:
        table = list(csv.reader(f))
    assert tuple(table[0]) == CSV_HEADER + ("z", "roll", "pitch")
    with Recording(flown / "fly.mcap") as rec:
        frame = rec.frame(rec.frame_count - 1)
    rows = table[-2:]
    angles = zyx_euler(frame.pose3d[:, 3:7])
    for k, row in enumerate(rows):
        z, roll, pitch = (float(v) for v in row[-3:])
        assert (z, roll, pitch) == pytest.approx(
            (frame.pose3d[k, 2], angles[k, 0], angles[k, 1]), abs=6e-5)


@pytest.mark.slow
def test_the_foxglove_export_carries_z_and_orientation(flown):
    with Recording(flown / "fly.mcap") as rec:
        frames = list(rec.iter_frames())
    tf_msgs, scenes, classes = [], [], {}
    with open(flown / "fox.mcap", "rb") as stream:
        for schema, channel, message in make_reader(stream).iter_messages():
            if channel.topic in ("/tf", "/scene/bodies"):
                cls = classes.setdefault(schema.id, protobuf_class(schema.name, schema.data))
                (tf_msgs if channel.topic == "/tf" else scenes).append(
                    cls.FromString(message.data))
    assert len(tf_msgs) == len(frames) == len(scenes)
    for frame, tf, scene in list(zip(frames, tf_msgs, scenes))[::20]:
        for i, t in enumerate(tf.transforms):
            x, y, z, qw, qx, qy, qz = frame.pose3d[i]
            assert (t.translation.x, t.translation.y, t.translation.z) == pytest.approx(
                (x, y, z), abs=1e-9)
            assert (t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w) == pytest.approx(
                (qx, qy, qz, qw), abs=1e-9)
        bodies = {e.id: e for e in scene.entities}
        for i, name in enumerate(("cf1", "cf2")):
            entity = bodies[f"robot/{name}"]
            assert len(entity.cylinders) == 4 and len(entity.cubes) == 1  # rotors and body
            rot = quat_matrices(frame.pose3d[i, 3:7])[0]
            centres = np.array([[c.pose.position.x, c.pose.position.y, c.pose.position.z]
                                for c in entity.cylinders])
            local = (centres - frame.pose3d[i, :3]) @ rot  # back into the body frame
            assert np.abs(local[:, 2] - local[0, 2]).max() < 1e-9  # one plane: the body's
            assert local[:, 2] == pytest.approx(0.015, abs=1e-9)


@pytest.mark.slow
def test_the_ros2_bag_carries_3d_odometry(flown):
    rosbags = pytest.importorskip("rosbags")  # noqa: F841
    from rosbags.highlevel import AnyReader
    odom = {}
    with AnyReader([flown / "bag"]) as reader:
        for conn, ns, raw in reader.messages():
            if conn.topic.endswith("/odom"):
                odom.setdefault(conn.topic, []).append(reader.deserialize(raw, conn.msgtype))
    with Recording(flown / "fly.mcap") as rec:
        frames = list(rec.iter_frames())
    start = frames[0].pose3d
    for i, name in enumerate(("cf1", "cf2")):
        msgs = odom[f"/{name}/odom"]
        assert len(msgs) == len(frames)
        msg, frame = msgs[-1], frames[-1]
        yaw0 = float(zyx_euler(start[i, 3:7])[0, 2])
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        assert p.z == pytest.approx(frame.pose3d[i, 2], abs=1e-9)
        # odom -> base_link composed with the start's turn is the world orientation
        world = quat_matrices([[math.cos(yaw0 / 2), 0, 0, math.sin(yaw0 / 2)]])[0] @ \
            quat_matrices([[q.w, q.x, q.y, q.z]])[0]
        np.testing.assert_allclose(world, quat_matrices(frame.pose3d[i, 3:7])[0], atol=1e-4)
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        body_v = quat_matrices(frame.pose3d[i, 3:7])[0].T @ frame.twist3d[i, :3]
        assert (v.x, v.y, v.z) == pytest.approx(tuple(body_v), abs=1e-9)
        assert (w.x, w.y, w.z) == pytest.approx(tuple(frame.twist3d[i, 3:]), abs=1e-9)


def test_sim_state_over_a_socket_has_z_quat_and_twist_only_in_3d():
    for spec, three in ((load(str(FLY)), True), (scenario(robots=[robot("r1")]), False)):
        with live(spec, paused=True) as run:
            sim = Peer(run.network.names.lookup("/sim"))
            try:
                sim.ok(4, params=[40])
                state = json.loads(sim.ok(23)[1])
                snap = run.stepper.snapshot
            finally:
                sim.close()
        for i, r in enumerate(state["robots"]):
            if not three:
                assert not {"z", "quat", "twist"} & set(r)
                continue
            assert list(r)[-3:] == ["z", "quat", "twist"]
            assert [r["x"], r["y"], r["z"], *r["quat"]] == pytest.approx(snap.pose3d[i].tolist())
            assert r["twist"] == pytest.approx(snap.twist3d[i].tolist())
