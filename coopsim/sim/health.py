"""Containment of a diverged robot: named, stopped, marked; the run and the others go on.

After the physics phase, :meth:`Health.after_step` asks the engine what it put back
(:meth:`~coopsim.physics.engine.Engine.diverged`: a body whose state went non-finite or beyond
the bounds of :mod:`coopsim.model.health`, put back where it was at the step's start, at
rest). An engine that does not check its own bodies (``pymunk``, ``kinematic``, a plugin's) is
checked by :meth:`Health.checked` at the start of the sensing phase, on the planar state the
sensors read anyway (no second read a step), and a diverged robot put back with
:meth:`~coopsim.physics.engine.Engine.reset_rows` at its pose in the last snapshot, at rest.

Each diverged robot then has its stored commands zeroed (every module: it stands still or its
propellers stop until its controller commands it again), the per-robot state modules keep on
the run's board forgotten (its propellers' speeds, its IMU's last velocity: whatever offers
``restart(names)``), a warning logged, and its mark updated: ``Simulation.extra["diverged"]``
(so ``Snapshot.extra["diverged"]``), robot name -> :class:`Mark`, which ``/sim state``, the end
-of-run summary and rules read. Same scenario, seed and commands: the same containments at the
same steps (nothing here depends on the clock).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..model import health as bounds
from ..model.health import Divergence

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Mark:
    """A robot the run has contained.

    Attributes:
        count: How many steps it diverged in. step, time: The latest (s).
        first: Sim time of the first, s. why: The latest sentence
            (:func:`coopsim.model.health.why`).
    """

    count: int
    step: int
    time: float
    first: float
    why: str

    def as_json(self) -> dict:
        """The ``/sim state`` robot entry's ``diverged`` field."""
        return {"count": self.count, "step": self.step, "time": self.time,
                "first": self.first, "why": self.why}


class Health:
    """The marks of one run (made anew by a reset)."""

    def __init__(self) -> None:
        self.marks: dict[str, Mark] = {}
        #: True when this step's compiled call checked the state it left (the composed step
        #: sets it at the physics phase: coopsim.sim.compose): the sensing phase then skips
        #: :meth:`checked` (Simulation.sense; it clears it)
        self.vouched = False

    def after_step(self, sim) -> None:
        """An engine that checks its own bodies: contain every robot it put back this step."""
        if sim.world.engine.checks_health:
            found = sim.world.engine.diverged()
            if found:
                self._contain(sim, found)

    def checked(self, sim, state: np.ndarray) -> np.ndarray:
        """Any other engine: its robots' planar ``state`` (the sensing phase's read, so the
        check reads nothing more) checked; a diverged robot contained. Returns the state the
        sensors should read: ``state`` itself, or read again after a put-back."""
        if sim.world.engine.checks_health:
            return state
        found = _planar(sim, state)
        if not found:
            return state
        self._contain(sim, found)
        return sim.world.engine.robot_state()

    def _contain(self, sim, found) -> None:
        names = sim.robots.names
        rows = sorted({d.row for d in found if 0 <= d.row < len(names)})
        for label, table in list(dict.items(sim.commands)):
            if len(rows) and len(table):
                sim.commands[label][rows] = 0.0  # looked up: the snapshot copies it anew
        hit = tuple(names[k] for k in rows)
        for board in sim.extra.values():
            restart = getattr(board, "restart", None)
            if hit and callable(restart):
                restart(hit)
        for d in found:
            name = names[d.row] if 0 <= d.row < len(names) else ""
            self._note(sim, name, d)
        sim.extra["diverged"] = MappingProxyType(dict(self.marks))

    def _note(self, sim, name: str, d: Divergence) -> None:
        """Log one containment; mark the robot."""
        if not name:
            log.warning("step %d (t = %.6g s): %s diverged: %s; put back at rest",
                        sim.step, sim.time, d.label, d.why)
            return
        old = self.marks.get(name)
        count = old.count + 1 if old else 1
        self.marks[name] = Mark(count, sim.step, sim.time, old.first if old else sim.time, d.why)
        if count & (count - 1) == 0:  # the 1st, 2nd, 4th, 8th... time: a log that stays short
            log.warning("step %d (t = %.6g s): robot %s diverged (%d time%s so far): %s; put "
                        "back at rest where it was at the step's start, its commands zeroed; "
                        "the run goes on", sim.step, sim.time, name, count,
                        "" if count == 1 else "s", d.why)


def _planar(sim, state: np.ndarray) -> tuple[Divergence, ...]:
    """An engine that does not check itself: its robots' planar ``state`` against the
    bounds; the diverged ones put back at their pose in the last snapshot (their spawn pose
    when it had none), at rest."""
    engine = sim.world.engine
    floor = sim.world.floor
    half = (floor.length / 2, floor.width / 2)
    if bounds.healthy_planar(state, half):
        return ()
    code, value = bounds.classify(_as3d(state), half)
    rows = np.flatnonzero(code)
    snap, back = getattr(sim, "snapshot", None), np.zeros((len(rows), 6))  # none before the first
    for j, k in enumerate(rows.tolist()):
        name = sim.robots.names[k]
        at = snap.index.get(name) if snap is not None else None
        back[j, :3] = snap.poses[at] if at is not None and at < len(snap.poses) else \
            _spawn(sim, name)
    engine.reset_rows(rows, back)
    return tuple(Divergence(k, f"robot {sim.robots.names[k]}", bounds.why(int(code[k]),
                                                                           float(value[k])))
                 for k in rows.tolist())


def _as3d(state: np.ndarray) -> np.ndarray:
    """(N, 13) STATE3D rows of (N, 6) planar ones, as far as the bounds need them."""
    out = np.zeros((len(state), 13))
    out[:, 0:2], out[:, 7:9], out[:, 12] = state[:, 0:2], state[:, 3:5], state[:, 5]
    out[:, 3] = np.where(np.isfinite(state[:, 2]), 1.0, np.nan)
    return out


def _spawn(sim, name: str) -> tuple[float, float, float]:
    """x, y, yaw of robot ``name``'s section as the scenario placed it."""
    section = sim.world.sections[sim.world.robot(name).section].spec
    return section.position[0], section.position[1], section.yaw


def diverged(snap, *robots: str) -> float:
    """How many steps ``robots`` (all robots when none is named) diverged in so far: a
    ``[MONITORS]`` metric (``metric lost python coopsim.sim.health:diverged cf1``) that a
    task or a verdict can grade; ``snap``: a Snapshot."""
    marks = snap.extra.get("diverged") or {}
    return float(sum(m.count for name, m in marks.items() if not robots or name in robots))
