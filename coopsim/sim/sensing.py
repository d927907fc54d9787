"""The sensing phase: every module's reading for every robot, from one batched physics read.

Readings are numpy arrays, one per module label, shape (N, width) in robot order; robots without
that module have a row of NaN. The previous step's readings are kept because lost data holds the
last value and odometry integrates.
"""

from __future__ import annotations

import numpy as np
import pymunk.batch as batch

from .bodies import BodyTable, ParamTable
from ..plugins.modules import SenseFrame
from .raycast import RayCaster
from ..model.registry import MODULES

_A = batch.ArbiterFields
_CONTACT = _A.BODY_A_ID | _A.BODY_B_ID | _A.POINT_A_1


class Sensors:
    """Computes readings each step and remembers them for the next."""

    def __init__(self) -> None:
        self.caster = RayCaster()
        self.prev: dict[str, np.ndarray] = {}
        self._names: tuple[str, ...] = ()
        self._static_version = -1
        self._layout_key: tuple[int, int] = (-1, -1)
        self._targets = np.zeros((0, 2))
        self._arbiters = batch.Buffer()

    def sense(self, world, table: BodyTable, params: ParamTable, state: np.ndarray,
              wheels: np.ndarray, dt: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Measure every module of every robot after a physics step.

        Args:
            world: The World (its layout must match ``table`` and ``params``).
            state: (B, 6) body state read after the step.
            wheels: (N, 2) wheel speeds driven this step, m/s.
            dt: Step length, s.
            rng: The run's random generator (noise, lost data).
        """
        frame = self._frame(world, table, params, state, wheels, dt)
        self._remap(world, len(world.targets))
        readings = {}
        everyone = len(world.robots)
        for label, module in MODULES.items():
            rows, prev = params.rows[label], self.prev[label]
            if len(rows) == everyone > 0:  # the usual case: no gather, no scatter
                readings[label] = module.measure(frame, rows, params.values[label], prev, rng)
                continue
            out = prev.copy()
            if len(rows):
                out[rows] = module.measure(frame, rows, params.values[label], prev[rows], rng)
            readings[label] = out
        self.prev = readings
        return readings

    def carried(self, world) -> dict[str, np.ndarray]:
        """The last readings laid out for the world's current robots and targets (no new
        measurement: inserted robots read zeros until the next step)."""
        self._remap(world, len(world.targets))
        return self.prev

    def zero(self, label: str, index: int) -> None:
        """Zero robot ``index``'s remembered reading of ``label`` (the next step builds on it)."""
        arr = self.prev[label].copy()
        arr[index] = 0.0
        self.prev = {**self.prev, label: arr}

    def _frame(self, world, table, params, state, wheels, dt) -> SenseFrame:
        chassis = state[table.chassis]
        pose, velocity = chassis[:, :3], chassis[:, 3:6]
        circles, cgroup, segments, sgroup = self._geometry(world, table, pose)
        targets = self._targets
        return SenseFrame(
            dt=dt, pose=pose, velocity=velocity, radius=table.radius, axle=table.axle,
            wheel_cmd=wheels, group=table.group, caster=self.caster, circles=circles,
            circle_group=cgroup, segments=segments, segment_group=sgroup, targets=targets,
            contacts=self._contacts(world, table, pose), support=_support(world, dt, params))

    def _geometry(self, world, table, pose):
        """Moving shapes for this step's rays; static ones are binned once per layout."""
        if self._static_version != world.layout_version:
            sc, scg, ss, ssg = world.static_geometry()
            self.caster.set_static(sc, ss, scg, ssg)
            self._targets = np.array([t.position[:2] for t in world.targets],
                                     dtype=float).reshape(-1, 2)
            self._static_version = world.layout_version
        mc, mcg, ms, msg = world.moving_geometry()
        robots = np.column_stack((pose[:, :2], table.radius))
        return np.concatenate((mc, robots)), np.concatenate((mcg, table.group)), ms, msg

    def _contacts(self, world, table, pose) -> np.ndarray:
        """(N, 2) front/rear contact flags from the space's arbiters."""
        out = np.zeros((len(world.robots), 2))
        self._arbiters.clear()
        batch.get_space_arbiters(world.space, _CONTACT, self._arbiters)
        ids = np.frombuffer(self._arbiters.int_buf(), dtype=np.uintp).reshape(-1, 2)
        if not len(ids) or not len(world.robots):
            return out
        points = np.frombuffer(self._arbiters.float_buf(), dtype=np.float64).reshape(-1, 2)
        sorted_ids, order = table.sorted_ids, table.id_order
        for column in (0, 1):
            pos = np.searchsorted(sorted_ids, ids[:, column]).clip(0, len(order) - 1)
            hit = sorted_ids[pos] == ids[:, column]
            robot = order[pos[hit]]
            rel = points[hit] - pose[robot, :2]
            ahead = rel[:, 0] * np.cos(pose[robot, 2]) + rel[:, 1] * np.sin(pose[robot, 2]) >= 0
            out[robot[ahead], 0] = 1.0
            out[robot[~ahead], 1] = 1.0
        return out

    def _remap(self, world, n_targets: int) -> None:
        """Carry previous readings over a layout change, matched by robot name."""
        key = (world.layout_version, n_targets)
        if key == self._layout_key:
            return
        self._layout_key = key
        names = tuple(r.name for r in world.robots)
        widths = {label: len(m.field_names(n_targets)) for label, m in MODULES.items()}
        same = names == self._names and all(
            k in self.prev and self.prev[k].shape[1] == w for k, w in widths.items())
        if same:
            return
        old = {n: i for i, n in enumerate(self._names)}
        prev = {}
        for label, width in widths.items():
            arr = np.zeros((len(names), width))
            arr[[label not in r.modules for r in world.robots]] = np.nan
            last = self.prev.get(label)
            if last is not None and last.shape[1] == width:
                for i, name in enumerate(names):
                    if name in old:
                        arr[i] = last[old[name]]
            prev[label] = arr
        self.prev, self._names = prev, names


def _support(world, dt: float, params: ParamTable) -> np.ndarray:
    """(N, 2) bar angle from heading and support force, for the robots with a support."""
    out = np.full((len(world.robots), 2), np.nan)
    for i in params.rows["support"]:
        robot = world.robots[i]
        rel = robot.bar.angle - robot.body.angle
        out[i] = (np.arctan2(np.sin(rel), np.cos(rel)), robot.support.impulse / dt)
    return out
