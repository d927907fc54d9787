"""Sensor update rates: readings held between updates with the step and time they were taken,
robots staggered, and rates above 1/dt refused in files (file:line) and over the network."""

import subprocess
import sys

import numpy as np
import pytest

from coopsim.model.params import ParameterError
from coopsim.sim.rates import period
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _stepper(robots, dt=0.02, objects=()):
    return Stepper(Simulation(scenario(robots, objects, dt=dt)), mode="lockstep")


def test_period_in_steps():
    assert period(np.array([0.0, 5.0, 10.0, 50.0, 7.0]), 0.02).tolist() == [1, 10, 5, 1, 7]


def test_a_held_reading_changes_only_at_its_rate_and_carries_its_time():
    # r1 drives towards a wall with a 10 Hz sonar at dt 0.02: a new reading every 5 steps
    st = _stepper([robot(params=[("sonar", "rate", 10.0)])],
                  objects=[box("W", 1.5, 0, size=(1.0, 4.0))])
    seen, taken = [], []
    for _ in range(20):
        st.slots.put("r1", "motors", (0.5, 0.5), attach=False)
        st.tick()
        snap = st.snapshot
        seen.append(snap.reading("r1", "sonar")[5])
        taken.append(int(snap.extra["taken"].steps["sonar"][0]))
        assert snap.extra["taken"].times["sonar"][0] == pytest.approx(taken[-1] * 0.02)
    changes = [i for i in range(1, 20) if seen[i] != seen[i - 1]]
    assert len(changes) == 4 and all(b - a == 5 for a, b in zip(changes, changes[1:]))
    assert all(taken[i] == i + 1 for i in changes)  # taken at the step it changed
    assert all(taken[i] <= i + 1 < taken[i] + 5 for i in range(20))


def test_staggered_robots_fire_a_share_each_step():
    # 20 robots with 5 Hz lidars at dt 0.02 (every 10 steps): 2 of them scan each step
    bots = [robot(f"t{i}", -4 + 0.4 * i, 0.0, type="turtlebot3",
                  params=[("lidar", "rate", 5.0), ("lidar", "beams", 36)]) for i in range(20)]
    st = _stepper(bots)
    last = None
    for _ in range(30):
        st.tick()
        steps = st.snapshot.extra["taken"].steps["lidar"].copy()
        if last is not None:
            assert (steps != last).sum() == 2
        last = steps
    scans = st.snapshot.extra["lidar"]
    assert all(len(scans.of(f"t{i}")) == 36 for i in range(20))  # every scan kept while held


def test_rate_zero_changes_nothing():
    """Without rates the run is the one before rates existed: the same readings, bit for bit,
    and no new board entry."""
    a = _stepper([robot(params=[("sonar", "noise", 0.01)])], objects=[box("W", 1.5, 0)])
    b = _stepper([robot(params=[("sonar", "noise", 0.01), ("sonar", "rate", 0.0)])],
                 objects=[box("W", 1.5, 0)])
    for _ in range(5):
        a.tick()
        b.tick()
        assert np.array_equal(a.snapshot.readings["sonar"], b.snapshot.readings["sonar"])
    assert "taken" not in a.snapshot.extra


def test_a_rate_above_one_over_dt_is_refused_and_nothing_changes():
    st = _stepper([robot()], dt=0.02)
    with pytest.raises(ParameterError, match=r"out of range \[0, 50\]"):
        st.sim.set_param("r1", "sonar", "rate", 60.0)
    assert st.sim.world.robot("r1").modules["sonar"]["rate"] == 0.0
    assert st.sim.set_param("r1", "sonar", "rate", 50.0) == 50.0


@pytest.mark.slow
def test_a_rate_above_one_over_dt_in_a_file_is_reported_at_its_line(tmp_path):
    path = tmp_path / "fast.scenario"
    path.write_text(f"[WORLD] file {ROOT / 'worlds' / 'empty.world'}\n"
                    "[SETTINGS]\ndt 0.02\n"
                    "[ROBOT_1]\ntype single\nname r1\nposition 0 0 0\n"
                    "param sonar.rate 100\n")
    done = subprocess.run([sys.executable, "-m", "coopsim", "check", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 2, done
    assert f"{path}:8: parameter rate = 100 is out of range [0, 50]" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_the_robots_due_are_the_staggered_ones_after_a_robot_is_inserted():
    # 12 sonars at 10 Hz, dt 0.02 (every 5 steps): robot i of the carriers measures at the
    # steps where (step + i) % 5 == 0, and a robot inserted mid-run measures at once, then
    # joins the stagger at its place in the robot order
    from coopsim.model.specs import RobotSpec, ParamSetting
    bots = [robot(f"s{i}", -3 + 0.5 * i, 0.0, params=[("sonar", "rate", 10.0)])
            for i in range(12)]
    st = _stepper(bots)
    for _ in range(3):
        st.tick()
    st.sim.world.add_robot(RobotSpec("single", "new", (0.0, 2.0, 0.0), 0.0,
                                     params=(ParamSetting("sonar", "rate", 10.0),)))
    st.sim.relayout()
    for n in range(12):
        st.tick()
        snap = st.snapshot
        taken = snap.extra["taken"].steps["sonar"]
        fired = set(np.nonzero(taken == snap.step)[0].tolist())
        expect = {i for i in range(len(taken)) if (snap.step + i) % 5 == 0}
        if n == 0:
            expect.add(snap.robot_index("new"))
        assert fired == expect, (snap.step, fired, expect)
