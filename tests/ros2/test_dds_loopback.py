"""DDS on loopback by default: a default ``coopsim run --ros2`` process's
UDP sockets, read with ``ss -uanp`` as an operator would, all listen on loopback only: bound to
127.0.0.1, or bound to the wildcard address but tied to the ``lo`` device (``0.0.0.0%lo``:
Cyclone DDS binds its receiving sockets to the wildcard address whatever its configuration says,
so coopsim ties them to loopback)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

from tests.rechelpers import start_cli  # noqa: E402
from tests.ros2 import rosnode  # noqa: E402

LOCAL = re.compile(r"^(127\.\d+\.\d+\.\d+|\[?::1\]?|[^%\s]+%lo):\d+$")

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _udp_sockets(pid: int) -> list[str]:
    """The local addresses of the UDP sockets ``ss`` lists for process ``pid``."""
    out = subprocess.run(["ss", "-uanpH"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3] for line in out.splitlines() if f"pid={pid}," in line]


def _wait_for_line(proc, words: str) -> list[str]:
    seen = []
    for line in proc.stderr:  # ends when the run ends
        seen.append(line)
        if words in line:
            return seen
    raise AssertionError("".join(seen))


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)")
def test_a_default_ros2_run_listens_on_loopback_only(tmp_path):
    domain = rosnode.domain() + 15
    proc = start_cli("run", "--headless", "--ros2", "--ros2-domain", str(domain),
                     "--no-controllers", "--port", "0", "--mode", "lockstep", cwd=tmp_path)
    try:
        _wait_for_line(proc, f"ros2: DDS domain {domain}, loopback only: export "
                       f"ROS_DOMAIN_ID={domain} ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST "
                       "in your ROS 2 shells")
        sockets = _udp_sockets(proc.pid)
        assert sockets, "the run has DDS sockets"
        beyond = [s for s in sockets if not LOCAL.match(s)]
        assert not beyond, f"DDS sockets listening beyond loopback: {beyond} (all: {sockets})"
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
