"""``landed_on``: grade a landing of a flying robot on top of another (moving) robot.

Air and ground together: a quadrotor follows a ground robot and lands on it. The run ends with
``PASS: ...`` once the flyer has rested on the carrier for ``hold`` s, within ``limit`` s of sim
time, or with ``FAIL: ...`` and the reason (``coopsim run`` prints the banner and exits 1 on
FAIL). "Resting on the carrier" is read from the 3D snapshot (``Snapshot.pose3d``/``twist3d``,
world frame, m and m/s):

* the flyer's centre is within ``radius`` m of the carrier's vertical axis (horizontal distance);
* it is above the carrier's centre, by at most ``height`` m (on top, not hovering over it);
* its velocity differs from the carrier's by at most ``speed`` m/s (carried along, not passing).

Coming down to the floor (the flyer's centre below ``floor`` m) once it has flown (been higher
than ``floor`` + 0.2 m) fails at once: it missed the carrier.
Needs an engine with the ``flight`` feature (``mujoco``: the landing needs contacts).
"""

from __future__ import annotations

import math

import numpy as np

from ...model.driver import Rule
from ...model.errors import RuleParameterError
from ...model.params import ParamSpec
from ..params import number


class LandedOn(Rule):
    """PASS when ``robot`` rests on top of ``carrier`` for ``hold`` s within ``limit`` s."""

    label = "landed_on"
    description = "grade a landing: a flying robot must come to rest on top of another robot"
    params = (
        ParamSpec("robot", "str", "network name of the flying robot being graded", "drone"),
        ParamSpec("carrier", "str", "network name of the robot to land on", "rover"),
        number("limit", "time allowed for the landing, s of sim time", 60.0, 1.0, 86400.0, "s"),
        number("radius", "largest horizontal distance between the centres, m", 0.15, 0.01,
               10.0, "m"),
        number("height", "largest height of the flyer's centre above the carrier's, m", 0.3,
               0.01, 10.0, "m"),
        number("speed", "largest speed relative to the carrier, m/s", 0.15, 0.001, 10.0,
               "m/s"),
        number("hold", "how long it must rest there, s", 1.0, 0.0, 600.0, "s"),
        number("floor", "a flyer's centre below this height has hit the floor, m", 0.03, 0.0,
               10.0, "m"),
    )

    def __init__(self, params) -> None:
        super().__init__(params)
        self.offset = (math.inf, math.inf, math.inf)
        self.since: float | None = None
        self.flown = False  # it has taken off: the floor now counts as a miss

    def check(self, scenario) -> None:
        names = {r.name for r in scenario.robots}
        for key in ("robot", "carrier"):
            if self.p[key] not in names:
                raise RuleParameterError([key], f"landed_on: no robot {self.p[key]!r} in the "
                                                f"scenario (it has {', '.join(sorted(names))})")
        if self.p["robot"] == self.p["carrier"]:
            raise RuleParameterError(["carrier"], "landed_on: a robot cannot land on itself")

    def after_step(self, sim, snap) -> None:
        me, carrier, t = self.p["robot"], self.p["carrier"], snap.time
        if snap.pose3d is None:
            self.end(f"FAIL: landed_on needs a 3D world (an engine with the flight feature, "
                     f"e.g. engine mujoco); this run's engine is planar")
            return
        i, j = snap.index[me], snap.index[carrier]
        d = snap.pose3d[i, :3] - snap.pose3d[j, :3]
        dv = float(np.linalg.norm(snap.twist3d[i, :3] - snap.twist3d[j, :3]))
        self.offset = (float(math.hypot(d[0], d[1])), float(d[2]), dv)
        z = float(snap.pose3d[i, 2])
        self.flown = self.flown or z > self.p["floor"] + 0.2
        if self.flown and z < self.p["floor"]:
            self.end(f"FAIL: {me} hit the floor at t = {t:.2f} s, "
                     f"{self.offset[0]:.2f} m from {carrier}'s centre")
            return
        if self._resting():
            self.since = t if self.since is None else self.since
            if t - self.since >= self.p["hold"] - 1e-9:
                self.end(f"PASS: {me} landed on {carrier} at t = {self.since:.2f} s and stayed "
                         f"{self.p['hold']:g} s ({self.offset[0]:.3f} m from its axis, "
                         f"{self.offset[1]:.3f} m above its centre)")
                return
        else:
            self.since = None
        if t >= self.p["limit"] - 1e-9:
            self.end(f"FAIL: {me} did not land on {carrier} in {self.p['limit']:g} s (it ended "
                     f"{self.offset[0]:.2f} m from its axis, {self.offset[1]:.2f} m above it, "
                     f"{self.offset[2]:.2f} m/s relative speed)")

    def _resting(self) -> bool:
        """The latest offsets say the flyer rests on top of the carrier."""
        across, up, dv = self.offset
        return (across <= self.p["radius"] and 0.0 < up <= self.p["height"]
                and dv <= self.p["speed"])

    def fields(self) -> dict:
        across, up, dv = self.offset
        finite = math.isfinite(across)
        return {"across": round(across, 4) if finite else None,
                "above": round(up, 4) if finite else None,
                "relative_speed": round(dv, 4) if finite else None, "landed_since": self.since}
