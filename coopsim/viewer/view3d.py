"""The viewer's 3D view: the world in perspective, drawn with instancing (viewer/gl3d.py).

It is the default for a world on a 3D engine (its layout gives robots and objects a ``quat``);
``Tab`` switches between it and the 2D top view (kept for large swarms), ``C`` makes the camera
follow the selected robot. Mouse: left drag orbits, right or middle drag pans, the wheel
zooms towards the cursor, a left click (no drag) selects the robot under the cursor (a click
on nothing clears the selection); ``F`` fits the world. The 2D scene (viewer/scene.py) stays
the source of the poses it shows (the frame that fits the layout, else the layout's own) and
of the arms' frames; the HUD, menus, managers and scrub bar are the same widgets in both views.
"""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from . import gl3d
from . import view3d_bodies as vb
from .camera3d import Camera3D
from .flight import AIRBORNE
from .hud import LABEL_MIN_RADIUS, label_texts, place_labels
from .scene import _pose7
from .view3d_links import imported, link_rows, links_extent
from .view3d_meshes import MeshCache

TRAIL_EVERY = 0.1  # s of sim time between two points of a trail
TRAIL_POINTS = 100  # points kept per trail (10 s)
TRAILS_FOR_ALL = 50  # up to this many robots every robot leaves a trail; else the selected
LABELS_UP_TO = 200  # more robots than this: only the selected robot is named
DETAIL_PX = 6.0  # px: smaller bodies lose what cannot be seen at that size (blades)


def is_3d(layout: dict | None) -> bool:
    """Whether ``layout`` is a world on a 3D engine (its bodies carry quaternions, or it has
    meshes or terrain: only the 3D engines take them)."""
    if not layout:
        return False
    return bool(layout.get("scenery")) or \
        any("quat" in b for b in layout.get("robots", []) + layout.get("objects", []))


class Trails:
    """Where each robot has been: the last :data:`TRAIL_POINTS` positions, one every
    :data:`TRAIL_EVERY` s of sim time."""

    def __init__(self) -> None:
        self.points = np.zeros((0, 0, 3))
        self.filled = 0
        self.last = -np.inf

    def reset(self) -> None:
        self.points, self.filled, self.last = np.zeros((0, 0, 3)), 0, -np.inf

    def push(self, time: float, xyz: np.ndarray) -> None:
        if len(self.points) != len(xyz) or time < self.last or not len(xyz):  # new world, rewind
            self.points = np.repeat(xyz[:, None], TRAIL_POINTS, axis=1)
            self.filled, self.last = 1, time
        elif time - self.last >= TRAIL_EVERY:
            self.points = np.roll(self.points, -1, axis=1)
            self.points[:, -1] = xyz
            self.filled, self.last = min(TRAIL_POINTS, self.filled + 1), time

    def segments(self, which: np.ndarray, colors: np.ndarray):
        """Starts, ends, colours (fading to the past) of the trails of robots ``which``."""
        k = self.filled - 1
        if k < 1 or not len(which) or len(self.points) == 0:
            return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 4))
        pts = self.points[which, -self.filled:]
        fade = np.linspace(0.1, 0.8, k)
        col = np.repeat(colors[which][:, None], k, axis=1).copy()
        col[..., 3] = fade
        return pts[:, :-1].reshape(-1, 3), pts[:, 1:].reshape(-1, 3), col.reshape(-1, 4)


class Spin:
    """Each quadrotor's four blade angles (rad), turned by its rotors' streamed speeds
    (columns ``rotor_w1..4``, rad/s, protocol 11) times :data:`view3d_bodies.SPIN_SCALE`
    over sim time (so a paused run's blades stand still), alternate rotors the other way."""

    def __init__(self) -> None:
        self.angle = np.zeros((0, 4))
        self.last = -np.inf

    def advance(self, time: float, speeds: np.ndarray) -> np.ndarray:
        if self.angle.shape != speeds.shape or time < self.last:  # a new world, or a rewind
            self.angle = np.tile(np.arange(4) * 0.7, (len(speeds), 1))
        elif time > self.last:
            self.angle = self.angle + np.nan_to_num(speeds) * (1, -1, 1, -1) * \
                (vb.SPIN_SCALE * (time - self.last))
        self.last = time
        return self.angle


