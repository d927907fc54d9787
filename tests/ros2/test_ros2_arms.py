"""A robot arm over DDS (``coopsim run --ros2``): a realtime run of an ``irb120`` on
the mujoco engine moved by the Python client over the network; another process's DDS participant
(tests/ros2/ddspeer.py, ROS 2 types of its own) reads ``/irb/joint_states`` (the joint keys,
the angles reached, the rates and torques) and ``/tf``'s chain ``irb/base_link`` -> ... ->
``irb/tool``, which composes to the arm's forward kinematics at those angles."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")
pytest.importorskip("mujoco")

from coopsim.client import Client  # noqa: E402
from coopsim.model.arm import base_transform, frames, quat_matrix  # noqa: E402
from coopsim.model.plugins import ROBOT_TYPES  # noqa: E402
from coopsim.model.specs import RobotSpec  # noqa: E402

from helpers import robot, scenario  # noqa: E402
from nethelpers import live  # noqa: E402
from test_ros2_bridge import DdsPeer, domain  # noqa: E402

GOAL = (0.5, -0.3, 0.4, 0.2, -0.6, 0.7)  # rad

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _matrix(t) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = quat_matrix(t["q"]), t["t"]
    return out


def test_joint_states_and_the_arm_on_tf_over_dds():
    spec = scenario([robot("irb", 0.0, 0.0, type="irb120")], floor=(4.0, 4.0), dt=0.002,
                    mode="realtime")
    spec = dataclasses.replace(spec, settings=dataclasses.replace(spec.settings,
                                                                  engine="mujoco"))
    arm = ROBOT_TYPES.get("irb120").build(RobotSpec("irb120", "irb")).arms[0]
    dom = domain()
    peer = DdsPeer(dom)
    try:
        with live(spec, ros2=True, ros2_domain=dom) as run:
            types = peer("topics", expect=["rt/irb/joint_states", "rt/tf"])["types"]
            assert types["rt/irb/joint_states"] == "sensor_msgs::msg::dds_::JointState_"
            with Client(run.network.endpoint) as client:
                client.robot("irb").joints.set_positions(*GOAL, 1.0)
            got = peer("joints", robot="irb", near=list(GOAL), tol=1e-3)
    finally:
        peer.close()
    assert got["name"] == [l.key for l in arm.links]
    assert len(got["velocity"]) == len(got["effort"]) == 6  # live: the reading's rates, torques
    assert np.isfinite(got["velocity"] + got["effort"]).all()
    assert max(abs(e) for e in got["effort"]) > 0  # the drives hold the arm: torques, not 0s
    chain = got["tf"]
    assert [t["child"] for t in chain] == ["irb/arm_base"] + [
        f"irb/{l.key}" for l in arm.links] + ["irb/tool"]
    assert chain[0]["parent"] == "irb/base_link"
    total = np.eye(4)
    for t in chain:
        total = total @ _matrix(t)
    want = base_transform(*arm.mount, arm.mount_yaw) @ frames(arm, got["position"])[-1]
    np.testing.assert_allclose(total, want, atol=1e-9)
