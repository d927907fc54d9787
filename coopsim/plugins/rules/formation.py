"""``formation``: the monitor and referee of a triangle formation (CoopDynSim's Fig. 10).

Every step it measures the *formation error*: for each follower, the distance (m) from its
centre to its corner of the triangle (side ``spacing``, apex at the leader, the corners behind
it: :func:`coopsim.plugins.drivers.formation.slot`), and the largest of them. The fields are in
``/sim state`` and in every recorded step, so a recording holds the error over time.

A *break* is the error rising over ``broken`` m; the formation is *formed* while the error is
under ``formed`` m. The run ends with PASS once the leader is within ``radius`` of the target
of ``color`` and the triangle has been formed there for ``hold`` s, saying how often and how
far it broke on the way; with FAIL if that has not happened ``limit`` s into the run.
"""

from __future__ import annotations

import math

from ...model.driver import Rule
from ...model.errors import RuleParameterError
from ...model.params import ParamSpec
from ..params import number
from ..drivers.formation import slot


class Referee:
    """What the formation rules share: breaks and re-formations of a formation error, and its
    staying formed at the target for ``hold`` s.

    A *break* is the error rising over ``broken`` m; a *re-formation* its falling back under
    ``formed`` m after one (between the two, the formation stays as it was: broken or not).

    Args:
        formed: An error under this is the formation formed, m.
        broken: An error over this is a break, m.
        hold: How long the formation must stand formed at the target, s.
    """

    def __init__(self, formed: float, broken: float, hold: float) -> None:
        self.formed, self.broken, self.hold = formed, broken, hold
        self.worst = self.sum_sq = 0.0
        self.count = self.breaks = self.reforms = 0
        self.broke = False  # broken now
        self.since: float | None = None  # formed at the target since, s

    def note(self, error: float) -> None:
        """Count one step's formation ``error`` (m): the largest, the RMS, breaks, re-formations."""
        self.worst = max(self.worst, error)
        self.sum_sq += error ** 2
        self.count += 1
        if error > self.broken and not self.broke:
            self.breaks += 1
            self.broke = True
        elif self.broke and error < self.formed:
            self.reforms += 1
            self.broke = False

    def held(self, time: float, there: bool, error: float) -> bool:
        """True once the formation has been formed (``error`` under ``formed``) while ``there``
        (at the target) for ``hold`` s up to ``time`` (s)."""
        if not (there and error < self.formed):
            self.since = None
            return False
        self.since = time if self.since is None else self.since
        return time - self.since >= self.hold - 1e-9

    @property
    def rms(self) -> float:
        """RMS of the errors noted, m (0 before any)."""
        return math.sqrt(self.sum_sq / self.count) if self.count else 0.0


def corner_errors(snap, leader: str, left: str, right: str, spacing: float) -> dict:
    """Each follower's distance (m) from its corner of the triangle behind ``leader``.

    Args:
        snap: the step's snapshot.
        leader, left, right: network names of the apex's and the corners' robots.
        spacing: side of the triangle, m.

    Returns:
        ``{"left": m, "right": m}``.
    """
    lead = snap.poses[snap.index[leader]]
    out = {}
    for role, name in (("left", left), ("right", right)):
        x, y = snap.poses[snap.index[name], :2]
        sx, sy = slot(lead, spacing, role)
        out[role] = math.hypot(sx - x, sy - y)
    return out


def formation_error(snap, leader: str, left: str, right: str, spacing: str) -> float:
    """The formation error (m, the larger corner error) as a ``[MONITORS]`` ``python`` metric:
    ``metric error python coopsim.plugins.rules.formation:formation_error LEAD LEFT RIGHT SPACING``
    (the words of the metric line arrive as strings)."""
    return max(corner_errors(snap, leader, left, right, float(spacing)).values())


class FormationMonitor(Rule):
    """Formation error every step; PASS when the triangle stands formed at the target."""

    label = "formation"
    description = ("formation error of a triangle (leader + left and right corners) every "
                   "step; PASS when formed at the target")
    params = (
        ParamSpec("leader", "str", "network name of the leader", "lead"),
        ParamSpec("left", "str", "network name of the left corner's robot", "left"),
        ParamSpec("right", "str", "network name of the right corner's robot", "right"),
        ParamSpec("color", "str", "colour of the target the formation goes to", "red"),
        number("spacing", "side of the triangle, m", 1.0, 0.3, 10.0, "m"),
        number("radius", "the leader this near the target counts as there, m", 0.5, 0.05, 10.0,
               "m"),
        number("formed", "an error under this is the triangle formed, m", 0.15, 0.01, 5.0, "m"),
        number("broken", "an error over this is a break of formation, m", 0.25, 0.01, 10.0, "m"),
        number("hold", "how long the triangle must stand formed at the target, s", 2.0, 0.0,
               600.0, "s"),
        number("limit", "FAIL when it has not succeeded this long into the run, s", 100.0, 1.0,
               86400.0, "s"),
    )

    def __init__(self, params) -> None:
        super().__init__(params)
        self.errors = {"left": 0.0, "right": 0.0}
        self.error = 0.0
        self.referee = Referee(self.p["formed"], self.p["broken"], self.p["hold"])
        self.goal = (0.0, 0.0)

    def check(self, scenario) -> None:
        names = {r.name for r in scenario.robots}
        missing = [k for k in ("leader", "left", "right") if self.p[k] not in names]
        if missing:
            raise RuleParameterError(missing, f"formation: no robot "
                                              f"{', '.join(self.p[k] for k in missing)} in the "
                                              "scenario")
        goals = [t for t in scenario.targets if t.color == self.p["color"]]
        if not goals:
            raise RuleParameterError(["color"], f"formation needs a {self.p['color']} target")
        self.goal = tuple(goals[0].position[:2])

    def after_step(self, sim, snap) -> None:
        p = self.p
        lead = snap.poses[snap.index[p["leader"]]]
        self.errors = corner_errors(snap, p["leader"], p["left"], p["right"], p["spacing"])
        self.error = max(self.errors.values())
        ref = self.referee
        ref.note(self.error)
        there = math.hypot(lead[0] - self.goal[0], lead[1] - self.goal[1]) <= p["radius"]
        if ref.held(snap.time, there, self.error):
            self.end(f"PASS: formed at the {p['color']} target at t = {snap.time:.2f} s "
                     f"(error {self.error:.3f} m); broke formation {ref.breaks} time(s) "
                     f"on the way, {ref.worst:.2f} m at most, and formed again "
                     f"{ref.reforms} time(s)")
            return
        if snap.time >= p["limit"]:
            self.end(f"FAIL: not formed at the {p['color']} target after {p['limit']:g} s "
                     f"(error {self.error:.2f} m, leader "
                     f"{math.hypot(lead[0] - self.goal[0], lead[1] - self.goal[1]):.2f} m away)")

    def fields(self) -> dict:
        return {"error": round(self.error, 4), "left": round(self.errors["left"], 4),
                "right": round(self.errors["right"], 4),
                "max_error": round(self.referee.worst, 4), "breaks": self.referee.breaks,
                "reforms": self.referee.reforms}
