"""``squad_shape``: how well a squad keeps its formation, and the referee of a formation run.

Every step it fits the formation (its slots for the squad's size and spacing,
:class:`coopsim.swarm.formations.Formation`) to where the robots are, as a rigid shape: the
best turn and shift, each robot to its nearest slot
(:func:`coopsim.swarm.formations.shape_error`). The squad's
*formation error* is the RMS distance of the robots from their fitted slots (m): the shape's
error, wherever the squad is. A *break* is the error rising over ``broken``; a *re-formation*
its falling back under ``formed`` afterwards. Counted from ``after`` s into the run (the
squad gathers first).

The run ends with PASS once the squad's centre has been within ``radius`` of the target of
``color`` with the error under ``formed`` for ``hold`` s (not before ``pass_after``), saying how the formation held on the
way (RMS and largest error, breaks, re-formations); with FAIL if that has not happened ``limit``
s into the run.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.driver import Rule
from ...model.errors import SimulationError
from ...model.params import ParamSpec
from ..params import number
from .formation import Referee


class SquadShape(Rule):
    """Formation error of a squad every step; PASS when formed at the target."""

    label = "squad_shape"
    description = ("formation error (RMS to the best-fitting formation), breaks and "
                   "re-formations of a squad every step; PASS when formed at the target")
    params = (
        ParamSpec("squad", "str", "name of the squad ([SQUAD_n]: robots, formation, spacing)",
                  "A"),
        ParamSpec("color", "str", "colour of the target the squad goes to", "red"),
        number("radius", "the squad's centre this near the target counts as there, m", 0.5,
               0.05, 10.0, "m"),
        number("formed", "an error under this is the formation formed, m", 0.1, 0.01, 5.0,
               "m"),
        number("broken", "an error over this is a break of formation, m", 0.25, 0.01, 10.0,
               "m"),
        number("after", "count breaks from this time on (the squad gathers before), s", 10.0,
               0.0, 86400.0, "s"),
        number("pass_after", "PASS only from this time on (after the target's last move), s",
               0.0, 0.0, 86400.0, "s"),
        number("hold", "how long the squad must stand formed at the target, s", 2.0, 0.0,
               600.0, "s"),
        number("limit", "FAIL when it has not succeeded this long into the run, s", 120.0, 1.0,
               86400.0, "s"),
    )

    def __init__(self, params) -> None:
        super().__init__(params)
        self.names: list[str] = []
        self.offsets = np.zeros((0, 2))
        self.error = 0.0
        self.referee = Referee(self.p["formed"], self.p["broken"], self.p["hold"])
        self.goal: tuple[float, float] | None = None
        # the formations' module (SciPy) as the run is built; not when the registry imports
        # this module (every run would pay it)
        from ...swarm import formations

        self.shape, self.fit = formations.Formation, formations.shape_error

    def check(self, scenario) -> None:
        spec = next((q for q in scenario.squads if q.name == self.p["squad"]), None)
        if spec is None:
            raise SimulationError(f"squad_shape: no squad {self.p['squad']!r} in the scenario "
                                  "(a [SQUAD_n] section names it)")
        self.names = list(spec.robots)
        self.offsets = self.shape.of(spec).offsets(len(self.names))

    def after_step(self, sim, snap) -> None:
        p = self.p
        rows = [snap.index[n] for n in self.names if n in snap.index]
        pos = snap.poses[rows, :2]
        heading = math.atan2(float(np.sin(snap.poses[rows, 2]).sum()),
                             float(np.cos(snap.poses[rows, 2]).sum()))
        error = self.fit(pos, self.offsets, heading)
        self.error = float(np.sqrt(np.mean(error ** 2)))
        ref = self.referee
        if snap.time >= p["after"]:
            ref.note(self.error)
        goal = next(((t.position[0], t.position[1]) for t in snap.targets
                     if t.color == p["color"]), None)
        there = goal is not None and math.dist(pos.mean(axis=0), goal) <= p["radius"]
        if ref.held(snap.time, there and snap.time >= p["pass_after"], self.error):
            self.end(f"PASS: formed at the {p['color']} target at t = {snap.time:.2f} s "
                     f"(error {self.error:.3f} m); on the way RMS {ref.rms:.3f} m, "
                     f"{ref.worst:.2f} m at most, {ref.breaks} break(s), "
                     f"{ref.reforms} re-formation(s)")
            return
        if snap.time >= p["limit"]:
            self.end(f"FAIL: not formed at the {p['color']} target after {p['limit']:g} s "
                     f"(error {self.error:.2f} m)")

    def fields(self) -> dict:
        ref = self.referee
        return {"error": round(self.error, 4), "rms": round(ref.rms, 4),
                "max_error": round(ref.worst, 4), "breaks": ref.breaks,
                "reforms": ref.reforms, "metrics": {"error": round(self.error, 4)}}
