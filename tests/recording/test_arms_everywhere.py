"""Robot arms outside the engine: a real lockstep run of an ``irb120`` on the mujoco
engine, driven over the network by the Python client (joints set_positions), with a cube at
rest and a box falling, recorded (format 5: the objects' 3D block ``O``, the arm's spec in the
layout, the joint columns), replayed with seeks and over a real ``/sim``, and exported to
Foxglove (read back with the mcap reader and the SDK's protobuf schemas) and to a ROS 2 bag
(read by rosbags, an independent reader): the arm's links, frames and joint states are the
arm's kinematics at the recorded angles, the falling box lands at its height."""

from __future__ import annotations

import dataclasses
import json

import msgpack
import numpy as np
import pytest
from mcap.reader import make_reader

pytest.importorskip("mujoco")

from coopsim.client import Client  # noqa: E402
from coopsim.model.arm import quat_matrix  # noqa: E402
from coopsim.model.armstate import (arm_from_document, arm_world_frames,  # noqa: E402
                                     joint_angles)
from coopsim.model.plugins import ROBOT_TYPES  # noqa: E402
from coopsim.model.specs import ObjectSpec, RobotSpec  # noqa: E402
from coopsim.recording import format as rf  # noqa: E402
from coopsim.recording.reader import Recording  # noqa: E402
from coopsim.replay.player import recorded_steps  # noqa: E402

from fxclient import protobuf_class  # noqa: E402
from helpers import robot, scenario  # noqa: E402
from nethelpers import Peer, live  # noqa: E402
from rechelpers import run_cli  # noqa: E402

GOAL = (0.8, 0.3, -0.2, 0.4, 0.6, -0.5)  # rad, the irb120's six joints

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _spec():
    spec = scenario([robot("irb", 0.0, 0.0, type="irb120")],
                    [ObjectSpec("cube", "box", (0.05, 0.05, 0.05), (0.4, 0.3, 0.025), 0.0, 0.1),
                     ObjectSpec("drop", "box", (0.1, 0.1, 0.1), (1.0, 1.0, 0.3), 0.5, 0.5)],
                    floor=(4.0, 4.0), dt=0.002)
    return dataclasses.replace(spec, settings=dataclasses.replace(spec.settings,
                                                                  engine="mujoco"))


def _arm():
    return ROBOT_TYPES.get("irb120").build(RobotSpec("irb120", "irb")).arms[0]


@pytest.fixture(scope="module")
def run_out(tmp_path_factory):
    """The run recorded, its live /sim state, and the Foxglove and ROS 2 exports."""
    out = tmp_path_factory.mktemp("arms")
    rec = out / "arm.mcap"
    with live(_spec(), record=str(rec)) as run:
        with Client(run.network.endpoint) as client:
            bot = client.robot("irb")
            for _ in bot.loop(steps=400):
                bot.joints.set_positions(*GOAL, 1.0)
            reached = list(bot.joints.read())
            bot.detach()
        sim = Peer(run.network.names.lookup("/sim"))
        try:
            state = json.loads(sim.ok(23)[1])
        finally:
            sim.close()
    done = run_cli("export", str(rec), "--foxglove", str(out / "fox.mcap"), "--ros2",
                   str(out / "bag"), timeout=300)
    assert done.returncode == 0, done.stderr
    return out, state, reached


def test_the_live_state_document_has_the_arm_and_the_objects_in_3d(run_out):
    _, state, reached = run_out
    assert reached[1:7] == pytest.approx(GOAL, abs=2e-3)  # the arm got there
    entry = state["robots"][0]
    assert arm_from_document(entry["arm"]) == _arm()
    assert list(entry)[-4:] == ["arm", "z", "quat", "twist"]
    drop = next(o for o in state["objects"] if o["name"] == "drop")
    assert drop["z"] == pytest.approx(0.05, abs=0.01)  # fell from 0.3 m onto the floor
    assert np.linalg.norm(drop["quat"]) == pytest.approx(1.0)


