"""A stream writer no reader has matched writes nothing to DDS (a write costs Cyclone
a serialized copy and its history's bookkeeping even with nobody to send it to), starts writing
once a reader in another participant matches it, and stops again when that reader goes; a
latched writer (/map, /tf_static) always writes, for readers that join late."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

from coopsim.ros2 import messages as m  # noqa: E402
from coopsim.ros2.dds import LATCHED, Participant  # noqa: E402
from tests.ros2 import rosnode  # noqa: E402


#: A plain Cyclone reader of /r0/odom (the binding's typed topic, as any Cyclone program makes
#: it) in a process of its own, until its stdin closes.
READER = r"""
import sys
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from coopsim.ros2.dds import idl_types, loopback_config
dom = int(sys.argv[1])
d = Domain(dom, loopback_config()); dp = DomainParticipant(dom)
r = DataReader(dp, Topic(dp, "rt/r0/odom", idl_types()["nav_msgs/Odometry"]))
print("ready", flush=True); sys.stdin.read()
"""

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


class Spy:
    """Stands in for the binding's write of bytes: counts the writes that reach it."""

    def __init__(self, write) -> None:
        self.real, self.calls = write, 0

    def __call__(self, ref, payload):
        self.calls += 1
        return self.real(ref, payload)


def _until(condition, what: str, timeout: float = 60.0) -> None:
    """Wait (on an event, not a sleep) until ``condition()``; fail naming ``what``."""
    done = threading.Event()
    for _ in range(int(timeout * 20)):
        if condition():
            return
        done.wait(0.05)
    raise AssertionError(f"not {what} within {timeout} s")


def test_a_stream_writer_writes_only_while_a_reader_has_matched_it():
    domain = rosnode.domain() + 7  # no other module's ROS 2 test uses +7
    ours, theirs = Participant(domain), None
    try:
        writer = ours.writer("/r0/odom", m.ODOMETRY)
        latched = ours.writer("/map_probe", m.CLOCK, LATCHED)
        spy = writer._write = Spy(writer._write)
        latched_spy = latched._write = Spy(latched._write)
        payload = m.OdomTemplate("r0/odom", "r0/base_link").fill(5, 1.0, 2.0, 0.5, 0.1, 0, 0)
        for _ in range(3):
            writer.write(payload)
            latched.write(m.clock(5))
        assert (spy.calls, latched_spy.calls) == (0, 3), "unmatched: only the latched wrote"

        theirs = subprocess.Popen([sys.executable, "-c", READER, str(domain)], text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert theirs.stdout.readline() == "ready\n"
        _until(lambda: writer.matched() == 1, "matched")
        _until(lambda: writer._gate.count == 1, "told of the match")
        writer.write(payload)
        assert spy.calls == 1, "a matched writer writes"

        theirs.communicate(timeout=60)  # its stdin closed: the reader leaves
        _until(lambda: writer._gate.count == 0, "told the reader went")
        writer.write(payload)
        assert spy.calls == 1, "unmatched again: no write"
    finally:
        ours.close()
        if theirs is not None and theirs.poll() is None:
            theirs.kill()
            theirs.wait(60)
