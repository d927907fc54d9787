"""``--ros2-discovery subnet``: ROS 2's default discovery, for users who want ``ros2 topic
list`` to just work. A stock rclpy node (Kilted and Jazzy wheels, Fast DDS) with no ROS
discovery variable set finds the run and its odometry; loopback stays the default, and
``subnet`` needs ``--insecure`` as a bind beyond loopback does (docs/ros2.md, *Discovery*).

The traffic stays on this machine: both sides send their multicast with a time to live of 0
(delivered on this host only, never put on a wire: Cyclone's ``MulticastTimeToLive`` through
``CYCLONEDDS_URI``, Fast DDS's UDP transport ``TTL`` through its profiles file; neither is a
ROS variable), and their unicast goes to this machine's own addresses."""

from __future__ import annotations

import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

from coopsim.formats.files import load  # noqa: E402
from tests.nethelpers import SCENARIOS, live  # noqa: E402
from tests.ros2.rosnode import RosNode, domain, ros_distro  # noqa: E402,F401 - a fixture
from tests.ros2.test_ros2_bridge import run_cli  # noqa: E402

ODOM = "nav_msgs/msg/Odometry"
#: Cyclone (coopsim's side): multicast delivered on this host only
CYCLONE_HOST_ONLY = ('<CycloneDDS><Domain id="any"><General>'
                     "<MulticastTimeToLive>0</MulticastTimeToLive></General></Domain>"
                     "</CycloneDDS>")
#: Fast DDS (the ROS node's side): its default participant's UDP transport with TTL 0
FASTDDS_HOST_ONLY = """<?xml version="1.0" encoding="UTF-8" ?>
<dds xmlns="http://www.eprosima.com"><profiles>
<transport_descriptors><transport_descriptor>
<transport_id>udp_host_only</transport_id><type>UDPv4</type><TTL>0</TTL>
</transport_descriptor></transport_descriptors>
<participant profile_name="host_only" is_default_profile="true"><rtps>
<userTransports><transport_id>udp_host_only</transport_id></userTransports>
<useBuiltinTransports>false</useBuiltinTransports>
</rtps></participant>
</profiles></dds>
"""


@pytest.mark.slow
def test_subnet_discovery_needs_insecure(tmp_path):
    done = run_cli("run", "--headless", "--duration", "0.1", "--ros2", "--ros2-discovery",
                   "subnet", "--no-controllers", "--port", "0", cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    assert ("--ros2 publishes without authentication: --ros2-discovery subnet (ROS 2's "
            "default discovery on this machine's networks) needs --insecure") in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_node_with_no_discovery_settings_finds_a_subnet_run(ros_distro, tmp_path,
                                                               monkeypatch):
    name, python = ros_distro
    dom = domain() + (7 if name == "jazzy" else 6)
    profiles = tmp_path / "fastdds.xml"
    profiles.write_text(FASTDDS_HOST_ONLY)
    monkeypatch.setenv("CYCLONEDDS_URI", CYCLONE_HOST_ONLY)
    monkeypatch.setenv("COOPSIM_ROS_PYTHON", "none")  # no services node (its own discovery)
    plain = {"ROS_AUTOMATIC_DISCOVERY_RANGE": None, "FASTDDS_DEFAULT_PROFILES_FILE":
             str(profiles), "FASTRTPS_DEFAULT_PROFILES_FILE": str(profiles)}
    with live(load(str(SCENARIOS / "demo.scenario")), ros2=True, ros2_domain=dom,
              ros2_discovery="subnet", insecure=True, duration=3600.0) as run, \
            RosNode(python, domain=dom, env=plain) as node:
        assert not run.ros2.loopback
        graph = node("graph", wait_topic="/robot1/odom", wait_node="/coopsim", timeout=60)
        assert graph["found"], sorted(graph["topics"])
        node("sub", topic="/robot1/odom", type=ODOM)
        got = node("take", topic="/robot1/odom", n=1, timeout=60)
        assert got["count"] >= 1
