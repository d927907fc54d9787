"""Camera images as ROS 2 messages: ``sensor_msgs/Image`` and ``sensor_msgs/CameraInfo``.

Every ``camera3d`` that publishes (its ``publish`` 1: rendered at its ``rate``, coopsim.plugins
.modules.camera3d) gives, each time it renders, ``/R/camera3d/image_raw`` (R: the robot's ROS name) (``rgb8``),
``/R/camera3d/depth`` (``32FC1``, metres along the optical axis, +inf for nothing within
far, REP 118) when it renders depth, and ``/R/camera3d/camera_info`` (the pinhole model:
``plumb_bob`` with no distortion, K and P from the field of view), all in the frame
``R/camera3d``: the live bridge (``coopsim run --ros2``) and ``coopsim export --rosbag``
(from a recording's images, format 6) alike. With the images, ``/tf`` gets ``R/base_link`` ->
``R/camera3d`` at the camera's mount: an optical frame (REP 103: z along the optical axis, x to
the image's right, y down it), from the mount the camera rendered at (live) or the scenario's
(a recording's images).
"""

from __future__ import annotations

import numpy as np

from ..model.images import camera_mount, fresh, intrinsics, optical_pose
from .cdr import Writer
from .messages import CAMERA_INFO, IMAGE, TF
from .scene import ros_robot
from .scenery import transforms3d


def image(ns: int, frame: str, pixels: np.ndarray) -> bytes:
    """sensor_msgs/Image of (h, w, 3) uint8 RGB (``rgb8``) or (h, w) float32 depth
    (``32FC1``), rows top first, little-endian."""
    h, w = pixels.shape[:2]
    rgb = pixels.ndim == 3
    data = np.ascontiguousarray(pixels, np.uint8 if rgb else "<f4").tobytes()
    out = Writer()
    out.header(ns, frame)
    out.u32(h, w)
    out.string("rgb8" if rgb else "32FC1")
    out.buf += b"\x00"  # is_bigendian
    out.u32(len(data) // h)  # step: bytes per row
    out.u32(len(data))
    out.buf += data
    return out.bytes()


def camera_info(ns: int, frame: str, width: int, height: int, fov: float) -> bytes:
    """sensor_msgs/CameraInfo of an undistorted pinhole camera of vertical ``fov`` (deg)."""
    fx, fy, cx, cy = intrinsics(width, height, fov)
    out = Writer()
    out.header(ns, frame)
    out.u32(height, width)
    out.string("plumb_bob")
    out.u32(5)
    out.f64(*(0.0,) * 5)
    out.f64(fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0)
    out.f64(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    out.f64(fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0)
    out.u32(0, 0, 0, 0, 0, 0)
    out.buf += b"\x00"  # roi.do_rectify
    return out.bytes()


def camera_messages(snap, sent: dict,
                    params: dict | None = None) -> list[tuple[str, str, bytes]]:
    """(topic, type, message) of every image published since the last call (``sent``: robot
    name -> the step of its image sent last, updated here), and one ``/tf`` of their camera
    frames; ``params`` (robot -> module -> values) gives the mount of an image without one.
    Each header is stamped with the sim time of the step its image shows (the image's
    ``time``, ns), not the later step that publishes it: one image, one stamp, however late
    the bridge got to it."""
    out, frames = [], []
    for robot, shot in fresh(snap.extra.get("camera3d"), sent):
        name, ns = ros_robot(robot), round(shot.time * 1e9)
        frames.append((ns, f"{name}/base_link", f"{name}/camera3d",
                       *optical_pose(camera_mount(shot, robot, params))))
        frame, h, w = f"{name}/camera3d", *shot.rgb.shape[:2]
        out.append((f"/{name}/camera3d/image_raw", IMAGE, image(ns, frame, shot.rgb)))
        if shot.depth is not None:
            out.append((f"/{name}/camera3d/depth", IMAGE, image(ns, frame, shot.depth)))
        out.append((f"/{name}/camera3d/camera_info", CAMERA_INFO,
                    camera_info(ns, frame, w, h, shot.fov)))
    return out + ([("/tf", TF, transforms3d(frames))] if frames else [])

