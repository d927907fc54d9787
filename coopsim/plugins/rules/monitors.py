"""``monitors``: named metrics computed from every step's snapshot (``[MONITORS]``), with their
running summary.

Kinds (SI units): ``distance A B`` (m, between the centres of two robots or objects),
``speed A`` (m/s, the robot's ground speed), ``at_target A [RADIUS] [COLOR]`` (1 when the
robot's centre is within RADIUS m, default 0.5, of a target of COLOR, default any; else 0),
``min_sonar A`` (m, the robot's nearest sonar distance) and ``python module:function [ARG...]``
(``function(snapshot, *args)`` returns a number; the module must import where the run runs).

A value that cannot be computed this step (an object not in the world) is NaN, reported as
null, and left out of the summary. The simulation hosts this rule by itself whenever the
scenario has a ``[MONITORS]`` section.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ...model.driver import Rule
from ...model.errors import SimulationError
from ...model.validate import check_monitors, python_function


class Summary:
    """Running max, mean, final value and max after a time of one metric (NaN left out)."""

    def __init__(self, after: float) -> None:
        self.after = after
        self.count, self.total = 0, 0.0
        self.max = self.final = self.max_after = math.nan

    def add(self, value: float, time: float) -> None:
        """Take one step's value (``time``: its sim time, s)."""
        self.final = value
        if math.isnan(value):
            return
        self.count += 1
        self.total += value
        self.max = value if math.isnan(self.max) else max(self.max, value)
        if time >= self.after - 1e-9:
            self.max_after = value if math.isnan(self.max_after) else max(self.max_after, value)

    def as_dict(self) -> dict:
        """``{max, mean, final, max_after}``, null where there is no value."""
        mean = self.total / self.count if self.count else math.nan
        return {k: _json(v) for k, v in (("max", self.max), ("mean", mean),
                                          ("final", self.final), ("max_after", self.max_after))}


def _json(value: float):
    return None if math.isnan(value) else value


def _position(snap, name: str):
    """(x, y) of robot or object ``name`` in ``snap``, or None when it is not there."""
    i = snap.index.get(name)
    if i is not None:
        return snap.poses[i, :2]
    if name in snap.objects:
        return snap.object_poses[snap.objects.index(name), :2]
    return None


def _distance(a: str, b: str):
    def metric(snap) -> float:
        pa, pb = _position(snap, a), _position(snap, b)
        return math.nan if pa is None or pb is None else float(np.hypot(*(pa - pb)))
    return metric


def _robot_row(snap, name: str, fn: Callable) -> float:
    i = snap.index.get(name)
    return math.nan if i is None else float(fn(i))


def _speed(a: str):
    return lambda snap: _robot_row(snap, a, lambda i: np.hypot(*snap.velocities[i, :2]))


def _min_sonar(a: str):
    return lambda snap: _robot_row(snap, a, lambda i: snap.readings["sonar"][i].min())


def _at_target(a: str, radius: str = "0.5", color: str = "any"):
    reach = float(radius)

    def near(snap, i) -> float:
        spots = [t.position[:2] for t in snap.targets if color in ("any", t.color)]
        if not spots:
            return 0.0
        d = np.hypot(*(np.array(spots) - snap.poses[i, :2]).T)
        return float(d.min() <= reach)
    return lambda snap: _robot_row(snap, a, lambda i: near(snap, i))


def _python(target: str, *args: str):
    fn = python_function(target)

    def metric(snap) -> float:
        try:
            return float(fn(snap, *args))
        except BaseException as exc:  # noqa: BLE001 -- SystemExit or KeyboardInterrupt raised
            # by the user's function must not end the simulator: the step fails (run paused)
            said = str(exc)  # sys:exit says whatever it was given: the whole snapshot
            said = said if len(said) <= 200 else said[:200] + "..."
            raise SimulationError(f"python metric {target} raised {type(exc).__name__}: "
                                  f"{said}") from None
    return metric


KINDS = {"distance": _distance, "speed": _speed, "at_target": _at_target,
         "min_sonar": _min_sonar, "python": _python}


class Monitors(Rule):
    """Computes the scenario's metrics every step.

    Fields: ``metrics`` (name -> this step's value, null when it cannot be computed: the state
    stream carries these), ``summary`` (name -> ``{max, mean, final, max_after}`` over the
    steps so far) and ``after`` (s: ``max_after`` counts steps from then on).
    """

    label = "monitors"
    description = "named metrics every step ([MONITORS]: distance, speed, at_target, " \
                  "min_sonar, python) with max, mean, final and max_after"

    def __init__(self, params) -> None:
        super().__init__(params)
        self.after = 0.0
        self.metrics: list[tuple[str, Callable]] = []
        self.values: dict[str, float] = {}
        self.summary: dict[str, Summary] = {}

    def check(self, scenario) -> None:
        if scenario.monitors is None:
            raise SimulationError("the monitors rule computes the metrics of a [MONITORS] "
                                  "section; the scenario has none")
        check_monitors(scenario)
        spec = scenario.monitors
        self.after = spec.after
        self.metrics = [(m.name, KINDS[m.kind](*m.args)) for m in spec.metrics]
        self.summary = {name: Summary(self.after) for name, _ in self.metrics}
        self.values = {name: math.nan for name, _ in self.metrics}

    def after_step(self, sim, snap) -> None:
        for name, metric in self.metrics:
            value = metric(snap)
            self.values[name] = value
            self.summary[name].add(value, snap.time)

    def fields(self) -> dict:
        return {"metrics": {k: _json(v) for k, v in self.values.items()},
                "summary": {k: s.as_dict() for k, s in self.summary.items()},
                "after": self.after}
