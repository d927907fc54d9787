"""The tables of contents a Crazyflie serves: its log variables and its parameters, each with
an id (its place in the table), a type, a group and a name, and the table's CRC32 (cflib keeps a
fetched table under that CRC and skips the download when it sees the CRC again).

Which variables a Crazyflie has depends on what it carries: ``range.zrange`` only where it has
an ``altimeter`` (the flow deck's downward ranger). Units are the firmware's: m, m/s, Gs for
accelerations, degrees for angles, deg/s for rates, mm for ranges.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass

# log variable types (the log TOC's type byte): code -> (struct format, lowest, highest)
LOG_TYPES = {1: ("<B", 0, 255), 2: ("<H", 0, 65535), 3: ("<I", 0, 2**32 - 1),
             4: ("<b", -128, 127), 5: ("<h", -32768, 32767), 6: ("<i", -2**31, 2**31 - 1),
             7: ("<f", None, None), 8: ("<e", None, None)}
U8, U16, U32, I8, I16, I32, FLOAT, FP16 = 1, 2, 3, 4, 5, 6, 7, 8

# parameter types (the param TOC's type byte, low nibble): code -> struct format
PARAM_TYPES = {0x00: "<b", 0x01: "<h", 0x02: "<i", 0x03: "<q", 0x05: "<e", 0x06: "<f",
               0x07: "<d", 0x08: "<B", 0x09: "<H", 0x0A: "<I", 0x0B: "<Q"}
P_U8, P_U16, P_U32, P_FLOAT = 0x08, 0x09, 0x0A, 0x06
READ_ONLY = 0x40  #: the param type byte's read-only flag


@dataclass(frozen=True)
class Entry:
    """One TOC entry: ``group.name`` of type ``kind`` (a LOG_TYPES or PARAM_TYPES code)."""

    group: str
    name: str
    kind: int
    read_only: bool = False

    @property
    def full(self) -> str:
        return f"{self.group}.{self.name}"

    def item(self) -> bytes:
        """The TOC item's body after the id: type byte, group and name each NUL-ended."""
        kind = self.kind | (READ_ONLY if self.read_only else 0)
        return bytes((kind,)) + self.group.encode() + b"\0" + self.name.encode() + b"\0"


class Toc:
    """A table of contents: entries by id and by full name, and the CRC32 over them."""

    def __init__(self, entries) -> None:
        self.entries = tuple(entries)
        self.ids = {e.full: i for i, e in enumerate(self.entries)}
        self.crc = zlib.crc32(b"".join(e.item() for e in self.entries))

    def __len__(self) -> int:
        return len(self.entries)

    def info(self, command: int) -> bytes:
        """The TOC info answer (v2): command, count (u16), CRC32, and the firmware's two
        limits (16 log blocks, 128 variables) that cflib reads past."""
        return struct.pack("<BHIBB", command, len(self.entries), self.crc, 16, 128)


_AXES = ("x", "y", "z")


def log_entries(altimeter: bool) -> list[Entry]:
    """The log TOC of a Crazyflie (``altimeter``: it carries the downward ranger)."""
    out = [Entry("stateEstimate", n, FLOAT) for n in (
        "x", "y", "z", "vx", "vy", "vz", "ax", "ay", "az", "roll", "pitch", "yaw",
        "qx", "qy", "qz", "qw")]
    out += [Entry("stateEstimateZ", n, I16) for n in (
        "x", "y", "z", "vx", "vy", "vz", "rateRoll", "ratePitch", "rateYaw")]
    out += [Entry("stabilizer", n, FLOAT) for n in ("roll", "pitch", "yaw", "thrust")]
    out += [Entry("ctrltarget", n, FLOAT) for n in (
        "x", "y", "z", "vx", "vy", "vz", "ax", "ay", "az", "roll", "pitch", "yaw")]
    out += [Entry("kalman", n, FLOAT) for n in (
        "stateX", "stateY", "stateZ", "statePX", "statePY", "statePZ",
        "varX", "varY", "varZ", "varPX", "varPY", "varPZ")]
    out += [Entry("acc", a, FLOAT) for a in _AXES]
    out += [Entry("gyro", a, FLOAT) for a in _AXES]
    out += [Entry("motor", f"m{k}", U16) for k in range(1, 5)]
    out += [Entry("locSrv", n, FLOAT) for n in ("x", "y", "z", "qx", "qy", "qz", "qw")]
    out += [Entry("pm", "vbat", FLOAT), Entry("pm", "batteryLevel", U8),
            Entry("pm", "state", I8)]
    out += [Entry("sys", n, U8) for n in ("canfly", "isFlying", "isTumbled")]
    out += [Entry("supervisor", "info", U16)]
    if altimeter:
        out.append(Entry("range", "zrange", U16))
    return out


