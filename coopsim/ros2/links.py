"""Robots from description files in ROS 2: every link on ``/tf`` and every moving joint
(wheels and fingers included) on ``/R/joint_states``, from a layout's robots with ``links``
(docs/protocol.md, version 10) and one step's snapshot (the ``link_q`` columns).

Per robot ``R`` with a ``links`` document: on ``/tf`` the tree ``R/base_link`` (the robot's
body: its mount, free body or chassis) -> ``R/<root link>`` -> ``R/<link>`` ..., each
transform the child link's frame in its parent link's (as robot_state_publisher sends a URDF's
tree; REP 103, m; a root link itself called ``base_link`` at the body, an URDF's usual
root, is that frame, so the tree hangs from it directly), and ``/R/joint_states`` with ``name`` the moving joints in the
description's order and ``position`` (rad or m; velocity and effort empty, as JointState
allows). Such a robot's arm (a Panda's) is published this way instead of as a chain of the
arm's joints (:mod:`.arms`): the frames are the file's own links.
"""

from __future__ import annotations

import numpy as np

from ..model.linkposes import MAX_COLUMNS, link_columns, links_of, local_poses, row_columns
from . import messages as m
from .arms import JointStateTemplate


BODY = "base_link"  # the robot's body frame (coopsim.ros2.scene)


class RosLinks:
    """The described robots of one layout: their /tf tree and JointState templates.

    Args:
        layout: A layout document; its robots with ``links`` are published.
        rows: Robot name -> (its ROS namespace, its row in the snapshots).
    """

    def __init__(self, layout: dict, rows: dict[str, tuple[str, int]]) -> None:
        self.robots = [(rows[r["name"]][0], rows[r["name"]][1], links_of(r))
                       for r in layout.get("robots", ())
                       if r.get("name") in rows and links_of(r) is not None]
        pairs, self._states = [], {}
        for ns, _, doc in self.robots:
            pairs += [(f"{ns}/{link.get('parent') or BODY}", f"{ns}/{link['name']}")
                      for link in doc["links"] if not _is_body(link)]
            names = [j["name"] for link in doc["links"] for j in link.get("moving", ())
                     if j.get("column")]
            order = sorted(range(len(names)), key=lambda k: _column_index(doc, names[k]))
            self._states[ns] = ([names[k] for k in order],
                                JointStateTemplate([names[k] for k in order], False))
        self._tf = m.TfTemplate(pairs)

    def topics(self) -> list[tuple[str, str]]:
        """(ROS topic, short type) of every joint_states topic."""
        return [(f"/{ns}/joint_states", m.JOINT_STATE) for ns, _, _ in self.robots]

    def messages(self, snap, ns: int) -> list[tuple[str, str, bytes]]:
        """(topic, short type, message): one ``/tf`` of every link of every described robot
        and each robot's ``/R/joint_states`` at ``snap`` (none without such robots)."""
        if not self.robots:
            return []
        cols = link_columns(snap)
        poses, out = [], []
        for name, row, doc in self.robots:
            values = cols[row] if cols is not None else np.full(MAX_COLUMNS, np.nan)
            for link, (_, _, xyz, quat) in zip(doc["links"],
                                               local_poses(doc, row_columns(values))):
                if not _is_body(link):
                    poses.append((*xyz, quat[1], quat[2], quat[3], quat[0]))
            names, template = self._states[name]
            q = np.nan_to_num(values[:len(names)], nan=0.0)
            out.append((f"/{name}/joint_states", m.JOINT_STATE, template.fill(ns, q)))
        return [("/tf", m.TF, self._tf.fill_full(ns, np.array(poses)))] + out


def _is_body(link: dict) -> bool:
    """True for a root link called ``base_link`` placed at the robot's body (an URDF's): it
    is coopsim's own ``R/base_link`` frame, so no transform is sent for it."""
    return (not link.get("parent") and link["name"] == BODY and not any(link["xyz"])
            and list(link["quat"]) == [1.0, 0.0, 0.0, 0.0] and not link.get("moving"))


def _column_index(doc, joint: str) -> int:
    for link in doc["links"]:
        for j in link.get("moving", ()):
            if j["name"] == joint:
                return int(j["column"][len("link_q"):])
    return 0
