"""``stop_when_all_at_target``: end the run once every robot is near a target."""

from __future__ import annotations

import numpy as np

from ...model.driver import Rule
from ...model.errors import RuleParameterError
from ...model.params import ParamSpec


class StopWhenAllAtTarget(Rule):
    """Ends the run when every robot's centre is within ``radius`` of a target (of ``color``,
    or of any colour) and has been for ``hold`` s. Fields: how many are there, and when all were."""

    label = "stop_when_all_at_target"
    description = "end the run when every robot is within a radius of a target"
    params = (
        ParamSpec("radius", "float", "how near a target counts as there, m", 0.5, 0.01, 100.0,
                  "m"),
        ParamSpec("color", "str", "only targets of this colour ('any' = every target)", "any"),
        ParamSpec("hold", "float", "how long all must stay there, s", 0.0, 0.0, 3600.0, "s"),
    )

    def __init__(self, params) -> None:
        super().__init__(params)
        self.at = 0
        self.since: float | None = None

    def check(self, scenario) -> None:
        colors = {t.color for t in scenario.targets}
        want = self.p["color"]
        if not scenario.targets or (want != "any" and want not in colors):
            raise RuleParameterError(["color"], f"stop_when_all_at_target needs a {want} target; "
                                                f"the scenario has "
                                                f"{', '.join(sorted(colors)) or 'none'}")

    def after_step(self, sim, snap) -> None:
        want = self.p["color"]
        targets = np.array([t.position[:2] for t in snap.targets
                            if want == "any" or t.color == want]).reshape(-1, 2)
        if not len(snap.robots) or not len(targets):
            return
        d = np.hypot(*(snap.poses[:, None, :2] - targets[None, :, :]).transpose(2, 0, 1))
        self.at = int((d.min(axis=1) <= self.p["radius"]).sum())
        if self.at < len(snap.robots):
            self.since = None
            return
        self.since = snap.time if self.since is None else self.since
        if snap.time - self.since >= self.p["hold"] - 1e-9:
            self.end(f"all {len(snap.robots)} robots at a target at t = {snap.time:.2f} s")

    def fields(self) -> dict:
        return {"at_target": self.at, "all_since": self.since}
