"""CameraInfo's K in ROS's convention: pixel centres at whole numbers, so
the centre of MuJoCo's symmetric frustum is at ((width - 1) / 2, (height - 1) / 2), the same
in the camera3d read's data and the ROS 2 CameraInfo (the Foxglove bridge sends none)."""

from __future__ import annotations

import math
import struct

import pytest

from coopsim.model.images import intrinsics


def test_the_principal_point_is_the_middle_pixel_centre():
    fx, fy, cx, cy = intrinsics(640, 480, 60.0)
    assert (cx, cy) == (319.5, 239.5)
    assert fx == fy == pytest.approx(240.0 / math.tan(math.radians(30.0)))
    assert intrinsics(1, 1, 60.0)[2:] == (0.0, 0.0)  # one pixel: its centre is 0


def test_the_ros2_camera_info_carries_it_in_k_and_p():
    images = pytest.importorskip("coopsim.ros2.images")
    info = images.camera_info(0, "cam", 640, 480, 60.0)
    fx = intrinsics(640, 480, 60.0)[0]
    k = struct.pack("<9d", fx, 0.0, 319.5, 0.0, fx, 239.5, 0.0, 0.0, 1.0)
    p = struct.pack("<12d", fx, 0.0, 319.5, 0.0, 0.0, fx, 239.5, 0.0, 0.0, 0.0, 1.0, 0.0)
    assert k in info and p in info
