"""The ``kinematic`` engine: numpy integration of every robot's commanded motion, for swarms.

No forces and no joints: each step moves every robot by its commanded twist, then pushes apart
robots that overlap and pushes robots out of static shapes and back onto the floor. Robots are
circles; objects must be static. What it cannot run (a team carrying a bar, movable objects) is
refused with a reason (see :meth:`Engine.refuses_assembly`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.robot_type import Assembly
from ..model.specs import FloorSpec, ObjectSpec
from .engine import Engine, Handles, as_geometry, box_corners


@dataclass(eq=False)
class _Robot:
    """A robot's state between layout changes (arrays hold it while the layout stands)."""

    x: float
    y: float
    yaw: float
    radius: float
    group: int


@dataclass(eq=False)
class _Object:
    spec: ObjectSpec


class KinematicEngine(Engine):
    """Kinematic integration with overlap resolution (one-body robots, static objects)."""

    label = "kinematic"
    description = "numpy kinematics for swarms: commanded motion, overlap resolution, no joints"
    features = frozenset({"differential", "velocity"})

    def __init__(self, floor: FloorSpec) -> None:
        super().__init__(floor)
        self._objects: list[_Object] = []
        self._robots: list[_Robot] = []
        self.pos = np.zeros((0, 2))
        self.yaw = np.zeros(0)
        self.vel = np.zeros((0, 3))  # actual velocity of the last step, world frame
        self.cmd = np.zeros((0, 3))  # commanded twist for the next step, world frame
        self.radius = np.zeros(0)
        self.contact = np.zeros((0, 2))
        self._static = self._static_shapes()

    # -- layout ------------------------------------------------------------------------------

    def add_object(self, spec: ObjectSpec) -> _Object:
        self.check_object(spec)
        obj = _Object(spec)
        self._objects.append(obj)
        self._static = self._static_shapes()
        return obj

    def remove_object(self, handle: _Object) -> None:
        self._objects.remove(handle)
        self._static = self._static_shapes()

    def add_assembly(self, assembly: Assembly, group: int) -> Handles:
        self.check_assembly(assembly)
        handles = Handles()
        for member in assembly.members:
            body = assembly.body(member.body)
            robot = _Robot(body.position[0], body.position[1], body.yaw, member.radius, group)
            handles.bodies[member.body] = robot
            handles.robots[member.name] = robot
        return handles

    def remove_assembly(self, handles: Handles) -> None:
        """Nothing to free: the robots leave with the next :meth:`set_robots`."""

    def set_robots(self, robots: list, drives: list[str]) -> None:
        self._write_back()
        self._robots = list(robots)
        self.pos = np.array([(r.x, r.y) for r in robots], dtype=float).reshape(-1, 2)
        self.yaw = np.array([r.yaw for r in robots], dtype=float)
        self.radius = np.array([r.radius for r in robots], dtype=float)
        self.vel = np.zeros((len(robots), 3))
        self.cmd = np.zeros((len(robots), 3))
        self.contact = np.zeros((len(robots), 2))

    def _write_back(self) -> None:
        for robot, (x, y), yaw in zip(self._robots, self.pos.tolist(), self.yaw.tolist()):
            robot.x, robot.y, robot.yaw = x, y, yaw

    # -- stepping ----------------------------------------------------------------------------

    def step(self, dt: float) -> None:
        start = self.pos.copy()
        self.pos += self.cmd[:, :2] * dt
        self.yaw += self.cmd[:, 2] * dt
        push = np.zeros_like(self.pos)
        self._separate(push)
        self._keep_out(push)
        self.pos += push
        self._keep_on_floor()
        self.vel = np.column_stack(((self.pos - start) / dt, self.cmd[:, 2]))
        self._contacts(push)

    def _separate(self, push: np.ndarray) -> None:
        """Half of each robot-robot overlap to each robot, along the line of centres."""
        i, j = _near_pairs(self.pos, 2 * float(self.radius.max(initial=0.0)))
        if not len(i):
            return
        d = self.pos[j] - self.pos[i]
        dist = np.hypot(d[:, 0], d[:, 1])
        overlap = self.radius[i] + self.radius[j] - dist
        hit = overlap > 0
        if not hit.any():
            return
        i, j, d, dist, overlap = i[hit], j[hit], d[hit], dist[hit], overlap[hit]
        n = d / np.where(dist > 0, dist, 1.0)[:, None]
        n[dist == 0] = (1.0, 0.0)
        np.add.at(push, i, -0.5 * overlap[:, None] * n)
        np.add.at(push, j, 0.5 * overlap[:, None] * n)

    def _keep_out(self, push: np.ndarray) -> None:
        """Push robots out of static circles and segments (objects; the floor is clamped)."""
        circles, segments = self._static
        for cx, cy, r in circles:
            d = self.pos - (cx, cy)
            dist = np.hypot(d[:, 0], d[:, 1])
            overlap = self.radius + r - dist
            hit = overlap > 0
            if hit.any():
                push[hit] += d[hit] / np.maximum(dist[hit], 1e-12)[:, None] * overlap[hit, None]
        for x1, y1, x2, y2 in segments:
            a, ab = np.array((x1, y1)), np.array((x2 - x1, y2 - y1))
            t = np.clip(((self.pos - a) @ ab) / max(ab @ ab, 1e-18), 0.0, 1.0)
            d = self.pos - (a + t[:, None] * ab)
            dist = np.hypot(d[:, 0], d[:, 1])
            overlap = self.radius - dist
            hit = overlap > 0
            if hit.any():
                push[hit] += d[hit] / np.maximum(dist[hit], 1e-12)[:, None] * overlap[hit, None]

    def _keep_on_floor(self) -> None:
        hl, hw = self.floor.length / 2, self.floor.width / 2
        self.pos[:, 0] = np.clip(self.pos[:, 0], -hl + self.radius, hl - self.radius)
        self.pos[:, 1] = np.clip(self.pos[:, 1], -hw + self.radius, hw - self.radius)

    def _contacts(self, push: np.ndarray) -> None:
        """Front/rear contact where a robot was pushed (against its heading: front)."""
        self.contact = np.zeros((len(self.pos), 2))
        moved = np.hypot(push[:, 0], push[:, 1]) > 1e-9
        ahead = push[:, 0] * np.cos(self.yaw) + push[:, 1] * np.sin(self.yaw) < 0
        self.contact[moved & ahead, 0] = 1.0
        self.contact[moved & ~ahead, 1] = 1.0

    def robot_state(self) -> np.ndarray:
        yaw = np.arctan2(np.sin(self.yaw), np.cos(self.yaw))
        return np.column_stack((self.pos, yaw, self.vel)).reshape(-1, 6)

    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        yaw = self.yaw[rows]
        self.cmd[rows] = np.column_stack((forward * np.cos(yaw), forward * np.sin(yaw), turn))

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        self.cmd[rows] = velocity

    def contacts(self, pose: np.ndarray) -> np.ndarray:
        return self.contact.copy()

    def poses(self, handles: list) -> np.ndarray:
        index = {id(r): k for k, r in enumerate(self._robots)}
        out = []
        for h in handles:
            if isinstance(h, _Object):
                out.append((h.spec.position[0], h.spec.position[1], h.spec.yaw))
            else:
                k = index[id(h)]
                out.append((self.pos[k, 0], self.pos[k, 1], self.yaw[k]))
        return np.array(out, dtype=float).reshape(-1, 3)

    # -- geometry ----------------------------------------------------------------------------

    def _static_shapes(self) -> tuple[list, list]:
        circles, segments = [], []
        for obj in self._objects:
            s = obj.spec
            if s.shape == "box":
                c = box_corners(s.position[0], s.position[1], s.yaw, s.size[0], s.size[1])
                segments += [(*c[k], *c[(k + 1) % 4]) for k in range(4)]
            else:
                circles.append((s.position[0], s.position[1], s.radius))
        return circles, segments

    def static_geometry(self):
        hl, hw = self.floor.length / 2, self.floor.width / 2
        walls = [(-hl, -hw, hl, -hw), (hl, -hw, hl, hw), (hl, hw, -hl, hw), (-hl, hw, -hl, -hw)]
        circles, segments = self._static
        return as_geometry([(*c, 0) for c in circles], [(*s, 0) for s in segments + walls])

    def moving_geometry(self):
        return as_geometry([], [])


def _near_pairs(pos: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), i != j, of points that may be within ``reach`` m (a uniform grid of
    cells of side ``reach``: each point against its own cell and four neighbours)."""
    n = len(pos)
    if n < 2 or reach <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    cell = np.floor(pos / reach).astype(np.int64)
    cell -= cell.min(axis=0)
    width = int(cell[:, 1].max()) + 3
    key = cell[:, 0] * width + cell[:, 1] + 1
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    pairs_i, pairs_j = [], []
    for dx, dy in ((0, 0), (1, -1), (1, 0), (1, 1), (0, 1)):
        target = key + dx * width + dy
        lo = np.searchsorted(sorted_key, target, "left")
        hi = np.searchsorted(sorted_key, target, "right")
        count = hi - lo
        owner = np.repeat(np.arange(n), count)
        rank = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
        other = order[np.repeat(lo, count) + rank]
        keep = other > owner if (dx, dy) == (0, 0) else np.ones(len(other), bool)
        pairs_i.append(owner[keep])
        pairs_j.append(other[keep])
    return np.concatenate(pairs_i), np.concatenate(pairs_j)
