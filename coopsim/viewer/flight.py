"""Altitude cues for flying bodies in the top view (3D worlds only: frames with ``pose3d``).

The top view stays a plan of the floor; a body in the air is drawn the way an oblique camera
would show it: its shadow, a dark disc, lies on the floor at its true (x, y); the body itself is
drawn lifted towards the top of the window by :data:`LIFT` metres per metre of altitude and
grown by :data:`GROW` per metre; a thin stalk joins shadow and body. A robot at 1 m and one at
2 m therefore differ in lift and size, and their labels say their altitude (viewer/hud.py).
Ground robots (z at or below :data:`AIRBORNE`) are drawn as in a 2D world.
"""

from __future__ import annotations

import numpy as np

LIFT = 0.35  # m drawn towards the window's top per m of altitude (an oblique camera's view)
GROW = 0.12  # drawn size grows by this fraction per m of altitude (nearer the camera)
MAX_GROW = 2.0  # the largest drawn size, as a multiple of the body's own
AIRBORNE = 0.02  # m: lower bodies are on the floor and get no shadow or lift
SHADOW_RGBA = (20, 20, 30, 110)
STALK_RGBA = (40, 40, 50, 150)


def lifted(robots: np.ndarray, z: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    """Where flying bodies are drawn in the top view.

    Args:
        robots: (N, 3) x, y (m, world), yaw (rad): the planar poses.
        z: (N,) altitude, m above the floor.
        angle: The camera's turn, rad (the lift points to the window's top whatever it is).

    Returns:
        (N, 3) drawn poses (x, y lifted, yaw kept) and (N,) size factors (1 on the floor).
    """
    height = np.where(z > AIRBORNE, np.nan_to_num(z, nan=0.0), 0.0)
    up = np.array([np.sin(angle), np.cos(angle)])  # world direction of the window's +y
    drawn = np.array(robots, dtype=float, copy=True)
    drawn[:, :2] += LIFT * height[:, None] * up[None, :]
    grow = np.minimum(1.0 + GROW * height, MAX_GROW)
    return drawn, grow


def shadow_alpha(z: np.ndarray) -> np.ndarray:
    """(N,) shadow opacity 0-255: none on the floor, fainter the higher the body flies."""
    alpha = SHADOW_RGBA[3] * np.clip(1.1 - 0.15 * np.nan_to_num(z, nan=0.0), 0.3, 1.0)
    return np.where(z > AIRBORNE, alpha, 0.0).astype(np.uint8)


def altitude_text(z: float) -> str:
    """The altitude a label shows: ``1.00 m`` (cm resolution), ``12.3 m`` from 10 m."""
    return f"{z:.2f} m" if abs(z) < 10 else f"{z:.1f} m"
