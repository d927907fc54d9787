"""An external robot's pose over ROS 2 DDS: another process publishes
``geometry_msgs/PoseStamped`` on ``/real/external/pose`` and the body follows it; a teleport
published there is refused (14) and counted, the run goes on."""

from __future__ import annotations

import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

from coopsim.formats.files import parse_scenario  # noqa: E402
from tests.nethelpers import live, wait_until  # noqa: E402
from tests.net.test_external import SCENARIO  # noqa: E402
from tests.ros2.test_ros2_bridge import DdsPeer, domain  # noqa: E402

#: test_external's world, its stream given time (a DDS peer's round trip is slow)
SLOW = SCENARIO.replace("stale 0.3", "stale 5")

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def test_poses_published_on_ros2_move_the_external_body_and_a_teleport_is_refused():
    dom = domain() + 1
    peer = DdsPeer(dom)
    try:
        with live(parse_scenario(SLOW, "ext.scenario"), ros2=True, ros2_domain=dom) as run:
            ext = run.stepper.sim.external
            x = -2.0

            def arrived():  # publish until the bridge has found the topic and taken one
                peer("pose", robot="real", x=x, y=0.5, yaw=1.0)
                snap = run.stepper.wait_step(run.stepper.snapshot.step, 30.0)
                pose = snap.poses[snap.index["real"]]
                return abs(pose[1] - 0.5) < 1e-3 and abs(pose[2] - 1.0) < 1e-3
            wait_until(arrived)
            peer("pose", robot="real", x=4.0, y=0.5, yaw=1.0)  # 6 m in a moment: refused
            wait_until(lambda: ext.tracks["real"].refused.get(14))
            ros = run.network.sim.more_state[-1]()["ros2"]["external"]
            assert ros["received"] >= 1 and ros["refused"] == {"14": 1}
            assert "a jump of 6" in ros["last_refusal"]
            snap = run.stepper.wait_step(run.stepper.snapshot.step + 2, 30.0)
            assert snap.poses[snap.index["real"], 0] == pytest.approx(-2.0, abs=1e-3)
    finally:
        peer.close()
