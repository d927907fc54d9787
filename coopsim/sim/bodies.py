"""Batched access to body state and module parameters, rebuilt only when the layout changes.

Reading 1,000 robots' poses one attribute at a time costs milliseconds in Python; pymunk's batch
API copies every body's state into one buffer in C. A :class:`BodyTable` keeps, for the current
layout, which buffer row belongs to which robot, control body, object and bar.
"""

from __future__ import annotations

import numpy as np
import pymunk
import pymunk.batch as batch

from ..plugins.modules import Module
from ..model.registry import MODULES

_F = batch.BodyFields
_STATE = _F.POSITION | _F.ANGLE | _F.VELOCITY | _F.ANGULAR_VELOCITY
_VELOCITY = _F.VELOCITY | _F.ANGULAR_VELOCITY


class BodyTable:
    """Row indices of a world's bodies in pymunk's batch buffers.

    Attributes:
        chassis: (N,) row of each robot's chassis, robot order.
        control: (N,) row of each robot's kinematic control body.
        axle, radius: (N,) per-robot drive geometry, m.
        group: (N,) sensing group per robot.
        sorted_ids, id_order: chassis body ids in ascending order, and the robot of each.
    """

    def __init__(self) -> None:
        self.version = -1
        self._buffer = batch.Buffer()
        self.chassis = self.control = np.zeros(0, dtype=np.int64)

    def refresh(self, world) -> None:
        """Re-map rows if bodies were inserted or removed since the last call."""
        if world.layout_version == self.version:
            return
        self._buffer.clear()
        batch.get_space_bodies(world.space, _F.BODY_ID, self._buffer)
        ids = np.frombuffer(self._buffer.int_buf(), dtype=np.uintp)
        row = {int(i): k for k, i in enumerate(ids)}
        robots = world.robots
        self.chassis = np.array([row[r.body.id] for r in robots], dtype=np.int64)
        self.control = np.array([row[r.control.id] for r in robots], dtype=np.int64)
        self.axle = np.array([r.axle for r in robots], dtype=float)
        self.radius = np.array([r.radius for r in robots], dtype=float)
        self.group = np.array([r.group for r in robots], dtype=np.int64)
        chassis_ids = np.array([r.body.id for r in robots], dtype=np.uintp)
        self.id_order = np.argsort(chassis_ids)  # robots by chassis id, to map arbiters
        self.sorted_ids = chassis_ids[self.id_order]
        self.version = world.layout_version

    def read(self, space: pymunk.Space) -> np.ndarray:
        """Every body's state as a (B, 6) array: x, y, angle, vx, vy, angular velocity."""
        self._buffer.clear()
        batch.get_space_bodies(space, _STATE, self._buffer)
        return np.frombuffer(self._buffer.float_buf(), dtype=np.float64).reshape(-1, 6).copy()

    def write_velocities(self, space: pymunk.Space, velocities: np.ndarray) -> None:
        """Set every body's vx, vy and angular velocity from a (B, 3) array (all rows)."""
        out = batch.Buffer()
        out.set_float_buf(np.ascontiguousarray(velocities, dtype=np.float64).ravel())
        batch.set_space_bodies(space, _VELOCITY, out)


class ParamTable:
    """Per-robot parameter arrays for every module, rebuilt when the layout or a value changes."""

    def __init__(self) -> None:
        self.key: tuple[int, int] = (-1, -1)
        self.rows: dict[str, np.ndarray] = {}
        self.values: dict[str, dict[str, np.ndarray]] = {}

    def refresh(self, world) -> None:
        """Re-gather the arrays if needed (key: layout version, parameter epoch)."""
        key = (world.layout_version, world.param_epoch)
        if key == self.key:
            return
        self.rows, self.values = {}, {}
        for label, module in MODULES.items():
            rows = [i for i, r in enumerate(world.robots) if label in r.modules]
            self.rows[label] = np.array(rows, dtype=np.int64)
            self.values[label] = _gather(module, [world.robots[i] for i in rows], label)
        self.key = key


def _gather(module: type[Module], robots: list, label: str) -> dict[str, np.ndarray]:
    return {
        spec.name: np.array([r.modules[label][spec.name] for r in robots], dtype=float)
        for spec in module.params
    }
