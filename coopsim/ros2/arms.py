"""Robot arms in ROS 2: ``sensor_msgs/JointState`` and the links' transforms, from a layout's
robots with an ``arm`` (docs/protocol.md, version 6) and one step's snapshot.

Per robot ``R`` with an arm: ``/R/joint_states`` (``name`` the arm's joint keys, base to
flange; ``position`` rad; ``velocity`` rad/s and ``effort`` N m when the snapshot has them --
live, from the ``joints`` module's reading; a replay keeps the angles only and sends them
empty, as JointState allows), and on ``/tf`` the chain ``R/base_link`` -> ``R/arm_base`` (the
arm's mount on the robot's body) -> ``R/<joint_1>`` -> ... -> ``R/tool`` (REP 103: x forward,
y left, z up, m; each transform the child frame in its parent's, as robot_state_publisher
sends them). The frames come from :func:`coopsim.model.arm.frames` at the angles, so the
transform tree is the arm's kinematic chain.
"""

from __future__ import annotations

import struct

import numpy as np

from ..model.arm import ArmSpec, base_transform, frames
from ..model.armstate import (joint_angles, joint_rates_efforts, layout_arms,
                              matrix_quaternions, usable_angles)
from . import messages as m
from .cdr import Writer


class JointStateTemplate:
    """sensor_msgs/JointState of one arm, encoded once: each step writes its stamp and its
    values into a copy (``full``: velocities and efforts too, else they are empty)."""

    def __init__(self, names, full: bool) -> None:
        n = len(names)
        w = Writer()
        self._stamp = w.header(0, "")
        w.seq(n)
        for name in names:
            w.string(name)
        self._at = []
        for k in range(3 if full else 1):
            w.seq(n)
            self._at.append(w.f64(*([0.0] * n)))
        for _ in range(0 if full else 2):
            w.seq(0)
        self.data, self.n = bytes(w.buf), n

    def fill(self, ns: int, *values) -> bytes:
        """The message at ``ns`` with position (and velocity, effort when ``full``)."""
        buf = bytearray(self.data)
        sec, nsec = divmod(int(ns), 1_000_000_000)
        struct.pack_into("<iI", buf, self._stamp, sec, nsec)
        for at, v in zip(self._at, values):
            buf[at:at + 8 * self.n] = np.asarray(v, dtype="<f8")[:self.n].tobytes()
        return bytes(buf)


class RosArms:
    """The arms of one layout: robot name -> (ROS namespace, row, ArmSpec), and their
    JointState and /tf templates.

    Args:
        layout: A layout document; its robots with ``arm`` are published.
        rows: Robot name -> (its ROS namespace, its row in the snapshots).
    """

    def __init__(self, layout: dict, rows: dict[str, tuple[str, int]]) -> None:
        arms = layout_arms(layout)
        self.arms = [(rows[n][0], rows[n][1], arm) for n, arm in arms.items() if n in rows]
        pairs = []
        for ns, _, arm in self.arms:
            names = [f"{ns}/arm_base"] + [f"{ns}/{l.key}" for l in arm.links] + [f"{ns}/tool"]
            pairs += list(zip([f"{ns}/base_link"] + names[:-1], names))
        self._tf = m.TfTemplate(pairs)
        self._states = {(ns, full): JointStateTemplate([l.key for l in arm.links], full)
                        for ns, _, arm in self.arms for full in (False, True)}

    def topics(self) -> list[tuple[str, str]]:
        """(ROS topic, short type) of every joint_states topic."""
        return [(f"/{ns}/joint_states", m.JOINT_STATE) for ns, _, _ in self.arms]

    def joint_states(self, snap, ns: int) -> list[tuple[str, bytes]]:
        """(topic, sensor_msgs/JointState) of every arm at ``snap``."""
        if not self.arms:
            return []
        q = joint_angles(snap)
        rates, efforts = joint_rates_efforts(snap)
        out = []
        for name, row, arm in self.arms:
            position = usable_angles(arm, q[row])
            v, e = rates[row, :arm.dof], efforts[row, :arm.dof]
            full = bool(np.isfinite(v).all() and np.isfinite(e).all())
            values = (position, v, e) if full else (position,)
            out.append((f"/{name}/joint_states", self._states[name, full].fill(ns, *values)))
        return out

    def transforms(self, snap, ns: int) -> bytes | None:
        """tf2_msgs/TFMessage of every arm's chain at ``snap`` (None without arms)."""
        if not self.arms:
            return None
        q = joint_angles(snap)
        rel = [_chain(arm, frames(arm, usable_angles(arm, q[row]))) for _, row, arm in self.arms]
        chain = np.concatenate(rel)
        pose = np.concatenate((chain[:, :3, 3], matrix_quaternions(chain[:, :3, :3])), axis=1)
        return self._tf.fill_full(ns, pose)


def _chain(arm: ArmSpec, f: np.ndarray) -> np.ndarray:
    """(dof + 2, 4, 4): the mount in the robot's body frame, then each frame of ``f`` (the
    arm's frames in its base frame) in the previous one's."""
    rot, pos = f[:, :3, :3], f[:, :3, 3]
    out = np.zeros((len(f), 4, 4))
    out[0] = base_transform(*arm.mount, arm.mount_yaw)
    back = np.transpose(rot[:-1], (0, 2, 1))
    out[1:, :3, :3] = back @ rot[1:]
    out[1:, :3, 3] = np.einsum("nij,nj->ni", back, pos[1:] - pos[:-1])
    out[1:, 3, 3] = 1.0
    return out
