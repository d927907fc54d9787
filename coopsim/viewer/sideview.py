"""The side view: a panel in the window's lower left showing a 3D world from the side.

It shows altitude against x (looking along +y, the ``x-z`` view) or against y (looking along
-x, ``y-z``): the floor line, a line per metre of altitude with its figure, and each robot as a
disc in its colour at its position and altitude, each object as its box (or disc) at its height
(a cube an arm lifted, a stack), and each 3D arm as its links (thick lines as wide as the links,
from joint to joint), joints (dots) and gripper fingers, moving with the joint angles. Key V
cycles x-z, y-z and hidden. It shows only while the frames carry ``pose3d`` (a 3D world, live
or in replay); a 2D world never sees it.
"""

from __future__ import annotations

import math

import numpy as np
from imgui_bundle import imgui

AXES = ("x", "y", None)  # what key V cycles through; None hides the panel
WIDTH, HEIGHT = 380.0, 190.0  # px, the panel's largest size
MARGIN = 8.0  # px from the window's edges and round the plot inside the panel
MIN_TOP = 2.0  # m: the plot shows at least this much altitude
BACK = (0.12, 0.13, 0.15, 0.86)
FLOOR = (0.75, 0.75, 0.70, 1.0)
GRID = (0.45, 0.46, 0.48, 1.0)
TEXT = (0.85, 0.85, 0.85, 1.0)


class SideView:
    """The panel's state: which axis it plots along (None: hidden) and where it last drew."""

    def __init__(self) -> None:
        self.axis: str | None = "x"
        self.rect: tuple[float, float, float, float] | None = None  # x0, y0, x1, y1 px, y down
        self.scale = 0.0  # px per m of the plot last drawn

    def cycle(self) -> None:
        """Key V: x-z, then y-z, then hidden, then x-z again."""
        self.axis = AXES[(AXES.index(self.axis) + 1) % len(AXES)]

    def draw(self, scene, layout: dict | None, window: tuple[float, float],
             bottom: float) -> None:
        """Draw the panel (when the scene is a 3D world's and the panel is on).

        Args:
            scene: The scene (robot positions, altitudes, radii).
            layout: The ``/sim`` layout (robot colours, the floor's size).
            window: The window's width and height, px.
            bottom: Pixels covered by bars along the window's bottom.
        """
        self.rect = None
        if self.axis is None or scene.altitude is None or layout is None:
            return
        width = min(WIDTH, window[0] * 0.45)
        height = min(HEIGHT, window[1] * 0.35)
        x0, y1 = MARGIN, window[1] - bottom - MARGIN
        self.rect = (x0, y1 - height, x0 + width, y1)
        draw = imgui.get_background_draw_list()
        draw.add_rect_filled(imgui.ImVec2(*self.rect[:2]), imgui.ImVec2(*self.rect[2:]),
                             _u32(BACK), 4.0)
        plot = _Plot(self.rect, _extent(scene, self.axis), _top(_heights(scene)))
        self.scale = plot.scale
        plot.grid(draw, f"side view {self.axis}-z  (V)")
        plot.objects(draw, scene, self.axis, layout.get("objects", []))
        plot.bodies(draw, scene, self.axis, layout.get("robots", []))
        arms = getattr(scene, "arms", None)
        if arms is not None and arms.frames:
            plot.arms(draw, arms, self.axis)
        links = getattr(scene, "links", None)
        if links:  # robots from description files (viewer/links.py)
            plot.links(draw, links, self.axis)


