"""What the viewer draws: floor, walls, objects, targets, robots, parts and sensor rays.

The scene is built from a ``/sim`` layout (names, shapes, sizes, colours, and the robot types'
and modules' drawing hints) and moved by state frames (poses and the streamed columns, such as
sonar distances). It knows no robot type or module by name: parts are drawn from their shapes,
rays from any module whose hint is ``rays``. Everything lives in one pyglet Batch in world metres; the
camera's matrix maps it to the window. Robot names are not drawn here: the window writes them with
the widget layer's text, which is far cheaper than one pyglet Label per robot.
"""

from __future__ import annotations

import math

import numpy as np
import pyglet
from pyglet import gl

from ..net.statestream import StateFrame
from .arms import ArmDrawing
from .links import LinkDrawing
from .flight import SHADOW_RGBA, STALK_RGBA, lifted, shadow_alpha
from .geometry import (Layer, LayerGroup, LineLayer, bold_nose, disc, nose, pad, polygon,
                       program, rgba, ring, shade, square, triangulate)
from .scenery import scenery_zones

TARGET_RADIUS = 0.15  # m, how large a target marker is drawn (targets have no body)
BOLD_ARROW_BELOW = 10.0  # px: robots drawn with a smaller radius get the bold heading arrow
WALL = 0.05  # m, thickness of the drawn floor border
OUTLINE = 0.02  # m, dark rim around objects and robots
FLOOR_COLOR = (222, 222, 214)
BORDER_COLOR = (70, 70, 70)
GRID_COLOR = (190, 190, 182, 255)
BACKGROUND = (0.16, 0.17, 0.19, 1.0)
# draw order: parts (a carried bar) lie on their robots (carried on supports above them)
_ORDER = ("floor", "grid", "zones", "zone_lines", "shadows", "stalks", "targets", "objects_rim", "objects", "robots_rim", "robots", "parts",
          "noses", "arm_bases", "arm_links", "arm_joints", "leds", "rays")


