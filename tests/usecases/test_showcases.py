"""The two showcases of docs/usecases.md run to success in lockstep, headless: cooperative
transport (two teams carry their bars corner to corner) and a triangle formation that breaks
for obstacles and forms again. They are strict integration tests: the physics, sensing, the
drivers, the rules and the stepper all have to be right for them to pass."""

from __future__ import annotations

import dataclasses
import math

from coopsim.formats.files import load
from coopsim.recording.reader import Recording
from coopsim.recording.writer import Recorder
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from usecasehelpers import FORMATION, TRANSPORT, run_to_end, stepper
import pytest


@pytest.mark.slow
def test_transport_delivers_both_bars_without_dropping_or_jamming():
    snap, finished = run_to_end(stepper(TRANSPORT))
    assert finished.startswith("transport: PASS: every bar delivered"), finished
    teams = snap.rules["transport"]
    for name, goal in (("team1", (3.6, 3.6)), ("team2", (-3.6, 3.6))):
        team = teams[name]
        assert team["distance"] <= 0.5 and team["arrived"] is not None, (name, team)
        bar = snap.part_poses[snap.parts.index(f"{name}.bar")]
        assert math.dist(bar[:2], goal) <= 0.5
        # the helper followed by a gentle pull: the springs never came near their end
        assert team["max_force"] < 40.0, team
    # team2 gives way at the crossing: it arrives well after team1, within the time limit
    assert 25.0 < teams["team1"]["arrived"] < 50.0
    assert teams["team1"]["arrived"] + 10.0 < teams["team2"]["arrived"] < 100.0


@pytest.mark.slow
def test_transport_fails_a_team_that_does_not_move_as_jammed():
    spec = load(str(TRANSPORT))
    idle = dataclasses.replace(spec, robots=tuple(dataclasses.replace(r, drivers=())
                                                  for r in spec.robots))
    snap, finished = run_to_end(Stepper(Simulation(idle), mode="lockstep"))
    assert finished.startswith("transport: FAIL: team1 jammed its bar"), finished
    assert 20.0 < snap.time < 21.0  # no 0.1 m of progress in 20 s


def test_transport_fails_a_team_that_pulls_its_bar_out_of_its_supports():
    """The helper does not follow (no driver): its support's spring is pulled past drop."""
    spec = load(str(TRANSPORT))
    robots = list(spec.robots)
    robots[0] = dataclasses.replace(robots[0], drivers=robots[0].drivers[:1])  # leader only
    snap, finished = run_to_end(Stepper(Simulation(dataclasses.replace(
        spec, robots=tuple(robots))), mode="lockstep"))
    assert finished.startswith("transport: FAIL: team1 dropped its bar (support force"), finished
    assert snap.time < 5.0


@pytest.mark.slow
def test_formation_breaks_for_the_obstacles_and_forms_again_at_the_target(tmp_path):
    step = stepper(FORMATION)
    rec = Recorder(tmp_path / "f.mcap", step.sim.scenario, step.sim.scenario.settings, 1,
                   step.sim.dt, every=10).attach(step)
    snap, finished = run_to_end(step)
    rec.close()
    assert finished.startswith("formation: PASS: formed at the red target"), finished
    fields = snap.rules["formation"]
    assert fields["error"] < 0.15 and fields["breaks"] >= 2, fields
    assert 0.3 < fields["max_error"] < 1.0, fields
    # the same error as the scenario's [MONITORS] metric, summarised like any monitor's
    monitors = snap.rules["monitors"]
    assert abs(monitors["metrics"]["error"] - fields["error"]) < 1e-4, monitors
    assert abs(monitors["summary"]["error"]["max"] - fields["max_error"]) < 1e-4, monitors
    # the error over time is in the recording: formed, broken at the obstacles, formed again
    with Recording(tmp_path / "f.mcap") as r:
        series = [(f.time, f.rules["formation"]["error"]) for f in r.iter_frames()]
    assert len(series) > 500
    assert max(e for t, e in series if t < 15) < 0.05  # in formation across the open hall
    gate = max(e for t, e in series if 18 < t < 30)
    assert gate > 0.25, "the gate is narrower than the triangle: it must break formation"
    assert series[-1][1] < 0.15
