"""The ``mujoco`` engine's divergence guard: every body checked after every MuJoCo substep, a
diverged one put back alone (:mod:`coopsim.model.health` states the bounds).

A *unit* is a tree of bodies hanging from the world (MuJoCo's ``body_rootid``): a robot with
its arm, an object. A unit whose coordinates go non-finite or beyond the bounds is put back as
it was at the start of the step (``qpos``), at rest (``qvel`` 0), its applied forces and its
robot's drive command and wrench dropped, its servos' set points at the restored angles; every
other unit goes on untouched. MuJoCo's own reset of the whole ``mjData`` on a bad ``qpos``,
``qvel`` or ``qacc`` (its divergence warnings) is turned off (``mjDSBL_AUTORESET``: the engine
sets it), so one robot's divergence cannot put the others back at their start.

Cost: a substep with nothing wrong is two passes over ``qvel`` (its largest and smallest
value, no temporary array) and one over ``qpos`` (finite); a step adds one gather of the free
bodies' positions and two reductions over it (up to four free bodies: their coordinates
compared on floats), and one copy of ``qpos`` (the step's start). The
arrays are gathered only for the units that went wrong.
"""

from __future__ import annotations

import math

import numpy as np

from ...model import health
from ...model.health import Divergence

_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3  # mjtJoint
_WIDTH = {_FREE: (7, 6), _BALL: (4, 3), _SLIDE: (1, 1), _HINGE: (1, 1)}  # qpos, qvel


