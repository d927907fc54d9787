"""A small protobuf writer for Foxglove's schemas, with *slots*: doubles whose bytes a frame
fills in later.

Foxglove decodes its well-known schemas (``foxglove.SceneUpdate``...) as protobuf. Building one
SDK object per primitive costs tens of microseconds of Python per robot, held under the GIL the
stepper needs; so a message is encoded once per layout as a template whose moving doubles
(poses, ray ends) are :class:`Slot` s written as fixed 8-byte fields, and each frame writes all
the slots' values into a copy of the template with one numpy scatter (:class:`Template`). A slot
is written even when its value is zero (proto3 decoders accept that), so a template's length
never depends on its values; fixed zeros are left out as proto3 does. Field numbers are those
of the schemas the SDK ships (``foxglove.messages.X.get_schema()``); the tests decode every
message with them.
"""

from __future__ import annotations

import struct

import numpy as np

_DOUBLE = struct.Struct("<d")


class Slot(int):
    """Index of a double in a frame's value vector (a placeholder in a template)."""


STAMP_WIDTH = 5  # bytes of each padded varint of a stamped Timestamp (35 bits: s and ns)


def padded_varint(n: int, width: int = STAMP_WIDTH) -> bytes:
    """``n`` as a varint of exactly ``width`` bytes (protobuf readers accept over-long
    varints), so a template keeps its length whatever time it carries."""
    out = bytearray()
    for k in range(width):
        byte = (n >> (7 * k)) & 0x7F
        out.append(byte | (0x80 if k < width - 1 else 0))
    return bytes(out)


def varint(n: int) -> bytes:
    """``n`` (>= 0) as a protobuf varint."""
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


class Msg:
    """One message being written: its bytes and the slots in them (byte offset, slot)."""

    __slots__ = ("data", "slots", "stamps")

    def __init__(self) -> None:
        self.data = bytearray()
        self.slots: list[tuple[int, int]] = []
        self.stamps: list[int] = []  # offsets of stamped Timestamps' seconds varints

    def stamp(self, field: int) -> "Msg":
        """A google.protobuf.Timestamp field whose time each frame fills (:meth:`Template.fill`)."""
        self.data += varint(field << 3 | 2) + varint(2 * (1 + STAMP_WIDTH)) + varint(1 << 3)
        self.stamps.append(len(self.data))
        self.data += bytes(STAMP_WIDTH) + varint(2 << 3) + bytes(STAMP_WIDTH)
        return self

    def double(self, field: int, value) -> "Msg":
        """A double field: a number (left out when 0, proto3's default), or a :class:`Slot`
        filled per frame (always written, so the template's length is fixed)."""
        if isinstance(value, Slot):
            self.data += varint(field << 3 | 1)
            self.slots.append((len(self.data), int(value)))
            self.data += bytes(8)
        elif float(value) != 0.0:
            self.data += varint(field << 3 | 1) + _DOUBLE.pack(float(value))
        return self

    def uint(self, field: int, value: int) -> "Msg":
        """A varint field (enums, bools, uint32, int64 >= 0)."""
        self.data += varint(field << 3) + varint(int(value))
        return self

    def string(self, field: int, text: str) -> "Msg":
        """A string field (UTF-8)."""
        return self.raw(field, text.encode("utf-8"))

    def raw(self, field: int, data: bytes) -> "Msg":
        """A length-delimited field of ready bytes."""
        self.data += varint(field << 3 | 2) + varint(len(data)) + data
        return self

    def sub(self, field: int, msg: "Msg") -> "Msg":
        """A nested message field; its slots move with it."""
        self.data += varint(field << 3 | 2) + varint(len(msg.data))
        base = len(self.data)
        self.slots += [(base + offset, slot) for offset, slot in msg.slots]
        self.stamps += [base + offset for offset in msg.stamps]
        self.data += msg.data
        return self


# -- the Foxglove messages coopsim writes (field numbers of foxglove/*.proto) ----------------------

def vector3(x, y, z) -> Msg:
    """foxglove.Vector3 / foxglove.Point3 (m)."""
    return Msg().double(1, x).double(2, y).double(3, z)


def quaternion(z, w) -> Msg:
    """foxglove.Quaternion of a turn about the vertical axis: (0, 0, z, w)."""
    return Msg().double(1, 0.0).double(2, 0.0).double(3, z).double(4, w)


def pose(x, y, z, qz, qw) -> Msg:
    """foxglove.Pose: position (m) and a yaw-only orientation."""
    return Msg().sub(1, vector3(x, y, z)).sub(2, quaternion(qz, qw))


def quaternion4(x, y, z, w) -> Msg:
    """foxglove.Quaternion of any rotation (x, y, z, w)."""
    return Msg().double(1, x).double(2, y).double(3, z).double(4, w)


def pose3(x, y, z, qx, qy, qz, qw) -> Msg:
    """foxglove.Pose: position (m) and any orientation (a 3D world's bodies)."""
    return Msg().sub(1, vector3(x, y, z)).sub(2, quaternion4(qx, qy, qz, qw))


def color(rgb, alpha: float = 1.0) -> Msg:
    """foxglove.Color from [R, G, B] 0-255."""
    r, g, b = (float(c) / 255.0 for c in rgb[:3])
    return Msg().double(1, r).double(2, g).double(3, b).double(4, alpha)


def timestamp(ns: int) -> Msg:
    """google.protobuf.Timestamp of ``ns`` nanoseconds."""
    return Msg().uint(1, ns // 1_000_000_000).uint(2, ns % 1_000_000_000)


WORLD = "world"  # the root frame


def world_entity(ident: str) -> Msg:
    """A SceneEntity in the world frame, stamped each frame."""
    return Msg().stamp(1).string(2, WORLD).string(3, ident)


class Template:
    """A message encoded once, whose slots each frame fills.

    Args:
        msg: The message, its slots numbered 0 .. count - 1.
        count: Number of slots (the length of the value vector :meth:`fill` takes).
    """

    def __init__(self, msg: Msg, count: int) -> None:
        self.data = np.frombuffer(bytes(msg.data), dtype=np.uint8)
        self.count = count
        if msg.slots:
            offsets, slots = np.array(msg.slots, dtype=np.int64).T
        else:
            offsets = slots = np.zeros(0, dtype=np.int64)
        self._bytes = (offsets[:, None] + np.arange(8)).ravel()
        self._slots = slots
        # each stamp: the seconds varint, a 1-byte key, the nanoseconds varint
        stamps = np.array(msg.stamps, dtype=np.int64)
        self._stamp_bytes = (stamps[:, None] + np.arange(2 * STAMP_WIDTH + 1)).ravel()
        self._stamps = len(stamps)

    def fill(self, values: np.ndarray, ns: int = 0) -> np.ndarray:
        """The message (uint8 array) with slot ``k`` set to ``values[k]`` (float64) and every
        stamped Timestamp set to ``ns`` nanoseconds."""
        out = self.data.copy()
        if len(self._slots):
            picked = np.ascontiguousarray(values, dtype="<f8")[self._slots]
            out[self._bytes] = picked.view(np.uint8)
        if self._stamps:
            stamp = (padded_varint(ns // 1_000_000_000) + varint(2 << 3)
                     + padded_varint(ns % 1_000_000_000))
            out[self._stamp_bytes] = np.tile(np.frombuffer(stamp, np.uint8), self._stamps)
        return out
