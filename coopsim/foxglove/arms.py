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
angles of the joints module's reading (or the recorded columns ``arm_q1``..) at the robot's 3D
pose. Units: m; quaternions x, y, z, w as Foxglove writes them.

As the rest of the scene (:mod:`.proto`), both messages are templates encoded once per layout:
every primitive sits at a fixed transform of one of its arm's frames (a link's length never
changes), so a step is one batched product of 4 x 4 matrices and one scatter of the slots.
"""

from __future__ import annotations

import numpy as np

from ..model.arm import ArmSpec, base_transform, frames
from ..model.armstate import layout_arms, matrix_quaternions, snapshot_arm_frames
from .links import LinkFrames
from .proto import Msg, Slot, Template, color, pose3, quaternion4, vector3, world_entity
from .topics import Topic

SCENE_ARMS = Topic("/scene/arms", "SceneUpdate", (
    "every step, when the layout has robots with a 3D arm: per arm the pedestal "
    "`arm/NAME/base` (a cylinder of the arm's `base_radius` from its base frame up to the first "
    "joint), each link `arm/NAME/JOINT` (a sphere at the joint and a cylinder as wide as the "
    "link from its joint to the next joint, the last to the tool point; orange) and "
    "`arm/NAME/gripper` (two fingers at the tool, half the stroke either side), in `world`, at "
    "the joint angles of the `joints` module's reading (an export: the recorded columns "
    "`arm_q1`..) and the robot's 3D pose. Starts by deleting the topic's entities"))
TF_ARMS = Topic("/tf/arms", "FrameTransforms", (
    "with `/scene/arms`: each arm's chain `NAME` (the robot's frame of `/tf`) → `NAME/arm_base` "
    "(the mount) → `NAME/JOINT` for each joint (the joint's frame after its turn, in the "
    "previous one's) → `NAME/tool` (the tool point): Foxglove's transform tree is the arm's "
    "kinematic chain. A robot from a description file sends its links instead: `NAME` → "
    "`NAME/ROOT` → `NAME/LINK` for every link in its parent link's frame, at the joints' "
    "positions of the stream's `link_q` columns (an export: the recorded ones); its arm, if "
    "any, is not drawn on `/scene/arms`"))
LINK_COLOR = (235, 140, 40)  # an industrial arm's orange
JOINT_COLOR = (60, 60, 60)
BASE_COLOR = (90, 90, 100)
FINGER = 0.012  # m: a gripper finger's thickness


def along(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """4 x 4 transform at the middle of segment a-b whose z axis points from a to b."""
    d = b - a
    length = float(np.linalg.norm(d))
    z = d / length if length > 1e-9 else np.array([0.0, 0.0, 1.0])
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    out = np.eye(4)
    out[:3, :3] = np.column_stack((x, np.cross(z, x), z))
    out[:3, 3] = (a + b) / 2
    return out


class ArmScene:
    """The arms of one layout: their entities and frames, as templates filled per step.

    Args:
        layout: A layout document; its robots with ``arm`` are drawn.
    """

    def __init__(self, layout: dict) -> None:
        self.links = LinkFrames(layout)  # described robots: their own links (.links)
        drawn = {name for name, _ in self.links.robots}
        self.arms: dict[str, ArmSpec] = {n: a for n, a in layout_arms(layout).items()
                                         if n not in drawn}
        self._frame, self._local = [], []  # per primitive: its frame (all arms' rows), offset
        self._first: list[int] = []  # per arm: its first row among all arms' frames
        scene = Msg().sub(1, Msg().uint(2, 1))  # delete the previous step's entities
        for name, arm in self.arms.items():
            self._first.append(sum(a.dof + 2 for a in list(self.arms.values())[:len(
                self._first)]))
            for entity in self._entities(name, arm):
                scene.sub(2, entity)
        self._scene_slots = 7 * len(self._frame)
        tf = Msg()
        count = self._scene_slots
        for name, arm in self.arms.items():
            names = [f"{name}/arm_base"] + [f"{name}/{l.key}" for l in arm.links] + [
                f"{name}/tool"]
            for parent, child in zip([name] + names[:-1], names):
                x, y, z, qx, qy, qz, qw = (Slot(count + k) for k in range(7))
                count += 7
                tf.sub(1, Msg().stamp(1).string(2, parent).string(3, child)
                       .sub(4, vector3(x, y, z)).sub(5, quaternion4(qx, qy, qz, qw)))
        self.scene, self.tf = Template(scene, count), Template(tf, count)
        self._local_all = np.array(self._local).reshape(-1, 4, 4)
        self._frame_all = np.array(self._frame, dtype=int)

    def __bool__(self) -> bool:
        return bool(self.arms) or bool(self.links)

    def _place(self, row: int, local: np.ndarray) -> Msg:
        """A foxglove.Pose whose 7 slots put it at ``local`` in frame ``row`` of the arm
        being built (0: its base, 1..dof: its joints, dof + 1: its tool)."""
        first = 7 * len(self._frame)
        self._frame.append(self._first[-1] + row)
        self._local.append(local)
        return pose3(*(Slot(first + k) for k in range(7)))

    def _entities(self, name: str, arm: ArmSpec) -> list[Msg]:
        """The pedestal, each link (joint sphere, cylinder) and the gripper, in ``world``."""
        rest = frames(arm, arm.start)  # lengths and offsets: the same at every angle
        out = []
        d = 2 * arm.base_radius
        first = rest[1, :3, 3]
        pedestal = world_entity(f"arm/{name}/base")
        pedestal.sub(10, Msg().sub(1, self._place(0, along(np.zeros(3), first)))
                     .sub(2, vector3(d, d, max(float(np.linalg.norm(first)), 1e-3)))
                     .double(3, 1.0).double(4, 1.0).sub(5, color(BASE_COLOR)))
        out.append(pedestal)
        for i, link in enumerate(arm.links):
            w = 2 * link.radius
            entity = world_entity(f"arm/{name}/{link.key}")
            entity.sub(9, Msg().sub(1, self._place(i + 1, np.eye(4)))
                       .sub(2, vector3(1.2 * w, 1.2 * w, 1.2 * w)).sub(3, color(JOINT_COLOR)))
            # the next joint (or the tool) in this joint's frame: fixed by the arm's geometry
            offset = (np.linalg.inv(rest[i + 1]) @ rest[i + 2])[:3, 3]
            if np.linalg.norm(offset) > 1e-6:
                entity.sub(10, Msg().sub(1, self._place(i + 1, along(np.zeros(3), offset)))
                           .sub(2, vector3(w, w, float(np.linalg.norm(offset))))
                           .double(3, 1.0).double(4, 1.0).sub(5, color(LINK_COLOR)))
            out.append(entity)
        if arm.gripper is not None:
            g = arm.gripper
            entity = world_entity(f"arm/{name}/gripper")
            for side in (-1.0, 1.0):
                local = np.eye(4)
                local[:3, 3] = (0.0, side * g.stroke / 2, -g.length / 2)
                entity.sub(8, Msg().sub(1, self._place(arm.dof + 1, local))
                           .sub(2, vector3(FINGER, FINGER, g.length)).sub(3, color(JOINT_COLOR)))
            out.append(entity)
        return out

    def messages(self, snap, ns: int) -> list[tuple[Topic, bytes]]:
        """``/scene/arms`` and ``/tf/arms`` of ``snap`` (none when the layout has no arm), and
        the described robots' link frames on ``/tf/arms`` (.links)."""
        links = self.links.message(snap, ns)
        links = [(TF_ARMS, links)] if links is not None else []
        if not self.arms:
            return links
        found = snapshot_arm_frames(snap, self.arms)
        if len(found) != len(self.arms):
            return links
        world = np.concatenate([found[name] for name in self.arms])  # (sum dof + 2, 4, 4)
        placed = world[self._frame_all] @ self._local_all
        steps = [np.concatenate([base_transform(*arm.mount, arm.mount_yaw)[None],
                                 _relative(found[name])])
                 for name, arm in self.arms.items()]
        chain = np.concatenate([placed] + steps)
        values = np.concatenate((chain[:, :3, 3], matrix_quaternions(chain[:, :3, :3])),
                                axis=1).ravel()
        return [(SCENE_ARMS, self.scene.fill(values, ns).tobytes()),
                (TF_ARMS, self.tf.fill(values, ns).tobytes())] + links


def _relative(f: np.ndarray) -> np.ndarray:
    """(len(f) - 1, 4, 4) each frame in the previous one's (rigid inverses, batched)."""
    rot, pos = f[:, :3, :3], f[:, :3, 3]
    out = np.zeros((len(f) - 1, 4, 4))
    back = np.transpose(rot[:-1], (0, 2, 1))
    out[:, :3, :3] = back @ rot[1:]
    out[:, :3, 3] = np.einsum("nij,nj->ni", back, pos[1:] - pos[:-1])
    out[:, 3, 3] = 1.0
    return out
