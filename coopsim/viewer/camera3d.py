"""The 3D view's perspective camera: it orbits a target point, pans, zooms, fits and follows.

World frame: metres, z up (the simulation's). Window: pixels, y up (pyglet's). The camera sits
``distance`` m from ``target`` at azimuth ``yaw`` (rad, counter-clockwise from +x, the side the
eye is on) and elevation ``pitch`` (rad above the floor's plane) and looks at the target. It
offers what the 2D camera offers the widget layer (``to_screen``, ``to_world``, ``scale``,
``width``, ``height``, ``zoom``, ``resize``), so the overlays drawn in window pixels (names, a
game's bases, a squad's order) work in both views.
"""

from __future__ import annotations

import math

import numpy as np

from .camera import ZOOM_STEP  # the distance factor per wheel notch

FOV = math.radians(45.0)  # vertical field of view
MIN_PITCH, MAX_PITCH = math.radians(-10.0), math.radians(89.5)
MIN_DISTANCE, MAX_DISTANCE = 0.05, 5000.0  # m
ORBIT_RATE = 0.008  # rad per px dragged
OFF_SCREEN = (-1e6, -1e6)  # where a point behind the eye is "drawn"


class Camera3D:
    """A perspective camera looking at ``target`` from ``distance`` m.

    Args:
        width, height: The window's size, px.
    """

    def __init__(self, width: int = 800, height: int = 600) -> None:
        self.target = np.zeros(3)
        self.distance = 8.0
        self.yaw = math.radians(-90.0)  # the eye on the -y side: +x to the right
        self.pitch = math.radians(45.0)
        self.width, self.height = max(1, width), max(1, height)

    # -- the matrices ------------------------------------------------------------------------

    def eye(self) -> np.ndarray:
        """(3,) the eye's position, m, world frame."""
        c = math.cos(self.pitch)
        return self.target + self.distance * np.array(
            (c * math.cos(self.yaw), c * math.sin(self.yaw), math.sin(self.pitch)))

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The camera's right, up and forward unit vectors in the world frame."""
        forward = self.target - self.eye()
        forward /= np.linalg.norm(forward)
        right = np.cross(forward, (0.0, 0.0, 1.0))
        n = np.linalg.norm(right)
        right = right / n if n > 1e-9 else np.array((1.0, 0.0, 0.0))
        return right, np.cross(right, forward), forward

    def view(self) -> np.ndarray:
        """(4, 4) world-to-eye matrix (row-major, acts on column vectors)."""
        right, up, forward = self.axes()
        eye = self.eye()
        m = np.eye(4)
        m[0, :3], m[1, :3], m[2, :3] = right, up, -forward
        m[:3, 3] = -m[:3, :3] @ eye
        return m

    def clip(self) -> tuple[float, float]:
        """Near and far planes, m: scaled with the distance, so depth stays precise."""
        return max(0.01, self.distance * 0.02), self.distance * 50.0 + 100.0

    def projection(self) -> np.ndarray:
        """(4, 4) eye-to-clip perspective matrix (OpenGL's convention)."""
        near, far = self.clip()
        f = 1.0 / math.tan(FOV / 2)
        m = np.zeros((4, 4))
        m[0, 0], m[1, 1] = f * self.height / self.width, f
        m[2, 2], m[2, 3] = (far + near) / (near - far), 2 * far * near / (near - far)
        m[3, 2] = -1.0
        return m

    def matrix(self) -> np.ndarray:
        """(4, 4) world-to-clip matrix, row-major."""
        return self.projection() @ self.view()

    # -- window <-> world ----------------------------------------------------------------------

    @property
    def scale(self) -> float:
        """Pixels per metre at the target's distance (labels and overlays size by it)."""
        return self.height / (2 * self.distance * math.tan(FOV / 2))

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Window pixels (K, 2), y up, of world points (K, 3), and their depth in front of the
        eye (K,), m (at or below 0: behind it)."""
        p = np.asarray(points, dtype=float).reshape(-1, 3)
        clip = np.c_[p, np.ones(len(p))] @ self.matrix().T
        w = clip[:, 3]
        safe = np.where(np.abs(w) > 1e-9, w, 1e-9)
        px = (clip[:, 0] / safe + 1) * self.width / 2
        py = (clip[:, 1] / safe + 1) * self.height / 2
        return np.column_stack((px, py)), w

    def to_screen(self, x: float, y: float, z: float = 0.0) -> tuple[float, float]:
        """Window pixel of world point (x, y, z); far off the window when behind the eye."""
        xy, w = self.project(np.array((x, y, z)))
        return OFF_SCREEN if w[0] <= 1e-6 else (float(xy[0, 0]), float(xy[0, 1]))

    def ray(self, px: float, py: float) -> tuple[np.ndarray, np.ndarray]:
        """The eye and the unit direction (world frame) through window pixel (px, py)."""
        right, up, forward = self.axes()
        half = math.tan(FOV / 2)
        u = (2 * px / self.width - 1) * half * self.width / self.height
        v = (2 * py / self.height - 1) * half
        d = forward + u * right + v * up
        return self.eye(), d / np.linalg.norm(d)

    def to_world(self, px: float, py: float) -> tuple[float, float]:
        """The floor point (z = 0) under window pixel (px, py); the target's when the ray
        misses the floor (it points at or above the horizon)."""
        eye, d = self.ray(px, py)
        if d[2] >= -1e-6:
            return float(self.target[0]), float(self.target[1])
        t = -eye[2] / d[2]
        return float(eye[0] + t * d[0]), float(eye[1] + t * d[1])

    # -- moving --------------------------------------------------------------------------------

    def resize(self, width: int, height: int) -> None:
        """The window changed size."""
        self.width, self.height = max(1, width), max(1, height)

    def orbit(self, dx: float, dy: float) -> None:
        """Turn the eye about the target by a drag of (dx, dy) px: right turns the world
        right, up looks from lower down."""
        self.yaw -= dx * ORBIT_RATE
        self.pitch = min(MAX_PITCH, max(MIN_PITCH, self.pitch - dy * ORBIT_RATE))

    def pan(self, dx: float, dy: float) -> None:
        """Slide the target so the world follows a drag of (dx, dy) px."""
        right, up, _ = self.axes()
        metres = 1.0 / self.scale
        self.target = self.target - (dx * right + dy * up) * metres

    def zoom(self, x: float, y: float, notches: float) -> None:
        """Zoom by wheel ``notches`` (positive: in), towards the floor point under (x, y)."""
        factor = ZOOM_STEP ** -notches
        new = min(MAX_DISTANCE, max(MIN_DISTANCE, self.distance * factor))
        fx, fy = self.to_world(x, y)
        share = 1.0 - new / self.distance  # the target moves as far towards the cursor
        if share > 0:
            self.target[:2] += share * (np.array((fx, fy)) - self.target[:2])
        self.distance = new

    def fit(self, low, high) -> None:
        """Look at the box from ``low`` to ``high`` (m, world frame) from the front and above,
        as near as lets each of its corners stay inside the window (a 5 % margin a side): a
        tall robot beside a wide one fills the window, not a sphere round them both."""
        low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        self.target = (low + high) / 2
        self.yaw, self.pitch = math.radians(-90.0), math.radians(50.0)
        self.distance = 1.0
        right, up, forward = self.axes()
        corners = np.array([(x, y, z) for x in (low[0], high[0]) for y in (low[1], high[1])
                            for z in (low[2], high[2])]) - self.target
        half_v = math.tan(FOV / 2) * 0.9
        half_h = half_v * self.width / self.height
        # a corner at depth (distance + c.forward) is inside when |c.right| and |c.up| are
        # within the half-widths times that depth
        need = np.maximum(np.abs(corners @ right) / half_h, np.abs(corners @ up) / half_v) \
            - corners @ forward
        self.distance = min(MAX_DISTANCE, max(0.1, float(need.max())))

    def follow(self, point) -> None:
        """Keep ``point`` (m, world frame) at the window's centre (the C key)."""
        self.target = np.asarray(point, dtype=float).copy()
