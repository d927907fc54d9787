"""One simulated Crazyflie's firmware as CRTP sees it: its link, log, param, memory, commander,
high-level commander and localization services.

Two threads use it, under its lock: the CRTP server's thread hands it each packet
(:meth:`Firmware.handle`, answering at once: TOCs, params, log block set-up, memory) and
stores setpoints and high-level commands; the stepper thread, after each step, asks it what
the motors do next (:meth:`Firmware.decide`, where queued high-level commands take effect at
the step's sim time) and which log blocks are due (:meth:`Firmware.due`). Times are sim time
(s) unless named wall; frames world (x, y on the floor, z up), body (x forward, y left, z up).

What the firmware does that this does too (docs/crazyflie.md): setpoints have priority over
the high-level commander while they keep coming; a setpoint older than 0.5 s levels the
Crazyflie (roll and pitch 0, yaw rate 0, its last thrust), older than 2 s stops the motors;
``notify_setpoint_stop`` hands over to the high-level commander at once. A landing stops the
motors where it ends; ``stop`` stops them at once; an emergency stop locks them off for the
rest of the run (the firmware needs a reboot).
"""

from __future__ import annotations

import math
import struct
import threading
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from . import wire
from .planner import PIECE_BYTES, Move, Trajectory, read_pieces, wrap
from .toc import (FLOAT, LOG_TYPES, Toc, log_entries, log_size, pack_log, param_entries,
                  param_format, PARAMS)
from ..model.specs import GRAVITY

WDT_LEVEL = 0.5  #: s without a setpoint before the firmware levels the Crazyflie
WDT_OFF = 2.0  #: s without a setpoint before it stops the motors
MAX_BLOCKS = 16  #: log blocks a Crazyflie holds
MAX_OPS = 128  #: log variables over all its blocks
BLOCK_BYTES = wire.MAX_DATA - 4  #: a log block's values (after its id and 3-byte timestamp)
TRAJECTORY_MEMORY = 4096  #: bytes of trajectory memory (the firmware's)
MEM_TRAJECTORY = 0x12  #: the trajectory memory's type (cflib's MemoryElement.TYPE_TRAJ)
ESTOP_WATCHDOG = 1.0  #: s an emergency-stop watchdog waits for its next renewal
MAX_SPEED = 10.0  #: m/s: larger commanded velocities are cut to it
MAX_ANGLE = math.radians(60.0)  #: roll and pitch setpoints are cut to +-60 degrees
MAX_YAW_RATE = math.radians(1000.0)  #: rad/s, yaw-rate setpoints are cut to it
BOUND = 1000.0  #: m: position setpoints beyond are cut to it (the rotors module's sanity box)
VBAT = 3.9  #: V reported as pm.vbat (coopsim has no battery model)
LATENCIES = 4096  #: setpoint latencies kept for the percentiles
CONSOLE_LINES = 16  #: console lines waiting to be sent, at most
EXTPOS_TAU = 0.05  #: s: how fast the position estimate follows external positions (extpos)
EXTPOS_STALE = 0.5  #: s: an external position older than this no longer corrects the estimate


@dataclass
class Block:
    """A log block: (variable name, fetch type) pairs, its period (s) once started."""

    ops: list = field(default_factory=list)
    period: float | None = None
    due: float | None = 0.0
    once: bool = False

    def size(self) -> int:
        return sum(log_size(kind) for _, kind in self.ops)


@dataclass
class Setpoint:
    """The latest low-level setpoint: its kind, values (SI, radians), sim time and wall time
    of arrival; ``used``: it has reached the motors."""

    kind: str
    values: tuple
    time: float
    wall: float
    used: bool = False


@dataclass
class Counts:
    """What one Crazyflie's link did (``/sim state``'s ``crtp`` entry)."""

    received: int = 0
    sent: int = 0
    unknown: int = 0  # packets to a port or channel that is not served (dropped, as firmware)
    malformed: int = 0  # wrong length or values that are not numbers (dropped)
    refused: int = 0  # from a second client while the first holds the link
    setpoints: int = 0
    high_level: int = 0
    log_packets: int = 0


def _f32(x: float) -> float:
    return float(np.float32(x))


