"""What rules offer is found by declaration, never by a rule's label: the metrics any rule
reports (model.snapshot.metric_values, what learning tasks read) and the timed events of any
rule that declares a timeline (Rule.timeline; model.plugins.timed_events, what the viewer's
replay bar and the Foxglove log read)."""

from __future__ import annotations

import dataclasses

import pytest

from coopsim.foxglove.topics import EventLog
from coopsim.model.driver import Rule
from coopsim.model.plugins import RULES, reference_type, timed_events
from coopsim.model.snapshot import metric_values
from coopsim.model.specs import MetricSpec, MonitorsSpec, RuleSetting
from coopsim.sim.stepper import Stepper
from coopsim.sim.simulation import Simulation
from coopsim.viewer.hud import event_times
from helpers import robot, scenario


class Bell(Rule):
    """Rings at 0.05 s; reports a metric named as a [MONITORS] one, and one of its own."""

    label = "bell_decl_test"
    timeline = "rings"

    def __init__(self, params) -> None:
        super().__init__(params)
        self.rung = None

    def after_step(self, sim, snap):
        if self.rung is None and snap.time >= 0.05 - 1e-9:
            self.rung = (snap.step, snap.time)

    def fields(self):
        step, time = self.rung or (None, None)
        return {"rings": [{"name": "BELL", "at": 0.05, "done": self.rung is not None,
                           "step": step, "time": time}],
                "metrics": {"gap": -1.0, "rings": float(self.rung is not None)}}


if Bell.label not in RULES:
    RULES.register(Bell.label)(Bell)


def run(steps: int):
    spec = dataclasses.replace(
        scenario([robot("r1"), robot("r2", 3.0)], dt=0.01),
        rules=(RuleSetting(Bell.label),),
        monitors=MonitorsSpec((MetricSpec("gap", "distance", ("r1", "r2")),)))
    stepper = Stepper(Simulation(spec), mode="lockstep", speed=0)
    for _ in range(steps):
        stepper.tick()
    return stepper.snapshot


def test_metrics_of_every_rule_are_found_by_name_and_a_later_rule_wins():
    snap = run(2)
    values = metric_values(snap.rules)
    assert values["rings"] == 0.0  # the plugin rule's own
    assert values["gap"] == pytest.approx(3.0)  # [MONITORS]' rule comes after [RULE_n]'s
    assert metric_values({}) == {} and metric_values({"x": {"metrics": None}}) == {}


def test_a_plugin_rules_timeline_reaches_the_replay_bar_and_the_foxglove_log():
    log = EventLog()
    assert log.new(run(2).rules) == []
    snap = run(6)
    assert timed_events(snap.rules)[0]["name"] == "BELL"
    assert event_times({"rules": snap.rules}) == [0.05]
    assert log.new(snap.rules) == ["event BELL (at 0.05 s) applied at step 5, t = 0.05 s"]
    assert log.new(snap.rules) == []  # once
    second = {"bell_decl_test#2": snap.rules[Bell.label], "not_installed": {"rings": [{}]}}
    assert [e["name"] for e in timed_events(second)] == ["BELL"]


def test_the_reference_robot_is_declared_by_its_type():
    assert reference_type() == "single"
