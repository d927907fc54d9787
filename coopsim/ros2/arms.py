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

import numpy as np

from ..model.arm import ArmSpec, base_transform, frames
from ..model.armstate import (joint_angles, joint_rates_efforts, layout_arms,
                              matrix_quaternion, usable_angles)
from . import messages as m
from .cdr import Writer


def joint_state(ns: int, names, position, velocity=(), effort=()) -> bytes:
    """sensor_msgs/JointState at ``ns`` (header frame empty, as robot_state_publisher's
    inputs have it): joint names, positions (rad), velocities (rad/s), efforts (N m)."""
    w = Writer()
    w.header(ns, "")
    w.seq(len(names))
    for name in names:
        w.string(name)
    for values in (position, velocity, effort):
        w.seq(len(values))
        if len(values):
            w.f64(*[float(v) for v in values])
    return w.bytes()


class RosArms:
    """The arms of one layout: robot name -> (ROS namespace, row, ArmSpec).

    Args:
        layout: A layout document; its robots with ``arm`` are published.
        rows: Robot name -> (its ROS namespace, its row in the snapshots).
    """

    def __init__(self, layout: dict, rows: dict[str, tuple[str, int]]) -> None:
        arms = layout_arms(layout)
        self.arms = [(rows[n][0], rows[n][1], arm) for n, arm in arms.items() if n in rows]

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
            keys = [l.key for l in arm.links]
            position = usable_angles(arm, q[row])
            v, e = rates[row, :arm.dof], efforts[row, :arm.dof]
            out.append((f"/{name}/joint_states", joint_state(
                ns, keys, position, v if np.isfinite(v).all() else (),
                e if np.isfinite(e).all() else ())))
        return out

    def transforms(self, snap, ns: int) -> bytes | None:
        """tf2_msgs/TFMessage of every arm's chain at ``snap`` (None without arms)."""
        if not self.arms:
            return None
        q = joint_angles(snap)
        items = []
        for name, row, arm in self.arms:
            items += _chain(name, arm, frames(arm, usable_angles(arm, q[row])))
        w = Writer()
        w.seq(len(items))
        for parent, child, t in items:
            w.header(ns, parent)
            w.string(child)
            w.f64(*t[:3, 3].tolist(), *matrix_quaternion(t[:3, :3]))
        return w.bytes()


def _chain(ns: str, arm: ArmSpec, f: np.ndarray) -> list[tuple[str, str, np.ndarray]]:
    """(parent, child, child in parent) from ``R/base_link`` down to ``R/tool``; ``f`` the
    arm's frames in its base frame."""
    names = [f"{ns}/arm_base"] + [f"{ns}/{l.key}" for l in arm.links] + [f"{ns}/tool"]
    out = [(f"{ns}/base_link", names[0], base_transform(*arm.mount, arm.mount_yaw))]
    for i in range(1, len(names)):
        out.append((names[i - 1], names[i], np.linalg.inv(f[i - 1]) @ f[i]))
    return out
