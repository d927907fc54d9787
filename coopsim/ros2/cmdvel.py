"""The robots' ``cmd_vel`` readers, read by one thread at a bounded rate.

Why: a flood of Twists (four rclpy nodes publish 54,000-109,000 a second) read one by one on
Cyclone's listener thread cost each Twist ~15 µs of Python under the GIL (the binding's
deserializer alone) and took a realtime run from 1.00x to 0.56-0.59x of real time. Now no
Python runs per Twist as it arrives: each robot's reader keeps what arrives in Cyclone's own
history (C), and one thread, woken by a wait set when a reader has data, reads every reader that
has some at most :data:`READ_RATE` times a second (wall clock). Of what it takes from a robot it
uses the newest Twist only (decoded here, ~0.5 µs): as a step reads only a robot's latest
command, the older ones would have been overwritten in its command slot anyway. They are
counted as ``dropped``, and so are Twists the history refused for being full (more than
:data:`DEPTH` between two reads: Cyclone's sample-rejected count). A controller publishing at
its rate (10-100 Hz) is read as each Twist arrives, as before: the bound only spaces reads 1 ms
apart at least, so a Twist waits at most that long.

The readers are best effort (every ROS publisher's Twists reach them, reliable or not) with a
keep-all history of at most :data:`DEPTH` samples.
"""

from __future__ import annotations

import ctypes
import logging
import struct
import threading
import time

from . import messages as m
from .dds import Qos

log = logging.getLogger(__name__)

#: Hz (wall clock): the most times a second the readers are read, so the most Twists a second
#: a robot's command takes from ROS (each read applies a robot's newest Twist)
READ_RATE = 1000.0
#: Twists a robot's reader holds between two reads; more are refused by it and counted dropped
DEPTH = 256
WAKE = 0.1  # s the thread waits at most for data before it looks whether it should stop
QOS = Qos(reliable=False, depth=DEPTH, keep_all=True)
_TWIST = struct.Struct("<6d"), struct.Struct(">6d")  # linear x, y, z, angular x, y, z


def twist(payload: bytes) -> tuple[tuple, tuple] | None:
    """(linear, angular) of a ``geometry_msgs/Twist`` payload (CDR or XCDR2, either byte
    order: six doubles after the 4-byte encapsulation header), or None when it is not one."""
    if len(payload) < 4 + 48 or payload[0] != 0 or payload[1] not in (0, 1, 6, 7):
        return None
    v = _TWIST[0 if payload[1] & 1 else 1].unpack_from(payload, 4)
    return v[:3], v[3:]


class CmdVelReaders:
    """Every robot's ``cmd_vel`` reader and the thread that reads them.

    Args:
        dds: The bridge's :class:`~.dds.Participant`.
        apply: ``apply(robot, linear, angular)``: a robot's newest Twist, on the thread.
        counts: The bridge's :class:`~.bridge.Counts` (``received``, ``dropped``,
            ``malformed``).
    """

    def __init__(self, dds, apply, counts) -> None:
        from cyclonedds.core import InstanceState, SampleState, ViewState, WaitSet
        from cyclonedds._clayer import ddspy_take
        self.dds, self.apply, self.counts = dds, apply, counts
        self._take, self._mask = ddspy_take, SampleState.Any | ViewState.Any | InstanceState.Any
        self._waitset = WaitSet(dds.participant)
        self._robots: list[tuple[str, object, object]] = []  # (robot, reader, condition)
        self._rejected: list[int] = []  # each reader's sample-rejected count seen so far
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="coopsim-ros2-cmd_vel",
                                        daemon=True)
        self.reads = 0  # times the readers were read (READ_RATE bounds it)

    def add(self, robot: str, topic: str) -> None:
        """Read ``topic`` (``/R/cmd_vel``) for ``robot`` (its Twists go to ``apply``)."""
        from cyclonedds.core import ReadCondition
        reader = self.dds.reader(topic, m.TWIST, None, QOS)
        condition = ReadCondition(reader, self._mask)
        with self._lock:
            self._robots.append((robot, reader, condition))
            self._rejected.append(0)
            index = len(self._robots)  # the wait set's value for it (1.., never 0: None)
        ret = self._waitset._waitset_attach(self._waitset._ref, condition._ref, index)
        if ret < 0:
            raise RuntimeError(f"cannot wait on {topic} ({ret})")
        if self._thread.ident is None:
            self._thread.start()

    def close(self) -> None:
        """Stop the thread (the readers go with the participant)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5.0)

    def _run(self) -> None:
        wait, ref = self._waitset._waitset_wait, self._waitset._ref
        woken = (ctypes.c_void_p * 64)()
        spacing, last = 1.0 / READ_RATE, 0.0
        while not self._stop.is_set():
            n = wait(ref, woken, len(woken), int(WAKE * 1e9))
            if n <= 0:
                continue
            early = last + spacing - time.perf_counter()
            if early > 0 and self._stop.wait(early):  # the bound: read at most READ_RATE/s
                break
            last = time.perf_counter()
            with self._lock:
                robots = list(self._robots)
            # more readers with data than the array holds: read every one that has some
            ready = ([robots[v - 1] + (v - 1,) for v in woken[:n] if v] if n <= len(woken)
                     else [r + (k,) for k, r in enumerate(robots)])
            try:
                for robot, reader, _, k in ready:
                    self._read(robot, reader, k)
            except Exception as exc:  # noqa: BLE001 - the thread must never die on input
                self.counts.errors += 1
                if self.counts.errors == 1:
                    log.warning("ros2 cmd_vel: %s", exc)
            self.reads += 1

    def _read(self, robot: str, reader, k: int) -> None:
        """Take everything ``robot``'s reader holds; apply the newest Twist, count the rest."""
        c = self.counts
        samples = self._take(reader._ref, self._mask, DEPTH)
        if isinstance(samples, int):  # a DDS error code
            raise RuntimeError(f"taking {robot}'s cmd_vel failed ({samples})")
        valid = [data for data, info in samples if info.valid_data]  # not a writer's leaving
        rejected = reader.get_sample_rejected_status().total_count
        full, self._rejected[k] = rejected - self._rejected[k], rejected
        c.received += len(valid) + full
        c.dropped += max(0, len(valid) - 1) + full
        if not valid:
            return
        got = twist(valid[-1])
        if got is None:
            c.malformed += 1
            return
        self.apply(robot, *got)