class View3D:
    """The 3D view of one window.

    Args:
        width, height: The window's size, px.
    """

    def __init__(self, width: int, height: int) -> None:
        self.camera = Camera3D(width, height)
        self.active = False
        self.chosen: bool | None = None  # the user's Tab choice (None: the world's default)
        self.selected: str | None = None
        self.following = False
        self.trails = Trails()
        self.meshes = MeshCache()
        self.spin = Spin()
        self._rotor_columns: list[int] = []
        self._gl = None
        self._layout = None
        self._static_key = None
        self._colors = np.zeros((0, 4))
        self._kinds = _robot_kinds([])
        self.drawn: dict[str, np.ndarray] = {}  # kind -> instance rows of the last frame
        self.pose7 = np.zeros((0, 7))  # the robots' poses last drawn
        self.radius = np.zeros(0)

    # -- state --------------------------------------------------------------------------------

    def sync(self, layout: dict | None) -> bool:
        """Follow a new layout; True when the view should be fitted to it."""
        if layout is self._layout:
            return False
        old, self._layout = self._layout, layout
        if _world_key(old) == _world_key(layout):  # the same world's document, fetched again
            return False
        new_world = old is None or layout is None or \
            layout.get("scenario") != old.get("scenario")
        self.trails.reset()
        self.active = is_3d(layout) if self.chosen is None else self.chosen
        names = [r["name"] for r in (layout or {}).get("robots", [])]
        if self.selected not in names:
            self.selected, self.following = None, False
        return new_world

    def toggle(self) -> None:
        """Tab: the other view."""
        self.active = self.chosen = not self.active

    def toggle_follow(self) -> str:
        """C: follow the selected robot, or stop following; what happened, as a sentence."""
        if self.selected is None:
            self.following = False
            return "select a robot first (click it), then C follows it"
        self.following = not self.following
        return f"following {self.selected}" if self.following else "stopped following"

    def fit(self, scene) -> None:
        """A new world and F: the robots fill the window (:func:`robots_box`: a 9 cm
        Crazyflie in a 6 m arena, an arm and its cubes); without robots the floor and
        everything on it (up to the highest robot) does."""
        length, width = scene.floor
        if length <= 0 or width <= 0:
            length = width = 4.0
        box = robots_box(scene.layout, (length, width))
        if box is not None:
            self.camera.fit(*box)
            return
        top = max([1.0] + [float(z) for z in (scene.altitude if scene.altitude is not None
                                              else [])])
        self.camera.fit((-length / 2, -width / 2, 0.0), (length / 2, width / 2, top))

    # -- drawing ------------------------------------------------------------------------------

    def draw(self, scene, frame, link=None) -> None:
        """Draw the world (call inside the window's frame, after clearing it); ``link`` (the
        window's) is asked for the meshes' triangles (view3d_meshes.py)."""
        layout = scene.layout
        if layout is None:
            return
        if self._gl is None:
            self._gl = _Gl()
        self.meshes.want(link, layout)
        self._update(scene, frame)
        self._gl.draw(self.camera.matrix(), self.drawn, self.meshes.rows)

    def _update(self, scene, frame) -> None:
        layout = scene.layout
        robots, objects, parts, columns, pose3d = scene._poses(frame)
        robot_list = layout.get("robots", [])
        if pose3d is None:
            pose3d = np.array([_pose7(r, p) for r, p in zip(robot_list, robots)]).reshape(-1, 7)
        obj3d = getattr(frame, "object_pose3d", None) if columns is not None else None
        if obj3d is None or len(obj3d) != len(objects):
            obj3d = np.array([_pose7(o, p) for o, p in zip(layout.get("objects", []), objects)]
                             ).reshape(-1, 7)
        self.pose7, self.radius = pose3d, scene.robot_radius
        time = float(frame.time) if frame is not None else 0.0
        self.trails.push(time, pose3d[:, :3])
        key = (_world_key(layout), self.meshes.version)
        if key != self._static_key:
            self._static_key = key
            self._gl.set_static(layout, scene.floor, self.meshes.rows)
            self._colors = np.array([vb.rgba(r.get("color", (40, 90, 230))) for r in robot_list]
                                    ).reshape(-1, 4)
            self._kinds = _robot_kinds(robot_list)
            names = list(layout.get("columns", []))
            wanted = [f"rotor_w{k}" for k in range(1, 5)]
            self._rotor_columns = [names.index(w) for w in wanted] \
                if all(w in names for w in wanted) else []
        colors = self._colors
        self.drawn = vb.merge(
            {"box": vb.floor_rows(*scene.floor)}, vb.object_rows(layout.get("objects", []), obj3d),
            {"sphere": vb.target_rows(layout.get("targets", []))},
            self._robots(robot_list, pose3d, colors, time, columns),
            link_rows(robot_list, pose3d, columns, layout.get("columns", []), self.meshes.rows)
            if self._kinds[2].any() else {},
            vb.arm_rows(scene.arms.arms, scene.arms.frames, pose3d) if scene.arms else {},
            vb.part_rows(layout.get("parts", []), parts, robot_list, pose3d, self.radius)
            if layout.get("parts") else {},
            self._selection(robot_list, pose3d))
        self._gl.set_lines(self._lines(scene, pose3d, colors, columns))
        if self.following and self.selected is not None:
            row = [r["name"] for r in robot_list].index(self.selected)
            self.camera.follow(pose3d[row, :3])

    def _robots(self, robots: list[dict], pose7: np.ndarray, colors: np.ndarray, time: float,
                columns):
        quad, ground, _, ground_list = self._kinds
        detail = len(robots) <= TRAILS_FOR_ALL or \
            self.camera.scale * float(np.median(self.radius)) >= DETAIL_PX
        spin = None
        if detail and self._rotor_columns and columns is not None and len(columns) == len(quad):
            spin = self.spin.advance(time, columns[quad][:, self._rotor_columns])
        return vb.merge(vb.quad_rows(pose7[quad], self.radius[quad], colors[quad], time, detail,
                                     spin),
                        vb.ground_rows(ground_list, pose7[ground],
                                       self.radius[ground], colors[ground]))

    def _selection(self, robots: list[dict], pose7: np.ndarray) -> dict:
        names = [r["name"] for r in robots]
        if self.selected not in names:
            return {}
        row = names.index(self.selected)
        return {"disc": vb.selection_rows(pose7[row], float(self.radius[row]))}

    def _lines(self, scene, pose7: np.ndarray, colors: np.ndarray, columns):
        """The grid, the trails and the sonar-like rays, as one list of segments."""
        starts, ends = vb.grid_lines(*scene.floor)
        parts = [(starts, ends, np.tile(vb.GRID, (len(starts), 1)))]
        names = [r["name"] for r in scene.layout.get("robots", [])]
        which = np.arange(len(names)) if len(names) <= TRAILS_FOR_ALL else \
            np.array([names.index(self.selected)] if self.selected in names else [], dtype=int)
        parts.append(self.trails.segments(which, colors))
        if scene.show_rays and columns is not None and len(columns) == len(pose7):
            parts.append(_rays(scene, pose7, columns))
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))

    # -- input and overlays -------------------------------------------------------------------

    def pick(self, x: float, y: float) -> str | None:
        """The robot under window pixel (x, y) (the nearest one the eye's ray passes within
        1.5 radii of its centre), or None."""
        names = [r["name"] for r in (self._layout or {}).get("robots", [])]
        if not names or len(self.pose7) != len(names):
            return None
        eye, d = self.camera.ray(x, y)
        rel = self.pose7[:, :3] - eye
        along = rel @ d
        miss = np.linalg.norm(rel - along[:, None] * d, axis=1)
        reach = 1.5 * np.maximum(self.radius, 0.05)
        hit = np.where((along > 0) & (miss <= reach), along, np.inf)
        return names[int(np.argmin(hit))] if np.isfinite(hit).any() else None

    def drag(self, dx: float, dy: float, buttons: int) -> None:
        """A mouse drag: left orbits, right or middle pans (and stops following)."""
        from pyglet.window import mouse

        if buttons & mouse.LEFT:
            self.camera.orbit(dx, dy)
        elif buttons & (mouse.RIGHT | mouse.MIDDLE):
            self.camera.pan(dx, dy)
            self.following = False

    def click(self, x: float, y: float) -> None:
        """Select the robot under (x, y), or nothing."""
        self.selected = self.pick(x, y)
        if self.selected is None:
            self.following = False

    def draw_names(self, scene, show: bool) -> None:
        """Robot names (and altitudes) by each robot where it is drawn, when robots are large
        enough on screen; beyond :data:`LABELS_UP_TO` robots only the selected one's."""
        names = scene.robot_names
        if not show or not names or len(self.pose7) != len(names):
            return
        rows = np.arange(len(names))
        if len(names) > LABELS_UP_TO:
            rows = rows[[n == self.selected for n in names]]
        xy, depth = self.camera.project(self.pose7[rows, :3])
        focal = self.camera.height / (2 * np.tan(np.radians(22.5)))
        px_radius = focal * self.radius[rows] / np.maximum(depth, 1e-6)
        keep = (depth > 0) & ((px_radius >= LABEL_MIN_RADIUS) | (len(rows) == 1))
        texts = label_texts(scene, rows)
        draw = imgui.get_background_draw_list()
        color = imgui.get_color_u32(imgui.ImVec4(0.05, 0.05, 0.05, 1.0))
        labels = []
        for k in np.flatnonzero(keep):
            size = imgui.calc_text_size(texts[k])
            labels.append(((xy[k, 0], self.camera.height - xy[k, 1]), px_radius[k],
                           (size.x, size.y)))
        for k, (left, top) in zip(np.flatnonzero(keep), place_labels(labels)):
            draw.add_text(imgui.ImVec2(left, top), color, texts[k])

    def close(self) -> None:
        if self._gl is not None:
            self._gl.delete()
            self._gl = None


