"""Rules (ARGoS's loop functions): called around every step, they end runs and add fields to
/sim state and the recording; scenario files attach them with [RULE_n]."""

from __future__ import annotations

import dataclasses

import pytest

from coopsim.client import Client
from coopsim.formats import files
from coopsim.model.driver import Rule
from coopsim.model.errors import FileFormatError
from coopsim.model.plugins import RULES
from coopsim.model.specs import DriverSetting, RuleSetting
from coopsim.recording.reader import Recording
from coopsim.recording.writer import Recorder
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import finishes, robot, scenario, target
from nethelpers import live


def goto_scenario(hold=0.0):
    bot = dataclasses.replace(robot("r1"), drivers=(DriverSetting("goto_target", (("color", "red"),)),))
    rule = RuleSetting("stop_when_all_at_target", (("radius", 0.5), ("hold", hold)))
    return dataclasses.replace(scenario([bot], targets=[target("red", 1.5, 0.5)]), rules=(rule,))


def test_stop_when_all_at_target_ends_a_started_run_and_says_why():
    stepper = Stepper(Simulation(goto_scenario(hold=0.5)), mode="lockstep", speed=0)
    stepper.start()
    try:
        assert finishes(stepper), "the robot should reach the target"
        stats = stepper.stats()
        assert "all 1 robots at a target" in stats.finished and stepper.running
        fields = stepper.snapshot.rules["stop_when_all_at_target"]
        assert fields["at_target"] == 1 and stats.time - fields["all_since"] >= 0.5 - 1e-9
        step = stepper.snapshot.step
        assert stepper.wait_step(step, 0.3) is None  # finished: no more steps
        assert stepper.call(lambda: "served").result(2) == "served"  # calls still served
    finally:
        stepper.stop()
    with pytest.raises(Exception, match="stopped"):
        stepper.call(lambda: None).result(1)


def test_a_run_said_finished_shows_the_step_that_finished_it():
    """The moment a rule ends the run and ``wait_finished`` is woken, the stepper's snapshot is
    the step the rule ended it at: a waiter read the step before (its rule fields not yet
    counting the end: the plugins doc's bump count 0 once in CI)."""
    stepper = Stepper(Simulation(goto_scenario()), mode="lockstep", speed=0)
    seen, say = [], stepper._wake_all

    def said():  # what a woken wait_finished sees
        seen.append((stepper.finished, stepper.snapshot.step,
                     stepper.snapshot.rules["stop_when_all_at_target"]["at_target"]))
        say()
    stepper._wake_all = said
    while not stepper.finished and stepper.snapshot.step < 4000:
        last = stepper.tick()
    assert seen == [(stepper.finished, last.step, 1)], (seen, last.step)


def test_rule_fields_reach_sim_state_and_the_recording(tmp_path):
    spec = goto_scenario()
    with live(spec, mode="lockstep") as run, Client(run.network.endpoint) as client:
        run.stepper.wait_finished(30)
        state = client.sim().state()
    assert state["finished"].startswith("stop_when_all_at_target: all 1 robots")
    assert state["rules"]["stop_when_all_at_target"]["at_target"] == 1
    stepper = Stepper(Simulation(spec), mode="lockstep", speed=0)
    rec = Recorder(tmp_path / "r.mcap", spec, spec.settings, 0, 0.01).attach(stepper)
    for _ in range(40):
        stepper.tick()
    rec.close()
    with Recording(tmp_path / "r.mcap") as r:
        frames = list(r.iter_frames())
    assert frames[-1].rules["stop_when_all_at_target"] == stepper.snapshot.rules[
        "stop_when_all_at_target"]


def test_a_rule_that_raises_pauses_the_run():
    class Boom(Rule):
        label = "boom_rule_test"

        def after_step(self, sim, snap):
            if snap.step == 3:
                raise RuntimeError("scoreboard broke")

    if "boom_rule_test" not in RULES:
        RULES.register("boom_rule_test")(Boom)
    spec = dataclasses.replace(scenario([robot()]), rules=(RuleSetting("boom_rule_test"),))
    stepper = Stepper(Simulation(spec), mode="lockstep", speed=0)
    stepper.start()
    try:
        for _ in range(50):
            if stepper.paused:
                break
            stepper.wait_step(stepper.snapshot.step, 0.1)
        assert "rule boom_rule_test raised RuntimeError: scoreboard broke" in stepper.error
    finally:
        stepper.stop()


WORLD = "[FLOOR]\nsize 10 10 0.1\n"
HEAD = "[WORLD]\nfile w.world\n[TARGET]\nred 2 2 0\n"


@pytest.mark.parametrize("text, line, fragment", [
    (HEAD + "[RULE_1]\ntype nope\n", 6, "unknown rule 'nope'"),
    (HEAD + "[RULE_1]\nparam radius 1\n", 5, "missing the required key 'type'"),
    (HEAD + "[RULE_1]\ntype stop_when_all_at_target\nparam radius -1\n", 7, "out of range"),
    (HEAD + "[RULE_1]\ntype stop_when_all_at_target\nparam color blue\n", 7,
     "needs a blue target"),  # at the param line that names the colour
    (HEAD + "[RULE_1]\ntype stop_when_all_at_target\nparam radius\n", 7, "needs 2 values"),
])
def test_rule_sections_are_checked_at_their_line(tmp_path, text, line, fragment):
    (tmp_path / "w.world").write_text(WORLD)
    path = tmp_path / "r.scenario"
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        files.load(path)
    assert (info.value.line, fragment in info.value.reason) == (line, True), str(info.value)


def test_a_rule_section_loads_with_its_values(tmp_path):
    (tmp_path / "w.world").write_text(WORLD)
    path = tmp_path / "r.scenario"
    path.write_text(HEAD + "[RULE_1]\ntype stop_when_all_at_target\nparam radius 0.8\n"
                    "param color red\n")
    (rule,) = files.load(path).rules
    assert rule == RuleSetting("stop_when_all_at_target", (("radius", 0.8), ("color", "red")), 5)
