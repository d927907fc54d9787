"""Published ``camera3d`` images in a recording (format 6) and its ROS 2 bag: a Crazyflie's
camera publishing at 100 Hz in a 500 Hz world is recorded at its rate, replays pixel for pixel
(depth to the millimetre), and ``coopsim export --rosbag`` carries them as ``sensor_msgs/Image``
(rgb8, 32FC1) and ``CameraInfo`` that rosbags reads back with the bag's own schemas."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.model.specs import (FloorSpec, ObjectSpec, ParamSetting, RobotSpec,  # noqa: E402
                                 ScenarioSpec, Settings, WorldSpec)
from coopsim.recording.reader import Recording  # noqa: E402
from coopsim.replay.player import recorded_steps  # noqa: E402
from coopsim.ros2.bag import export_ros2  # noqa: E402

from rechelpers import record  # noqa: E402

CAM = (("width", 32), ("height", 24), ("publish", 1), ("rate", 100.0))

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _spec():
    params = tuple(ParamSetting("camera3d", k, v) for k, v in CAM)
    robot = RobotSpec("crazyflie", "cf", (0.0, 0.0, 1.0), params=params)
    box = ObjectSpec("crate", "box", (0.4, 0.6, 0.6), (2.0, 0.0, 1.0), 0.0, 0.0, (200, 30, 30))
    return ScenarioSpec(WorldSpec(FloorSpec(8.0, 8.0)), robots=(robot,), objects=(box,),
                        settings=Settings(dt=0.002, seed=1, engine="mujoco"), name="cam")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("cam") / "cam.mcap"
    _, truth = record(path, 16, spec=_spec(), drive=False)
    return path, truth


def test_the_images_replay_as_they_were_published(recorded):
    path, truth = recorded
    with Recording(path) as rec:
        assert rec.meta["format"] == "7"
        replayed = [snap for _, _, snap in recorded_steps(rec)]
    shots = [s.extra["camera3d"].seen["cf"] for s in replayed if "camera3d" in s.extra]
    # at the camera's rate, each published one period after the step it shows
    assert sorted({s.step for s in shots}) == [0, 5, 10]
    assert [("camera3d" in s.extra) for s in truth] == [("camera3d" in s.extra)
                                                        for s in replayed]
    for snap, again in [(a, b) for a, b in zip(truth, replayed) if "camera3d" in a.extra]:
        mine, theirs = snap.extra["camera3d"].seen["cf"], again.extra["camera3d"].seen["cf"]
        assert mine.step == theirs.step and np.array_equal(mine.rgb, theirs.rgb)
        assert np.abs(mine.depth - theirs.depth).max() <= 0.0005 + 1e-6
        assert (theirs.fov, theirs.near, theirs.far) == (mine.fov, mine.near, mine.far)


def test_the_bag_carries_image_depth_and_camera_info(recorded, tmp_path):
    rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) reads the bag back")
    from rosbags.highlevel import AnyReader

    path, truth = recorded
    with Recording(path) as rec:
        export_ros2(rec, tmp_path / "bag")
    got = {}
    with AnyReader([tmp_path / "bag"]) as reader:
        for conn, _, raw in reader.messages():
            got.setdefault(conn.topic, []).append(reader.deserialize(raw, conn.msgtype))
    assert rosbags and len(got["/cf/camera3d/image_raw"]) == 3
    rgb, depth = got["/cf/camera3d/image_raw"][-1], got["/cf/camera3d/depth"][-1]
    last = truth[-1].extra["camera3d"].seen["cf"]
    assert (rgb.encoding, rgb.width, rgb.height, rgb.step) == ("rgb8", 32, 24, 96)
    assert np.array_equal(np.asarray(rgb.data).reshape(24, 32, 3), last.rgb)
    assert depth.encoding == "32FC1" and depth.header.frame_id == "cf/camera3d"
    metres = np.frombuffer(np.asarray(depth.data, np.uint8).tobytes(), "<f4").reshape(24, 32)
    assert metres[12, 16] == pytest.approx(1.8, abs=0.01)
    info = got["/cf/camera3d/camera_info"][-1]
    assert info.k[0] == pytest.approx(12.0 / np.tan(np.radians(30.0)))
    # ROS's convention, pixel centres at whole numbers: cx = (32 - 1) / 2, cy = (24 - 1) / 2
    assert (info.k[2], info.k[5], info.distortion_model) == (15.5, 11.5, "plumb_bob")


def test_the_foxglove_export_carries_the_images(recorded, tmp_path):
    pytest.importorskip("foxglove", reason="foxglove-sdk (foxglove extra)")
    from mcap.reader import make_reader

    from coopsim.foxglove.export import export_foxglove

    path, _ = recorded
    with Recording(path) as rec:
        export_foxglove(rec, tmp_path / "fox.mcap")
    with open(tmp_path / "fox.mcap", "rb") as f:
        images = [(s.name, c.topic) for s, c, _ in make_reader(f).iter_messages(
            topics=["/robots/cf/camera3d", "/robots/cf/camera3d/depth"])]
    assert images.count(("foxglove.RawImage", "/robots/cf/camera3d")) == 3
    assert len(images) == 6
