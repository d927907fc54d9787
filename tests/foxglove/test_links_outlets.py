"""Robots from description files in recordings, replays, ROS 2 bags and Foxglove exports
(protocol 10's ``links`` and ``link_q`` columns): a headless ``coopsim run --record`` of
example-robot-data's Panda (holding its home angles, fingers open) and the example rover
wandering, then ``coopsim export --ros2`` and ``--foxglove`` of the recording, each read back:
the replay's steps carry every moving joint (the rover's wheels turned by what it rolled), the
bag's ``/tf`` tree and ``joint_states`` are the file's links and joints, and the Foxglove
scene draws each link with its own shapes at the frames ``/tf/arms`` moves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linkhelpers import HOME, panda_section
from rechelpers import run_cli
from test_export import read_back

pytest.importorskip("mujoco")

from coopsim.model.linkposes import (link_columns, link_poses, quat_mul,  # noqa: E402
                                     quat_rotate, row_columns)
from coopsim.recording.reader import Recording  # noqa: E402
from coopsim.replay.player import recorded_steps  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RADIUS = 0.033  # m: the rover's wheels (docs/robots.md)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module")
def outlets(tmp_path_factory):
    """(recording, bag folder, Foxglove MCAP) of a 2 s run of the Panda and the rover."""
    tmp = tmp_path_factory.mktemp("links")
    (tmp / "w.world").write_text("[FLOOR]\nsize 4 4 0.1\n")
    (tmp / "s.scenario").write_text(f"""[WORLD]
file w.world
{panda_section(1, 0.8)}[ROBOT_2]
description {ROOT}/examples/descriptions/rover.urdf
name rover
position -1 0 0
wheels wheel_left_joint wheel_right_joint
sensor sonar base_link
driver wander
[SETTINGS]
engine mujoco
dt 0.01
mode lockstep
seed 1
""")
    rec = tmp / "run.mcap"
    done = run_cli("run", str(tmp / "s.scenario"), "--headless", "--port", "0",
                   "--duration", "2", "--record", str(rec), timeout=300)
    assert done.returncode == 0, done.stderr
    for flag, out in (("--ros2", tmp / "bag"), ("--foxglove", tmp / "fox.mcap")):
        done = run_cli("export", str(rec), flag, str(out), timeout=300)
        assert done.returncode == 0, done.stderr
    return rec, tmp / "bag", tmp / "fox.mcap"


def test_a_replay_has_the_links_and_every_joint(outlets):
    with Recording(outlets[0]) as rec:
        steps = list(recorded_steps(rec))
    layout, snap = steps[-1][1], steps[-1][2]
    panda = next(r for r in layout["robots"] if r["name"] == "panda")
    assert panda["links"]["root"] == "panda_link0" and panda["links"]["columns"] == 9
    assert "link_q1" in layout["columns"] and "posture" in panda["modules"]
    q = link_columns(snap)
    np.testing.assert_allclose(q[snap.index["panda"], :9], HOME, atol=2e-3)  # held at home
    # the wheels turned by what the rover rolled: their mean angle x radius = its path
    poses = np.array([s.poses[s.index["rover"], :2] for _, _, s in steps])
    path = np.linalg.norm(np.diff(poses, axis=0), axis=1).sum()
    left, right = q[snap.index["rover"], :2]
    assert path > 0.1 and (left + right) / 2 * RADIUS == pytest.approx(path, rel=0.05)


def _read_bag(path: Path) -> dict:
    """topic -> [(time ns, message)] as rosbags decodes them (tests/ros2/test_bag.py's)."""
    highlevel = pytest.importorskip("rosbags.highlevel", reason="rosbags (test extra)")
    out: dict = {}
    with highlevel.AnyReader([path]) as reader:
        for conn, ns, raw in reader.messages():
            out.setdefault(conn.topic, []).append((ns, reader.deserialize(raw, conn.msgtype)))
    return out


def test_the_bag_has_every_link_on_tf_and_every_joint(outlets):
    msgs = _read_bag(outlets[1])
    states = msgs["/panda/joint_states"][-1][1]
    assert list(states.name) == [f"panda_joint{k}" for k in range(1, 8)] + [
        "panda_finger_joint1", "panda_finger_joint2"]
    np.testing.assert_allclose(states.position, HOME, atol=2e-3)
    wheels = msgs["/rover/joint_states"][-1][1]
    assert list(wheels.name) == ["wheel_left_joint", "wheel_right_joint"]
    assert min(abs(wheels.position)) > 1.0  # turned
    tree = {t.child_frame_id: t.header.frame_id for _, m in msgs["/tf"][-4:]
            for t in m.transforms}
    assert tree["panda/panda_link0"] == "panda/base_link"
    assert tree["panda/panda_hand"] == "panda/panda_link8"
    assert tree["panda/panda_leftfinger"] == "panda/panda_hand"
    assert tree["rover/wheel_left_link"] == "rover/base_link"  # its root is base_link
    assert "rover/base_link" not in {c for c, p in tree.items() if p == "rover/base_link"}


def test_foxglove_draws_each_link_with_its_shapes_at_its_frame(outlets):
    messages = read_back(outlets[2])
    world = next(d for t, _, _, d in messages if t == "/scene/world")
    links = {e.id: e for e in world.entities if e.id.startswith("link/")}
    hand = links["link/panda/panda_hand"]
    assert hand.frame_id == "panda/panda_hand" and hand.frame_locked
    assert len(hand.triangles) == 1 or len(hand.cubes) == 1  # its mesh (or its bounds' box)
    assert len(links["link/rover/wheel_left_link"].cylinders) == 1
    # the transforms compose to the contract's link poses at the recorded step
    tf = [d for t, _, _, d in messages if t == "/tf/arms"][-1]
    with Recording(outlets[0]) as rec:
        frame, layout, snap = list(recorded_steps(rec))[-1]
    frames = {t.child_frame_id: t for t in tf.transforms}
    panda = next(r for r in layout["robots"] if r["name"] == "panda")
    pose = (*snap.poses[snap.index["panda"], :2], *snap.pose3d[snap.index["panda"], 2:7])
    want = link_poses(panda, pose, row_columns(link_columns(snap)[snap.index["panda"]]))
    xyz, quat = np.array(pose[:3]), np.array(pose[3:])
    for link in ("panda_link0", "panda_link1", "panda_link2", "panda_link3"):
        t = frames[f"panda/{link}"]
        local = np.array([t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z])
        xyz = xyz + quat_rotate(quat, [t.translation.x, t.translation.y, t.translation.z])
        quat = quat_mul(quat, local)
        np.testing.assert_allclose(xyz, want[link][0], atol=1e-6)