def test_the_recording_is_format_5_with_the_objects_3d_block_and_seeks(run_out):
    out, _, _ = run_out
    with open(out / "arm.mcap", "rb") as f:
        blocks = [msgpack.unpackb(m.data, raw=False) for _, c, m in
                  make_reader(f).iter_messages() if c.topic == rf.FRAMES_TOPIC]
    assert blocks and all("O" in b and "3" in b for b in blocks)
    with Recording(out / "arm.mcap") as rec:
        assert rec.meta["format"] == "7" and rec.frame_count > 300
        frames = list(rec.iter_frames())
        for k in (rec.frame_count - 1, rec.frame_count // 2, 3):  # seeks back, chunk by chunk
            seek = rec.frame(k)
            assert np.array_equal(seek.object_pose3d, frames[k].object_pose3d)
            assert np.array_equal(rec.robot_values(seek), rec.robot_values(frames[k]),
                                  equal_nan=True)
        assert arm_from_document(rec.layout(0)["robots"][0]["arm"]) == _arm()
        drop = np.array([f.object_pose3d[1, 2] for f in frames])
        assert drop[0] == pytest.approx(0.3, abs=1e-3) and drop[-1] == pytest.approx(0.05,
                                                                                     abs=0.01)
        assert np.all(np.diff(drop[:50]) <= 1e-4)  # falling, then at rest
        cube = frames[-1].object_pose3d[0]
        assert cube[:3] == pytest.approx([0.4, 0.3, 0.025], abs=2e-3)
        steps = list(recorded_steps(rec))
    snap = steps[-1][2]
    assert np.array_equal(snap.object_pose3d, frames[-1].object_pose3d)
    assert joint_angles(snap)[0, :6] == pytest.approx(GOAL, abs=2e-3)  # the angle columns
    assert np.isnan(joint_angles(snap)[0, 6]) or joint_angles(snap)[0, 6] == 0.0


def test_a_replay_answers_the_arm_and_the_objects_heights(run_out):
    from coopsim.replay.servers import Replay

    out, live_state, _ = run_out
    with Recording(out / "arm.mcap") as rec:
        first = rec.frame(0).object_pose3d
    with Replay(str(out / "arm.mcap"), port=0, paused=True) as replay:
        sim = Peer(replay.names.lookup("/sim"))
        try:
            state = json.loads(sim.ok(23)[1])
        finally:
            sim.close()
    assert state["robots"][0]["arm"] == live_state["robots"][0]["arm"]
    for obj, pose in zip(state["objects"], first):  # a paused replay shows the first step
        assert [obj["x"], obj["y"], obj["z"], *obj["quat"]] == pytest.approx(pose.tolist())


def _fox(path):
    out, classes = {}, {}
    with open(path, "rb") as stream:
        for schema, channel, message in make_reader(stream).iter_messages():
            if channel.topic in ("/scene/arms", "/tf/arms", "/scene/bodies"):
                cls = classes.setdefault(schema.id, protobuf_class(schema.name, schema.data))
                out.setdefault(channel.topic, []).append(cls.FromString(message.data))
    return out


def _matrix(translation, rotation) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = quat_matrix((rotation.w, rotation.x, rotation.y, rotation.z))
    t[:3, 3] = translation.x, translation.y, translation.z
    return t


def test_the_foxglove_export_draws_the_arm_and_its_frames(run_out):
    out, _, _ = run_out
    fox = _fox(out / "fox.mcap")
    with Recording(out / "arm.mcap") as rec:
        last = rec.frame(rec.frame_count - 1)
        count = rec.frame_count
    arm = _arm()
    want = arm_world_frames(arm, last.pose3d[0], last_angles(out))  # on its mounting plate
    assert len(fox["/scene/arms"]) == len(fox["/tf/arms"]) == count
    scene = {e.id: e for e in fox["/scene/arms"][-1].entities}
    assert set(scene) == {"arm/irb/base", "arm/irb/gripper"} | {
        f"arm/irb/{l.key}" for l in arm.links}
    for i, link in enumerate(arm.links):
        cyl = scene[f"arm/irb/{link.key}"].cylinders
        a, b = want[i + 1, :3, 3], want[i + 2, :3, 3]
        if np.linalg.norm(b - a) > 1e-6:
            p = cyl[0].pose.position
            assert (p.x, p.y, p.z) == pytest.approx(tuple((a + b) / 2), abs=1e-3)
            assert cyl[0].size.z == pytest.approx(np.linalg.norm(b - a), abs=1e-3)
    tf = fox["/tf/arms"][-1].transforms
    names = [t.child_frame_id for t in tf]
    assert names == ["irb/arm_base"] + [f"irb/{l.key}" for l in arm.links] + ["irb/tool"]
    assert tf[0].parent_frame_id == "irb"
    total = _body(last.pose3d[0])  # the robot's frame, in the world
    for t in tf:
        total = total @ _matrix(t.translation, t.rotation)
    np.testing.assert_allclose(total, want[-1], atol=1e-3)
    drop = {e.id: e for e in fox["/scene/bodies"][-1].entities}["object/drop"].cubes[0]
    assert drop.pose.position.z == pytest.approx(last.object_pose3d[1, 2], abs=1e-6)


def _body(pose7) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = quat_matrix(pose7[3:7]), pose7[:3]
    return t


def last_angles(out) -> np.ndarray:
    with Recording(out / "arm.mcap") as rec:
        snap = list(recorded_steps(rec))[-1][2]
    return joint_angles(snap)[0, :6]


def test_the_ros2_bag_has_joint_states_and_the_links_on_tf(run_out):
    pytest.importorskip("rosbags")
    from rosbags.highlevel import AnyReader

    out, _, _ = run_out
    arm = _arm()
    states, tfs = [], []
    with AnyReader([out / "bag"]) as reader:
        for conn, _, raw in reader.messages():
            if conn.topic == "/irb/joint_states":
                states.append(reader.deserialize(raw, conn.msgtype))
            elif conn.topic == "/tf":
                msg = reader.deserialize(raw, conn.msgtype)
                if any(t.child_frame_id == "irb/tool" for t in msg.transforms):
                    tfs.append(msg)
    q = last_angles(out)
    with Recording(out / "arm.mcap") as rec:
        pose7 = rec.frame(rec.frame_count - 1).pose3d[0]
    assert states and len(states) == len(tfs)
    assert list(states[-1].name) == [l.key for l in arm.links]
    assert list(states[-1].position) == pytest.approx(q.tolist(), abs=1e-9)
    assert len(states[-1].velocity) == 0  # a recording keeps the angles only
    chain_tf = tfs[-1].transforms
    assert chain_tf[0].header.frame_id == "irb/base_link"
    total = np.eye(4)
    for t in chain_tf:
        total = total @ _matrix(t.transform.translation, t.transform.rotation)
    world = arm_world_frames(arm, pose7, q)  # base_link is the robot's body frame
    np.testing.assert_allclose(_body(pose7) @ total, world[-1], atol=1e-6)
