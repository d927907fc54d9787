"""The state stream's 3D block (protocol 5): z and the orientation quaternion of every robot in a
3D world, after the metrics, counted so a protocol-4 reader still reads the message; a 2D world's
message stays protocol 4's, byte for byte."""

from __future__ import annotations

import dataclasses

import msgpack
import numpy as np
import pytest

from coopsim.model.snapshot import Snapshot
from coopsim.net.protocol import Message
from coopsim.net.statestream import POSE3D_WIDTH, decode_state, encode_state
from coopsim.sim.simulation import Simulation

from helpers import box, robot, scenario, step_by_hand


def _snapshot() -> Snapshot:
    """A real 2D run's snapshot: two robots, one box, a few steps in (as a 2D engine makes
    it: no pose3d, whatever features the engine claims)."""
    sim = Simulation(scenario([robot("r1", 1.0, 2.0, 0.5), robot("r2", -1.0, 0.5, -2.0)],
                              [box("b", 3, 0)]))
    step_by_hand(sim, 3)
    return dataclasses.replace(sim.snapshot, pose3d=None, twist3d=None)


def _flying(snap: Snapshot) -> Snapshot:
    """The same snapshot as a 3D world's: r1 at 1 m level, r2 at 2.5 m rolled 0.3 rad."""
    half = 0.15
    pose3d = np.array([[*snap.poses[0, :2], 1.0, 1.0, 0.0, 0.0, 0.0],
                       [*snap.poses[1, :2], 2.5, np.cos(half), np.sin(half), 0.0, 0.0]])
    return dataclasses.replace(snap, pose3d=pose3d, twist3d=np.zeros((2, 6)))


def _protocol4_decode(msg: Message):
    """What a protocol-4 reader did (coopsim 0.1's decode_state): exact length from 12 counts."""
    step, layout, n, m, k, missed, paused, attached, c = msg.params[:9]
    q = msg.params[9]
    data = np.asarray(msg.data, dtype=float)
    if len(data) != 3 + 3 * (n + m + k) + c * n + q:
        raise ValueError("state message data length does not match its counts")
    cut = np.cumsum([3, 3 * n, 3 * m, 3 * k, c * n])
    return (data[cut[0]:cut[1]].reshape(n, 3), data[cut[1]:cut[2]].reshape(m, 3),
            data[cut[3]:cut[4]].reshape(n, c), data[cut[4]:])


def test_a_2d_message_is_protocol_4s_byte_for_byte():
    snap = _snapshot()
    assert snap.pose3d is None
    msg = encode_state(snap, "lockstep", 1.0, 2.0, 0, False, 1, columns=[])
    expected = [0, "lockstep", 1,
                [3, snap.layout_version, 2, 1, 0, 0, 0, 1, 0, 0, 0, 0],
                [snap.time, 1.0, 2.0, *snap.poses.ravel(), *snap.object_poses.ravel()]]
    assert msg.to_wire() == msgpack.packb(expected, use_bin_type=True)
    assert decode_state(msg).pose3d is None


def test_a_3d_message_carries_z_and_the_quaternion_after_the_metrics():
    snap = _flying(_snapshot())
    msg = encode_state(snap, "lockstep", 1.0, 1.0, 0, False, 0, columns=[])
    assert len(msg.params) == 13 and msg.params[12] == POSE3D_WIDTH == 5
    assert msg.params[9] == 0 + 5 * 2  # no metrics: the tail is the 3D block alone
    assert msg.data[-10:] == pytest.approx([1.0, 1.0, 0, 0, 0,
                                            2.5, np.cos(0.15), np.sin(0.15), 0, 0])
    frame = decode_state(Message.from_wire(msg.to_wire()))
    assert frame.pose3d == pytest.approx(snap.pose3d)
    assert frame.robots == pytest.approx(snap.poses)
    assert frame.metrics.shape == (0,)


