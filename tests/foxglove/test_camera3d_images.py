"""Camera images for Foxglove: coopsim's own ``foxglove.RawImage`` encoder writes the bytes the
Foxglove SDK writes, and a published image goes out once, only to a topic someone wants."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest

from coopsim.foxglove.images import image_messages, image_topic, raw_image
from coopsim.plugins.modules.camera3d import Image, Images

foxglove = pytest.importorskip("foxglove", reason="foxglove-sdk (foxglove extra)")


@pytest.mark.parametrize("pixels", [np.arange(24, dtype=np.uint8).reshape(2, 4, 3),
                                    np.array([[1.5, np.inf], [0.25, 3.0]], np.float32)])
def test_the_raw_image_is_the_sdks(pixels):
    from foxglove import messages as fm

    rgb = pixels.ndim == 3
    data = pixels.astype("<f4").tobytes() if not rgb else pixels.tobytes()
    sdk = fm.RawImage(frame_id="cf/camera3d", width=pixels.shape[1], height=pixels.shape[0],
                      encoding="rgb8" if rgb else "32FC1", step=len(data) // pixels.shape[0],
                      data=data, timestamp=fm.Timestamp(sec=3, nsec=500))
    assert raw_image(3_000_000_500, "cf/camera3d", pixels) == sdk.encode()


def test_an_image_goes_out_once_and_only_where_wanted():
    rgb = np.zeros((2, 2, 3), np.uint8)

    class Snap:
        extra = {"camera3d": Images(MappingProxyType(
            {"cf": Image(5, 0.01, rgb, np.ones((2, 2), np.float32), 60.0, 0.01, 50.0)}))}

    sent = {}
    only_rgb = image_messages(Snap, 10, sent, lambda t: t == image_topic("cf"))
    assert [t.name for t, _ in only_rgb] == ["/robots/cf/camera3d"]
    assert image_messages(Snap, 20, sent, lambda t: True) == []  # step 5's image was sent
