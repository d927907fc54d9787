"""A small top-down rasteriser for ``render_mode="rgb_array"``: numpy only, no display, no
window library. The floor fills the image (x to the right, y up); static objects are drawn once
per layout into a background, moving objects, targets and robots (a disc and a heading tick)
every call."""

from __future__ import annotations

import numpy as np

from ..model.specs import COLORS

FLOOR = np.array([235, 235, 228], dtype=np.uint8)
EDGE = np.array([60, 60, 60], dtype=np.uint8)


class Raster:
    """Draws snapshots of one scenario's world.

    Args:
        scenario: The ScenarioSpec (for the floor). size: Image side, pixels (the longer
            floor side; the other is scaled to keep the aspect).
    """

    def __init__(self, scenario, size: int = 256) -> None:
        floor = scenario.world.floor
        self.scale = size / max(floor.length, floor.width)  # px per m
        self.w = max(1, round(floor.length * self.scale))
        self.h = max(1, round(floor.width * self.scale))
        self.x0, self.y0 = -floor.length / 2, -floor.width / 2
        self._background = None
        self._key = None

    def _px(self, x: float, y: float) -> tuple[float, float]:
        """Pixel column, row of world point (x, y) (row 0 at the top)."""
        return (x - self.x0) * self.scale, self.h - (y - self.y0) * self.scale

    def _disc(self, img, x, y, r, color) -> None:
        cx, cy = self._px(x, y)
        rp = max(r * self.scale, 1.0)
        c0, c1 = max(int(cx - rp), 0), min(int(cx + rp) + 2, self.w)
        r0, r1 = max(int(cy - rp), 0), min(int(cy + rp) + 2, self.h)
        if c0 >= c1 or r0 >= r1:
            return
        cols = np.arange(c0, c1) + 0.5
        rows = np.arange(r0, r1)[:, None] + 0.5
        img[r0:r1, c0:c1][(cols - cx) ** 2 + (rows - cy) ** 2 <= rp * rp] = color

    def _box(self, img, x, y, yaw, length, width, color) -> None:
        cx, cy = self._px(x, y)
        half = 0.5 * np.hypot(length, width) * self.scale + 1
        c0, c1 = max(int(cx - half), 0), min(int(cx + half) + 2, self.w)
        r0, r1 = max(int(cy - half), 0), min(int(cy + half) + 2, self.h)
        if c0 >= c1 or r0 >= r1:
            return
        dx = (np.arange(c0, c1) + 0.5 - cx) / self.scale
        dy = -(np.arange(r0, r1)[:, None] + 0.5 - cy) / self.scale
        c, s = np.cos(yaw), np.sin(yaw)
        u, v = dx * c + dy * s, -dx * s + dy * c
        inside = (np.abs(u) <= max(length / 2, 0.5 / self.scale)) & \
                 (np.abs(v) <= max(width / 2, 0.5 / self.scale))
        img[r0:r1, c0:c1][inside] = color

    def _object(self, img, spec, pose) -> None:
        color = np.array(spec.color, dtype=np.uint8)
        if spec.shape == "box":
            self._box(img, pose[0], pose[1], pose[2], spec.size[0], spec.size[1], color)
        else:
            self._disc(img, pose[0], pose[1], spec.radius, color)

    def _static(self, snap, world) -> np.ndarray:
        key = (id(world), snap.layout_version)
        if key != self._key:
            img = np.empty((self.h, self.w, 3), dtype=np.uint8)
            img[:] = FLOOR
            img[[0, -1], :] = EDGE
            img[:, [0, -1]] = EDGE
            for name, pose in zip(snap.objects, snap.object_poses):
                spec = world.objects[name][0]
                if spec.static:
                    self._object(img, spec, pose)
            self._background, self._key = img, key
        return self._background

    def draw(self, snap, world) -> np.ndarray:
        """An (H, W, 3) uint8 image of ``snap`` (``world``: the simulation's World)."""
        img = self._static(snap, world).copy()
        for name, pose in zip(snap.objects, snap.object_poses):
            spec = world.objects[name][0]
            if not spec.static:
                self._object(img, spec, pose)
        for t in snap.targets:
            self._disc(img, t.position[0], t.position[1], 0.15,
                       np.array(COLORS.get(t.color, (0, 0, 0)), dtype=np.uint8))
        for robot, pose in zip(world.robots, snap.poses):
            self._disc(img, pose[0], pose[1], robot.radius, np.array(robot.color, np.uint8))
            tip = pose[:2] + robot.radius * np.array([np.cos(pose[2]), np.sin(pose[2])])
            self._disc(img, tip[0], tip[1], robot.radius * 0.3, EDGE)
        return img


MODES = ("rgb_array", "human")  # the render modes of both environments


class Drawing:
    """What an environment's ``render`` and ``close`` do, for the Gymnasium and the PettingZoo
    environment alike: ``rgb_array`` draws a :class:`Raster`; ``human`` serves the run and
    opens the viewer at the first call (:class:`~coopsim.env.viewer.HumanView`)."""

    def __init__(self, spec, size, mode: str | None = None) -> None:
        if mode not in (None, *MODES):
            raise ValueError(f"render_mode must be one of {list(MODES)}, got {mode!r}")
        self.raster = Raster(spec, size)
        self.viewer = None  # the HumanView, once ``human`` rendering started

    def render(self, mode: str | None, episode):
        """The image (``rgb_array``) or None; ``episode``: the environment's Episode."""
        if mode == "rgb_array":
            return self.raster.draw(episode.stepper.snapshot, episode.sim.world)
        if mode == "human":
            if self.viewer is None:
                from .viewer import HumanView

                self.viewer = HumanView(episode.stepper)
            self.viewer.show()
        return None

    def close(self) -> None:
        """Close the viewer if it was opened."""
        if self.viewer is not None:
            self.viewer.close()
            self.viewer = None
