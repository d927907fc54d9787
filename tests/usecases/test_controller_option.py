"""``coopsim run --controller [ROBOT=]COMMAND``: which robot it drives, what it replaces, how a
bad one is refused; and the team2 support whose force the transport helper follows."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from coopsim.app.controllers import apply_overrides, controller_argv, parse_override
from coopsim.formats.files import load
from coopsim.model.driver import Driver
from coopsim.model.errors import CoopsimError
from coopsim.model.plugins import DRIVERS
from coopsim.model.specs import DriverSetting
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import robot, scenario
from usecasehelpers import EXERCISES, TRANSPORT, coopsim


@pytest.mark.parametrize("text, robot_, command", [
    ("python my.py", None, "python my.py"),
    ("my.py", None, "my.py"),
    ("robot1=python my.py --gain=3", "robot1", "python my.py --gain=3"),
    ("team1_leader=octave-cli --eval 'lead'", "team1_leader", "octave-cli --eval 'lead'"),
    ("python my.py --gain=3", None, "python my.py --gain=3"),
])
def test_parse_override(text, robot_, command):
    assert parse_override(text) == (robot_, command)


def test_an_empty_command_is_refused():
    with pytest.raises(CoopsimError, match="the command is empty"):
        parse_override("robot1=")


def test_a_py_file_runs_under_this_python():
    assert controller_argv("my.py --x 1") == [sys.executable, "my.py", "--x", "1"]


def test_a_member_override_keeps_the_other_members_driver_and_the_section_its_controller():
    spec = load(str(TRANSPORT))
    out, chosen = apply_overrides(spec, [("team1_leader", "python lead.py")], cwd="/somewhere")
    assert set(chosen) == {"team1_leader"} and chosen["team1_leader"].cwd == "/somewhere"
    team1 = out.robots[0]
    assert [(d.label, d.member) for d in team1.drivers] == [("transport_helper", "helper")]
    assert out.robots[1] == spec.robots[1]
    world = {r.name: r for r in Simulation(out).world.robots}
    assert world["team1_leader"].driver is None and world["team1_helper"].driver is not None


def test_a_section_override_drives_every_member_and_drops_its_lines():
    base = dataclasses.replace(robot("t", type="team2"), controller="python old.py",
                               drivers=(DriverSetting("wander"),))
    out, chosen = apply_overrides(scenario([robot("r1"), base]), [("t", "python new.py")])
    assert set(chosen) == {"t_leader", "t_helper"}
    assert out.robots[1].drivers == () and out.robots[1].controller is None


def test_without_a_robot_the_first_section_is_driven():
    out, chosen = apply_overrides(scenario([robot("a"), robot("b")]), [(None, "my.py")])
    assert list(chosen) == ["a"]
    with pytest.raises(CoopsimError, match="no robot to drive"):
        apply_overrides(scenario([]), [(None, "my.py")])


@pytest.mark.slow
def test_an_unknown_robot_is_one_line_and_exit_2():
    proc = coopsim("run", TRANSPORT, "--headless", "--port", "0", "--controller",
                   "team9=python x.py")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "coopsim: --controller: no robot 'team9' in the scenario (robots: team1, team1_helper, "
        "team1_leader, team2, team2_helper, team2_leader)")


@pytest.mark.slow
def test_the_cli_launches_the_given_controller_from_the_current_folder(tmp_path):
    """With --no-controllers the scenario's own controller lines are not launched, the given
    one is, from the current folder (the script is given by a relative path)."""
    (tmp_path / "mine.py").write_text(
        "import os\nfrom coopsim.client import Client\n"
        "with Client() as c:\n    bot = c.robot(os.environ['COOPSIM_ROBOT'])\n"
        "    for _ in bot.loop(steps=50):\n        bot.motors.set_speeds(0.3, 0.3)\n"
        "    print('drove', os.environ['COOPSIM_ROBOT'])\n")
    proc = coopsim("run", EXERCISES / "01_wander.scenario", "--headless", "--port", "0",
                   "--no-controllers", "--controller", "mine.py", "--duration", "2",
                   "--controller-logs", tmp_path / "logs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "logs" / "robot1.log").read_text().strip() == "drove robot1"


class _Speed(Driver):
    label = "usecase_speed_test"

    def step(self, bot):
        bot.motors.set_speeds(0.3, 0.3)


def _team(helper_speed: float):
    class Helper(Driver):
        label = f"usecase_helper_{int(helper_speed * 100)}"

        def step(self, bot):
            bot.motors.set_speeds(helper_speed, helper_speed)

    for cls in (_Speed, Helper):
        if cls.label not in DRIVERS:
            DRIVERS.register(cls.label)(cls)
    team = dataclasses.replace(robot("t", -3, 0, type="team2"), drivers=(
        DriverSetting(_Speed.label, (), "leader"), DriverSetting(Helper.label, (), "helper")))
    return Stepper(Simulation(scenario([team])), mode="lockstep")


@pytest.mark.slow
def test_the_team2_support_force_is_the_springs_and_says_pull_or_push():
    """With rigid supports the force drifted to the drives' 150 N cap while both robots drove
    at the same speed; sprung, it is ~0 then, + when the leader pulls, - when it holds back."""
    for helper, sign in ((0.3, 0), (0.2, 1), (0.4, -1)):
        step = _team(helper)
        for _ in range(600):
            step.tick()
        force = step.snapshot.readings["support"][:, 1]
        if sign == 0:
            assert abs(force).max() < 1.0, force
        else:
            assert (sign * force > 5.0).all(), (helper, force)


@pytest.mark.slow
def test_the_first_step_stops_waiting_for_a_controller_that_has_died(tmp_path):
    """A controller that crashes before it attaches would hold lockstep's first step for the
    whole start wait; once it is seen dead, the run waits for the living ones only."""
    import time

    from coopsim.app.run import Run, RunOptions

    spec = dataclasses.replace(scenario([robot("a"), robot("b", 2, 0)]), path="")
    (tmp_path / "dies.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "waits.py").write_text("import time\ntime.sleep(60)\n")
    options = RunOptions(port=0, controller=(("a", str(tmp_path / "dies.py")),
                                             ("b", str(tmp_path / "waits.py"))))
    with Run(spec, options) as run:
        assert run.stepper.wait_for == 2
        deadline = time.monotonic() + 30
        while not run.controllers.exited() and time.monotonic() < deadline:
            time.sleep(0.05)
        run.forget_dead_controllers()
        assert run.controllers.exited() == {"a": 3}
        assert run.stepper.wait_for == 1
