"""Camera images on the wire: what a ``camera3d`` read's reply holds, encoded and decoded.

A reply carries one or two images (RGB, depth, or both) in its text, one line each::

    <encoding> <format> <base64 of the pixels>

* ``encoding`` is ROS's (``sensor_msgs/Image``): ``rgb8`` (height x width x 3 bytes, rows top
  first, R G B), ``32FC1`` (depth: float32 little-endian, metres along the optical axis, +inf
  where nothing lies within ``far``) or ``16UC1`` (depth in millimetres, 0 where nothing lies
  within ``far``: a PNG's depth);
* ``format`` is ``raw`` (the bytes as described) or ``png`` (a PNG file: 8-bit RGB for
  ``rgb8``, 16-bit grey for ``16UC1``);
* base64 is RFC 4648's standard alphabet, padded (as the radio's payloads: the message's text is
  UTF-8, so bytes travel as base64).

The reply's params are ``[step, width, height]`` and its data ``[time s, fx, fy, cx, cy, near,
far]``: the step and simulated time the image shows and the pinhole intrinsics in pixels
(ROS's ``CameraInfo`` K). Numpy and the standard library only: clients on a robot use it.

Protocol 11: a read whose text ends with the word ``frame`` gets the pixels raw in one ZeroMQ
frame after the message's (no base64: the cost of a large image); each line of the text then
says where its image lies in that frame::

    <encoding> <format> frame <offset> <length>

(bytes, the images one after the other in the lines' order).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from .armstate import matrix_quaternion
from .errors import ProtocolError

KINDS = ("rgb", "depth", "rgbd")  # what a read asks for (the request's first word)
FORMATS = ("raw", "png")  # how the pixels travel (the request's second word)
FRAME = "frame"  # the request's last word for the pixels in a frame of their own (protocol 11)
PNG_LEVEL = 1  # zlib level: a camera image compresses about as well at 1 as at 9, 5x faster
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

#: Bytes of render memory kept after an image (shared memory, read-back buffers): beyond, it is
#: released once nothing renders, so a huge read's megabytes are not kept for the next one.
KEEP_BYTES = 8 << 20


@dataclass(frozen=True)
class View:
    """One camera's view to render, world frame.

    Attributes:
        pos: (3,) the optical centre, m. forward: (3,) unit vector along the optical axis.
        up: (3,) unit vector, the image's up direction.
        fov: Vertical field of view, degrees. near, far: Clipping distances, m.
        width, height: Image size, pixels. depth: Whether a depth image is wanted too.
    """

    pos: tuple
    forward: tuple
    up: tuple
    fov: float
    near: float
    far: float
    width: int
    height: int
    depth: bool = False


def intrinsics(width: int, height: int, fov: float) -> tuple[float, float, float, float]:
    """(fx, fy, cx, cy) in pixels of a pinhole camera of vertical field of view ``fov`` (deg)
    with square pixels; (cx, cy) the image centre in ROS's (OpenCV's) convention, where pixel
    centres are at whole numbers: the first pixel's centre is 0, so the centre of a symmetric
    frustum (as MuJoCo renders) is at ((width - 1) / 2, (height - 1) / 2)."""
    f = 0.5 * height / math.tan(math.radians(fov) / 2.0)
    return f, f, 0.5 * (width - 1), 0.5 * (height - 1)


MOUNT = ("x", "y", "z", "yaw", "pitch")  # a camera's mount parameters (m, m, m, deg, deg)


def optical_pose(mount) -> tuple[float, ...]:
    """(x, y, z m, qx, qy, qz, qw) of a camera's optical frame in its body's frame: at the
    mount point (x, y, z m), looking along the body's +x turned by yaw (deg, + left) and tilted
    by pitch (deg, + down); ROS's optical convention (REP 103): z along the optical axis, x to
    the image's right, y down it. ``mount``: those five values (a missing one is 0)."""
    x, y, z, yaw, pitch = (float(v) for v in (tuple(mount) + (0.0,) * 5)[:5])
    cy, sy = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    cp, sp = math.cos(math.radians(pitch)), math.sin(math.radians(pitch))
    forward = np.array([cp * cy, cp * sy, -sp])  # as the renderer's view (camera3d.view)
    down = -np.array([sp * cy, sp * sy, cp])
    rot = np.stack([np.cross(down, forward), down, forward], axis=1)  # columns x, y, z
    return (x, y, z, *matrix_quaternion(rot))


def camera_mount(shot, robot: str, params: dict | None) -> tuple:
    """x, y, z (m), yaw, pitch (deg) of the camera that rendered ``shot`` (a published image):
    its own ``mount``, else robot ``robot``'s ``camera3d`` parameters in ``params`` (robot ->
    module -> values: a recording's images carry no mount), else the module's defaults (0)."""
    if getattr(shot, "mount", None) is not None:
        return shot.mount
    values = ((params or {}).get(robot) or {}).get("camera3d") or {}
    return tuple(float(values.get(k, 0.0)) for k in MOUNT)


