"""A robot arm in the live Foxglove bridge: a realtime run of an ``irb120`` on the
mujoco engine moved by the Python client; a real WebSocket client receives ``/scene/arms``
(a SceneEntity per link) and ``/tf/arms`` (robot -> arm_base -> joints -> tool) that compose
to the arm's forward kinematics at the angles it reached."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.app.run import Run, RunOptions  # noqa: E402
from coopsim.client import Client  # noqa: E402
from coopsim.model.arm import quat_matrix  # noqa: E402
from coopsim.model.armstate import arm_world_frames  # noqa: E402
from coopsim.model.plugins import ROBOT_TYPES  # noqa: E402
from coopsim.model.specs import RobotSpec  # noqa: E402

from fxclient import FoxgloveClient  # noqa: E402
from helpers import robot, scenario  # noqa: E402

GOAL = (-0.6, 0.4, 0.3, -0.5, 0.8, 0.2)  # rad


def _matrix(t) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = quat_matrix((t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z))
    out[:3, 3] = t.translation.x, t.translation.y, t.translation.z
    return out


def test_the_bridge_shows_the_arm_moved_over_the_network():
    pytest.importorskip("foxglove")
    spec = scenario([robot("irb", 0.5, -0.5, yaw=0.7, type="irb120")], floor=(4.0, 4.0),
                    dt=0.002, mode="realtime")
    spec = dataclasses.replace(spec, settings=dataclasses.replace(spec.settings,
                                                                  engine="mujoco"))
    arm = ROBOT_TYPES.get("irb120").build(RobotSpec("irb120", "irb")).arms[0]
    options = RunOptions(mode="realtime", port=0, controllers=False, foxglove=0,
                         foxglove_rate=20.0)
    with Run(spec, options) as run:
        run.start()
        with Client(run.network.endpoint) as client:
            bot = client.robot("irb")
            bot.joints.set_positions(*GOAL, 1.0)
            with FoxgloveClient(run.foxglove.url,
                                lambda t: t in ("/scene/arms", "/tf/arms")) as fox:
                fox.receive(lambda g: bool(g.get("/tf/arms")) and np.allclose(
                    list(bot.joints.read())[1:7], GOAL, atol=1e-4))  # there, and seen
                after = time.time_ns()  # live messages carry the wall clock's time
                got = fox.receive(lambda g: all(
                    any(ns > after for ns, _ in g.get(t, ())) for t in ("/tf/arms",
                                                                        "/scene/arms")))
            pose = run.stepper.snapshot.pose3d[0]
    tf = got["/tf/arms"][-1][1].transforms
    assert [t.child_frame_id for t in tf] == ["irb/arm_base"] + [
        f"irb/{l.key}" for l in arm.links] + ["irb/tool"]
    body = np.eye(4)
    body[:3, :3], body[:3, 3] = quat_matrix(pose[3:7]), pose[:3]
    total = body
    for t in tf:
        total = total @ _matrix(t)
    want = arm_world_frames(arm, pose, GOAL)
    np.testing.assert_allclose(total, want[-1], atol=1e-3)
    ids = {e.id for e in got["/scene/arms"][-1][1].entities}
    assert ids == {"arm/irb/base", "arm/irb/gripper"} | {f"arm/irb/{l.key}" for l in arm.links}
