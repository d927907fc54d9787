"""Batched reads of the ``mujoco`` engine's bodies (:mod:`coopsim.physics.mujoco.engine`):
the poses of a list of bodies and the floor outlines of the bodies that move, as numpy over
index arrays gathered once per list and compiled model (no Python loop over the bodies per
step). Each gives the bits of the per-body methods it replaces
(:meth:`~coopsim.physics.mujoco.build.Body.pose`, :meth:`~coopsim.physics.mujoco.build.Body.
pose3d`, :func:`coopsim.physics.mujoco.state.outline`): the same operations in the same order,
element by element, and the boxes' corners turned by the same stacked ``matmul`` as
:func:`coopsim.physics.shapes.box_corners`.

Frames and units: world frame (z up), metres, radians; quaternions (w, x, y, z).
"""

from __future__ import annotations

import numpy as np

from . import state as ms

_FREE_Q = np.arange(7)  # a free joint's qpos: x, y, z, qw, qx, qy, qz


class BodyTable:
    """Where a list of :class:`~coopsim.physics.mujoco.build.Body` sits in the current model,
    by kind (free, ground, static), in list order.

    Args:
        bodies: The bodies (bound to the current model).
    """

    def __init__(self, bodies: list) -> None:
        self.n = n = len(bodies)
        kinds = [b.kind for b in bodies]
        self.free = np.array([k == "free" for k in kinds], dtype=bool).reshape(n)
        self.ground = np.array([k == "ground" for k in kinds], dtype=bool).reshape(n)
        self.f = np.flatnonzero(self.free)
        self.g = np.flatnonzero(self.ground)
        qadr = np.array([b.qadr for b in bodies], dtype=np.int64).reshape(n)
        self.fq = qadr[self.f, None] + _FREE_Q  # (F, 7)
        self.gq = qadr[self.g, None] + np.arange(3)  # (G, 3) x, y, yaw
        # static bodies stand where they were built; a ground body at its start height
        self.fixed = np.zeros((n, 3))
        self.fixed3d = np.zeros((n, 7))
        for k, b in enumerate(bodies):
            if b.kind == "static":
                self.fixed[k] = [float(v) for v in b.qpos[:3]]
                self.fixed3d[k] = b.pose3d(None)
            elif b.kind == "ground":
                self.fixed3d[k, 2] = b.qpos0_z
        self.bottom = np.array([b.bottom + (0.0 if b.kind == "free" else b.qpos[3]
                                            if b.kind == "static" else b.qpos0_z)
                                for b in bodies], dtype=float).reshape(n)
        self.fz = qadr[self.f] + 2

    def poses(self, qpos: np.ndarray) -> np.ndarray:
        """(n, 3) x, y, yaw now (free bodies: the heading of their x axis on the floor)."""
        out = self.fixed.copy()
        if len(self.f) > ms.FEW:
            q = qpos[self.fq]
            out[self.f, 0], out[self.f, 1] = q[:, 0], q[:, 1]
            out[self.f, 2] = ms.yaw_of(q[:, 3:7])
        elif len(self.f):  # a few (an arm's cube): one by one on floats, the same bits
            for k, at in zip(self.f.tolist(), self.fq[:, 0].tolist()):
                x, y, _, qw, qx, qy, qz = qpos[at:at + 7].tolist()
                out[k] = (x, y, float(ms.yaw(qw, qx, qy, qz)))
        if len(self.g):
            out[self.g] = qpos[self.gq]
        return out

    def poses3d(self, qpos: np.ndarray) -> np.ndarray:
        """(n, 7) x, y, z, qw, qx, qy, qz now (a ground body level at its start height)."""
        out = self.fixed3d.copy()
        if len(self.f):
            out[self.f] = qpos[self.fq]
        if len(self.g):
            q = qpos[self.gq]
            out[self.g, 0], out[self.g, 1] = q[:, 0], q[:, 1]
            half = q[:, 2] / 2
            out[self.g, 3], out[self.g, 6] = np.cos(half), np.sin(half)
        return out

    def lowest(self, qpos: np.ndarray) -> np.ndarray:
        """(n,) each body's lowest point's height now, m (free bodies: as if level)."""
        out = self.bottom.copy()
        if len(self.f):
            out[self.f] = qpos[self.fz] + self.bottom[self.f]
        return out


class Outlines:
    """The floor outlines of some bodies (the engine's movers) for the 2D ray caster: their
    circles and boxes gathered once, placed every step by the bodies' poses.

    Args:
        bodies: The bodies, in the order the caster's lists take them.
    """

    def __init__(self, bodies: list) -> None:
        self.bodies, self.table = list(bodies), BodyTable(bodies)
        circles, boxes = [], []  # (body, r, ox, oy), (body, length, width, ox, oy)
        for k, body in enumerate(bodies):
            for shape in body.shapes:
                if shape[0] == "circle":
                    circles.append((k, shape[1], shape[-2], shape[-1]))
                else:
                    boxes.append((k, shape[1], shape[2], shape[-2], shape[-1]))
        c = np.array(circles, dtype=float).reshape(-1, 4)
        b = np.array(boxes, dtype=float).reshape(-1, 5)
        self.cbody, self.cr, self.cox, self.coy = c[:, 0].astype(np.int64), c[:, 1], c[:, 2], \
            c[:, 3]
        self.bbody, self.box, self.boy = b[:, 0].astype(np.int64), b[:, 3], b[:, 4]
        length, width = b[:, 1, None], b[:, 2, None]
        # box_corners' corners in the box's frame, counter-clockwise
        self.local = np.stack([np.hstack([-length, length, length, -length]),
                               np.hstack([-width, -width, width, width])], axis=2) / 2
        groups = np.array([body.group for body in bodies], dtype=np.int64).reshape(-1)
        self.cgroup, self.bgroup = groups[self.cbody], groups[self.bbody]

    def geometry(self, qpos: np.ndarray, top: float) -> tuple:
        """Circles (C, 3) x, y, r and their groups (C,), segments (S, 4) x1, y1, x2, y2 and
        their groups (S,) of the bodies whose lowest point is at most ``top`` m: what
        :func:`coopsim.physics.mujoco.state.outline` appends, body by body."""
        pose = self.table.poses(qpos)
        low = self.table.lowest(qpos) <= top
        c, s = np.cos(pose[:, 2]), np.sin(pose[:, 2])
        keep = low[self.cbody]
        k = self.cbody[keep]
        ox, oy = self.cox[keep], self.coy[keep]
        circles = np.column_stack([pose[k, 0] + c[k] * ox - s[k] * oy,
                                   pose[k, 1] + s[k] * ox + c[k] * oy, self.cr[keep]])
        keep = low[self.bbody]
        k = self.bbody[keep]
        ox, oy = self.box[keep], self.boy[keep]
        cx = pose[k, 0] + c[k] * ox - s[k] * oy
        cy = pose[k, 1] + s[k] * ox + c[k] * oy
        turn = np.empty((len(k), 2, 2))
        turn[:, 0, 0], turn[:, 0, 1], turn[:, 1, 0], turn[:, 1, 1] = c[k], s[k], -s[k], c[k]
        corners = self.local[keep] @ turn + np.stack([cx, cy], axis=1)[:, None, :]  # (B, 4, 2)
        segments = np.concatenate([corners, np.roll(corners, -1, axis=1)], axis=2)
        return (circles, self.cgroup[low[self.cbody]], segments.reshape(-1, 4),
                np.repeat(self.bgroup[keep], 4))