#: The smallest box the robots are framed in, m a side: a lone small robot keeps some floor
#: round it (a Crazyflie fills about a quarter of the window).
MIN_BOX = 0.5


def robots_box(layout: dict | None, floor: tuple[float, float]):
    """(low, high) corners (m, world frame) of the box round the layout's robots: a robot
    from a description file its shapes' box (view3d_links.links_extent), any other a disc
    of its radius from the floor up to twice its radius above its origin; at least
    :data:`MIN_BOX` a side and no wider than the floor; None without robots."""
    robots = (layout or {}).get("robots", [])
    if not robots:
        return None
    lows, highs = [], []
    for r in robots:
        found = links_extent(r)  # a described robot: its shapes' own box
        if found is None:
            xyz = np.array([float(r.get(k, 0.0)) for k in "xyz"])
            radius = max(0.02, float(r.get("radius", 0.2)))
            found = (np.array((xyz[0] - radius, xyz[1] - radius, 0.0)),
                     np.array((xyz[0] + radius, xyz[1] + radius, xyz[2] + 2 * radius)))
        lows.append(found[0])
        highs.append(found[1])
    low, high = np.min(lows, axis=0), np.max(highs, axis=0)
    centre, half = (low + high) / 2, np.maximum((high - low) / 2, MIN_BOX / 2)
    low, high = centre - half, centre + half
    edge = np.array(floor, float) / 2
    low[:2], high[:2] = np.maximum(low[:2], -edge), np.minimum(high[:2], edge)
    low[2] = max(low[2], 0.0)
    return low, high