class _Plot:
    """The mapping from (horizontal m, altitude m) to panel pixels: one scale on both axes."""

    def __init__(self, rect, extent: tuple[float, float], top: float) -> None:
        x0, y0, x1, y1 = rect
        inner_w, inner_h = x1 - x0 - 2 * MARGIN - 28.0, y1 - y0 - 2 * MARGIN - 16.0
        lo, hi = extent
        self.scale = min(inner_w / max(hi - lo, 1e-3), inner_h / top)
        self.left = x0 + MARGIN + 28.0 + (inner_w - self.scale * (hi - lo)) / 2 - self.scale * lo
        self.floor = y1 - MARGIN
        self.span = (x0 + MARGIN + 28.0, x1 - MARGIN)
        self.top, self.rect = top, rect

    def at(self, h: float, z: float) -> tuple[float, float]:
        """Panel pixel (y down) of horizontal position ``h`` m at altitude ``z`` m."""
        return self.left + self.scale * h, self.floor - self.scale * z

    def grid(self, draw, title: str) -> None:
        """The floor line, a line per metre of altitude with its figure, and the title."""
        step = 1.0 if self.top <= 12 else float(10 ** math.floor(math.log10(self.top / 2)))
        for k in range(1, int(self.top // step) + 1):
            y = self.floor - self.scale * k * step
            draw.add_line(imgui.ImVec2(self.span[0], y), imgui.ImVec2(self.span[1], y),
                          _u32(GRID), 1.0)
            draw.add_text(imgui.ImVec2(self.rect[0] + MARGIN, y - 7.0), _u32(TEXT),
                          f"{k * step:g} m")
        draw.add_line(imgui.ImVec2(self.span[0], self.floor), imgui.ImVec2(self.span[1],
                      self.floor), _u32(FLOOR), 2.0)
        draw.add_text(imgui.ImVec2(self.rect[0] + MARGIN, self.rect[1] + 4.0), _u32(TEXT), title)

    def bodies(self, draw, scene, axis: str, robots: list[dict]) -> None:
        """Each robot as a disc in its colour centred at its altitude (at least 3 px in
        radius), the highest drawn last."""
        h = scene.robot_xy[:, 0 if axis == "x" else 1]  # looking along +y or -x: it runs right
        for i in np.argsort(np.nan_to_num(scene.altitude, nan=0.0), kind="stable"):
            z = float(np.nan_to_num(scene.altitude[i], nan=0.0))
            px, py = self.at(float(h[i]), max(z, 0.0))
            r = max(3.0, self.scale * float(scene.robot_radius[i]))
            rgb = robots[i].get("color", (40, 90, 230)) if i < len(robots) else (40, 90, 230)
            colour = tuple(c / 255 for c in rgb[:3]) + (1.0,)
            draw.add_circle_filled(imgui.ImVec2(px, py), r, _u32(colour))  # centred at z
            draw.add_circle(imgui.ImVec2(px, py), r, _u32((0.05, 0.05, 0.05, 1.0)), 0, 1.5)


    def objects(self, draw, scene, axis: str, objects: list[dict]) -> None:
        """Each object at its height: a box's side (its length or width across, its height
        up) or a disc, in its colour with a dark rim."""
        k = 0 if axis == "x" else 1
        for i, (obj, xyz) in enumerate(zip(objects, getattr(scene, "objects_xyz", ()))):
            size = (list(obj.get("size", (0.1, 0.1, 0.1))) + [0.1] * 3)[:3]
            h, z = float(xyz[k]), float(xyz[2])
            rgb = obj.get("color", (150, 150, 150))
            colour = _u32(tuple(c / 255 for c in rgb[:3]) + (1.0,))
            a = self.at(h - size[k] / 2, z - size[2] / 2)
            b = self.at(h + size[k] / 2, z + size[2] / 2)
            lo, hi = imgui.ImVec2(a[0], b[1]), imgui.ImVec2(b[0], a[1])
            draw.add_rect_filled(lo, hi, colour)
            draw.add_rect(lo, hi, _u32((0.05, 0.05, 0.05, 1.0)), 0.0, 1.0)

    def links(self, draw, links, axis: str) -> None:
        """Each shape of each described robot's links from the side: the rectangle its box
        covers (viewer/links.py), in a grey with a dark rim."""
        k = 0 if axis == "x" else 1
        fill, rim = _u32((0.55, 0.55, 0.58, 0.6)), _u32((0.1, 0.1, 0.12, 1.0))
        for corners in links.corners:
            a = self.at(float(corners[:, k].min()), float(corners[:, 2].min()))
            b = self.at(float(corners[:, k].max()), float(corners[:, 2].max()))
            lo, hi = imgui.ImVec2(a[0], b[1]), imgui.ImVec2(b[0], a[1])
            draw.add_rect_filled(lo, hi, fill)
            draw.add_rect(lo, hi, rim, 0.0, 1.0)

    def arms(self, draw, arms, axis: str) -> None:
        """Each arm from the side: its pedestal, its links as lines as thick as the links
        (at least 2 px), its joints as dots, its gripper's fingers."""
        k = 0 if axis == "x" else 1
        link, joint = _u32((0.92, 0.55, 0.16, 1.0)), _u32((0.18, 0.18, 0.2, 1.0))
        base = _u32((0.43, 0.43, 0.47, 1.0))
        for _, name, arm in arms.arms:
            f = arms.frames.get(name)
            if f is None:
                continue
            p = f[:, :3, 3]
            pts = [imgui.ImVec2(*self.at(float(q[k]), float(q[2]))) for q in p]
            draw.add_line(pts[0], pts[1], base, max(2.0, 2 * arm.base_radius * self.scale))
            for i, l in enumerate(arm.links):
                draw.add_line(pts[i + 1], pts[i + 2], link, max(2.0, 2 * l.radius * self.scale))
            for i, l in enumerate(arm.links):
                draw.add_circle_filled(pts[i + 1], max(2.0, l.radius * self.scale), joint)
            if arm.gripper is not None:
                g, tool = arm.gripper, f[-1]
                for side in (-1.0, 1.0):
                    tip = tool[:3, 3] + tool[:3, 1] * side * g.stroke / 2
                    root = tip - tool[:3, 2] * g.length
                    draw.add_line(imgui.ImVec2(*self.at(float(root[k]), float(root[2]))),
                                  imgui.ImVec2(*self.at(float(tip[k]), float(tip[2]))), joint,
                                  2.0)


def _heights(scene) -> np.ndarray:
    """Every height the panel shows, m: the robots', the objects' tops, the arms' joints."""
    z = [np.asarray(scene.altitude, dtype=float)]
    xyz = getattr(scene, "objects_xyz", None)
    if xyz is not None and len(xyz):
        z.append(xyz[:, 2])
    arms = getattr(scene, "arms", None)
    if arms is not None:
        z += [f[:, 2, 3] for f in arms.frames.values()]
    links = getattr(scene, "links", None)
    if links:
        z.append(links.corners[:, :, 2].ravel())
    return np.concatenate(z)


def _extent(scene, axis: str) -> tuple[float, float]:
    """Horizontal range, m: the floor along the axis, widened to every robot."""
    length, width = scene.floor
    half = (length if axis == "x" else width) / 2 or 1.0
    h = scene.robot_xy[:, 0 if axis == "x" else 1]
    h = h[np.isfinite(h)]
    return (min(-half, float(h.min()) if h.size else -half),
            max(half, float(h.max()) if h.size else half))


def _top(z: np.ndarray) -> float:
    """The plot's highest altitude, m: a whole metre above the highest body, at least 2 m."""
    z = z[np.isfinite(z)]
    highest = float(z.max()) if z.size else 0.0
    return max(MIN_TOP, math.ceil(highest * 1.15 + 0.25))


def _u32(rgba) -> int:
    return imgui.get_color_u32(imgui.ImVec4(*rgba))
