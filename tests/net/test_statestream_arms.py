"""The state stream's objects' 3D block (protocol 6): z and the quaternion of every object on an
engine with arms, between the metrics and the robots' 3D block, counted so a protocol-5 reader
still finds every pose, metric and the robots' block; without it the message is protocol 5's."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from coopsim.model.snapshot import Snapshot
from coopsim.net.protocol import Message
from coopsim.net.statestream import POSE3D_WIDTH, decode_state, encode_state
from coopsim.sim.simulation import Simulation

from helpers import box, robot, scenario, step_by_hand


def _snapshot() -> Snapshot:
    """A real run's snapshot (two robots, two boxes, a metric) made a 3D world's: r1 at 1 m,
    box a lifted to 0.4 m and tilted, box b on the floor."""
    sim = Simulation(scenario([robot("r1", 1.0, 2.0, 0.5), robot("r2", -1.0, 0.5, -2.0)],
                              [box("a", 3, 0), box("b", -3, 1)]))
    step_by_hand(sim, 3)
    snap = dataclasses.replace(sim.snapshot, rules={"m": {"metrics": {"d": 4.5}}})
    pose3d = np.array([[*snap.poses[0, :2], 1.0, 1.0, 0.0, 0.0, 0.0],
                       [*snap.poses[1, :2], 0.0, 1.0, 0.0, 0.0, 0.0]])
    half = 0.2
    objects = np.array([[*snap.object_poses[0, :2], 0.4, np.cos(half), 0.0, np.sin(half), 0.0],
                        [*snap.object_poses[1, :2], 0.05, 1.0, 0.0, 0.0, 0.0]])
    return dataclasses.replace(snap, pose3d=pose3d, twist3d=np.zeros((2, 6)),
                               object_pose3d=objects)


def _protocol5_decode(msg: Message):
    """What a protocol-5 reader did (coopsim 0.1's decode_state before version 6): the robots'
    block at the end, n_metrics = n_tail - width * n_robots."""
    step, layout, n, m, k, missed, paused, attached, c = msg.params[:9]
    tail, width = msg.params[9], msg.params[12]
    q = tail - width * n
    data = np.asarray(msg.data, dtype=float)
    if len(data) != 3 + 3 * (n + m + k) + c * n + tail:
        raise ValueError("state message data length does not match its counts")
    cut = np.cumsum([3, 3 * n, 3 * m, 3 * k, c * n, q])
    block = data[cut[5]:].reshape(n, width)[:, :POSE3D_WIDTH]
    return (data[cut[0]:cut[1]].reshape(n, 3), data[cut[1]:cut[2]].reshape(m, 3),
            data[cut[4]:cut[5]], block)


def test_objects_in_3d_add_a_14th_param_and_their_block_before_the_robots():
    snap = _snapshot()
    msg = Message.from_wire(encode_state(snap, "lockstep", 1.0, 1.0, 0, False, 0,
                                         columns=[]).to_wire())
    assert len(msg.params) == 14 and msg.params[12:14] == (5, 5)
    assert msg.params[9] == 1 + 5 * 2 + 5 * 2  # one metric, the objects', the robots'
    assert msg.data[-20:-10] == pytest.approx(snap.object_pose3d[:, 2:].ravel())
    frame = decode_state(msg)
    assert frame.object_pose3d == pytest.approx(snap.object_pose3d)
    assert frame.pose3d == pytest.approx(snap.pose3d)
    assert frame.metrics == pytest.approx([4.5])


def test_a_protocol_5_reader_still_reads_every_pose_metric_and_the_robots_block():
    snap = _snapshot()
    msg = encode_state(snap, "lockstep", 1.0, 1.0, 0, False, 0, columns=[])
    robots, objects, metrics, block = _protocol5_decode(msg)
    assert robots == pytest.approx(snap.poses)
    assert objects == pytest.approx(snap.object_poses)
    assert metrics[0] == 4.5 and len(metrics) == 1 + 10  # the objects' block: unnamed extras
    assert block == pytest.approx(snap.pose3d[:, 2:])


def test_without_the_objects_poses_the_message_is_protocol_5s():
    snap = _snapshot()
    old = encode_state(dataclasses.replace(snap, object_pose3d=None), "lockstep", 1.0, 1.0, 0,
                       False, 0, columns=[])
    assert len(old.params) == 13 and decode_state(old).object_pose3d is None
    flat = encode_state(dataclasses.replace(snap, pose3d=None, twist3d=None), "lockstep", 1.0,
                        1.0, 0, False, 0, columns=[])
    assert len(flat.params) == 12  # a 2D world sends no 3D block, objects' or robots'


def test_a_short_objects_block_is_refused():
    msg = encode_state(_snapshot(), "lockstep", 1.0, 1.0, 0, False, 0, columns=[])
    bad = Message(msg.error, msg.text, msg.command, msg.params[:13] + (3,), msg.data)
    with pytest.raises(ValueError):
        decode_state(bad)
