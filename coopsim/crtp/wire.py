"""CRTP framing as cflib's UDP link driver carries it: one packet per datagram, a header byte
(port in the high nibble, the link bits 0b1100, the channel in the low two bits) and 0 to 30
bytes of data. Port and channel numbers are Bitcraze's published ones."""

from __future__ import annotations

BASE_PORT = 19850  #: cflib's scan_interfaces() probes UDP ports 19850-19859
SCANNED = 10  #: how many ports cflib's scan probes
MAX_DATA = 30  #: bytes of data a CRTP packet carries at most
NULL = b"\xff"  #: the null packet (port 15, channel 3): a scan's probe, answered in kind

CONSOLE, PARAM, COMMANDER, MEM, LOG, LOCALIZATION, GENERIC, HIGH_LEVEL, SUPERVISOR = (
    0, 2, 3, 4, 5, 6, 7, 8, 9)
PLATFORM, LINK = 13, 15

#: What each CRTP port serves, and what of it is not served (answered as the firmware answers a
#: port nobody serves: no answer): port -> (name, served, not served).
PORTS = {
    CONSOLE: ("console", "lines from the firmware (refusals of high-level commands, read-only "
              "writes, emergency stops)", ""),
    PARAM: ("param", "TOC (v1, v2) with CRC, read, write, set by name, persistent store / state "
            "/ clear (kept for the run), default values",
            "extended types (none of these params has one)"),
    COMMANDER: ("commander", "roll, pitch, yaw rate, thrust (thrust 0: motors off)", ""),
    MEM: ("memory", "the trajectory memory (4096 bytes): info, read, write",
          "decks' memories, LEDs, lighthouse, loco (no such hardware)"),
    LOG: ("log", "TOC (v1, v2) with CRC, blocks: create, append, start with period, stop, "
          "delete, reset", "raw memory addresses (answered ENOENT)"),
    LOCALIZATION: ("localization", "extpos, extpose, emergency stop, emergency-stop watchdog",
                   "LPS, lighthouse, GNSS packets"),
    GENERIC: ("generic commander", "stop, velocity world, z distance, hover, position, full "
              "state, notify setpoint stop", "manual (type 11)"),
    HIGH_LEVEL: ("high-level commander", "group mask, takeoff, land, stop, go_to (smooth or "
                 "linear, relative), define trajectory (poly4d in memory), start trajectory "
                 "(time scale, reversed, relative position and yaw)",
                 "spiral, compressed trajectories (a console line says so)"),
    SUPERVISOR: ("supervisor", "", "protocol 12's supervisor port (cflib uses the legacy paths "
                 "with protocol 10)"),
    PLATFORM: ("platform", "protocol version (10), firmware version, device name; arming and "
               "notification requests accepted", "app channel"),
    LINK: ("link", "echo, source (\"Bitcraze Crazyflie\"), sink, null packets", ""),
}

#: The CRTP protocol version these Crazyflies report (platform port, version channel): the
#: firmware of 2024 (TOC v2, go_to with its linear flag, start_trajectory with relative yaw;
#: the supervisor port of version 12 is not served, cflib then uses the legacy paths).
PROTOCOL_VERSION = 10
FIRMWARE = "coopsim"  #: the firmware version string (platform: get firmware version)

# errno values the firmware answers with (newlib's, as the firmware uses them)
ENOENT, E2BIG, ENOMEM, EEXIST, EINVAL = 2, 7, 12, 17, 22


def header(port: int, channel: int) -> int:
    """The header byte of a packet to ``port``, ``channel``."""
    return ((port & 0x0F) << 4) | 0x0C | (channel & 0x03)


def packet(port: int, channel: int, data: bytes = b"") -> bytes:
    """One datagram: the header and ``data`` (at most :data:`MAX_DATA` bytes)."""
    if len(data) > MAX_DATA:
        raise ValueError(f"CRTP data of {len(data)} bytes (at most {MAX_DATA})")
    return bytes((header(port, channel),)) + bytes(data)


def split(datagram: bytes) -> tuple[int, int, bytes] | None:
    """(port, channel, data) of a datagram; None for one that is no CRTP packet (empty, or
    longer than a header and :data:`MAX_DATA` bytes)."""
    if not datagram or len(datagram) > MAX_DATA + 1:
        return None
    h = datagram[0]
    return h >> 4, h & 0x03, bytes(datagram[1:])


def is_null(port: int, channel: int) -> bool:
    """A null packet (port 15, channel 3: what radio links poll with and cflib scans with)."""
    return port == LINK and channel == 3