def fresh(board, sent: dict) -> list[tuple[str, object]]:
    """(robot name, image) of each camera image on ``board`` (a camera's published images:
    ``.seen``, name -> image with a ``step``; None for none) not sent yet; ``sent`` (robot
    name -> the step of its image sent last) is updated: what a bridge publishes once."""
    out = []
    for name, shot in (board.seen.items() if board is not None else ()):
        if sent.get(name) != shot.step:
            sent[name] = shot.step
            out.append((name, shot))
    return out


def parse_request(text: str) -> tuple[str, str]:
    """(kind, format) a read's text asks for: ``[rgb|depth|rgbd] [raw|png] [frame]``, default
    ``rgb raw`` (whether it ends with ``frame``: :func:`framed`).

    Raises:
        ProtocolError: OUT_OF_RANGE (4) naming the words allowed.
    """
    from .commands import OUT_OF_RANGE

    words = text.split()
    if framed(text):
        words.pop()
    kind = words[0] if words else "rgb"
    fmt = words[1] if len(words) > 1 else "raw"
    if kind not in KINDS or fmt not in FORMATS or len(words) > 2:
        raise ProtocolError(OUT_OF_RANGE, f"camera3d read takes the text '[rgb|depth|rgbd] "
                                          f"[raw|png] [frame]', not {text!r}")
    return kind, fmt


def framed(text: str) -> bool:
    """Whether a read's text asks for the pixels in a frame of their own (its last word is
    ``frame``, protocol 11)."""
    return text.split()[-1:] == [FRAME]


def _blobs(rgb: np.ndarray | None, depth: np.ndarray | None, fmt: str) -> list:
    """(encoding, bytes-like) of each image: raw pixels are views of the arrays, no copy."""
    out = []
    if rgb is not None:
        out.append(("rgb8", png(rgb) if fmt == "png" else
                    memoryview(np.ascontiguousarray(rgb, np.uint8)).cast("B")))
    if depth is not None:
        out.append(("16UC1", png(depth_mm(depth))) if fmt == "png" else
                   ("32FC1", memoryview(np.ascontiguousarray(depth, "<f4")).cast("B")))
    return out


def encode(rgb: np.ndarray | None, depth: np.ndarray | None, fmt: str) -> str:
    """The reply's text for an (h, w, 3) uint8 ``rgb`` and/or an (h, w) float32 ``depth`` (m,
    +inf: nothing within far), each None when not asked for."""
    return "\n".join(f"{encoding} {fmt} {base64.b64encode(blob).decode()}"
                     for encoding, blob in _blobs(rgb, depth, fmt))


def encode_frame(rgb: np.ndarray | None, depth: np.ndarray | None,
                 fmt: str) -> tuple[str, bytes]:
    """(text, frame) of a ``frame`` read's reply (protocol 11): the text one line per image,
    ``<encoding> <format> frame <offset> <length>`` (bytes), the frame the images one after
    the other: bytes of its own (one copy), so ZeroMQ may send it uncopied while the renderer
    reuses its buffers."""
    blobs, lines, at = _blobs(rgb, depth, fmt), [], 0
    for encoding, blob in blobs:
        lines.append(f"{encoding} {fmt} {FRAME} {at} {len(blob)}")
        at += len(blob)
    return "\n".join(lines), b"".join(b for _, b in blobs)


def inline(text: str, frame) -> str:
    """A ``frame`` reply's text with each image back in it as base64 (the JSON gateway's
    lines carry no binary frame)."""
    lines = []
    for line in text.split("\n") if text else ():
        encoding, fmt, where = (line.split(" ", 2) + ["", ""])[:3]
        blob = _framed_blob(where, frame)
        lines.append(line if blob is None else
                     f"{encoding} {fmt} {base64.b64encode(blob).decode()}")
    return "\n".join(lines)


def _framed_blob(where: str, frame):
    """The bytes (a view) a line's ``frame <offset> <length>`` names in ``frame``; None when
    the line carries its image as base64.

    Raises:
        ValueError: a place outside the frame.
    """
    if not where.startswith(FRAME + " "):  # base64 (no spaces): not split, it is megabytes
        return None
    words = where.split(" ")
    if frame is None or len(words) != 3 or not words[1].isdigit() or not words[2].isdigit():
        raise ValueError(f"an image line says {where!r} but no frame holds it")
    at, size, view = int(words[1]), int(words[2]), memoryview(frame).cast("B")
    if at + size > len(view):
        raise ValueError(f"an image of {size} bytes at {at} in a frame of {len(view)}")
    return view[at:at + size]


