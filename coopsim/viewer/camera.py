"""The top-down camera: which world point is at the window's centre, how large, turned how far.

World coordinates are metres with y up; window coordinates are pixels with y up (pyglet's). A
world point p appears at ``scale * R(angle) * (p - centre) + window_centre``. The camera gives the
matrix pyglet's shaders apply (``window.view``), so the scene is built once in metres and never
re-projected in Python.
"""

from __future__ import annotations

import math

MIN_SCALE = 2.0  # px per m: a 500 m world still fits a small window
MAX_SCALE = 2000.0  # px per m: a 1 cm detail fills 20 px
ZOOM_STEP = 1.15  # scale factor per wheel notch


class Camera:
    """A 2D view: centre (m), scale (px/m), angle (rad, counter-clockwise) and window size (px)."""

    def __init__(self, width: int = 800, height: int = 600) -> None:
        self.cx = 0.0
        self.cy = 0.0
        self.scale = 50.0
        self.angle = 0.0
        self.width = width
        self.height = height

    def resize(self, width: int, height: int) -> None:
        """The window changed size."""
        self.width, self.height = max(1, width), max(1, height)

    def fit(self, length: float, width: float, margin: float = 0.08,
            top: int = 0, bottom: int = 0, right: int = 0) -> None:
        """Centre a ``length`` x ``width`` m world (centred on the origin) and fill the window.

        Args:
            length, width: The floor's extent along x and y, m.
            margin: Fraction of the window left free on every side.
            top, bottom: Pixels covered by bars at the top and bottom of the window.
            right: Pixels covered by a panel along the right edge (the Squads panel).
        """
        usable_h = max(1, self.height - top - bottom)
        usable_w = max(1, self.width - right)
        sx = usable_w * (1 - 2 * margin) / max(length, 1e-3)
        sy = usable_h * (1 - 2 * margin) / max(width, 1e-3)
        self.scale = _clamp(min(sx, sy), MIN_SCALE, MAX_SCALE)
        self.angle = 0.0
        # shift the centre so the world sits in the middle of the free band between the bars
        self.cx = right / 2 / self.scale  # ... and of the band left of a right-hand panel
        self.cy = (top - bottom) / 2 / self.scale

    def to_screen(self, x: float, y: float) -> tuple[float, float]:
        """Window pixel of world point (x, y)."""
        c, s = math.cos(self.angle), math.sin(self.angle)
        dx, dy = x - self.cx, y - self.cy
        return (self.scale * (c * dx - s * dy) + self.width / 2,
                self.scale * (s * dx + c * dy) + self.height / 2)

    def to_world(self, px: float, py: float) -> tuple[float, float]:
        """World point shown at window pixel (px, py)."""
        c, s = math.cos(self.angle), math.sin(self.angle)
        dx, dy = (px - self.width / 2) / self.scale, (py - self.height / 2) / self.scale
        return self.cx + c * dx + s * dy, self.cy - s * dx + c * dy

    def pan(self, dx: float, dy: float) -> None:
        """Move the view by a mouse drag of (dx, dy) px: the world follows the cursor."""
        c, s = math.cos(self.angle), math.sin(self.angle)
        self.cx -= (c * dx + s * dy) / self.scale
        self.cy -= (-s * dx + c * dy) / self.scale

    def rotate(self, x: float, y: float, dx: float, dy: float) -> None:
        """Turn the view about the window centre by the angle a drag from (x-dx, y-dy) to (x, y)
        sweeps around it, so the world turns with the cursor."""
        ox, oy = self.width / 2, self.height / 2
        before = math.atan2(y - dy - oy, x - dx - ox)
        after = math.atan2(y - oy, x - ox)
        self.angle = (self.angle + after - before + math.pi) % (2 * math.pi) - math.pi

    def zoom(self, x: float, y: float, notches: float) -> None:
        """Zoom by wheel ``notches`` (positive = in) keeping the world point under (x, y) fixed."""
        wx, wy = self.to_world(x, y)
        self.scale = _clamp(self.scale * ZOOM_STEP ** notches, MIN_SCALE, MAX_SCALE)
        nx, ny = self.to_world(x, y)
        self.cx += wx - nx
        self.cy += wy - ny

    def matrix(self) -> tuple[float, ...]:
        """The world-to-window transform as 16 floats, column-major (for ``pyglet.math.Mat4``)."""
        c, s, k = math.cos(self.angle), math.sin(self.angle), self.scale
        tx = self.width / 2 - k * (c * self.cx - s * self.cy)
        ty = self.height / 2 - k * (s * self.cx + c * self.cy)
        return (k * c, k * s, 0.0, 0.0,
                -k * s, k * c, 0.0, 0.0,
                0.0, 0.0, 1.0, 0.0,
                tx, ty, 0.0, 1.0)


def _clamp(value: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, value))
