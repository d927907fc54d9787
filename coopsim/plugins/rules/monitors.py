"""``monitors``: named metrics computed from every step's snapshot (``[MONITORS]``), with their
running summary.

Each metric's kind is a plugin registered under ``coopsim.metrics`` (``coopsim list`` shows
them); the built-in kinds declared here (SI units): ``distance A B`` (m, between the centres of
two robots or objects), ``speed A`` (m/s, the robot's ground speed), ``at_target A [RADIUS]
[COLOR]`` (1 when the robot's centre is within RADIUS m, default 0.5, of a target of COLOR,
default any; else 0) and ``python module:function [ARG...]`` (``function(snapshot, *args)``
returns a number; the module must import where the run runs). The sonar module declares
``min_sonar``.

A value that cannot be computed this step (an object not in the world) is NaN, reported as
null, and left out of the summary. The simulation hosts this rule by itself whenever the
scenario has a ``[MONITORS]`` section.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ...model.driver import Rule
from ...model.errors import CoopsimError, SimulationError
from ...model.metric_kind import MetricKind, nearest_target, robot_row
from ...model.plugins import METRICS
from ...model.specs import COLORS
from ...model.validate import check_monitors, python_function


class Summary:
    """Running max, mean, final value and max after a time of one metric (NaN left out)."""

    def __init__(self, after: float) -> None:
        self.after = after
        self.count, self.total = 0, 0.0
        self.max = self.final = self.max_after = math.nan

    def add(self, value: float, time: float) -> None:
        """Take one step's value (``time``: its sim time, s). Called every step: plain
        comparisons (``x != x``: NaN), no calls; ``max``'s choices, ties keeping the old."""
        self.final = value
        if value != value:
            return
        self.count += 1
        self.total += value
        top = self.max
        self.max = value if top != top or value > top else top
        if time >= self.after - 1e-9:
            top = self.max_after
            self.max_after = value if top != top or value > top else top

    def as_dict(self) -> dict:
        """``{max, mean, final, max_after}``, null where there is no value (built every
        step: no loop, no calls)."""
        mean = self.total / self.count if self.count else math.nan
        top, final, after = self.max, self.final, self.max_after
        return {"max": None if top != top else top, "mean": None if mean != mean else mean,
                "final": None if final != final else final,
                "max_after": None if after != after else after}


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


class Distance(MetricKind):
    """``distance A B``: m between the centres of two robots or objects."""

    label = "distance"
    description = "distance A B: m between the centres of two robots or objects"
    args = (2, 2)

    @classmethod
    def check(cls, args, robots, objects) -> None:
        for name in args:
            if name not in robots and name not in objects:
                raise ValueError(f"no robot or object named {name!r}")

    @classmethod
    def build(cls, a: str, b: str):
        def metric(snap) -> float:
            pa, pb = _position(snap, a), _position(snap, b)
            return math.nan if pa is None or pb is None else float(np.hypot(*(pa - pb)))
        return metric


class Speed(MetricKind):
    """``speed A``: the robot's ground speed, m/s."""

    label = "speed"
    description = "speed ROBOT: the robot's ground speed, m/s"

    @classmethod
    def build(cls, a: str):
        return lambda snap: robot_row(snap, a, lambda i: np.hypot(*snap.velocities[i, :2]))


class AtTarget(MetricKind):
    """``at_target A [RADIUS] [COLOR]``: 1 when the robot's centre is within RADIUS m (default
    0.5) of a target of COLOR (default any), else 0."""

    label = "at_target"
    description = "at_target ROBOT [RADIUS] [COLOR]: 1 within RADIUS m (0.5) of a target, else 0"
    args = (1, 3)
    copy_term = "near_target"  # the copies batch backend computes it (coopsim.env.copysense)

    @classmethod
    def parse(cls, args) -> None:
        if len(args) > 1:
            try:
                radius = float(args[1])
            except ValueError:
                raise ValueError(f"at_target radius must be a number, got {args[1]!r}") \
                    from None
            if not radius > 0 or not math.isfinite(radius):
                raise ValueError(f"at_target radius must be > 0, got {args[1]}")
        if len(args) > 2 and args[2] not in (*COLORS, "any"):
            raise ValueError(f"at_target colour must be a target colour or any, got "
                             f"{args[2]!r}")

    @classmethod
    def build(cls, a: str, radius: str = "0.5", color: str = "any"):
        reach = float(radius)

        def near(snap, i) -> float:
            d = nearest_target(snap, i, color)
            return 0.0 if math.isnan(d) else float(d <= reach)
        return lambda snap: robot_row(snap, a, lambda i: near(snap, i))


class Python(MetricKind):
    """``python module:function [ARG...]``: ``function(snapshot, *args)`` returns a number (the
    module must import where the run runs)."""

    label = "python"
    description = "python MODULE:FUNCTION [ARG...]: function(snapshot, *args), a number"
    args = (1, 8)
    runs_code = True

    @classmethod
    def check(cls, args, robots, objects) -> None:
        try:
            python_function(args[0])
        except CoopsimError as exc:
            raise ValueError(str(exc)) from None

    @classmethod
    def build(cls, target: str, *args: str):
        fn = python_function(target)

        def metric(snap) -> float:
            try:
                return float(fn(snap, *args))
            except BaseException as exc:  # noqa: BLE001 -- SystemExit or KeyboardInterrupt
                # raised by the user's function must not end the simulator: the step fails
                # (the run pauses with the reason)
                said = str(exc)  # sys:exit says whatever it was given: the whole snapshot
                said = said if len(said) <= 200 else said[:200] + "..."
                raise SimulationError(f"python metric {target} raised "
                                      f"{type(exc).__name__}: {said}") from None
        return metric


class Monitors(Rule):
    """Computes the scenario's metrics every step.

    Fields: ``metrics`` (name -> this step's value, null when it cannot be computed: the state
    stream carries these), ``summary`` (name -> ``{max, mean, final, max_after}`` over the
    steps so far) and ``after`` (s: ``max_after`` counts steps from then on).
    """

    label = "monitors"
    section = "monitors"  # a scenario with [MONITORS] brings this rule
    description = "named metrics every step ([MONITORS], any registered metric kind) with " \
                  "max, mean, final and max_after"

    def __init__(self, params) -> None:
        super().__init__(params)
        self.after = 0.0
        self.metrics: list[tuple[str, Callable]] = []
        self.values: dict[str, float] = {}
        self.summary: dict[str, Summary] = {}
        self._fields: dict | None = None  # as of the last after_step (asked twice a step)

    def check(self, scenario) -> None:
        if scenario.monitors is None:
            raise SimulationError("the monitors rule computes the metrics of a [MONITORS] "
                                  "section; the scenario has none")
        check_monitors(scenario)
        spec = scenario.monitors
        self.after = spec.after
        self.metrics = [(m.name, METRICS.get(m.kind).build(*m.args))
                        for m in spec.metrics]
        self.summary = {name: Summary(self.after) for name, _ in self.metrics}
        self.values = {name: math.nan for name, _ in self.metrics}

    def after_step(self, sim, snap) -> None:
        self._fields = None
        for name, metric in self.metrics:
            value = metric(snap)
            self.values[name] = value
            self.summary[name].add(value, snap.time)

    def fields(self) -> dict:
        """The fields as of the last step; the same dict until the next step (snapshots
        share it, read-only like everything they hold)."""
        if self._fields is None:
            self._fields = {"metrics": {k: _json(v) for k, v in self.values.items()},
                            "summary": {k: s.as_dict() for k, s in self.summary.items()},
                            "after": self.after}
        return self._fields
