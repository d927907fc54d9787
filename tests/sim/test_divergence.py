"""One robot's divergence never ends the run, in whole simulations on the
real engines: two Crazyflies, one hovering under the ``flight`` driver, the other sent one
``set_rotors`` with a single propeller at full speed on the stiffest airframe the checks
accept (thrust-to-weight 19.5): it tumbles past 1,000 rad/s, is put back at rest where its step
began, its commands zeroed, and marked; the hovering one flies on bit for bit as without it;
the run is the same bit for bit twice; a monitor grades it; the summary names it. On pymunk
(which does not check itself) the simulation puts a robot beyond the bounds back at its last
snapshot pose."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coopsim.app.run import format_summary
from coopsim.formats.files import load
from coopsim.plugins.modules.rotors import Rotors
from coopsim.plugins.robots.crazyflie import Crazyflie
from coopsim.sim.pacing import Stats
from coopsim.sim.simulation import Simulation

from helpers import robot, scenario

DT = 0.005
CF = Crazyflie.defaults["rotors"]
WEIGHT = Crazyflie.MASS * 9.81  # N


def kf_for(ratio: float, top: float = CF["max_speed"]) -> float:
    """The kf (N s^2) giving the Crazyflie thrust-to-weight ``ratio`` at ``top`` rad/s."""
    return ratio * WEIGHT / (4.0 * top * top)


STIFF_KF = kf_for(19.5)  # the stiffest airframe within the bound of 20
SET_ROTORS = next(c for c in Rotors.commands if c.name == "set_rotors")


def two_flyers(tmp_path: Path, engine: str, monitors: bool = False) -> Path:
    """cf1 (no controller) at 3 m, cf2 hovering at 1 m under the flight driver, 2 m apart."""
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    path = tmp_path / f"two_{engine}.scenario"
    lines = ["[WORLD]", "file w.world", "[SETTINGS]", f"engine {engine}", f"dt {DT}",
             "mode lockstep", "seed 3", "[ROBOT_1]", "type crazyflie", "name cf1",
             "position -1 0 3", "[ROBOT_2]", "type crazyflie", "name cf2", "position 1 0 1",
             "driver flight shape hover height 1"]
    if monitors:
        lines += ["[MONITORS]", "metric lost python coopsim.sim.health:diverged cf1",
                  "metric others python coopsim.sim.health:diverged cf2"]
    path.write_text("\n".join(lines) + "\n")
    return path


def fly(path: Path, seconds: float, attack: bool):
    """Step the phases ``seconds``; with ``attack``, cf1 gets the stiff airframe and one
    propeller at full speed at step 0. Returns (the simulation, (steps, 2, 13) states)."""
    sim = Simulation(load(str(path)))
    taken = {}
    if attack:
        sim.set_param("cf1", "rotors", "kf", STIFF_KF)
        row = Rotors.command_row(SET_ROTORS, (CF["max_speed"], 0.0, 0.0, 0.0),
                                 sim.world.robot("cf1").modules["rotors"], None)
        taken = {("cf1", "rotors"): row}
    states = []
    for _ in range(round(seconds / DT)):
        sim.command(taken)
        taken = {}
        sim.actuate()
        sim.physics()
        states.append(np.hstack([sim.sense().pose3d, sim.snapshot.twist3d]))
        sim.apply_rules()
    return sim, np.array(states)


@pytest.mark.parametrize("engine", ["mujoco", "aerial"])
def test_a_tumbling_crazyflie_is_contained_and_the_other_flies_on(tmp_path, engine):
    if engine == "mujoco":
        pytest.importorskip("mujoco")
    path = two_flyers(tmp_path, engine)
    sim, states = fly(path, 1.5, attack=True)
    _, alone = fly(path, 1.5, attack=False)
    mark = sim.snapshot.extra["diverged"]["cf1"]
    assert set(sim.snapshot.extra["diverged"]) == {"cf1"}
    assert mark.count >= 1 and "its angular rate reached" in mark.why, mark
    assert "beyond the bound of 1000 rad/s" in mark.why
    k = mark.step - 1  # put back at rest where its step began, its propellers stopped
    assert states[k, 0, 7:].tolist() == [0.0] * 6
    assert states[k, 0, :7].tolist() == states[k - 1, 0, :7].tolist()
    assert (sim.snapshot.commands["rotors"][0] == 0).all()
    assert np.abs(states[:, 0, 10:]).max() <= 1000.0  # never seen beyond the bound
    # the other flew on as if cf1 had never been touched
    assert states[:, 1].tobytes() == alone[:, 1].tobytes()
    assert abs(states[-1, 1, 2] - 1.0) < 0.05


def test_the_containment_is_the_same_bit_for_bit_and_a_monitor_grades_it(tmp_path):
    path = two_flyers(tmp_path, "aerial", monitors=True)
    (a, states_a), (b, states_b) = fly(path, 1.0, True), fly(path, 1.0, True)
    assert states_a.tobytes() == states_b.tobytes()
    assert a.snapshot.extra["diverged"] == b.snapshot.extra["diverged"]
    metrics = a.snapshot.rules["monitors"]["metrics"]
    assert metrics["lost"] == a.snapshot.extra["diverged"]["cf1"].count >= 1
    assert metrics["others"] == 0.0


def test_the_summary_names_the_contained_robot(tmp_path):
    sim, _ = fly(two_flyers(tmp_path, "aerial"), 1.0, attack=True)
    stats = Stats(sim.step, sim.time, 1.0, sim.time, 0, "lockstep", 0.0, False, (), "", (),
                  0.0, 0, 0.0)
    text = format_summary(stats, sim.scenario, 2, diverged=sim.snapshot.extra["diverged"])
    line = next(x for x in text.splitlines() if x.startswith("diverged"))
    mark = sim.snapshot.extra["diverged"]["cf1"]
    assert f"1 robot put back: cf1 ({mark.count} step" in line, line
    assert f"first at t = {mark.first:.3f} s; its angular rate reached" in line, line
    assert "diverged" not in format_summary(stats, sim.scenario, 2)


def test_pymunk_puts_a_robot_beyond_the_bounds_back_at_its_last_pose(caplog):
    sim = Simulation(scenario(robots=[robot("r1", -2.0, 0.0), robot("r2", 2.0, 0.0)]))
    sim.commands["motors"][1] = (0.2, 0.2)
    for _ in range(5):
        sim.command({}), sim.actuate(), sim.physics(), sim.sense()
    last = sim.snapshot.poses[0].copy()
    shot = sim.world.engine.robot_state()[0].copy()
    shot[3] = 5000.0  # m/s: what no motor gives
    sim.world.engine.reset_rows(np.array([0]), shot[None])
    sim.command({}), sim.actuate(), sim.physics(), sim.sense()
    mark = sim.snapshot.extra["diverged"]["r1"]
    assert "its speed reached" in mark.why and "beyond the bound of 1000 m/s" in mark.why
    assert sim.snapshot.poses[0].tolist() == last.tolist()
    assert sim.snapshot.velocities[0].tolist() == [0.0, 0.0, 0.0]
    assert "r2" not in sim.snapshot.extra["diverged"]
    assert any("robot r1 diverged (1 time so far)" in r.getMessage() for r in caplog.records)


def test_an_event_refused_with_the_values_a_client_set_is_left_out_and_the_run_goes_on(
        tmp_path, caplog):
    path = two_flyers(tmp_path, "aerial")
    top = CF["max_speed"] * 1.1
    kf = kf_for(21.0, top)  # 21 / 1.21 = 17.4 at the type's max_speed: the file passes
    path.write_text(path.read_text() + f"[EVENT_1]\nat 0.05\nparam cf1.rotors.kf {kf!r}\n")
    sim = Simulation(load(str(path)))
    sim.set_param("cf1", "rotors", "max_speed", top)  # fine with its own kf, not the event's
    for _ in range(20):
        sim.command({}), sim.actuate(), sim.physics(), sim.sense(), sim.apply_rules()
    assert sim.world.robot("cf1").modules["rotors"]["kf"] == CF["kf"]
    said = [r.getMessage() for r in caplog.records if "not set" in r.getMessage()]
    assert said and f"[EVENT_1] at 0.05 s: cf1.rotors.kf {kf} not set" in said[0], said
    assert "thrust-to-weight 4 kf max_speed^2 / (m g) = 21 " in said[0]
