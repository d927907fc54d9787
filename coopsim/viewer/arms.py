"""Robot arms in the viewer's top view (and the frames the side view draws).

Each robot whose layout entry has an ``arm`` (docs/protocol.md, version 6) gets its pedestal
(a disc of the arm's ``base_radius``), its links (a band as wide as each link's diameter from
one joint to the next, the last to the tool point), its joints (dark dots) and its gripper's two
fingers, projected straight down onto the floor; links higher up are drawn over lower ones
within an arm. The angles are the streamed columns ``arm_q1``..``arm_q7`` (the ``joints``
module's reading; a replay streams the recorded ones), the arm's base follows the robot's 3D
pose; a frame without the columns draws the arm at its start angles. World metres throughout,
like the rest of the scene.
"""

from __future__ import annotations

import numpy as np

from ..model.arm import MAX_JOINTS
from ..model.armstate import ANGLE_COLUMNS, arm_world_frames, layout_arms
from .geometry import Layer, disc, rgba
from .view3d_bodies import FINGER

LINK_COLOR = (235, 140, 40)  # an industrial arm's orange
JOINT_COLOR = (45, 45, 50)
BASE_COLOR = (110, 110, 120)


def band(a: np.ndarray, b: np.ndarray, half: np.ndarray) -> np.ndarray:
    """(K, 6, 2) two triangles each: bands from points a[k] to b[k] (K, 2), ``half[k]`` m to
    either side (a zero-length band is a square of that half-width)."""
    d = b - a
    length = np.linalg.norm(d, axis=1, keepdims=True)
    u = np.where(length > 1e-9, d / np.where(length > 1e-9, length, 1.0), (1.0, 0.0))
    n = np.stack((-u[:, 1], u[:, 0]), axis=1) * half[:, None]
    a, b = a - u * half[:, None] * (length < 1e-9), b + u * half[:, None] * (length < 1e-9)
    p0, p1, p2, p3 = a + n, a - n, b - n, b + n
    return np.stack((p0, p1, p2, p0, p2, p3), axis=1)


class ArmDrawing:
    """The arms of one layout, as three layers of the scene: pedestals, links and joints (the
    fingers are two more links per gripper).

    Args:
        scene: The viewer's :class:`~coopsim.viewer.scene.Scene` (its batch, shader, groups).
        layout: The layout document.
    """

    def __init__(self, scene, layout: dict) -> None:
        linked = {r["name"] for r in layout.get("robots", []) if "links" in r}
        arms = {n: a for n, a in layout_arms(layout).items() if n not in linked}  # links.py
        names = [r["name"] for r in layout.get("robots", [])]
        self.arms = [(names.index(n), n, a) for n, a in arms.items()]
        columns = layout.get("columns", [])
        self._cols = [columns.index(c) if c in columns else -1 for c in ANGLE_COLUMNS]
        self.frames: dict[str, np.ndarray] = {}  # robot -> its arm's world frames, last drawn
        colors: list = []
        for _, _, a in self.arms:  # the links, then the fingers, arm by arm
            colors += [rgba(LINK_COLOR)] * a.dof + [rgba(JOINT_COLOR)] * (2 if a.gripper else 0)
        joints = sum(a.dof for _, _, a in self.arms)
        self._links = Layer(scene._shader, scene.batch, scene.groups["arm_links"],
                            np.zeros((len(colors), 6, 2)), colors)
        self._joints = Layer(scene._shader, scene.batch, scene.groups["arm_joints"],
                             np.repeat(disc(12)[None], joints, 0) * np.array(
                                 [l.radius * 0.9 for _, _, a in self.arms for l in a.links]
                             )[:, None, None], [rgba(JOINT_COLOR)] * joints)
        self._bases = Layer(scene._shader, scene.batch, scene.groups["arm_bases"],
                            np.repeat(disc(20)[None], len(self.arms), 0) * np.array(
                                [a.base_radius for _, _, a in self.arms])[:, None, None],
                            [rgba(BASE_COLOR)] * len(self.arms))
        self._layers = (self._links, self._joints, self._bases)

    def delete(self) -> None:
        for layer in self._layers:
            layer.delete()

    def angles(self, columns: np.ndarray | None, row: int) -> np.ndarray:
        """(MAX_JOINTS,) the robot's streamed angles, NaN where not streamed."""
        out = np.full(MAX_JOINTS, np.nan)
        if columns is not None and row < len(columns):
            for k, c in enumerate(self._cols):
                if 0 <= c < columns.shape[1]:
                    out[k] = columns[row, c]
        return out

    def update(self, poses7: np.ndarray, columns: np.ndarray | None) -> None:
        """Move every arm: ``poses7`` (N, 7) the robots' x, y, z, qw, qx, qy, qz."""
        if not self.arms:
            return
        bands, joints, bases = [], [], []
        self.frames = {}
        for row, name, arm in self.arms:
            f = arm_world_frames(arm, poses7[row], self.angles(columns, row))
            self.frames[name] = f
            p = f[:, :3, 3]
            bases.append((p[0, 0], p[0, 1], 0.0))
            half = np.array([l.radius for l in arm.links])
            links = band(p[1:-1, :2], p[2:, :2], half)
            order = np.argsort((p[1:-1, 2] + p[2:, 2]) / 2, kind="stable")  # high ones on top
            bands.append(links[order])
            if arm.gripper is not None:
                bands.append(_fingers(arm, f[-1]))
            joints += [(x, y, 0.0) for x, y in p[1:-1, :2]]
        self._links.write(np.concatenate(bands).reshape(-1, 2))
        self._joints.update(np.array(joints))
        self._bases.update(np.array(bases))


def _fingers(arm, tool: np.ndarray) -> np.ndarray:
    """(2, 6, 2) the gripper's fingers seen from above: from the flange along the tool's z
    to the tool point, half the stroke either side along the tool's y."""
    g = arm.gripper
    out = []
    for side in (-1.0, 1.0):
        tip = tool[:3, 3] + tool[:3, 1] * side * g.stroke / 2
        root = tip - tool[:3, 2] * g.length
        out.append(band(root[None, :2], tip[None, :2], np.array([FINGER]))[0])
    return np.array(out)