class Firmware:
    """The firmware of the Crazyflie ``robot`` (its UDP port's index ``index``).

    Args:
        airframe: The ``rotors`` parameters (mass kg, kf N s^2, max_speed rad/s...).
        altimeter: It carries the downward ranger (``range.zrange``, ``deck.bcFlow2``).
    """

    def __init__(self, robot: str, index: int, airframe: dict, altimeter: bool) -> None:
        self.robot, self.index = robot, index
        self.airframe = airframe
        self.lock = threading.Lock()
        self.log_toc = Toc(log_entries(altimeter))
        self.param_toc = Toc(param_entries())
        self.params = {f"{g}.{n}": v for g, n, _, _, v in PARAMS}
        self.params["deck.bcFlow2"] = 1 if altimeter else 0
        self.defaults = dict(self.params)
        self.stored: dict[str, float] = {}  # params "persisted" (kept for the run)
        self.blocks: dict[int, Block] = {}
        self.memory = bytearray(TRAJECTORY_MEMORY)
        self.trajectories: dict[int, tuple] = {}  # id -> (type, offset, pieces)
        self.group_mask = 0
        self.setpoint: Setpoint | None = None
        self.queue: list[tuple] = []  # high-level commands, taken at the next step
        self.plan = None  # the high-level commander's Plan while it flies
        self.emergency = False
        self.estop_deadline: float | None = None
        self.extpos: tuple | None = None  # (x, y, z, quaternion (x, y, z, w) or None, time)
        self.console: deque = deque(maxlen=CONSOLE_LINES)
        self.counts = Counts()
        self.latencies: deque = deque(maxlen=LATENCIES)
        self.engaged = False  # some client has commanded its motors this run
        # the stepper thread's: the state seen last, the control's memory
        self.time = 0.0
        self.state = np.zeros(13)  # x y z qw qx qy qz vx vy vz wx wy wz: the estimate
        self.offset = np.zeros(3)  # the estimate's position less the true one, m (extpos)
        self.acc = np.zeros(3)  # world acceleration, m/s^2 (from the last two velocities)
        self.integral = np.zeros(3)
        self.yaw_ref: float | None = None
        self.ref = np.zeros(11)  # the reference flown last (ctrltarget)
        self.thrust = 0.0  # collective thrust commanded last, N
        self.speeds = np.zeros(4)  # propeller speeds commanded last, rad/s
        self.mode = "idle"

    # -- the CRTP side (the server's thread) --------------------------------------------------

    def say(self, text: str) -> None:
        """A console line for the client (sent in 30-byte packets on port 0)."""
        self.console.append(text if text.endswith("\n") else text + "\n")

    def take_console(self) -> list[bytes]:
        """The console packets waiting."""
        out = []
        while self.console:
            raw = self.console.popleft().encode("ascii", "replace")
            out += [wire.packet(wire.CONSOLE, 0, raw[i:i + wire.MAX_DATA])
                    for i in range(0, len(raw), wire.MAX_DATA)]
        return out

    def handle(self, port: int, channel: int, data: bytes, wall: float) -> list[bytes]:
        """The answers to one packet (the caller holds :attr:`lock`)."""
        self.counts.received += 1
        handler = _HANDLERS.get(port)
        if handler is None:
            self.counts.unknown += 1  # the firmware drops packets to a port nobody serves
            return []
        try:
            out = handler(self, channel, data, wall)
        except (struct.error, IndexError, ValueError, OverflowError):
            self.counts.malformed += 1
            return []
        if out is None:
            self.counts.unknown += 1
            return []
        return out

    # link control: echo, source, sink
    def _link(self, channel, data, wall):
        if channel == 0:
            return [wire.packet(wire.LINK, 0, data)]
        if channel == 1:
            return [wire.packet(wire.LINK, 1, b"Bitcraze Crazyflie")]
        if channel == 2:
            return []
        return None

    def _platform(self, channel, data, wall):
        if channel == 0:  # continuous wave, arming, crash recovery, user notification
            return [] if data and data[0] <= 3 else None
        if channel == 1:
            cmd = data[0]
            if cmd == 0:
                return [wire.packet(wire.PLATFORM, 1, bytes((0, wire.PROTOCOL_VERSION)))]
            if cmd == 1:
                return [wire.packet(wire.PLATFORM, 1, b"\x01" + wire.FIRMWARE.encode())]
            if cmd == 2:
                return [wire.packet(wire.PLATFORM, 1, b"\x02" + b"CF21 (coopsim)")]
        return None

    # tables of contents (log port and param port alike)
    @staticmethod
    def _toc(port, toc, data):
        cmd = data[0]
        if cmd == 3:  # info v2
            return [wire.packet(port, 0, toc.info(3))]
        if cmd == 1:  # info v1: up to 255 entries
            return [wire.packet(port, 0, struct.pack("<BBI", 1, min(len(toc), 255), toc.crc))]
        if cmd in (0, 2):
            ident = data[1] if cmd == 0 else struct.unpack("<H", data[1:3])[0]
            head = data[:2] if cmd == 0 else data[:3]
            if ident >= len(toc):
                return [wire.packet(port, 0, bytes(head))]
            body = bytes(head) + toc.entries[ident].item()
            return [wire.packet(port, 0, body[:wire.MAX_DATA])]
        return None

    def _log(self, channel, data, wall):
        if channel == 0:
            return self._toc(wire.LOG, self.log_toc, data)
        if channel != 1:
            return None
        cmd = data[0]
        if cmd == 5:  # reset: every block deleted
            self.blocks.clear()
            return [wire.packet(wire.LOG, 1, bytes((5, 0, 0)))]
        ident = data[1]
        status = self._log_setting(cmd, ident, data[2:])
        if status is None:
            return None
        return [wire.packet(wire.LOG, 1, bytes((cmd, ident, status)))]

    def _log_setting(self, cmd, ident, rest) -> int | None:
        if cmd in (0, 6, 1, 7):  # create, append (v1: one-byte ids, v2: two)
            block = self.blocks.get(ident)
            if cmd in (0, 6):
                if block is not None:
                    return wire.EEXIST
                if len(self.blocks) >= MAX_BLOCKS:
                    return wire.ENOMEM
            elif block is None:
                return wire.ENOENT
            step = 3 if cmd in (6, 7) else 2
            if len(rest) % step:
                raise ValueError("a variable's bytes are cut short")
            ops = []
            for i in range(0, len(rest), step):
                kind = rest[i] & 0x0F
                ident_v = rest[i + 1] if step == 2 else rest[i + 1] | rest[i + 2] << 8
                if ident_v >= len(self.log_toc) or kind not in LOG_TYPES:
                    return wire.ENOENT  # raw memory addresses (id 0xFF/0xFFFF) included
                ops.append((self.log_toc.entries[ident_v].full, kind))
            used = sum(len(b.ops) for b in self.blocks.values())
            if used + len(ops) > MAX_OPS:
                return wire.ENOMEM
            new = Block(ops=(block.ops if block else []) + ops,
                        period=block.period if block else None)
            if new.size() > BLOCK_BYTES:
                return wire.E2BIG
            if block is not None:
                new.due = block.due
            self.blocks[ident] = new
            return 0
        block = self.blocks.get(ident)
        if cmd == 2:  # delete
            if block is None:
                return wire.ENOENT
            del self.blocks[ident]
            return 0
        if cmd == 3:  # start: period in units of 10 ms; 0 sends once
            if block is None:
                return wire.ENOENT
            ticks = rest[0]
            block.once = ticks == 0
            block.period = 0.01 * max(ticks, 1)
            block.due = None  # the next step sends it; then every period from there
            return 0
        if cmd == 4:  # stop
            if block is None:
                return wire.ENOENT
            block.period = None
            return 0
        return 8  # ENOEXEC: no such command

    def _param(self, channel, data, wall):
        toc = self.param_toc
        if channel == 0:
            return self._toc(wire.PARAM, toc, data)
        if channel in (1, 2):
            ident = struct.unpack("<H", data[:2])[0]
            if ident >= len(toc):
                return [wire.packet(wire.PARAM, channel, data[:2] + bytes((wire.ENOENT,)))]
            entry = toc.entries[ident]
            fmt = param_format(entry.kind)
            if channel == 2:
                self._write_param(entry, data[2:], fmt)
            value = struct.pack(fmt, self._cast(fmt, self.params[entry.full]))
            status = b"\x00" if channel == 1 else b""
            return [wire.packet(wire.PARAM, channel, data[:2] + status + value)]
        if channel == 3:
            return self._param_misc(data)
        return None

    def _write_param(self, entry, raw: bytes, fmt: str) -> None:
        """Store a written value; a write to a read-only parameter, or of the wrong size or
        a value that is no number, leaves it as it was (the answer carries the value kept)."""
        if entry.read_only:
            self.say(f"PARAM: {entry.full} is read-only")
            self.counts.malformed += 1
            return
        if len(raw) != struct.calcsize(fmt):
            self.counts.malformed += 1
            return
        value = struct.unpack(fmt, raw)[0]
        if isinstance(value, float) and not math.isfinite(value):
            self.counts.malformed += 1
            return
        self.params[entry.full] = value
        self._param_written(entry.full, value)

    def _param_written(self, name: str, value) -> None:
        if name == "kalman.resetEstimation" and value:
            self.queue.append(("reset",))

    @staticmethod
    def _cast(fmt: str, value):
        return float(value) if fmt[-1] in "efd" else int(value)

    def _param_misc(self, data):
        cmd = data[0]
        toc = self.param_toc
        if cmd == 0:  # set by name: group\0name\0 type value
            group, name, rest = data[1:].split(b"\0", 2)
            full = f"{group.decode()}.{name.decode()}"
            ident = toc.ids.get(full)
            status = wire.ENOENT
            if ident is not None and rest:
                entry = toc.entries[ident]
                if entry.read_only:
                    status = wire.EINVAL
                elif rest[0] & 0x0F != entry.kind:
                    status = wire.EINVAL
                else:
                    before = self.params[full]
                    self._write_param(entry, rest[1:], param_format(entry.kind))
                    status = 0 if self.params[full] == before or len(rest) > 1 else wire.EINVAL
            head = data[:len(data) - len(rest)] if ident is not None else data
            return [wire.packet(wire.PARAM, 3, bytes(head[:wire.MAX_DATA - 1]) +
                                bytes((status,)))]
        ident = struct.unpack("<H", data[1:3])[0]
        head = bytes(data[:3])
        if ident >= len(toc):
            return [wire.packet(wire.PARAM, 3, head + bytes((wire.ENOENT,)))]
        entry = toc.entries[ident]
        fmt = param_format(entry.kind)
        pack = lambda v: struct.pack(fmt, self._cast(fmt, v))  # noqa: E731
        if cmd in (2, 7):  # extended type: none of these parameters has one
            return [wire.packet(wire.PARAM, 3, head + (b"\x00\x00" if cmd == 7 else b"\x00"))]
        if cmd == 3:  # persistent store
            if entry.read_only:
                return [wire.packet(wire.PARAM, 3, head + bytes((wire.EINVAL,)))]
            self.stored[entry.full] = self.params[entry.full]
            return [wire.packet(wire.PARAM, 3, head + b"\x00")]
        if cmd == 4:  # persistent state: 1 stored (default, stored value), 0 not (default)
            default = pack(self.defaults[entry.full])
            if entry.full in self.stored:
                return [wire.packet(wire.PARAM, 3, head + b"\x01" + default +
                                    pack(self.stored[entry.full]))]
            return [wire.packet(wire.PARAM, 3, head + b"\x00" + default)]
        if cmd == 5:  # persistent clear
            self.stored.pop(entry.full, None)
            return [wire.packet(wire.PARAM, 3, head + b"\x00")]
        if cmd == 6:  # default value (v1)
            return [wire.packet(wire.PARAM, 3, head + pack(self.defaults[entry.full]))]
        if cmd == 8:  # default value (v2: a status byte first)
            return [wire.packet(wire.PARAM, 3, head + b"\x00" + pack(self.defaults[entry.full]))]
        return None

    def _mem(self, channel, data, wall):
        if channel == 0:
            cmd = data[0]
            if cmd == 1:
                return [wire.packet(wire.MEM, 0, bytes((1, 1)))]
            if cmd == 2:
                if data[1] != 0:
                    return [wire.packet(wire.MEM, 0, bytes((2, data[1])))]
                return [wire.packet(wire.MEM, 0, struct.pack("<BBBI8s", 2, 0, MEM_TRAJECTORY,
                                                             TRAJECTORY_MEMORY, b"\0" * 8))]
            if cmd == 0:
                return [wire.packet(wire.MEM, 0, bytes((0, 1)))]
            return None
        if channel == 1:  # read: id, address, length
            ident, addr, length = struct.unpack("<BIB", data[:6])
            head = struct.pack("<BI", ident, addr)
            if ident != 0 or length > wire.MAX_DATA - 6 or addr + length > TRAJECTORY_MEMORY:
                return [wire.packet(wire.MEM, 1, head + b"\x05")]  # EIO
            return [wire.packet(wire.MEM, 1, head + b"\x00" +
                                bytes(self.memory[addr:addr + length]))]
        if channel == 2:  # write: id, address, data
            ident, addr = struct.unpack("<BI", data[:5])
            chunk = data[5:]
            head = struct.pack("<BI", ident, addr)
            if ident != 0 or addr + len(chunk) > TRAJECTORY_MEMORY:
                return [wire.packet(wire.MEM, 2, head + b"\x05")]
            self.memory[addr:addr + len(chunk)] = chunk
            return [wire.packet(wire.MEM, 2, head + b"\x00")]
        return None

    def _set(self, kind: str, values, wall: float) -> list:
        values = tuple(float(v) for v in values)
        if not all(math.isfinite(v) for v in values):
            self.counts.malformed += 1
            return []
        self.counts.setpoints += 1
        self.setpoint = Setpoint(kind, values, self.time, wall)
        self.engaged = True
        return []

    def _commander(self, channel, data, wall):
        if channel != 0:
            return None
        roll, pitch, yawrate, thrust = struct.unpack("<fffH", data)
        if thrust == 0:  # what cflib's close_link sends: motors off
            return self._set("stop", (), wall)
        # cflib sends the pitch negated (the firmware's legacy sign)
        return self._set("attitude", (math.radians(roll), math.radians(-pitch),
                                      math.radians(yawrate), thrust / 65535.0), wall)

    def _generic(self, channel, data, wall):
        if channel == 1:  # meta commands
            if data[0] == 0:  # notify setpoint stop: the high-level commander takes over
                (keep,) = struct.unpack("<I", data[1:5])
                if self.setpoint is not None:
                    self.setpoint.time = min(self.setpoint.time,
                                             self.time - WDT_OFF + keep / 1000.0)
                    self.setpoint.kind = "handover"
                return []
            return None
        if channel != 0:
            return None
        kind, body = data[0], data[1:]
        if kind == 0:
            if body:
                raise ValueError("a stop setpoint carries nothing")
            return self._set("stop", (), wall)
        if kind in (1, 8):
            vx, vy, vz, yawrate = struct.unpack("<ffff", body)
            return self._set("velocity_world", (vx, vy, vz, math.radians(yawrate)), wall)
        if kind in (2, 9):
            roll, pitch, yawrate, z = struct.unpack("<ffff", body)
            return self._set("zdistance", (math.radians(roll), math.radians(pitch),
                                           math.radians(yawrate), z), wall)
        if kind in (5, 10):
            vx, vy, yawrate, z = struct.unpack("<ffff", body)
            return self._set("hover", (vx, vy, math.radians(yawrate), z), wall)
        if kind == 7:
            x, y, z, yaw = struct.unpack("<ffff", body)
            return self._set("position", (x, y, z, math.radians(yaw)), wall)
        if kind == 6:
            f = struct.unpack("<hhhhhhhhhIhhh", body)
            yaw = _quat_yaw(_decompress(f[9]))
            return self._set("full", tuple(v / 1000.0 for v in f[:9]) + (yaw,), wall)
        return None  # manual (11) and other types are not served

    def _high_level(self, channel, data, wall):
        if channel != 0:
            return None
        cmd = data[0]
        formats = {0: "<BB", 1: "<BBff", 2: "<BBff", 3: "<BB", 4: "<BBBfffff",
                   5: "<BBBBBf", 6: "<BBBBIB", 7: "<BBff?f", 8: "<BBff?f",
                   12: "<BBBBfffff", 13: "<BBBBBBf"}
        fmt = formats.get(cmd)
        if fmt is None:
            self.say(f"HL: command {cmd} is not served")
            return None
        args = struct.unpack(fmt, data)[1:]
        if any(isinstance(a, float) and not math.isfinite(a) for a in args):
            self.counts.malformed += 1
            self.say("HL: a number that is not finite; command ignored")
            return []
        if cmd == 0:
            self.group_mask = args[0]
            return []
        if cmd == 6:  # define: id, location (1 = memory), type (0 = poly4d), offset, pieces
            ident, location, kind, offset, count = args
            if location != 1 or kind != 0:
                self.say("HL: only poly4d trajectories in memory are served")
                return []
            try:
                read_pieces(bytes(self.memory), offset, count)  # checked now, read at start
            except ValueError as exc:
                self.say(f"HL: trajectory {ident}: {exc}")
                return []
            self.trajectories[ident] = (kind, offset, count)
            return []
        mask = args[0]
        if mask and not (mask & self.group_mask):
            return []  # not for this Crazyflie's groups
        self.counts.high_level += 1
        self.engaged = True
        self.queue.append((cmd, args[1:]))
        return []

    def _localization(self, channel, data, wall):
        if channel == 0:
            x, y, z = struct.unpack("<fff", data)
            if all(math.isfinite(v) for v in (x, y, z)):
                self.extpos = (x, y, z, None, self.time)
            else:
                self.counts.malformed += 1
            return []
        if channel != 1:
            return None
        kind = data[0]
        if kind == 3:
            self.emergency = True
            self.say("SYS: emergency stop: motors locked off")
            return []
        if kind == 4:
            self.estop_deadline = self.time + ESTOP_WATCHDOG
            return []
        if kind == 8:
            v = struct.unpack("<fffffff", data[1:29])
            if all(math.isfinite(a) for a in v):
                self.extpos = (v[0], v[1], v[2], v[3:7], self.time)
            else:
                self.counts.malformed += 1
            return []
        return None

    # -- the stepper thread -----------------------------------------------------------------

    def observe(self, t: float, state: np.ndarray) -> float:
        """Take the state after a step (13 numbers: STATE3D); returns the sim time since the
        last one, s."""
        dt = t - self.time if t > self.time else 0.0
        if dt > 0:
            self.acc = (state[7:10] - self.state[7:10]) / dt
        self.time = t
        self.state = np.array(state, dtype=float)
        ext = self.extpos
        if ext is not None and dt > 0 and t - ext[4] <= EXTPOS_STALE:
            # the estimator trusts a motion-capture position: the estimate's position moves
            # to it with time constant EXTPOS_TAU (a mocap frame off by d moves the flight by -d)
            error = np.array(ext[0:3], dtype=float) - self.state[0:3] - self.offset
            self.offset += error * min(1.0, dt / EXTPOS_TAU)
        self.state[0:3] += self.offset
        return dt

    @property
    def yaw(self) -> float:
        w, x, y, z = self.state[3:7]
        return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))

    def decide(self, t: float, dt: float, wall: float):
        """What the motors do next: ``("off",)``, ``("none",)`` (never commanded: leave the
        robot alone), ``("ref", ref)`` (the cascade tracks ``ref``, (11,)), ``("attitude",
        thrust N, roll, pitch, yaw rate)`` or ``("power", speeds)``. Caller holds the lock."""
        queued, self.queue = self.queue, []
        for item in queued:
            self._apply(item, t)
        if self.estop_deadline is not None and t > self.estop_deadline:
            self.emergency, self.estop_deadline = True, None
            self.say("SYS: emergency-stop watchdog expired: motors locked off")
        if not self.engaged:
            return ("none",)
        if self.emergency or self.params["stabilizer.stop"]:
            self.plan = None
            return ("off",)
        if self.params["motorPowerSet.enable"]:
            top = float(self.airframe["max_speed"])
            return ("power", np.array([top * math.sqrt(self.params[f"motorPowerSet.m{k}"]
                                                         / 65535.0) for k in range(1, 5)]))
        sp = self.setpoint
        if sp is not None:
            age = t - sp.time
            if not sp.used:
                sp.used = True
                self.latencies.append(wall - sp.wall)
            if sp.kind != "handover" and age <= WDT_LEVEL:
                self.plan = None  # a setpoint ends the high-level commander's plan
                return self._low_level(sp, dt)
            if age <= WDT_OFF and sp.kind not in ("handover", "stop"):
                return ("attitude", self.thrust, 0.0, 0.0, 0.0)  # the watchdog levels it
            if age <= WDT_OFF and sp.kind == "stop":
                return ("off",)
            if sp.kind != "handover" and self.plan is None:
                return ("off",)  # the watchdog stopped the motors
        if self.plan is not None and self.params["commander.enHighLevel"]:
            if self.plan.landing and self.plan.done(t):
                self.plan = None
                return ("off",)
            return ("ref", self.plan.at(t))
        return ("off",)

    def _low_level(self, sp: Setpoint, dt: float):
        v = sp.values
        p, vel, yaw = self.state[0:3], self.state[7:10], self.yaw
        ref = np.zeros(11)
        if sp.kind == "stop":
            return ("off",)
        if sp.kind == "attitude":
            roll, pitch, rate, frac = v
            total = 4.0 * float(self.airframe["kf"]) * float(self.airframe["max_speed"]) ** 2
            self.thrust = frac * total
            return ("attitude", self.thrust, _cut(roll, MAX_ANGLE), _cut(pitch, MAX_ANGLE),
                    _cut(rate, MAX_YAW_RATE))
        if sp.kind == "position":
            ref[0:3] = np.clip(v[0:3], -BOUND, BOUND)
            ref[9] = wrap(v[3])
            self.yaw_ref = None
            return ("ref", ref)
        if sp.kind == "full":
            ref[0:3] = np.clip(v[0:3], -BOUND, BOUND)
            ref[3:6] = _cut_norm(np.array(v[3:6]), MAX_SPEED)
            ref[6:9] = _cut_norm(np.array(v[6:9]), 2 * GRAVITY)
            ref[9] = wrap(v[9])
            self.yaw_ref = None
            return ("ref", ref)
        rate = _cut(v[2] if sp.kind in ("hover", "zdistance") else v[3], MAX_YAW_RATE)
        self.yaw_ref = wrap((yaw if self.yaw_ref is None else self.yaw_ref) + rate * dt)
        ref[9], ref[10] = self.yaw_ref, rate
        ref[0:3] = p
        if sp.kind == "velocity_world":
            ref[3:6] = _cut_norm(np.array(v[0:3]), MAX_SPEED)
        elif sp.kind == "hover":
            c, s = math.cos(yaw), math.sin(yaw)
            ref[3:5] = _cut_norm(np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]]), MAX_SPEED)
            ref[2] = _cut(v[3], BOUND)
        else:  # zdistance: roll and pitch as the horizontal acceleration they give
            ref[3:5] = vel[0:2]
            c, s = math.cos(yaw), math.sin(yaw)
            ax = GRAVITY * math.tan(_cut(v[1], MAX_ANGLE))  # pitch forward: +x body
            ay = -GRAVITY * math.tan(_cut(v[0], MAX_ANGLE))  # roll right: -y body
            ref[6:8] = (c * ax - s * ay, s * ax + c * ay)
            ref[2] = _cut(v[3], BOUND)
        return ("ref", ref)

    def _start_point(self, t: float) -> tuple[np.ndarray, float]:
        """Where a new plan starts: the plan's reference now, else the estimate."""
        if self.plan is not None:
            ref = self.plan.at(t)
            return ref[0:3].copy(), float(ref[9])
        return self.state[0:3].copy(), self.yaw

    def _apply(self, item: tuple, t: float) -> None:
        """A high-level command (or an estimator reset) at sim time ``t``."""
        cmd, args = item[0], item[1:] and item[1]
        if cmd == "reset":
            self.integral[:] = 0.0
            self.offset[:] = 0.0
            self.params["kalman.resetEstimation"] = 0
            return
        flying = self.plan is not None
        start, yaw0 = self._start_point(t)
        if cmd in (1, 7):  # take-off: height, [yaw, use current yaw,] duration
            if flying:
                self.say("HL: take-off refused: already flying")
                return
            height, yaw, current, duration = (args if cmd == 7 else
                                              (args[0], 0.0, True, args[1]))
            if not 0.0 < duration <= 3600.0:
                self.say("HL: take-off duration not in (0, 3600] s")
                return
            goal = np.array([start[0], start[1], _cut(height, BOUND)])
            self.plan = Move(t, duration, start, yaw0, goal, yaw0 if current else yaw)
            self.setpoint = None
            return
        if cmd in (2, 8):  # land
            if not flying:
                self.say("HL: land refused: not flying")
                return
            height, yaw, current, duration = (args if cmd == 8 else
                                              (args[0], 0.0, True, args[1]))
            if not 0.0 < duration <= 3600.0:
                self.say("HL: land duration not in (0, 3600] s")
                return
            goal = np.array([start[0], start[1], _cut(height, BOUND)])
            self.plan = Move(t, duration, start, yaw0, goal, yaw0 if current else yaw,
                             landing=True)
            return
        if cmd == 3:  # stop: motors off
            self.plan = None
            self.setpoint = Setpoint("stop", (), t, 0.0, used=True)
            return
        if cmd in (4, 12):  # go_to
            if cmd == 4:
                relative, x, y, z, yaw, duration = args
                linear = False
            else:
                relative, linear, x, y, z, yaw, duration = args
            if not flying:
                self.say("HL: go_to refused: not flying (take off first)")
                return
            if not 0.0 < duration <= 3600.0:
                self.say("HL: go_to duration not in (0, 3600] s")
                return
            goal = np.array([x, y, z]) + (start if relative else 0.0)
            goal = np.clip(goal, -BOUND, BOUND)
            self.plan = Move(t, duration, start, yaw0, goal, yaw0 + yaw if relative else yaw,
                             linear=bool(linear))
            return
        if cmd in (5, 13):  # start trajectory
            if cmd == 5:
                relative, reverse, ident, scale = args
                relative_yaw = False
            else:
                relative, relative_yaw, reverse, ident, scale = args
            if not flying:
                self.say("HL: trajectory refused: not flying (take off first)")
                return
            if ident not in self.trajectories:
                self.say(f"HL: trajectory {ident} is not defined")
                return
            if not 0.01 <= scale <= 100.0:
                self.say("HL: time scale not in [0.01, 100]")
                return
            _, offset, count = self.trajectories[ident]
            try:
                pieces, durations = read_pieces(bytes(self.memory), offset, count)
            except ValueError as exc:
                self.say(f"HL: trajectory {ident}: {exc}")
                return
            plan = Trajectory(t, pieces, durations, scale, bool(reverse))
            first = plan.raw(float(durations.sum()) if reverse else 0.0)
            turn = wrap(yaw0 - first[3, 0]) if relative_yaw else 0.0
            shift = np.zeros(3)
            if relative:
                c, s = math.cos(turn), math.sin(turn)
                rotated = np.array([c * first[0, 0] - s * first[1, 0],
                                    s * first[0, 0] + c * first[1, 0], first[2, 0]])
                shift = start - rotated
            plan.offset, plan.turn = shift, turn
            self.plan = plan

    def control_ref(self, ref: np.ndarray, pos_gain: float) -> np.ndarray:
        """``ref`` with its position error cut so that the position loop asks at most
        ``posCtlPid.xyVelMax`` and ``zVelMax`` (the firmware's velocity limits)."""
        ref = ref.copy()
        err = ref[0:3] - self.state[0:3]
        xy = float(self.params["posCtlPid.xyVelMax"]) / pos_gain
        z = float(self.params["posCtlPid.zVelMax"]) / pos_gain
        err[0:2] = _cut_norm(err[0:2], max(xy, 0.0))
        err[2] = _cut(err[2], max(z, 0.0))
        ref[0:3] = self.state[0:3] + err
        return ref

    def due(self, t: float) -> list[tuple[int, Block]]:
        """The started blocks due at ``t`` (each then set to its next time, by sim time)."""
        out = []
        for ident, block in self.blocks.items():
            if block.period is not None and block.due is None:
                block.due = t
            if block.period is None or t + 1e-9 < block.due:
                continue
            out.append((ident, block))
            if block.once:
                block.period = None
                continue
            block.due += block.period
            if block.due <= t:  # fell behind (a block started late): keep the period from now
                block.due = t + block.period
        return out

    def log_packet(self, ident: int, block: Block, values: dict, t: float) -> bytes:
        stamp = int(round(t * 1000.0)) & 0xFFFFFF
        body = bytes((ident,)) + struct.pack("<I", stamp)[:3]
        body += b"".join(pack_log(kind, values[name]) for name, kind in block.ops)
        return wire.packet(wire.LOG, 2, body)

    def values(self) -> dict:
        """Every log variable's value now (firmware units)."""
        s = self.state
        p, q, v, w = s[0:3], s[3:7], s[7:10], s[10:13]
        qw, qx, qy, qz = q
        roll = math.atan2(2 * (qw * qx + qy * qz), 1 - 2 * (qx * qx + qy * qy))
        pitch = math.asin(max(-1.0, min(1.0, 2 * (qw * qy - qz * qx))))
        yaw = math.atan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz))
        rot = _matrix(q)
        v_body = rot.T @ v
        acc_body = rot.T @ (self.acc + np.array([0.0, 0.0, GRAVITY])) / GRAVITY
        deg = math.degrees
        top = float(self.airframe["max_speed"])
        kf = float(self.airframe["kf"])
        out = {}
        for k, name in enumerate(("x", "y", "z")):
            out[f"stateEstimate.{name}"] = p[k]
            out[f"stateEstimate.v{name}"] = v[k]
            out[f"stateEstimate.a{name}"] = self.acc[k] / GRAVITY
            out[f"stateEstimateZ.{name}"] = p[k] * 1000.0
            out[f"stateEstimateZ.v{name}"] = v[k] * 1000.0
            out[f"kalman.state{name.upper()}"] = p[k]
            out[f"kalman.stateP{name.upper()}"] = v_body[k]
            out[f"kalman.var{name.upper()}"] = 1e-6
            out[f"kalman.varP{name.upper()}"] = 1e-6
            out[f"acc.{name}"] = acc_body[k]
            out[f"gyro.{name}"] = deg(w[k])
            out[f"ctrltarget.{name}"] = self.ref[k]
            out[f"ctrltarget.v{name}"] = self.ref[3 + k]
            out[f"ctrltarget.a{name}"] = self.ref[6 + k]
        for name, value in (("roll", roll), ("pitch", pitch), ("yaw", yaw)):
            out[f"stateEstimate.{name}"] = deg(value)
            out[f"stabilizer.{name}"] = deg(value)
        out["stateEstimateZ.rateRoll"] = w[0] * 1000.0
        out["stateEstimateZ.ratePitch"] = w[1] * 1000.0
        out["stateEstimateZ.rateYaw"] = w[2] * 1000.0
        out.update({"stateEstimate.qx": qx, "stateEstimate.qy": qy, "stateEstimate.qz": qz,
                    "stateEstimate.qw": qw, "ctrltarget.roll": 0.0, "ctrltarget.pitch": 0.0,
                    "ctrltarget.yaw": deg(self.ref[9])})
        out["stabilizer.thrust"] = 65535.0 * self.thrust / (4 * kf * top * top)
        for k in range(4):
            out[f"motor.m{k + 1}"] = 65535.0 * (self.speeds[k] / top) ** 2
        ext = self.extpos
        for k, name in enumerate(("x", "y", "z")):
            out[f"locSrv.{name}"] = ext[k] if ext else 0.0
        quat = ext[3] if ext and ext[3] is not None else (0.0, 0.0, 0.0, 1.0)
        for k, name in enumerate(("qx", "qy", "qz", "qw")):
            out[f"locSrv.{name}"] = quat[k]
        flying = self.mode not in ("off", "idle", "none")
        tumbled = rot[2, 2] < 0.0
        out.update({"pm.vbat": VBAT, "pm.batteryLevel": 70.0, "pm.state": 0.0,
                    "sys.canfly": 0.0 if self.emergency else 1.0,
                    "sys.isFlying": 1.0 if flying else 0.0,
                    "sys.isTumbled": 1.0 if tumbled else 0.0,
                    "supervisor.info": (1 | 2 | (4 if flying else 0) | (8 if flying else 0)
                                        | (32 if tumbled else 0)
                                        | (64 if self.emergency else 0)),
                    "range.zrange": 1000.0 * max(p[2], 0.0) / max(rot[2, 2], 0.1)})
        return out