class Guard:
    """The units of one compiled model and the state at the start of the current step.

    Args:
        model: The compiled ``mjModel``.
        half: The floor's half length and half width, m.
        robot_ids: (N,) the robots' chassis body ids, robot order.
        labels: Body id -> what it is, for the log (its root bodies at least).
    """

    def __init__(self, model, half: tuple[float, float], robot_ids: np.ndarray,
                 labels: dict) -> None:
        root = np.asarray(model.body_rootid, dtype=np.int64)
        self.half, self.labels = half, labels
        jnt_unit = root[model.jnt_bodyid]
        self.q_unit = np.zeros(model.nq, np.int64)
        self.dof_linear = np.zeros(model.nv, bool)
        free_q = []
        for j in range(model.njnt):
            kind, q, d = int(model.jnt_type[j]), model.jnt_qposadr[j], model.jnt_dofadr[j]
            nq, _ = _WIDTH[kind]
            self.q_unit[q:q + nq] = jnt_unit[j]
            if kind == _FREE:
                self.dof_linear[d:d + 3] = True
                free_q.append(q)
            elif kind == _SLIDE:
                self.dof_linear[d] = True
        self.dof_unit = root[model.dof_bodyid]
        self.free_q = np.array(free_q, np.int64)
        self.free_xyz = (self.free_q[:, None] + np.arange(3)).T.copy()  # (3, k) x, y, z
        self._few = self.free_q.tolist()  # step()'s loop over a few free bodies
        self.body_unit = root
        self.act_unit = jnt_unit[model.actuator_trnid[:, 0]] if model.nu else np.zeros(0, int)
        self.act_q = model.jnt_qposadr[model.actuator_trnid[:, 0]] if model.nu else \
            np.zeros(0, int)
        self.robot_unit = root[np.asarray(robot_ids, dtype=np.int64)]
        self.start = np.zeros(model.nq)
        self.calm = min(health.MAX_SPEED, health.MAX_RATE)  # no joint moves this fast

    def begin(self, data) -> None:
        """Keep the state at the start of a step: what a diverged unit is put back to."""
        np.copyto(self.start, data.qpos)

    def substep(self, data) -> np.ndarray:
        """The units whose velocities or coordinates went beyond the bounds (usually none:
        one pass over each array)."""
        qvel, qpos, calm = data.qvel, data.qpos, self.calm
        # max and min: two passes with no temporary array (NaN fails both tests); the ufuncs'
        # reductions called straight (ndarray.max's Python wrapper costs as much as the pass)
        if (not len(qvel) or (_MAX(qvel) <= calm and _MIN(qvel) >= -calm)) \
                and math.isfinite(_SUM(qpos)):
            return _NONE
        with np.errstate(invalid="ignore"):
            bound = np.where(self.dof_linear, health.MAX_SPEED, health.MAX_RATE)
            bad = np.concatenate([self.dof_unit[~(np.abs(qvel) <= bound)],
                                  self.q_unit[~np.isfinite(qpos)]])
        return np.unique(bad)

    def step(self, data) -> np.ndarray:
        """The units whose free bodies left the altitude or world bounds this step."""
        if not len(self.free_q):
            return _NONE
        qpos = data.qpos
        wide, deep = self.half[0] + health.BEYOND, self.half[1] + health.BEYOND
        if len(self.free_q) <= _FEW:  # an arm's cube or two: on floats, no gather
            for q in self._few:
                x, y, z = qpos[q:q + 3].tolist()
                if not (-wide <= x <= wide and -deep <= y <= deep
                        and -health.DEPTH <= z <= health.CEILING):
                    break  # (NaN fails every test) the arrays below say which
            else:
                return _NONE
        else:
            p = qpos[self.free_xyz]  # one gather, (3, k) x, y, z
            (x0, y0, z0), (x1, y1, z1) = _MIN(p, axis=1).tolist(), _MAX(p, axis=1).tolist()
            if (x1 <= wide and x0 >= -wide and y1 <= deep and y0 >= -deep
                    and z0 >= -health.DEPTH and z1 <= health.CEILING):
                return _NONE  # the usual step (NaN fails every test)
        p = qpos[self.free_xyz.T]
        with np.errstate(invalid="ignore"):
            reach = np.maximum(np.abs(p[:, 0]) - self.half[0], np.abs(p[:, 1]) - self.half[1])
            bad = ~((p[:, 2] >= -health.DEPTH) & (p[:, 2] <= health.CEILING)
                    & (reach <= health.BEYOND))
        return np.unique(self.q_unit[self.free_q[bad]]) if bad.any() else _NONE

    def reasons(self, data, units: np.ndarray) -> dict[int, str]:
        """Unit -> the sentence of the first bound it broke (a few units: a loop)."""
        out = {}
        for unit in units.tolist():
            qpos, qvel = data.qpos[self.q_unit == unit], data.qvel[self.dof_unit == unit]
            linear = self.dof_linear[self.dof_unit == unit]
            code, value = health.NONFINITE, 0.0
            if np.isfinite(qpos).all() and np.isfinite(qvel).all():
                speed = float(np.abs(qvel[linear]).max(initial=0.0))
                rate = float(np.abs(qvel[~linear]).max(initial=0.0))
                code, value = (health.SPEED, speed) if speed > health.MAX_SPEED else \
                    (health.RATE, rate) if rate > health.MAX_RATE else self._where(data, unit)
            out[unit] = health.why(code, value)
        return out

    def _where(self, data, unit: int) -> tuple[int, float]:
        """Altitude or world bounds: the first a free body of ``unit`` broke."""
        for q in self.free_q[self.q_unit[self.free_q] == unit].tolist():
            x, y, z = data.qpos[q:q + 3].tolist()
            if not -health.DEPTH <= z <= health.CEILING:
                return health.ALTITUDE, z
            reach = max(abs(x) - self.half[0], abs(y) - self.half[1])
            if reach > health.BEYOND:
                return health.OUTSIDE, reach
        return health.NONFINITE, 0.0

    def contain(self, model, data, units: np.ndarray) -> None:
        """Put ``units`` back where they were at the start of the step, at rest, their
        applied forces dropped and their servos holding the restored angles."""
        q = np.isin(self.q_unit, units)
        d = np.isin(self.dof_unit, units)
        data.qpos[q] = self.start[q]
        data.qvel[d], data.qacc[d], data.qfrc_applied[d] = 0.0, 0.0, 0.0
        data.xfrc_applied[np.isin(self.body_unit, units)] = 0.0
        if len(self.act_unit):
            a = np.isin(self.act_unit, units)
            data.ctrl[a] = self.start[self.act_q[a]]

    def report(self, data, units: np.ndarray) -> list[Divergence]:
        """What ``units`` are, robots (by row) first, and why each was put back."""
        why = self.reasons(data, units)
        out = [Divergence(int(row), "", why[int(u)]) for row, u in
               enumerate(self.robot_unit.tolist()) if u in why]
        robots = set(self.robot_unit.tolist())
        out += [Divergence(-1, self.labels.get(u, f"body {u}"), w) for u, w in why.items()
                if u not in robots]
        return out


_NONE = np.zeros(0, np.int64)
_FEW = 4  # free bodies step() checks one by one on floats (more: one gather, two reductions)
_MAX, _MIN, _SUM = np.maximum.reduce, np.minimum.reduce, np.add.reduce