def test_the_3d_block_leaves_the_metrics_and_columns_where_they_were():
    from coopsim.model.plugins import module_columns

    snap = _flying(dataclasses.replace(_snapshot(), rules={"r": {"metrics": {"a": 7.0}}}))
    columns = module_columns(stream_only=True)
    flat = decode_state(encode_state(dataclasses.replace(snap, pose3d=None), "lockstep",
                                     1, 1, 0, False, 0, columns))
    frame = decode_state(encode_state(snap, "lockstep", 1, 1, 0, False, 0, columns))
    assert frame.metrics.tolist() == flat.metrics.tolist()
    np.testing.assert_array_equal(frame.columns, flat.columns)
    assert frame.pose3d[:, 2].tolist() == [1.0, 2.5]


def test_a_protocol_4_reader_still_reads_a_3d_message():
    """It ignores the 13th param and sees the block as values past the named metrics."""
    snap = _flying(_snapshot())
    robots, objects, columns, tail = _protocol4_decode(
        encode_state(snap, "lockstep", 1.0, 1.0, 0, False, 0, columns=[]))
    assert robots == pytest.approx(snap.poses) and objects == pytest.approx(snap.object_poses)
    assert tail.tolist()[:5] == [1.0, 1.0, 0.0, 0.0, 0.0]


def test_a_wider_block_from_a_later_version_is_read_by_its_first_five_values():
    snap = _flying(_snapshot())
    msg = encode_state(snap, "lockstep", 1.0, 1.0, 0, False, 0, columns=[])
    block = np.asarray(msg.data[-10:]).reshape(2, 5)
    wide = np.concatenate((block, np.full((2, 3), 9.0)), axis=1).ravel()
    params = (*msg.params[:9], 2 * 8, *msg.params[10:12], 8)
    frame = decode_state(Message(0, "lockstep", 1, params, (*msg.data[:-10], *wide)))
    assert frame.pose3d == pytest.approx(snap.pose3d)


@pytest.mark.parametrize("width, tail, why", [
    (3, 6, "at least 5 values per robot, not 3"),
    (5, 9, "does not match its counts"),   # fewer values than two robots' blocks
    (-5, 0, "does not match its counts"),
])
def test_bad_3d_counts_are_refused_with_a_sentence(width, tail, why):
    msg = encode_state(_flying(_snapshot()), "lockstep", 1.0, 1.0, 0, False, 0, columns=[])
    data = msg.data[:len(msg.data) - 10] + (0.0,) * tail
    params = (*msg.params[:9], tail, *msg.params[10:12], width)
    with pytest.raises(ValueError, match=why):
        decode_state(Message(0, "lockstep", 1, params, data))


def _fall_world():
    """A real MuJoCo world: two free bodies let go at 1 m and 2 m (tests/flyhelpers.py)."""
    from coopsim.model.specs import RobotSpec, Settings

    from flyhelpers import flyer_type

    kind = flyer_type()
    return dataclasses.replace(scenario(), robots=(
        RobotSpec(kind, "low", (-1.0, 0.0, 1.0)), RobotSpec(kind, "high", (1.0, 0.0, 2.0))),
        settings=Settings(dt=0.01, mode="lockstep", engine="mujoco"))


def test_a_live_3d_run_streams_its_bodies_altitude_over_a_real_socket():
    pytest.importorskip("mujoco")
    from coopsim.client import Client

    from nethelpers import live

    with live(_fall_world(), paused=True) as run, Client(run.network.endpoint) as client:
        frame = next(client.subscribe_state())
        assert frame.pose3d[:, 2] == pytest.approx([1.0, 2.0], abs=1e-3)
        assert frame.pose3d[:, 3:] == pytest.approx(np.tile([1.0, 0, 0, 0], (2, 1)), abs=1e-6)
        assert frame.pose3d[:, :2] == pytest.approx(frame.robots[:, :2])


def test_a_replay_of_a_3d_recording_streams_the_recorded_altitude(tmp_path):
    pytest.importorskip("mujoco")
    from coopsim.client import Client
    from coopsim.replay.servers import Replay

    from rechelpers import record

    path = tmp_path / "fall.mcap"
    _, truth = record(path, 20, _fall_world(), drive=False)
    with Replay(str(path), port=0) as replay, Client(replay.endpoint) as client:
        frame = next(client.subscribe_state())
        assert frame.mode == "playback" and frame.pose3d is not None
        recorded = {round(s.time, 6): s.pose3d[:, 2] for s in truth}
        assert frame.pose3d[:, 2] == pytest.approx(recorded[round(frame.time, 6)], abs=1e-3)