def _cut(x: float, top: float) -> float:
    return max(-top, min(top, float(x)))


def _cut_norm(v: np.ndarray, top: float) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v * (top / n) if n > top else v


def _matrix(q) -> np.ndarray:
    """The rotation matrix (body to world) of quaternion (w, x, y, z)."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _decompress(comp: int) -> tuple:
    """A quaternion (x, y, z, w) from the firmware's 32-bit compressed form (the largest
    component dropped, the others as sign and 9-bit magnitude)."""
    mask = (1 << 9) - 1
    largest = comp >> 30
    q = [0.0, 0.0, 0.0, 0.0]
    total = 0.0
    for i in (3, 2, 1, 0):
        if i == largest:
            continue
        mag, neg = comp & mask, (comp >> 9) & 1
        comp >>= 10
        q[i] = (math.sqrt(0.5) * mag / mask) * (-1.0 if neg else 1.0)
        total += q[i] * q[i]
    q[largest] = math.sqrt(max(0.0, 1.0 - total))
    return tuple(q)


def _quat_yaw(q) -> float:
    x, y, z, w = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


_HANDLERS = {wire.LINK: Firmware._link, wire.PLATFORM: Firmware._platform,
             wire.LOG: Firmware._log, wire.PARAM: Firmware._param, wire.MEM: Firmware._mem,
             wire.COMMANDER: Firmware._commander, wire.GENERIC: Firmware._generic,
             wire.HIGH_LEVEL: Firmware._high_level, wire.LOCALIZATION: Firmware._localization}
_ = FLOAT, PIECE_BYTES, _f32
