"""CDR, the byte layout of ROS 2 messages on the DDS wire and in rosbag2 files.

Plain XCDR1, little endian, as ROS 2's RMW layers write it (a ``final`` struct: no member
headers): a four-byte encapsulation header ``00 01 00 00``, then every primitive aligned to its
own size (8 at most) counted from the first byte after the header; strings as a uint32 length
that counts the closing NUL, the bytes, the NUL; sequences as a uint32 count then the elements.
Only what coopsim's topics need is here: :class:`Writer` builds messages, :class:`Reader` reads
the few coopsim subscribes to (``geometry_msgs/Twist``) and backs the tests.
"""

from __future__ import annotations

import struct

import numpy as np

from ..model.errors import CoopsimError

HEADER = b"\x00\x01\x00\x00"  # CDR_LE: plain CDR, little endian, no options
_HEADERS_LE = (b"\x00\x01", b"\x00\x03")  # CDR_LE and PL_CDR_LE: a Twist reads the same


class CdrError(CoopsimError):
    """A CDR payload is malformed (too short, big endian, a length past its end)."""


class Writer:
    """Append primitives to a CDR payload, aligned as CDR wants."""

    def __init__(self) -> None:
        self.buf = bytearray(HEADER)

    def _align(self, size: int) -> None:
        pad = -(len(self.buf) - 4) % size
        if pad:
            self.buf += b"\x00" * pad

    def _put(self, fmt: str, size: int, *values) -> int:
        """Append values of one primitive kind; return the offset of the first."""
        self._align(size)
        at = len(self.buf)
        self.buf += struct.pack("<" + fmt, *values)
        return at

    def u32(self, *v: int) -> int:
        return self._put(f"{len(v)}I", 4, *v)

    def i32(self, *v: int) -> int:
        return self._put(f"{len(v)}i", 4, *v)

    def f32(self, *v: float) -> int:
        return self._put(f"{len(v)}f", 4, *v)

    def f64(self, *v: float) -> int:
        return self._put(f"{len(v)}d", 8, *v)

    def time(self, ns: int) -> int:
        """builtin_interfaces/Time: int32 sec, uint32 nanosec; return its offset."""
        sec, nsec = divmod(int(ns), 1_000_000_000)
        at = self.i32(sec)
        self.u32(nsec)
        return at

    def string(self, text: str) -> None:
        data = text.encode("utf-8")
        self.u32(len(data) + 1)
        self.buf += data + b"\x00"

    def f32_seq(self, values) -> int:
        """sequence<float>: the count, then the values; return the offset of the values."""
        values = np.asarray(values, dtype="<f4")
        self.u32(len(values))
        at = len(self.buf)
        self.buf += values.tobytes()
        return at

    def i8_seq(self, values) -> None:
        values = np.asarray(values, dtype=np.int8)
        self.u32(len(values))
        self.buf += values.tobytes()

    def seq(self, count: int) -> None:
        """The count of a sequence of structs (the structs follow)."""
        self.u32(count)

    def header(self, ns: int, frame: str) -> int:
        """std_msgs/Header; return the offset of its stamp."""
        at = self.time(ns)
        self.string(frame)
        return at

    def bytes(self) -> bytes:
        return bytes(self.buf)


class Reader:
    """Read primitives from a CDR payload in order (little endian only)."""

    def __init__(self, data: bytes) -> None:
        if len(data) < 4 or bytes(data[:2]) not in _HEADERS_LE:
            raise CdrError("not a little-endian CDR payload")
        self.data, self.pos = bytes(data), 4

    def _get(self, fmt: str, size: int, count: int = 1) -> tuple:
        self.pos += -(self.pos - 4) % size
        end = self.pos + size * count
        if end > len(self.data):
            raise CdrError(f"payload ends at byte {len(self.data)}, needs {end}")
        values = struct.unpack_from(f"<{count}{fmt}", self.data, self.pos)
        self.pos = end
        return values

    def f64(self, count: int = 1) -> tuple:
        return self._get("d", 8, count)

    def f32(self, count: int = 1) -> tuple:
        return self._get("f", 4, count)

    def u32(self, count: int = 1) -> tuple:
        return self._get("I", 4, count)

    def i32(self, count: int = 1) -> tuple:
        return self._get("i", 4, count)

    def string(self) -> str:
        (n,) = self.u32()
        if n == 0 or self.pos + n > len(self.data):
            raise CdrError(f"string of {n} bytes past the payload's end")
        text = self.data[self.pos:self.pos + n - 1]
        self.pos += n
        return text.decode("utf-8", errors="replace")

    def time(self) -> int:
        (sec,) = self.i32()
        (nsec,) = self.u32()
        return sec * 1_000_000_000 + nsec
