"""``coopsim export --ros2`` of a recorded flight: every quadrotor's IMU as sensor_msgs/Imu on
/<robot>/imu, read back by rosbags and compared with the readings the same scenario gives in
process (same scenario and seed: the same run), within the recording's quantisation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coopsim.formats.files import load
from coopsim.recording.reader import Recording
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
from tests.rechelpers import run_cli

pytest.importorskip("mujoco")
rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) reads the bag back")
from rosbags.highlevel import AnyReader  # noqa: E402

FLY = Path(__file__).resolve().parents[1] / "data" / "wire3d" / "fly.scenario"
SECONDS = 1.0  # dt 0.01: 100 steps, the take-off and the eight's start

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def imu_messages(folder: Path) -> dict:
    """topic -> [(time ns, sensor_msgs/Imu)] of the bag's imu topics."""
    out: dict = {}
    with AnyReader([folder]) as reader:
        for conn, ns, raw in reader.messages():
            if conn.topic.endswith("/imu"):
                assert conn.msgtype == "sensor_msgs/msg/Imu"
                out.setdefault(conn.topic, []).append((ns, reader.deserialize(raw, conn.msgtype)))
    return out


def test_the_bag_carries_each_quadrotors_recorded_imu(tmp_path):
    rec, bag = tmp_path / "fly.mcap", tmp_path / "bag"
    done = run_cli("run", str(FLY), "--headless", "--mode", "lockstep", "--port", "0",
                   "--duration", str(SECONDS), "--record", str(rec), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    with Recording(rec) as recording:
        names = [c.name for c in recording.robot_columns]
    assert {"imu_ax", "imu_az", "imu_gz"} <= set(names)  # the recording holds the readings
    done = run_cli("export", str(rec), "--ros2", str(bag), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    msgs = imu_messages(bag)
    assert sorted(msgs) == ["/cf1/imu", "/cf2/imu"]

    stepper = Stepper(Simulation(load(str(FLY))), mode="lockstep")
    live = {}  # (time ns, robot) -> the reading in process: ax, ay, az, gx, gy, gz
    while stepper.snapshot.time < SECONDS - 1e-9:
        snap = stepper.tick()
        for robot in ("cf1", "cf2"):
            live[(round(snap.time * 1e9), robot)] = snap.readings["imu"][snap.index[robot]]
    for robot in ("cf1", "cf2"):
        got = msgs[f"/{robot}/imu"]
        assert len(got) >= len(live) // 2 - 1  # every recorded step
        for ns, msg in got:
            if ns == 0:
                continue  # the start: a reading the run has not taken yet
            a, w = msg.linear_acceleration, msg.angular_velocity
            want = live[(ns, robot)]
            assert msg.header.frame_id == f"{robot}/base_link"
            assert [a.x, a.y, a.z] == pytest.approx(want[:3], abs=6e-5)  # unit 1e-4 m/s^2
            assert [w.x, w.y, w.z] == pytest.approx(want[3:], abs=6e-6)  # unit 1e-5 rad/s
    lift = np.array([m.linear_acceleration.z for _, m in msgs["/cf1/imu"][1:]])
    assert lift.max() > 15.0  # the take-off's push, more than g along body z
    turns = np.array([[m.angular_velocity.x, m.angular_velocity.y] for _, m in msgs["/cf2/imu"]])
    assert np.abs(turns).max() > 0.05  # it rolls or pitches into its eight, and the bag says so
