"""Camera frames on ROS 2's ``/tf`` and Foxglove's ``/tf/cameras``: with each published image,
``R/base_link`` -> ``R/camera3d`` (Foxglove: ``R`` -> ``R/camera3d``) at the camera's mount, an
optical frame (z along the optical axis, x right, y down), the frame the Image and CameraInfo
name; decoded by independent implementations (rosbags' CDR, the Foxglove SDK's encoder)."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest

from coopsim.model.scenery import rotation
from coopsim.plugins.modules.camera3d import Image, Images
from coopsim.ros2 import messages as m
from coopsim.ros2.images import camera_messages

MOUNT = (0.1, -0.02, 0.05, 0.0, 30.0)  # x, y, z m; yaw, pitch deg (30 degrees down)


def _snap(mount):
    class Snap:
        extra = {"camera3d": Images(MappingProxyType({"cf-1": Image(
            5, 0.01, np.zeros((2, 4, 3), np.uint8), None, 60.0, 0.01, 50.0, mount)}))}
    return Snap


def _axes(t) -> np.ndarray:
    """The optical frame's x, y, z axes (columns) in the parent frame, of a transform's
    rotation (x, y, z, w)."""
    q = t.rotation if hasattr(t, "rotation") else t.transform.rotation
    return rotation((q.w, q.x, q.y, q.z))


def _looks_30_down(axes: np.ndarray) -> None:
    s, c = np.sin(np.radians(30.0)), np.cos(np.radians(30.0))
    assert axes[:, 2] == pytest.approx([c, 0.0, -s], abs=1e-12)  # z: the optical axis
    assert axes[:, 0] == pytest.approx([0.0, -1.0, 0.0], abs=1e-12)  # x: the image's right
    assert axes[:, 1] == pytest.approx([-s, 0.0, -c], abs=1e-12)  # y: down the image


def test_ros2_tf_gets_the_camera_frame_the_image_names():
    rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) reads it back")
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    out = {topic: (short, data) for topic, short, data in camera_messages(_snap(MOUNT), {})}
    short, data = out["/tf"]
    assert rosbags and short == m.TF
    tf, = store.deserialize_cdr(data, m.ros_name(m.TF)).transforms
    image = store.deserialize_cdr(out["/cf_1/camera3d/image_raw"][1], m.ros_name(m.IMAGE))
    info = store.deserialize_cdr(out["/cf_1/camera3d/camera_info"][1], m.ros_name(m.CAMERA_INFO))
    assert (tf.header.frame_id, tf.child_frame_id) == ("cf_1/base_link", "cf_1/camera3d")
    assert image.header.frame_id == info.header.frame_id == tf.child_frame_id
    v = tf.transform.translation
    assert (v.x, v.y, v.z) == MOUNT[:3]
    _looks_30_down(_axes(tf))


def test_an_image_without_a_mount_takes_the_scenarios_parameters():
    params = {"cf-1": {"camera3d": dict(zip(("x", "y", "z", "yaw", "pitch"), MOUNT))}}
    with_params = dict((t, d) for t, _, d in camera_messages(_snap(None), {}, params))
    assert with_params["/tf"] == dict((t, d) for t, _, d in
                                      camera_messages(_snap(MOUNT), {}))["/tf"]
    bare = dict((t, d) for t, _, d in camera_messages(_snap(None), {}))["/tf"]
    assert bare != with_params["/tf"]  # no parameters: the module's defaults (0)


def test_foxglove_gets_a_matching_frame_transform():
    fm = pytest.importorskip("foxglove.messages", reason="foxglove-sdk (foxglove extra)")
    from coopsim.foxglove.images import TF_CAMERAS, image_messages
    from coopsim.model.images import optical_pose

    out = dict(image_messages(_snap(MOUNT), 3_000_000_500, {}, lambda t: True))
    x, y, z, qx, qy, qz, qw = optical_pose(MOUNT)
    sdk = fm.FrameTransforms(transforms=[fm.FrameTransform(
        timestamp=fm.Timestamp(sec=3, nsec=500), parent_frame_id="cf-1",
        child_frame_id="cf-1/camera3d", translation=fm.Vector3(x=x, y=y, z=z),
        rotation=fm.Quaternion(x=qx, y=qy, z=qz, w=qw))])
    assert out[TF_CAMERAS] == sdk.encode()
    _looks_30_down(rotation((qw, qx, qy, qz)))
    params = {"cf-1": {"camera3d": dict(zip(("x", "y", "z", "yaw", "pitch"), MOUNT))}}
    recorded = dict(image_messages(_snap(None), 3_000_000_500, {}, lambda t: True, params))
    assert recorded[TF_CAMERAS] == out[TF_CAMERAS]  # a recording's image: the scenario's mount
