"""The 3D side of the engine seam: flight, arms, robots from description files and offscreen
images, each call with the answer a 2D engine gives (a default, or the refusal in one sentence).

:class:`Engine3D` is a base of :class:`coopsim.physics.engine.Engine`: an engine with the
``flight``, ``arms`` or ``descriptions`` feature, or a renderer, overrides what it offers.
It holds no state; it reads ``label``, ``robot_state`` and ``poses`` of the engine it is part
of.

Frames and units: world frame, metres, radians, seconds; yaw counter-clockwise from +x.
"""

from __future__ import annotations

import numpy as np

from ..model.errors import SimulationError
from ..model.linkposes import MAX_COLUMNS
from .shapes import planar_state3d


class Engine3D:
    """What a 2D engine answers to the 3D calls (a base of
    :class:`~coopsim.physics.engine.Engine`; :data:`~coopsim.physics.engine.FEATURES` names
    the features that override them)."""

    def paint(self, handles, color) -> None:
        """Give the bodies ``handles`` (and the bodies below them) the colour ``color`` (R, G,
        B 0..255) in the images :meth:`render_images` renders: a robot's colour. An engine
        without a renderer ignores it."""

    def render_images(self, views: list, rows=None) -> list[tuple]:
        """Offscreen images of the world (the ``camera3d`` module's): for each
        :class:`~coopsim.model.images.View`, (rgb (h, w, 3) uint8, depth (h, w) float32 m or
        None), world as of the last step; ``rows``: per view, the robot row it does not see
        (its own), or None. An engine without a renderer (the 2D ones) has none.
        ``render_submit(views, rows, keys, tags)`` queues them, ``render_take(key)`` takes
        (tag, images) later.

        Raises:
            ParameterError: this engine renders no images (a read answers error 4).
        """
        from ..model.errors import ParameterError

        raise ParameterError(f"camera3d renders images with MuJoCo: the {self.label} engine has "
                             "no renderer (use engine mujoco)")

    def render_submit(self, views, rows, keys, tags=None) -> None:
        """Queue the images of ``views`` under ``keys`` (``render_images``' arguments; here
        rendered at once)."""
        self.render_images(views, rows)

    def render_take(self, key):
        """(tag, images) queued under ``key`` by ``render_submit``, or None (here: nothing
        was ever queued)."""
        return None

    def render_ready(self, key) -> bool:
        """Whether ``render_take(key)`` would return without waiting (nothing queued here:
        it would)."""
        return True

    def render_memory(self) -> int:
        """Bytes of render memory this process holds for images (none here)."""
        return 0

    def render_fd(self) -> int | None:
        """A descriptor that turns readable when queued images are back (a waiter polls it
        instead of asking every millisecond); None: none (nothing is ever queued here)."""
        return None

    def render_trim(self, keep: int) -> bool:
        """Release the render memory beyond ``keep`` bytes when nothing is queued; False
        when something still renders (try later). None here: True."""
        return True

    def render_pid(self) -> int | None:
        """The render process's id, or None (here: none)."""
        return None

    def state3d(self) -> np.ndarray:
        """(N, 13) full state of every robot's chassis, robot order (columns
        :data:`~coopsim.physics.engine.STATE3D`).

        A 2D engine's answer (the default): z 0, the yaw as a quaternion about z, vz 0 and the
        yaw rate as the body's z rate; a ``flight`` engine reports its bodies' real state.
        """
        return planar_state3d(self.robot_state())

    def apply_wrench(self, rows: np.ndarray, force: np.ndarray, torque: np.ndarray) -> None:
        """Hold a wrench on robots ``rows`` through the next step(s) until set again: ``force``
        (len(rows), 3) N and ``torque`` (len(rows), 3) N m, both in each chassis's body frame
        (x forward, z up through the rotors), applied at its centre of mass. What the
        ``rotors`` drive sets; gravity is the engine's own.

        Raises:
            SimulationError: the engine has no ``flight`` feature (the default).
        """
        raise SimulationError(f"the {self.label} engine has no flight (3D bodies): use an "
                              "engine with the flight feature (engine mujoco)")

    # -- arms (the ``arms`` feature) -------------------------------------------------------------

    def arm_state(self, handles: list) -> np.ndarray:
        """(K, MAX_JOINTS, 3) of arms by handle: each joint's angle (rad), rate (rad/s) and the
        torque its drive gave during the last step (N m), joints from base to flange; rows
        beyond an arm's joints read 0 (:data:`coopsim.model.arm.MAX_JOINTS`).

        Raises:
            SimulationError: the engine has no ``arms`` feature (the default).
        """
        raise SimulationError(f"the {self.label} engine has no arms: use engine mujoco")

    def described_positions(self, handles: list) -> np.ndarray:
        """(K, :data:`coopsim.model.linkposes.MAX_COLUMNS`) the moving joints' positions (rad
        or m, the description's order; NaN beyond them) of the robots from description files
        whose mount bodies are ``handles`` (the ``descriptions`` feature; all NaN without)."""
        return np.full((len(handles), MAX_COLUMNS), np.nan)

    def servo_targets(self, handles: list, targets: np.ndarray | None = None) -> np.ndarray:
        """(K, 32) the held joints' set points (rad or m) of the described robots mounted on
        ``handles``, after holding ``targets`` when given (NaN: a joint's home); all NaN on an
        engine without the ``descriptions`` feature."""
        return np.full((len(handles), 32), np.nan)

    def links_document(self, handle) -> dict | None:
        """The layout document's ``links`` (coopsim.model.linkposes: kinematic tree and visual
        shapes) of the robot from a description file mounted on body ``handle``; None for
        any other body (and on an engine without the ``descriptions`` feature)."""
        return None

    def set_arm_targets(self, handles: list, q: np.ndarray, qd: np.ndarray) -> None:
        """Hold joint set points until set again: ``q`` (K, MAX_JOINTS) angles, rad, and
        ``qd`` (K, MAX_JOINTS) feed-forward rates, rad/s. Each joint's servo (a stiff
        position loop, its torque capped by the link's ``max_effort``) pulls the joint to
        them from the next step on; set points already within the limits and speeds (the
        modules check). Columns beyond an arm's joints are ignored.

        Raises:
            SimulationError: the engine has no ``arms`` feature (the default).
        """
        raise SimulationError(f"the {self.label} engine has no arms: use engine mujoco")

    def wrist_wrench(self, handles: list) -> np.ndarray:
        """(K, 6) what a force-torque sensor between each arm's flange and its tool reads
        during the last step: force (N) and torque (N m) in the tool frame, the load the tool
        side puts on the flange (its own weight, what it holds, what it pushes against).

        Raises:
            SimulationError: the engine has no ``arms`` feature (the default).
        """
        raise SimulationError(f"the {self.label} engine has no arms: use engine mujoco")

    def poses3d(self, handles: list) -> np.ndarray:
        """(K, 7) x, y, z (m, world frame) and orientation quaternion (w, x, y, z; body to
        world) of bodies by handle. A 2D engine's answer (the default): its planar poses on the
        floor (z 0, turned about z only); a ``flight`` engine reports the real pose (objects
        lifted by an arm, stacked cubes)."""
        p = np.asarray(self.poses(handles), dtype=float).reshape(-1, 3)
        out = np.zeros((len(p), 7))
        out[:, 0:2], out[:, 3], out[:, 6] = p[:, :2], np.cos(p[:, 2] / 2), np.sin(p[:, 2] / 2)
        return out
