"""What modules reach of the engine: batched queries and commands by robot row and role.

A module knows robots only as rows of the frame's arrays and their parts only by the *roles*
their robot type gave them (``bar``, ``support``, ``joint0``, ``tip``). :class:`Access` turns
rows and roles into engine handles, so a module works on any robot type and any engine that
has the features its robot types need. Rows without the role read NaN and are skipped by
commands.
"""

from __future__ import annotations

import numpy as np

from ..model.arm import MAX_JOINTS


class Access:
    """Engine access for one step, in robot order.

    Args:
        world: The world (its robots' ``refs`` and ``points`` hold the handles).
        dt: The step, s (joint forces are impulses over it).
    """

    def __init__(self, world, dt: float) -> None:
        self.world = world
        self.engine = world.engine
        self.dt = dt
        self._found: dict = {}  # (layout, role, rows) -> _handles' answer, this layout's
        self._layout = -1

    # -- drives -----------------------------------------------------------------------------------

    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        """Differential drive of robots ``rows``: forward speed (m/s) and yaw rate (rad/s)."""
        self.engine.drive(rows, forward, turn)

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        """Velocity drive of robots ``rows``: (n, 3) vx, vy (m/s, world frame), yaw rate."""
        self.engine.set_velocity(rows, velocity)

    def apply_wrench(self, rows: np.ndarray, force: np.ndarray, torque: np.ndarray) -> None:
        """Rotors drive of robots ``rows``: (n, 3) force (N) and torque (N m), body frame."""
        self.engine.apply_wrench(rows, force, torque)

    def render_images(self, views: list, rows=None) -> list[tuple]:
        """The engine's offscreen images of ``views`` (coopsim.model.images.View): (rgb,
        depth or None) each, view i not seeing robot ``rows[i]`` (its own; None: sees all);
        error 4 (ParameterError) on an engine with no renderer."""
        return self.engine.render_images(views, rows)

    def render_submit(self, views: list, rows, keys: list, tags: list | None = None) -> None:
        """Queue :meth:`render_images`' images (rendered in the render process while the run
        steps on), taken later with :meth:`render_take` of ``keys[i]``, with ``tags[i]``."""
        self.engine.render_submit(views, rows, keys, tags)

    def render_take(self, key):
        """(tag, (rgb, depth)) queued under ``key`` (waiting for it), or None."""
        return self.engine.render_take(key)

    # -- by role ----------------------------------------------------------------------------------

    def _handles(self, rows: np.ndarray, role: str) -> tuple[tuple, np.ndarray]:
        """The handles of the robots ``rows`` that have a part ``role`` and where they are
        in ``rows`` (read-only)."""
        def find(rows: list, robots) -> tuple[tuple, np.ndarray]:
            pairs = [(i, robots[r].refs[role]) for i, r in enumerate(rows)
                     if role in robots[r].refs]
            where = np.array([i for i, _ in pairs], dtype=np.int64)
            where.setflags(write=False)  # shared by every later call
            return tuple(h for _, h in pairs), where
        return self._once(("part", role), rows, find)

    def _once(self, what: tuple, rows: np.ndarray, find):
        """``find(rows as a list, the world's robots)``, worked out once per layout and rows
        (a module asks for the same rows every step: no loop over them per step)."""
        world = self.world
        layout = (world.layout_version, len(world.robots))
        if layout != self._layout:  # robots, or their parts, came or went
            self._found, self._layout = {}, layout
        rows = np.asarray(rows)
        key = (what, rows.dtype.str, rows.tobytes())
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = find(rows.tolist(), world.robots)
        return found

    def poses(self, rows: np.ndarray, role: str) -> np.ndarray:
        """(len(rows), 3) x, y, yaw of the body each robot names ``role`` (NaN if none)."""
        out = np.full((len(rows), 3), np.nan)
        handles, where = self._handles(rows, role)
        if handles:
            out[where] = self.engine.poses(handles)
        return out

    def joint_state(self, rows: np.ndarray, roles: tuple[str, ...]) -> np.ndarray:
        """(len(rows), len(roles), 2) angle (rad) and rate (rad/s) of each robot's joints."""
        out = np.full((len(rows), len(roles), 2), np.nan)
        for k, role in enumerate(roles):
            handles, where = self._handles(rows, role)
            if handles:
                out[where, k] = self.engine.joint_state(handles)
        return out

    def joint_force(self, rows: np.ndarray, role: str) -> np.ndarray:
        """(len(rows),) force in each robot's joint ``role`` during the last step, N."""
        out = np.full(len(rows), np.nan)
        handles, where = self._handles(rows, role)
        if handles:
            out[where] = self.engine.joint_force(handles, self.dt)
        return out

    def set_motor_rates(self, rows: np.ndarray, roles: tuple[str, ...],
                        rates: np.ndarray) -> None:
        """Drive each robot's motor joints ``roles`` at ``rates`` (len(rows), len(roles)),
        rad/s of the joint's body b relative to a (NaN rates are skipped)."""
        for k, role in enumerate(roles):
            handles, where = self._handles(rows, role)
            keep = [j for j, w in enumerate(where) if np.isfinite(rates[w, k])]
            if keep:
                self.engine.set_motor_rates([handles[j] for j in keep], rates[where[keep], k])

    # -- arms -------------------------------------------------------------------------------------

    def arms(self, rows: np.ndarray) -> tuple:
        """The :class:`~coopsim.model.arm.ArmSpec` each robot names ``arm`` (None if none):
        the same tuple for the same rows while the layout stays."""
        return self._once(("arms",), rows, lambda rows, robots: tuple(
            robots[r].info.arm if robots[r].info is not None else None for r in rows))

    def arm_state(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), MAX_JOINTS, 3) angle (rad), rate (rad/s) and drive torque (N m) of each
        robot's arm joints (NaN rows: no arm; 0 beyond an arm's joints)."""
        return self._by_arm(rows, self.engine.arm_state, (MAX_JOINTS, 3))

    def set_arm_targets(self, rows: np.ndarray, q: np.ndarray, qd: np.ndarray) -> None:
        """Joint set points (len(rows), MAX_JOINTS) angles (rad) and rates (rad/s) of each
        robot's arm, held until set again (rows without an arm are skipped)."""
        handles, where = self._handles(rows, "arm")
        if len(where) == len(rows) and handles:  # every robot has one: no gather
            self.engine.set_arm_targets(handles, np.asarray(q, float), np.asarray(qd, float))
        elif handles:
            self.engine.set_arm_targets(handles, np.asarray(q, float)[where],
                                        np.asarray(qd, float)[where])

    def described_positions(self, rows: np.ndarray, width: int) -> np.ndarray:
        """(len(rows), width) the moving joints' positions (rad or m) of each robot from a
        description file (NaN rows: none; NaN beyond its joints)."""
        return self._by_arm(rows, self.engine.described_positions, (width,), "imported")

    def servo_targets(self, rows: np.ndarray, targets: np.ndarray | None) -> np.ndarray:
        """(len(rows), 32) the held joints' set points (rad or m) of each described robot
        (NaN rows: none; NaN beyond its held joints); with ``targets`` (len(rows), 32), first
        hold those (NaN: that joint's home)."""
        handles, where = self._handles(rows, "imported")
        out = np.full((len(rows), 32), np.nan)
        if handles:
            given = None if targets is None else np.asarray(targets, float)[where]
            out[where] = self.engine.servo_targets(list(handles), given)
        return out

    def wrist_wrench(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), 6) force (N) and torque (N m) at each robot's wrist, tool frame (NaN
        rows: no arm)."""
        return self._by_arm(rows, self.engine.wrist_wrench, (6,))

    def _by_arm(self, rows: np.ndarray, read, shape: tuple, role: str = "arm") -> np.ndarray:
        """``read(handles of part role)`` laid out by ``rows``, NaN rows for robots without
        one (an arm by default)."""
        handles, where = self._handles(rows, role)
        if len(where) == len(rows) and handles:  # every robot has one (where is 0..n-1)
            return np.asarray(read(handles), dtype=float)  # the engine's own: no scatter
        out = np.full((len(rows), *shape), np.nan)
        if handles:
            out[where] = read(handles)
        return out

    def object_poses(self, which: np.ndarray) -> np.ndarray:
        """(len(which), 3) x, y (m), yaw (rad) now of the objects at indices ``which`` of the
        frame's ``objects`` (the world's insertion order), world frame."""
        handles = [h for _, h in self.world.objects.values()]
        if not len(which):
            return np.zeros((0, 3))
        return np.asarray(self.engine.poses([handles[i] for i in which]), float).reshape(-1, 3)

    def points(self, rows: np.ndarray, name: str) -> np.ndarray:
        """(len(rows), 3) world x, y and the carrying body's yaw of each robot's point
        ``name`` (NaN if none)."""
        robots = self.world.robots
        out = np.full((len(rows), 3), np.nan)
        found = [(i, robots[r].points[name]) for i, r in enumerate(rows)
                 if name in robots[r].points]
        if not found:
            return out
        poses = self.engine.poses([body for _, (body, _) in found])
        offsets = np.array([off for _, (_, off) in found], dtype=float)
        c, s = np.cos(poses[:, 2]), np.sin(poses[:, 2])
        world = poses[:, :2] + np.column_stack((c * offsets[:, 0] - s * offsets[:, 1],
                                                s * offsets[:, 0] + c * offsets[:, 1]))
        out[[i for i, _ in found]] = np.column_stack((world, poses[:, 2]))
        return out

    # -- range sensing in 3D ----------------------------------------------------------------------

    def casts3d(self) -> bool:
        """Whether the engine casts rays against its 3D geometry (``mujoco``); the others
        sense in the floor slice (:class:`coopsim.sim.sensing.Geometry`)."""
        # an engine may be told to cast in the floor slice (Engine.ranges3d: a baseline)
        return hasattr(self.engine, "cast3d") and self.engine.ranges3d

    def cast3d(self, rows: np.ndarray, origins: np.ndarray, directions: np.ndarray,
               reach: np.ndarray) -> np.ndarray:
        """(len(rows), k) distances, m, from world-frame ``origins`` (n, 3) along unit
        ``directions`` (n, k, 3), each robot's own geoms skipped; ``reach`` (n,) m where
        nothing is within it."""
        return self.engine.cast3d(rows, origins, directions, reach)

    def chassis_extent(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), 2) lowest and highest point of each robot's chassis along its body z
        axis, m (body frame)."""
        return self.engine.chassis_extent(rows)
