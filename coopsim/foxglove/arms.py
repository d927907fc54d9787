"""Robot arms in Foxglove: each arm as a 3D model and its frames, from one step's snapshot.

A layout's robots with an ``arm`` (docs/protocol.md, version 6) are drawn on ``/scene/arms``
(``foxglove.SceneUpdate``): one entity per link, ``arm/<robot>/<joint key>``, a cylinder from
its joint to the next joint (the last to the tool point) with a sphere at the joint; the
pedestal ``arm/<robot>/base`` (a cylinder of the arm's ``base_radius`` from the base frame up
to the first joint); ``arm/<robot>/gripper``, two fingers at the tool. Their frames go on
``/tf/arms`` (``foxglove.FrameTransforms``): ``<robot>`` (the robot's frame on ``/tf``) ->
``<robot>/arm_base`` (the mount) -> ``<robot>/<joint_1>`` -> ... -> ``<robot>/tool``, each
transform the joint frame in its parent's (so Foxglove's transform tree is the kinematic
chain). Link frames come from :func:`coopsim.model.armstate.snapshot_arm_frames`: the joint
angles of the ``joints`` module's reading (or the recorded columns ``arm_q1``..) at the
robot's 3D pose. Units: m; quaternions x, y, z, w as Foxglove writes them.

Only a few robots carry arms, so these messages are encoded per step (no templates).
"""

from __future__ import annotations

import numpy as np

from ..model.arm import ArmSpec, quat_matrix
from ..model.armstate import (layout_arms, matrix_quaternion, robot_pose7,
                              snapshot_arm_frames)
from .proto import Msg, color, pose3, quaternion4, timestamp, vector3
from .scene import WORLD, Topic

SCENE_ARMS = Topic("/scene/arms", "SceneUpdate")  # links, joints, pedestal, gripper
TF_ARMS = Topic("/tf/arms", "FrameTransforms")  # robot -> arm_base -> joints -> tool
LINK_COLOR = (235, 140, 40)  # an industrial arm's orange
JOINT_COLOR = (60, 60, 60)
BASE_COLOR = (90, 90, 100)
FINGER = 0.012  # m: a gripper finger's thickness


def _along(a: np.ndarray, b: np.ndarray) -> Msg:
    """A foxglove.Pose at the middle of segment a-b whose z axis points from a to b."""
    d = b - a
    length = float(np.linalg.norm(d))
    z = d / length if length > 1e-9 else np.array([0.0, 0.0, 1.0])
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    r = np.column_stack((x, np.cross(z, x), z))
    mid = (a + b) / 2
    return pose3(*mid.tolist(), *matrix_quaternion(r))


def _at(t: np.ndarray) -> Msg:
    """A foxglove.Pose of a 4 x 4 transform."""
    return pose3(*t[:3, 3].tolist(), *matrix_quaternion(t[:3, :3]))


def _entity(ident: str, ns: int) -> Msg:
    return Msg().sub(1, timestamp(ns)).string(2, WORLD).string(3, ident)


class ArmScene:
    """The arms of one layout: their entities and frames per step.

    Args:
        layout: A layout document; its robots with ``arm`` are drawn.
    """

    def __init__(self, layout: dict) -> None:
        self.arms: dict[str, ArmSpec] = layout_arms(layout)

    def __bool__(self) -> bool:
        return bool(self.arms)

    def messages(self, snap, ns: int) -> list[tuple[Topic, bytes]]:
        """``/scene/arms`` and ``/tf/arms`` of ``snap`` (none when the layout has no arm)."""
        if not self.arms:
            return []
        frames = snapshot_arm_frames(snap, self.arms)
        scene = Msg().sub(1, Msg().uint(2, 1))  # delete the previous step's entities
        tf = Msg()
        for name, f in frames.items():
            arm = self.arms[name]
            for entity in _arm_entities(name, arm, f, ns):
                scene.sub(2, entity)
            for parent, child, t in _chain(name, arm, f, snap):
                tf.sub(1, Msg().sub(1, timestamp(ns)).string(2, parent).string(3, child)
                       .sub(4, vector3(*t[:3, 3].tolist()))
                       .sub(5, quaternion4(*matrix_quaternion(t[:3, :3]))))
        return [(SCENE_ARMS, bytes(scene.data)), (TF_ARMS, bytes(tf.data))]


def _arm_entities(name: str, arm: ArmSpec, f: np.ndarray, ns: int) -> list[Msg]:
    """The pedestal, each link (cylinder + joint sphere) and the gripper, world frame."""
    out = []
    first = f[1, :3, 3]
    base = f[0, :3, 3]
    d = 2 * arm.base_radius
    pedestal = _entity(f"arm/{name}/base", ns)
    pedestal.sub(10, Msg().sub(1, _along(base, first))
                 .sub(2, vector3(d, d, max(float(np.linalg.norm(first - base)), 1e-3)))
                 .double(3, 1.0).double(4, 1.0).sub(5, color(BASE_COLOR)))
    out.append(pedestal)
    for i, link in enumerate(arm.links):
        a, b = f[i + 1, :3, 3], f[i + 2, :3, 3]
        w = 2 * link.radius
        entity = _entity(f"arm/{name}/{link.key}", ns)
        entity.sub(9, Msg().sub(1, _at(f[i + 1])).sub(2, vector3(1.2 * w, 1.2 * w, 1.2 * w))
                   .sub(3, color(JOINT_COLOR)))
        length = float(np.linalg.norm(b - a))
        if length > 1e-6:
            entity.sub(10, Msg().sub(1, _along(a, b)).sub(2, vector3(w, w, length))
                       .double(3, 1.0).double(4, 1.0).sub(5, color(LINK_COLOR)))
        out.append(entity)
    if arm.gripper is not None:
        out.append(_gripper(name, arm, f[-1], ns))
    return out


def _gripper(name: str, arm: ArmSpec, tool: np.ndarray, ns: int) -> Msg:
    """Two fingers ending at the tool point, half the stroke apart each side (tool y)."""
    g = arm.gripper
    entity = _entity(f"arm/{name}/gripper", ns)
    for side in (-1.0, 1.0):
        local = np.eye(4)
        local[:3, 3] = (0.0, side * g.stroke / 2, -g.length / 2)
        entity.sub(8, Msg().sub(1, _at(tool @ local))
                   .sub(2, vector3(FINGER, FINGER, g.length)).sub(3, color(JOINT_COLOR)))
    return entity


def _chain(name: str, arm: ArmSpec, f: np.ndarray, snap) -> list[tuple[str, str, np.ndarray]]:
    """(parent, child, transform of child in parent) from the robot's frame down the arm."""
    row = list(snap.robots).index(name)
    body = np.eye(4)
    p = robot_pose7(snap, row)
    body[:3, :3], body[:3, 3] = quat_matrix(p[3:7]), p[:3]
    names = [f"{name}/arm_base"] + [f"{name}/{l.key}" for l in arm.links] + [f"{name}/tool"]
    out = [(name, names[0], np.linalg.inv(body) @ f[0])]
    for i in range(1, len(names)):
        out.append((names[i - 1], names[i], np.linalg.inv(f[i - 1]) @ f[i]))
    return out