def _robot_kinds(robots: list[dict]):
    """Per robot of a layout (computed once per world, not per frame): which are drawn as
    quadrotors, as ground robots, link by link (imported), and the ground robots' entries."""
    hints = [r.get("draw", {}) for r in robots]
    quad = np.array([bool(h.get("rotorcraft")) for h in hints], dtype=bool)
    arm = np.array([bool(h.get("arm")) for h in hints], dtype=bool)
    linked = imported(robots)  # drawn link by link (view3d_links.py)
    quad &= ~linked
    ground = ~quad & ~arm & ~linked
    return quad, ground, linked, [r for r, g in zip(robots, ground) if g]


def _world_key(layout: dict | None) -> tuple:
    """What tells one world's layout from another's (a re-fetched document is the same)."""
    if layout is None:
        return (None,)
    return (layout.get("scenario"), layout.get("layout_version"), layout.get("generation"),
            tuple(r["name"] for r in layout.get("robots", ())), str(layout.get("floor")))


def _rays(scene, pose7: np.ndarray, columns: np.ndarray):
    """Rays of the modules whose drawing hint is ``rays``, level at each robot's height."""
    starts, ends, colors = [], [], []
    for rows, angles, cols, color in scene._rays:
        yaw = np.arctan2(2 * (pose7[rows, 0 + 3] * pose7[rows, 6] + pose7[rows, 4] *
                              pose7[rows, 5]), 1 - 2 * (pose7[rows, 5] ** 2 + pose7[rows, 6] ** 2))
        a = (yaw[:, None] + angles[None, :]).ravel()
        dirs = np.column_stack((np.cos(a), np.sin(a), np.zeros(len(a))))
        origin = np.repeat(pose7[rows, :3], len(angles), axis=0)
        origin[:, 2] = np.maximum(origin[:, 2], 0.05)
        dist = np.nan_to_num(columns[rows][:, cols].ravel(), nan=0.0)[:, None]
        starts.append(origin)
        ends.append(origin + dirs * dist)
        colors.append(np.tile(vb.rgba(color, 0.7), (len(dist), 1)))
    if not starts:
        return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 4))
    return np.concatenate(starts), np.concatenate(ends), np.concatenate(colors)