class Scene:
    """The drawable world; call :meth:`set_layout` on every new layout, :meth:`update` per frame."""

    def __init__(self) -> None:
        self.batch = pyglet.graphics.Batch()
        self._shader = program()
        self.groups = {name: LayerGroup(self._shader, i) for i, name in enumerate(_ORDER)}
        self.layers: dict[str, Layer] = {}
        self.layout: dict | None = None
        self.show_rays = True
        self._rays: list[tuple] = []  # (rows, angles, column indices) per ray-drawing module
        self._leds: tuple | None = None  # (rows, column indices) of the LED-drawing modules
        self.robot_names: list[str] = []
        self.robot_xy = np.zeros((0, 2))  # latest robot positions, m (for labels and tests)
        self.drawn_xy = np.zeros((0, 2))  # where their bodies are drawn (lifted when flying)
        self.drawn_grow = np.zeros(0)  # drawn size / own size (above 1 when flying)
        self.altitude: np.ndarray | None = None  # (N,) z, m, in a 3D world; None in 2D
        self.angle = 0.0  # rad, the camera's turn (flying bodies are lifted up the window)
        self.robot_radius = np.zeros(0)
        self.floor = (0.0, 0.0)
        self.scale = 50.0  # px per m, as the camera shows the scene (picks the arrows' form)
        self._arrows: tuple[np.ndarray, np.ndarray] | None = None  # (fine, bold) per robot
        self._bold: np.ndarray | None = None  # which robots have the bold arrow now
        self.arms: ArmDrawing | None = None  # the robots' 3D arms (viewer/arms.py)
        self.links: LinkDrawing | None = None  # described robots' links (viewer/links.py)
        self.objects_xyz = np.zeros((0, 3))  # latest object centres, m (the side view)

    # -- building -----------------------------------------------------------------------------

    def set_layout(self, layout: dict) -> None:
        """Rebuild every layer for a new layout (only when it is a new document)."""
        if layout is self.layout:
            return
        self.layout = layout
        for layer in self.layers.values():
            layer.delete()
        self.layers.clear()
        floor = layout.get("floor", {})
        self.floor = (float(floor.get("length", 0.0)), float(floor.get("width", 0.0)))
        self._build_floor(*self.floor)
        # protocol 9: the world's meshes and terrain, drawn as zones are
        self._build_zones(scenery_zones(layout) + list(layout.get("zones", [])))
        self._build_objects(layout.get("objects", []))
        self._build_targets(layout.get("targets", []))
        self._build_parts(layout.get("parts", []))
        self._build_robots(layout.get("robots", []))
        self._build_rays(layout)
        self._build_leds(layout)
        if self.arms is not None:
            self.arms.delete()
        self.arms = ArmDrawing(self, layout)
        if self.links is not None:
            self.links.delete()
        self.links = LinkDrawing(self, layout)
        self.set_scale(self.scale)
        self.update(None)

    def _add(self, name: str, local: np.ndarray, colors) -> Layer:
        layer = Layer(self._shader, self.batch, self.groups[name], local,
                      np.asarray(colors, dtype=np.uint8).reshape(-1, 4))
        self.layers[name] = layer
        return layer

    def _build_floor(self, length: float, width: float) -> None:
        if length <= 0 or width <= 0:
            return
        outer = square()[None] * (length + 2 * WALL, width + 2 * WALL)
        inner = square()[None] * (length, width)
        floor = np.concatenate((outer, inner))
        self._add("floor", floor, [rgba(BORDER_COLOR), rgba(FLOOR_COLOR)])
        self.layers["floor"].update(np.zeros((2, 3)))
        xs = np.arange(math.ceil(-length / 2), math.floor(length / 2) + 1)
        ys = np.arange(math.ceil(-width / 2), math.floor(width / 2) + 1)
        lines = [((x, -width / 2), (x, width / 2)) for x in xs]
        lines += [((-length / 2, y), (length / 2, y)) for y in ys]
        grid = LineLayer(self._shader, self.batch, self.groups["grid"], len(lines),
                         np.tile(GRID_COLOR, (len(lines), 1)))
        arr = np.asarray(lines, dtype=float).reshape(-1, 2, 2)
        grid.set_lines(arr[:, 0], arr[:, 1])
        self.layers["grid"] = grid

    def _build_zones(self, zones: list[dict]) -> None:
        """No-go zones (water, borders) on the floor: filled in their colour, outlined darker
        (the line a robot's floor sensors see); they do not move."""
        if not zones:
            return
        tris = [triangulate(z["polygon"]) for z in zones]
        most = max(len(t) for t in tris)
        # padded with degenerate triangles: a repeated one would blend its colour in again
        tris = [np.concatenate((t, np.repeat(t[-1:], most - len(t), axis=0))) for t in tris]
        fill = self._add("zones", np.array(tris).reshape(-1, most, 2),
                         [rgba(z.get("color", (60, 120, 220)), z.get("alpha", 200))
                          for z in zones])
        fill.update(np.zeros((len(zones), 3)))
        starts = np.vstack([np.asarray(z["polygon"], dtype=float) for z in zones])
        ends = np.vstack([np.roll(np.asarray(z["polygon"], dtype=float), -1, axis=0)
                          for z in zones])
        colors = [shade(rgba(z.get("color", (60, 120, 220))), 0.5) for z in zones
                  for _ in z["polygon"]]
        lines = LineLayer(self._shader, self.batch, self.groups["zone_lines"], len(starts),
                          np.array(colors))
        lines.set_lines(starts, ends)
        self.layers["zone_lines"] = lines

    def _build_objects(self, objects: list[dict]) -> None:
        rims, fills, colors = [], [], []
        for obj in objects:
            l, w = float(obj["size"][0]), float(obj["size"][1])
            if obj["shape"] == "box":
                rims.append(pad(square(), 72) * (l + 2 * OUTLINE, w + 2 * OUTLINE))
                fills.append(pad(square(), 72) * (l, w))
            else:
                rims.append(disc(24) * (l / 2 + OUTLINE))
                fills.append(disc(24) * (l / 2))
            # static objects look heavier: a darker rim
            colors.append(rgba(obj.get("color", (150, 150, 150))))
        dark = [shade(c, 0.45 if o.get("mass", 0) == 0 else 0.7) for c, o in zip(colors, objects)]
        self._add("objects_rim", np.array(rims).reshape(-1, 72, 2), dark)
        self._add("objects", np.array(fills).reshape(-1, 72, 2), colors)

    def _build_targets(self, targets: list[dict]) -> None:
        local = np.concatenate((ring(0.55, 20), disc(12) * 0.25))[None] * TARGET_RADIUS
        colors = [rgba(t.get("rgb", (255, 0, 0))) for t in targets]
        layer = self._add("targets", np.repeat(local, len(targets), axis=0), colors)
        layer.update(np.array([(t["x"], t["y"], 0.0) for t in targets]).reshape(-1, 3))

    def _build_parts(self, parts: list[dict]) -> None:
        shapes = [_part_triangles(p.get("shapes", [])) for p in parts]
        most = max((len(t) for t in shapes), default=3)
        local = np.array([pad(t, most) for t in shapes]).reshape(-1, most, 2)
        self._add("parts", local, [rgba(p.get("color", (150, 110, 60))) for p in parts])

    def _build_robots(self, robots: list[dict]) -> None:
        self.robot_names = [r["name"] for r in robots]
        self.robot_radius = np.array([float(r.get("radius", 0.2)) for r in robots])
        body = np.array([_robot_triangles(r) for r in robots]).reshape(-1, 60, 2)
        rim = np.array([_robot_triangles(r, OUTLINE) for r in robots]).reshape(-1, 60, 2)
        colors = [rgba(r.get("color", (40, 90, 230))) for r in robots]
        self._add("robots_rim", rim, [shade(c, 0.35) for c in colors])
        self._add("robots", body, colors)
        size = self.robot_radius[:, None, None]
        self._arrows = (np.repeat(nose()[None], len(robots), 0) * size,
                        np.repeat(bold_nose()[None], len(robots), 0) * size)
        self._bold = None
        self._add("noses", self._arrows[0], [(250, 250, 250, 230 if r.get("draw", {}).get(
            "heading", True) else 0) for r in robots])

    def _build_rays(self, layout: dict) -> None:
        """One group of rays per module whose drawing hint is ``rays`` (sonar, a plugin's)."""
        columns = layout.get("columns", [])
        robots = layout.get("robots", [])
        self._rays, count = [], 0
        for label, module in sorted(layout.get("modules", {}).items()):
            hint = module.get("draw") or {}
            if hint.get("kind") != "rays" or not set(hint["columns"]) <= set(columns):
                continue
            rows = np.array([i for i, r in enumerate(robots) if label in r.get("modules", [])],
                            dtype=int)
            cols = np.array([columns.index(c) for c in hint["columns"]], dtype=int)
            self._rays.append((rows, np.asarray(hint["angles"], dtype=float), cols,
                               tuple(hint.get("color", (255, 110, 20)))))
            count += len(rows) * len(cols)
        self.layers["rays"] = LineLayer(self._shader, self.batch, self.groups["rays"], count,
                                        np.tile((255, 120, 30, 170), (count, 1)))

    def _build_leds(self, layout: dict) -> None:
        """A ring of dots on each robot carrying a module whose drawing hint is ``leds``: K
        LEDs at K even angles from the heading, coloured by the streamed packed colours
        (R * 65536 + G * 256 + B; 0 = off, not drawn)."""
        columns = layout.get("columns", [])
        robots = layout.get("robots", [])
        rows, cols = [], []
        for label, module in sorted(layout.get("modules", {}).items()):
            hint = module.get("draw") or {}
            if hint.get("kind") != "leds" or not set(hint["columns"]) <= set(columns):
                continue
            for i, r in enumerate(robots):
                if label in r.get("modules", []):
                    rows += [i] * len(hint["columns"])
                    cols += [columns.index(c) for c in hint["columns"]]
        self._leds = None
        if not rows:
            return
        rows_, cols_ = np.array(rows, dtype=int), np.array(cols, dtype=int)
        per = np.bincount(rows_, minlength=len(robots))[rows_]  # LEDs on that robot
        k = np.concatenate([np.arange(n) for n in np.bincount(rows_) if n])
        angle = 2 * np.pi * k / per
        radius = self.robot_radius[rows_]
        dot = disc(8)[None] * (0.22 * radius)[:, None, None]
        local = dot + (0.68 * radius[:, None, None]
                       * np.stack((np.cos(angle), np.sin(angle)), axis=1)[:, None, :])
        self._add("leds", local, np.zeros((len(rows_), 4)))
        self._leds = (rows_, cols_)

    def _update_leds(self, robots: np.ndarray, columns: np.ndarray | None,
                     grow: np.ndarray) -> None:
        if self._leds is None:
            return
        rows, cols = self._leds
        layer = self.layers["leds"]
        layer.update(robots[rows], grow[rows])
        if columns is None or len(columns) != len(robots):
            return
        packed = np.nan_to_num(columns[rows, cols], nan=0.0).astype(np.int64)
        rgba_ = np.stack(((packed >> 16) & 255, (packed >> 8) & 255, packed & 255,
                          np.where(packed > 0, 255, 0)), axis=1)
        layer.recolor(rgba_)

    # -- moving -------------------------------------------------------------------------------

    def update(self, frame: StateFrame | None, flat: bool = True) -> None:
        """Move bodies to the frame's poses (or the layout's own, when the frame does not fit).

        Args:
            frame: The latest state frame, or None.
            flat: Whether the 2D top view is shown; False (the 3D view) keeps only what the
                3D view and the widgets read (positions, altitudes, arms), not the 2D layers.
        """
        if self.layout is None:
            return
        robots, objects, parts, columns, pose3d = self._poses(frame)
        if not flat:  # the 3D view draws its own bodies: placing 2D layers is wasted time
            self.robot_xy = self.drawn_xy = robots[:, :2].copy()
            self.altitude = None if pose3d is None else pose3d[:, 2].copy()
            self._update_arms(robots, objects, frame if columns is not None else None, pose3d)
            return
        self.layers["objects_rim"].update(objects)
        self.layers["objects"].update(objects)
        self.layers["parts"].update(parts)
        self.robot_xy = robots[:, :2].copy()
        drawn, grow = self._flight(robots, pose3d)
        for name in ("robots_rim", "robots", "noses"):
            self.layers[name].update(drawn, grow)
        self.drawn_xy, self.drawn_grow = drawn[:, :2].copy(), grow
        self._update_rays(drawn, columns)
        self._update_leds(drawn, columns, grow)
        self._update_arms(robots, objects, frame if columns is not None else None, pose3d)

    def _update_arms(self, robots: np.ndarray, objects: np.ndarray, frame, pose3d) -> None:
        """The arms at the robots' 3D poses (the layout's z and quat, or on the floor turned
        by yaw, when the frame has none) and the objects' centres for the side view (their
        3D poses when streamed, else the layout's heights)."""
        lay = self.layout
        if pose3d is None:
            pose3d = np.array([_pose7(r, p) for r, p in zip(lay["robots"], robots)]
                              ).reshape(-1, 7)
        moved = getattr(frame, "object_pose3d", None) if frame is not None else None
        z = (moved[:, 2] if moved is not None and len(moved) == len(objects) else
             np.array([float(o.get("z", 0.0)) for o in lay["objects"]]))
        self.objects_xyz = np.column_stack((objects[:, :2], z)) if len(objects) else \
            np.zeros((0, 3))
        if self.arms is not None:
            self.arms.update(pose3d, None if frame is None else frame.columns)
        if self.links is not None:
            self.links.update(pose3d, None if frame is None else frame.columns)

    def _flight(self, robots: np.ndarray, pose3d: np.ndarray | None):
        """Drawn poses and sizes (lifted and grown in the air, viewer/flight.py) and the
        shadows and stalks under flying bodies; 2D frames leave the robots as they are."""
        if pose3d is None:
            self.altitude = None
            self._hide_flight()
            return robots, np.ones(len(robots))
        self.altitude = pose3d[:, 2].copy()
        drawn, grow = lifted(robots, self.altitude, self.angle)
        if "shadows" not in self.layers:
            self._build_flight()
        shadows = self.layers["shadows"]
        shadows.update(robots)
        shadows.recolor(np.column_stack((np.tile(SHADOW_RGBA[:3], (len(robots), 1)),
                                         shadow_alpha(self.altitude))))
        self.layers["stalks"].set_lines(robots[:, :2], drawn[:, :2])
        return drawn, grow

    def _build_flight(self) -> None:
        """Shadows and stalks, made when the first 3D frame arrives (a 2D world never pays)."""
        n = len(self.robot_radius)
        self._add("shadows", disc(20)[None] * self.robot_radius[:, None, None],
                  np.tile(SHADOW_RGBA, (n, 1)))
        self.layers["stalks"] = LineLayer(self._shader, self.batch, self.groups["stalks"], n,
                                          np.tile(STALK_RGBA, (n, 1)))

    def _hide_flight(self) -> None:
        if "shadows" in self.layers:
            n = self.layers["shadows"].count
            self.layers["shadows"].recolor(np.zeros((n, 4)))
            far = np.full((n, 2), 1e6)  # off-screen: cheaper than rebuilding the list
            self.layers["stalks"].set_lines(far, far)

    def set_scale(self, scale: float, angle: float = 0.0) -> None:
        """The camera's px per m and turn (rad): robots smaller than :data:`BOLD_ARROW_BELOW`
        px in radius get the bold arrow, whose few pixels still point; flying bodies are lifted
        towards the window's top (call before :meth:`update`)."""
        self.scale, self.angle = float(scale), float(angle)
        if self._arrows is None or "noses" not in self.layers:
            return
        small = self.robot_radius * self.scale < BOLD_ARROW_BELOW
        if self._bold is None or not np.array_equal(small, self._bold):  # a zoom across it
            self._bold = small
            self.layers["noses"].local = np.where(small[:, None, None], *self._arrows[::-1])

    def _poses(self, frame: StateFrame | None):
        lay = self.layout
        fits = (frame is not None and frame.layout_version == lay.get("layout_version")
                and len(frame.robots) == len(lay["robots"])
                and len(frame.objects) == len(lay["objects"])
                and len(frame.parts) == len(lay["parts"])
                # protocol 8: the columns are the layout's own (the names in its document)
                and frame.columns.shape[1] == len(lay.get("columns", ())))
        if fits:
            return frame.robots, frame.objects, frame.parts, frame.columns, frame.pose3d
        pose = lambda items: np.array([(i["x"], i["y"], i.get("yaw", 0.0))  # noqa: E731
                                       for i in items], dtype=float).reshape(-1, 3)
        return pose(lay["robots"]), pose(lay["objects"]), pose(lay["parts"]), None, None

    def _update_rays(self, robots: np.ndarray, columns: np.ndarray | None) -> None:
        layer = self.layers["rays"]
        if layer.vlist is None:
            return
        if not self.show_rays or columns is None or len(columns) != len(robots):
            far = np.full((layer.count, 2), 1e6)  # off-screen: cheaper than rebuilding the list
            layer.set_lines(far, far)
            return
        starts, ends, colors = [], [], []
        for rows, angles, cols, color in self._rays:
            a = (robots[rows, 2:3] + angles[None, :]).ravel()
            dirs = np.stack((np.cos(a), np.sin(a)), axis=1)
            edge = np.repeat(self.robot_radius[rows], len(angles))[:, None]
            origin = np.repeat(robots[rows, :2], len(angles), axis=0) + dirs * edge
            dist = np.nan_to_num(columns[rows][:, cols].ravel(), nan=0.0)[:, None]
            starts.append(origin)
            ends.append(origin + dirs * dist)
            # near obstacles show strong, far readings faint
            far = max(2.0, float(dist.max()) if dist.size else 2.0)
            rgba_ = np.empty((len(dist), 4), dtype=np.uint8)
            rgba_[:] = (*color[:3], 0)
            rgba_[:, 3] = (230 - 170 * np.clip(dist[:, 0] / far, 0, 1)).astype(np.uint8)
            colors.append(rgba_)
        layer.set_lines(np.concatenate(starts), np.concatenate(ends))
        layer.recolor(np.concatenate(colors))

    def draw(self) -> None:
        """Draw the batch (the caller has set the window's view matrix)."""
        gl.glDisable(gl.GL_SCISSOR_TEST)  # the widget layer leaves it on after its own pass
        gl.glDisable(gl.GL_DEPTH_TEST)
        gl.glDisable(gl.GL_CULL_FACE)
        self.batch.draw()


