"""``external``: grade or end a run on its external robots (docs/in-the-loop.md):
a stale stream fails or ends it, a touch fails it, and standing still after a journey passes
it (the real robot stopped where it should)."""

from __future__ import annotations

import math

from ...model.driver import Rule
from ...model.errors import RuleParameterError
from ...model.params import ParamSpec

#: m/s below which an external robot counts as standing still.
STILL_SPEED = 0.02


class External(Rule):
    """Watches every external robot of the run (``external`` in its ``[ROBOT_n]``).

    Ends the run ``FAIL:`` when one goes stale (``stale fail``; ``stale end`` ends it without a
    grade, ``stale ignore`` only counts) or touches anything (its ``bumper``, ``touch fail``),
    and ``PASS:`` once each has travelled ``travel`` m from its first pose and stood still for
    ``still`` s (``travel`` 0: never). Fields: the stale robots, each one's distance travelled
    (m), and the touches seen.
    """

    label = "external"
    description = "grade a run on its external robots: stale, touching, stopped after a journey"
    params = (
        ParamSpec("stale", "str", "what a stale external robot does to the run", "fail",
                  choices=("fail", "end", "ignore")),
        ParamSpec("touch", "str", "what an external robot touching anything does", "fail",
                  choices=("fail", "ignore")),
        ParamSpec("travel", "float", "distance from its first pose before standing still "
                  "passes the run (0: never), m", 0.0, 0.0, 1e6, "m"),
        ParamSpec("still", "float", "how long it must stand still to pass, s", 1.0, 0.0, 3600.0,
                  "s"),
    )

    def __init__(self, params) -> None:
        super().__init__(params)
        self.first: dict[str, tuple] = {}
        self.travelled: dict[str, float] = {}
        self.still_since: dict[str, float | None] = {}
        self.stale: tuple = ()
        self.touches = 0

    def check(self, scenario) -> None:
        if not any(getattr(r, "external", None) for r in scenario.robots):
            raise RuleParameterError([], "the external rule needs a robot marked 'external' in "
                                         "its [ROBOT_n] section")

    def after_step(self, sim, snap) -> None:
        tracks = sim.external.tracks
        self.stale = tuple(n for n, t in tracks.items() if t.stale)
        if self.stale and self.p["stale"] != "ignore":
            grade = "FAIL: " if self.p["stale"] == "fail" else ""
            self.end(f"{grade}{', '.join(self.stale)} went stale (no pose for more than its "
                     f"stale timeout) at t = {snap.time:.2f} s")
        for name, track in tracks.items():
            row = snap.index.get(name)
            if row is not None and track.end is not None:
                self._follow(name, row, snap)
        if self.p["travel"] > 0 and self.still_since and len(self.still_since) == len(tracks) \
                and all(self._done(n, snap.time) for n in tracks):
            self.end(f"PASS: {', '.join(tracks)} stood still after travelling "
                     f"{min(self.travelled.values()):.2f} m at t = {snap.time:.2f} s")

    def _follow(self, name: str, row: int, snap) -> None:
        x, y = float(snap.poses[row, 0]), float(snap.poses[row, 1])
        start = self.first.setdefault(name, (x, y))
        self.travelled[name] = max(self.travelled.get(name, 0.0),
                                   math.hypot(x - start[0], y - start[1]))
        bumper = snap.readings.get("bumper")
        # a robot without a bumper (a Crazyflie) has NaN in its row: no touch
        if bumper is not None and (bumper[row] > 0).any():
            self.touches += 1
            if self.p["touch"] == "fail":
                self.end(f"FAIL: {name} touched something at t = {snap.time:.2f} s")
        moving = math.hypot(*snap.velocities[row, :2]) > STILL_SPEED
        if moving or self.travelled[name] < self.p["travel"]:
            self.still_since[name] = None
        elif self.still_since.get(name) is None:
            self.still_since[name] = snap.time

    def _done(self, name: str, now: float) -> bool:
        since = self.still_since.get(name)
        return since is not None and now - since >= self.p["still"] - 1e-9

    def fields(self) -> dict:
        return {"stale": list(self.stale), "travelled": dict(self.travelled),
                "touches": self.touches}
