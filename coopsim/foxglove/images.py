"""Camera images in Foxglove: each publishing ``camera3d``'s images as ``foxglove.RawImage``.

A camera whose ``publish`` is 1 renders at its ``rate`` (coopsim.plugins.modules.camera3d);
each new image goes out once on ``/robots/<name>/camera3d`` (``rgb8``) and, when it renders
depth, ``/robots/<name>/camera3d/depth`` (``32FC1``, m along the optical axis, +inf for nothing
within far), frame ``<name>/camera3d``; encoded only when someone subscribes. With them,
``/tf/cameras`` (``foxglove.FrameTransforms``) places each image's frame: ``<name>`` (the robot's
frame on ``/tf``) -> ``<name>/camera3d`` at the camera's mount (a recording's images: the
scenario's), an optical frame (z along the
optical axis, x to the image's right, y down it: ROS's REP 103, which Foxglove's camera panels
follow).
"""

from __future__ import annotations

import struct

import numpy as np

from ..model.images import camera_mount, fresh, optical_pose
from .proto import Msg, quaternion4, timestamp, vector3
from .topics import Topic


#: Each camera image's frame: the robot's frame -> ``<robot>/camera3d`` (FrameTransforms)
TF_CAMERAS = Topic("/tf/cameras", "FrameTransforms", (
    "with each camera image: `NAME` (the robot's frame of `/tf`) → `NAME/camera3d` at the "
    "camera's mount (its `x`, `y`, `z`, `yaw`, `pitch`), an optical frame as ROS's (z along "
    "the optical axis, x to the image's right, y down it), so the 3D panel places the image "
    "where the camera is; in an export (the recording holds no mount) at the mount of the "
    "scenario the recording names, as for scans (the module's defaults, 0, when that file no "
    "longer loads)"))


def image_topic(robot: str, depth: bool = False) -> Topic:
    """The RawImage topic of one robot's camera (its depth images with ``depth``:
    ``/robots/NAME/camera3d/depth``): each image a ``camera3d`` whose ``publish`` is 1 renders
    (at its ``rate``), ``rgb8``, and ``32FC1`` depth (m along the optical axis, +inf for
    nothing within far), frame ``NAME/camera3d``; live to whoever subscribes, and in an export
    from the recorded images (recording format 6)."""
    return Topic(f"/robots/{robot}/camera3d" + ("/depth" if depth else ""), "RawImage")


def raw_image(ns: int, frame: str, pixels: np.ndarray) -> bytes:
    """foxglove.RawImage of (h, w, 3) uint8 RGB (``rgb8``) or (h, w) float32 depth
    (``32FC1``), rows top first (field numbers of foxglove/RawImage.proto)."""
    h, w = pixels.shape[:2]
    rgb = pixels.ndim == 3
    data = np.ascontiguousarray(pixels, np.uint8 if rgb else "<f4").tobytes()
    msg = Msg().sub(1, timestamp(ns))
    msg.data += b"\x15" + struct.pack("<I", w) + b"\x1d" + struct.pack("<I", h)  # fixed32 2, 3
    msg.string(4, "rgb8" if rgb else "32FC1")
    msg.data += b"\x2d" + struct.pack("<I", len(data) // h)  # fixed32 5: bytes per row
    return bytes(msg.raw(6, data).string(7, frame).data)


def image_messages(snap, ns: int, sent: dict, wanted,
                   params: dict | None = None) -> list[tuple[Topic, bytes]]:
    """(topic, RawImage) of every image published since the last call that ``wanted(topic)``
    (``sent``: robot name -> the step of its image sent last, updated here), and one
    FrameTransforms of their camera frames on :data:`TF_CAMERAS` when wanted (``params``:
    robot -> module -> values, the mount of an image without one)."""
    out, frames = [], Msg()
    for name, shot in fresh(snap.extra.get("camera3d"), sent):
        for topic, pixels in ((image_topic(name), shot.rgb), (image_topic(name, True), shot.depth)):
            if pixels is not None and wanted(topic):
                out.append((topic, raw_image(ns, f"{name}/camera3d", pixels)))
        x, y, z, *q = optical_pose(camera_mount(shot, name, params))
        frames.sub(1, Msg().sub(1, timestamp(ns)).string(2, name).string(3, f"{name}/camera3d")
                   .sub(4, vector3(x, y, z)).sub(5, quaternion4(*q)))
    if frames.data and wanted(TF_CAMERAS):
        out.append((TF_CAMERAS, bytes(frames.data)))
    return out