def _pose7(robot: dict, pose: np.ndarray) -> tuple:
    """x, y, z, qw, qx, qy, qz of a robot from its planar pose and its layout entry (``z`` and
    ``quat`` in a 3D world's layout; else on the floor turned by yaw)."""
    if "quat" in robot:
        return (pose[0], pose[1], float(robot.get("z", 0.0)), *robot["quat"])
    return (pose[0], pose[1], 0.0, math.cos(pose[2] / 2), 0.0, 0.0, math.sin(pose[2] / 2))


def _shape_triangles(shape: dict) -> np.ndarray:
    """One part shape (layout form: kind, radius, size, vertices, offset) as triangles."""
    off = np.asarray(shape.get("offset", (0.0, 0.0)), dtype=float)
    if shape["kind"] == "circle":
        return disc(24) * float(shape["radius"]) + off
    if shape["kind"] == "box":
        return square() * np.asarray(shape["size"], dtype=float) + off
    return polygon(shape["vertices"]) + off


def _part_triangles(shapes: list[dict]) -> np.ndarray:
    tris = [_shape_triangles(s) for s in shapes]
    return np.concatenate(tris) if tris else np.zeros((3, 2))


def _robot_triangles(robot: dict, grow: float = 0.0) -> np.ndarray:
    """A robot's body (60 vertices): its type's hint, a disc of its radius or a box."""
    hint = robot.get("draw", {})
    if hint.get("shape") == "box":
        size = np.asarray(hint.get("size", (0.4, 0.4)), dtype=float) + 2 * grow
        return pad(square() * size, 60)
    return disc(20) * (float(robot.get("radius", 0.2)) + grow)
