"""Image reads for the Python client: ``bot.camera3d.read()`` -> a numpy array.

The reply's text holds the images (:mod:`coopsim.model.images` says how); this turns it into
an :class:`ImageReading`: the RGB image (h, w, 3) uint8 when one came, else the depth image
(h, w) float32 m, with the other, the step, the time and the intrinsics as attributes. From a
server of protocol 11 the read asks for the pixels in a ZeroMQ frame of their own (the word
``frame``): the arrays are then views of the received frame, no base64, no copy.
"""

from __future__ import annotations

import numpy as np

from ..model.images import FRAME, ImageReading, decode, framed

IMAGE_MODULES = ("camera3d",)  # modules whose read replies carry images
IMAGE_FRAMES_SINCE = 11  # the protocol version whose camera reads take the word ``frame``


def image_reading(reply) -> ImageReading:
    """The :class:`ImageReading` of a camera read's reply (params [step, width, height], data
    [time, fx, fy, cx, cy, near, far])."""
    step, width, height = reply.params[:3]
    images = decode(reply.text, width, height, reply.frames[0] if reply.frames else None)
    first = images.get("rgb", images.get("depth"))
    out = np.asarray(first).view(ImageReading)
    out.rgb, out.depth = images.get("rgb"), images.get("depth")
    out.step, out.time = step, reply.data[0]
    out.k, (out.near, out.far) = tuple(reply.data[1:5]), reply.data[5:7]
    return out


def framed_text(text: str, frames: bool) -> str:
    """A camera read's text, ending with the word ``frame`` when ``frames`` (the server
    speaks protocol 11) and the caller did not put it there."""
    return f"{text} {FRAME}".strip() if frames and not framed(text) else text