def depth_mm(depth: np.ndarray) -> np.ndarray:
    """Depth (m, +inf for none) as uint16 millimetres, 0 for none or beyond 65.535 m."""
    mm = np.rint(np.where(np.isfinite(depth), depth, 0.0) * 1000.0)
    return np.where(mm > 65535, 0, mm).astype(np.uint16)


def decode(text: str, width: int, height: int, frame=None) -> dict[str, np.ndarray]:
    """The images of a reply's text: ``{"rgb": (h, w, 3) uint8, "depth": (h, w) float32 m}``
    (a ``16UC1`` depth comes back in metres, +inf where it read 0). ``frame`` is the reply's
    pixel frame (protocol 11, bytes-like) when it had one: raw images are views of it, no copy.

    Raises:
        ValueError: a line that is no image of that size.
    """
    out = {}
    for line in text.split("\n") if text else ():  # not splitlines(): 10x slower on 3 MB
        encoding, fmt, data = (line.split(" ", 2) + ["", ""])[:3]
        blob = _framed_blob(data, frame)
        if blob is None:
            blob = binascii.a2b_base64(data)
        if fmt == "png":
            pixels = unpng(bytes(blob))
        else:
            dtype, shape = {"rgb8": (np.uint8, (height, width, 3)),
                            "32FC1": ("<f4", (height, width))}[encoding]
            pixels = np.frombuffer(blob, dtype=dtype).reshape(shape)
        if encoding == "16UC1":
            pixels = np.where(pixels == 0, np.inf, pixels / 1000.0).astype(np.float32)
        if pixels.shape[:2] != (height, width):
            raise ValueError(f"a {encoding} image of {pixels.shape[1]}x{pixels.shape[0]}, "
                             f"not {width}x{height}")
        out["rgb" if encoding == "rgb8" else "depth"] = pixels
    return out


def png(pixels: np.ndarray) -> bytes:
    """A PNG file of (h, w, 3) uint8 RGB or (h, w) uint16 grey pixels (filter 0 on every row:
    what :func:`unpng` reads back, and any PNG reader)."""
    h, w = pixels.shape[:2]
    if pixels.ndim == 3:
        rows, kind, bits = np.ascontiguousarray(pixels, np.uint8).reshape(h, w * 3), 2, 8
    else:
        rows, kind, bits = np.ascontiguousarray(pixels, ">u2").view(np.uint8).reshape(h, -1), 0, 16
    body = np.empty((h, rows.shape[1] + 1), np.uint8)
    body[:, 0], body[:, 1:] = 0, rows
    header = struct.pack(">IIBBBBB", w, h, bits, kind, 0, 0, 0)
    return _PNG_MAGIC + _chunk(b"IHDR", header) + \
        _chunk(b"IDAT", zlib.compress(body.tobytes(), PNG_LEVEL)) + _chunk(b"IEND", b"")


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + \
        struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def unpng(blob: bytes) -> np.ndarray:
    """The pixels of a PNG :func:`png` wrote (8-bit RGB or 16-bit grey, rows filtered with
    0 None or 2 Up).

    Raises:
        ValueError: not such a PNG.
    """
    if not blob.startswith(_PNG_MAGIC):
        raise ValueError("not a PNG file")
    at, idat, header = 8, [], None
    while at + 8 <= len(blob):
        size, kind = struct.unpack(">I4s", blob[at:at + 8])
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", blob[at + 8:at + 21])
        elif kind == b"IDAT":
            idat.append(blob[at + 8:at + 8 + size])
        at += 12 + size
    if header is None or header[2:4] not in ((8, 2), (16, 0)) or header[6]:
        raise ValueError("a PNG coopsim reads is 8-bit RGB or 16-bit grey, not interlaced")
    w, h, bits = header[0], header[1], header[2]
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(h, -1)
    rows = raw[:, 1:].copy()
    for i in range(h):
        if raw[i, 0] == 2 and i:
            rows[i] += rows[i - 1]
        elif raw[i, 0] not in (0, 2):
            raise ValueError(f"PNG row filter {raw[i, 0]} (coopsim reads 0 and 2)")
    if bits == 8:
        return rows.reshape(h, w, 3)
    return rows.view(">u2").reshape(h, w).astype(np.uint16)


class ImageReading(np.ndarray):
    """A camera image as a numpy array, with the reply's header: what ``bot.camera3d.read()``
    gives on both hosts (the Python client, coopsim.client.images; an in-process driver,
    ``Camera3d.read_local``). The RGB image (h, w, 3) uint8 when one came, else the depth image
    (h, w) float32 m.

    Attributes:
        rgb: (h, w, 3) uint8 or None. depth: (h, w) float32 m (+inf: nothing within far) or None.
        step: The step it shows. time: Its simulated time, s.
        k: (fx, fy, cx, cy) pixels. near, far: Clipping distances, m.
    """

    rgb = depth = None
    step, time, k, near, far = 0, 0.0, (), 0.0, 0.0
