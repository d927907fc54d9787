"""coopsim as a node of the ROS 2 graph, as a stock rclpy node sees it (Kilted on Fast DDS 3,
Jazzy on Fast DDS 2): ``/coopsim`` is listed, it is the node of every topic's publishers and
subscriptions (``ros2 topic info -v``), and it leaves the graph with the run
(coopsim/ros2/graph.py). Before, Kilted named every endpoint ``_CREATED_BY_BARE_DDS_APP_``:
Fast DDS 3 does not take an endpoint's participant from its GUID when the discovery does not
name it, and Cyclone DDS never names it."""

from __future__ import annotations

import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

from coopsim.formats.files import load  # noqa: E402
from tests.nethelpers import SCENARIOS, live  # noqa: E402
from tests.ros2.rosnode import RosNode, domain, ros_distro  # noqa: E402,F401 - a fixture

pytestmark = pytest.mark.slow


def test_coopsim_is_the_node_of_its_endpoints_and_leaves_with_the_run(ros_distro):
    name, python = ros_distro
    dom = domain() + (13 if name == "jazzy" else 12)
    with RosNode(python, domain=dom) as node:
        with live(load(str(SCENARIOS / "demo.scenario")), ros2=True, ros2_domain=dom,
                  duration=3600.0):
            graph = node("graph", wait_node="/coopsim", wait_topic="/robot1/cmd_vel",
                         timeout=60)
            assert graph["found"] and "/coopsim" in graph["nodes"], graph["nodes"]
            for topic, kind in (("/robot1/odom", "pub"), ("/clock", "pub"),
                                ("/map", "pub"), ("/robot1/cmd_vel", "sub")):
                got = node("endpoints", topic=topic, kind=kind, wait_node="/coopsim",
                           timeout=60)
                assert got["found"], (topic, got)
                assert {e["node"] for e in got["endpoints"]} == {"/coopsim"}, (topic, got)
        # the run has closed: no copy of the node stays listed
        gone = node("graph", wait_gone="/coopsim", timeout=60)
        assert gone["found"], gone["nodes"]