#: What a log group holds, where coopsim's differs from what the name says or needs a word.
LOG_GROUPS = {
    "stateEstimate": "roll, pitch, yaw in degrees",
    "stateEstimateZ": "mm, mm/s, mrad/s",
    "kalman": "`var*` a constant 1e-6: the estimate is exact",
    "acc": "Gs, body frame",
    "gyro": "deg/s",
    "motor": "commanded power",
    "locSrv": "the last extpos",
    "pm": "`vbat` a constant 3.9 V: coopsim models no battery",
    "range": "`zrange`, mm, where the Crazyflie carries the `altimeter` (the flow deck's "
             "ranger; the multiranger's `range.front..up` exist where a ranging module would: "
             "the `crazyflie` type carries none)",
}

#: What a parameter group does, where it needs a word.
PARAM_GROUPS = {
    "stabilizer": "`estimator` and `controller` accepted: one estimator and one controller fly",
    "motorPowerSet": "drives the motors directly",
    "deck": "read only (`bcFlow2` 1 with an altimeter)",
    "firmware": "read only",
    "cpu": "read only",
}

#: The parameters every Crazyflie serves: (group, name, type, read only, default).
PARAMS = (
    ("commander", "enHighLevel", P_U8, False, 1),
    ("stabilizer", "estimator", P_U8, False, 2),
    ("stabilizer", "controller", P_U8, False, 1),
    ("stabilizer", "stop", P_U8, False, 0),
    ("kalman", "resetEstimation", P_U8, False, 0),
    ("kalman", "initialX", P_FLOAT, False, 0.0),
    ("kalman", "initialY", P_FLOAT, False, 0.0),
    ("kalman", "initialZ", P_FLOAT, False, 0.0),
    ("kalman", "initialYaw", P_FLOAT, False, 0.0),
    ("locSrv", "extPosStdDev", P_FLOAT, False, 0.01),
    ("locSrv", "extQuatStdDev", P_FLOAT, False, 4.5e-3),
    ("posCtlPid", "xyVelMax", P_FLOAT, False, 1.0),
    ("posCtlPid", "zVelMax", P_FLOAT, False, 1.0),
    ("hlCommander", "vtoff", P_FLOAT, False, 0.5),
    ("hlCommander", "vland", P_FLOAT, False, 0.2),
    ("motorPowerSet", "enable", P_U8, False, 0),
    ("motorPowerSet", "m1", P_U16, False, 0),
    ("motorPowerSet", "m2", P_U16, False, 0),
    ("motorPowerSet", "m3", P_U16, False, 0),
    ("motorPowerSet", "m4", P_U16, False, 0),
    # every deck driver's presence flag, as a stock firmware has them (cfclient reads the
    # flow, z-ranger, lighthouse, loco and LED-ring ones when it connects)
    ("deck", "bcFlow", P_U8, True, 0),
    ("deck", "bcFlow2", P_U8, True, 0),  # set per robot: 1 with an altimeter
    ("deck", "bcZRanger", P_U8, True, 0),
    ("deck", "bcZRanger2", P_U8, True, 0),
    ("deck", "bcLedRing", P_U8, True, 0),
    ("deck", "bcLoco", P_U8, True, 0),
    ("deck", "bcDWM1000", P_U8, True, 0),
    ("deck", "bcMultiranger", P_U8, True, 0),
    ("deck", "bcLighthouse4", P_U8, True, 0),
    ("firmware", "revision0", P_U32, True, 0),
    ("firmware", "revision1", P_U32, True, 0),
    ("firmware", "modified", P_U8, True, 0),
    ("cpu", "flash", P_U16, True, 1024),
)


def param_entries() -> list[Entry]:
    """The param TOC (the same on every Crazyflie)."""
    return [Entry(g, n, k, ro) for g, n, k, ro, _ in PARAMS]


def pack_log(kind: int, value: float) -> bytes:
    """``value`` as a log variable of type ``kind`` (integers rounded and saturated; NaN -> 0)."""
    fmt, low, high = LOG_TYPES[kind]
    if low is None:
        if kind == FP16 and math.isfinite(value):
            value = max(-65504.0, min(65504.0, value))
        return struct.pack(fmt, value)
    if not math.isfinite(value):
        value = 0.0
    return struct.pack(fmt, int(max(low, min(high, round(value)))))


def log_size(kind: int) -> int:
    """Bytes one value of log type ``kind`` takes."""
    return struct.calcsize(LOG_TYPES[kind][0])


def param_format(kind: int) -> str:
    return PARAM_TYPES[kind & 0x0F]