class _Gl:
    """The GL objects of the 3D view: a :class:`gl3d.Shapes` per kind, the lines, and the
    static scenery (zones, meshes, terrain) as shapes of their own."""

    def __init__(self) -> None:
        self.shapes_program, self.lines_program = gl3d.programs()
        meshes = {"box": gl3d.box_mesh(), "cylinder": gl3d.cylinder_mesh(),
                  "sphere": gl3d.sphere_mesh(), "disc": gl3d.disc_mesh(),
                  "quadfar": gl3d.far_quad_mesh()}
        self.kinds = {k: gl3d.Shapes(self.shapes_program, m) for k, m in meshes.items()}
        self.lines = gl3d.Lines(self.lines_program)
        self.static: list[gl3d.Shapes] = []

    def set_static(self, layout: dict, floor, triangles: dict) -> None:
        from .view3d_scenery import static_meshes

        for shape in self.static:
            shape.delete()
        self.static = []
        for mesh, color in static_meshes(layout, triangles):
            shape = gl3d.Shapes(self.shapes_program, mesh)
            shape.set(vb.rows((0, 0, 0), vb.IDENTITY, (1, 1, 1), color))
            self.static.append(shape)

    def set_lines(self, lines) -> None:
        self.lines.set(*lines)

    def draw(self, matrix: np.ndarray, drawn: dict[str, np.ndarray], meshes: dict) -> None:
        gl3d.depth_on()
        gl3d.set_viewproj(self.shapes_program, matrix)
        for kind in [k for k in drawn if k != "disc"]:
            if kind not in self.kinds:  # a mesh's kind: its triangles came (view3d_meshes)
                self.kinds[kind] = gl3d.Shapes(self.shapes_program, meshes[kind])
            self.kinds[kind].set(drawn[kind])
            self.kinds[kind].draw()
        for shape in self.static:
            shape.draw()
        gl3d.set_viewproj(self.lines_program, matrix)
        self.lines.draw()
        gl3d.depth_on(transparent=True)  # rotor discs, shadows, the selection: see-through
        gl3d.set_viewproj(self.shapes_program, matrix)
        self.kinds["disc"].set(drawn["disc"])
        self.kinds["disc"].draw()
        gl3d.depth_off()

    def delete(self) -> None:
        for shape in list(self.kinds.values()) + self.static:
            shape.delete()
        self.lines.delete()
