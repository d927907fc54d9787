"""Crazyflies flying on the real MuJoCo engine (``engine mujoco``) under the ``flight`` driver:
hover, horizontal and vertical eights (their mean tracking error printed), the imu at rest, bad
rotor commands (error 4), the same run bit for bit, and a 2D engine's refusal (file:line, exit
2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.commands import OUT_OF_RANGE  # noqa: E402
from coopsim.model.errors import ProtocolError  # noqa: E402
from coopsim.sim.drivers import LocalRobot  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DT = 0.005  # s: 200 Hz, the rate loop's too


def scenario(tmp_path, driver: str = "", z: float = 1.0, engine: str = "mujoco",
             dt: float = DT) -> Path:
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    path = tmp_path / "cf.scenario"
    lines = ["[WORLD]", "file w.world", "[SETTINGS]", f"engine {engine}", f"dt {dt}",
             "mode lockstep", "seed 3", "[ROBOT_1]", "type crazyflie", "name cf1",
             f"position 0 0 {z}"]
    path.write_text("\n".join(lines + ([f"driver flight {driver}"] if driver else [])) + "\n")
    return path


def fly(path: Path, seconds: float):
    """Step the scenario ``seconds`` in lockstep: (positions (k, 3) m, references (k, 3) m)."""
    stepper = Stepper(Simulation(load(str(path))), mode="lockstep")
    where, refs = [], []
    for _ in range(int(round(seconds / DT))):
        snap = stepper.tick()
        where.append(snap.pose3d[0, :3].copy())
        refs.append(snap.commands["rotors"][0, 5:8].copy())
    return np.array(where), np.array(refs), stepper


def test_a_crazyflie_hovers_at_1_m_within_a_few_cm_for_4_s(tmp_path):
    # released at 1 m with its propellers still: it sags while they spin up to hover speed
    # (about 1730 rad/s through the 0.072 s lag: some 15 cm), climbs back past 1 m by less than
    # 4 cm, then holds
    where, refs, _ = fly(scenario(tmp_path, "shape hover height 1"), 6.0)
    assert where[:int(1.0 / DT), 2].min() > 0.8
    assert np.abs(where[int(1.0 / DT):, 2] - 1.0).max() < 0.04
    error = np.linalg.norm(where[int(2.0 / DT):] - [0.0, 0.0, 1.0], axis=1)
    print(f"hover: mean {error.mean() * 1000:.1f} mm, max {error.max() * 1000:.1f} mm")
    assert error.max() < 0.03
    assert refs[-1].tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("plane", ["horizontal", "vertical"])
def test_a_crazyflie_tracks_an_eight(tmp_path, plane):
    driver = f"shape eight plane {plane} size 0.8 period 6 takeoff 1 yaw_rate 0.3"
    where, refs, _ = fly(scenario(tmp_path, driver), 7.0)
    flying = slice(int(1.0 / DT), None)  # the lap after the take-off hold
    error = np.linalg.norm(where[flying] - refs[flying], axis=1)
    span = np.ptp(where[flying], axis=0)
    print(f"{plane} eight: mean error {error.mean() * 1000:.1f} mm, max {error.max() * 1000:.1f}"
          f" mm, span {span.round(2).tolist()} m")
    assert error.mean() < 0.08 and error.max() < 0.3  # the lap starts at full speed
    wide = 2 if plane == "vertical" else 1
    assert span[0] > 1.4 and span[wide] > 0.7  # it flew the shape, not a point


def test_the_eight_starts_at_the_sim_time_its_start_parameter_names(tmp_path):
    """``start`` fixes when the take-off hold begins (a study's known time), whatever the
    first reading's: here the hold runs from 0.5 s, not from 0 s, and lasts ``takeoff``."""
    _, refs, _ = fly(scenario(tmp_path, "shape eight size 0.5 period 4 takeoff 0.3 start 0.5"),
                     1.0)
    moved = np.flatnonzero(np.any(refs != refs[0], axis=1))
    # refs[k]: the command of tick k + 1, computed from the snapshot at sim time k DT
    assert refs[0] == pytest.approx([0.0, 0.0, 1.0], abs=1e-3)
    assert moved[0] * DT == pytest.approx(0.8, abs=1.5 * DT)  # 0.5 s + 0.3 s of hold


def test_the_imu_of_a_crazyflie_at_rest_on_the_floor_reads_gravity_up(tmp_path):
    stepper = Stepper(Simulation(load(str(scenario(tmp_path, z=0.0)))), mode="lockstep")
    reads = []
    for _ in range(200):
        reads.append(stepper.tick().reading("cf1", "imu"))
    reads = np.array(reads[100:])  # settled on the floor
    noise = 1.7e-3 / np.sqrt(DT)  # the default density over root h: 0.024 m/s^2
    assert reads[:, :3].mean(axis=0) == pytest.approx([0.0, 0.0, 9.81], abs=4 * noise)
    assert reads[:, 2].std() < 3 * noise
    assert np.abs(reads[:, 3:].mean(axis=0)).max() < 0.01


def test_bad_rotor_commands_get_error_4(tmp_path):
    sim = Simulation(load(str(scenario(tmp_path))))
    bot = LocalRobot(sim, "cf1")
    for args, words in (((100.0, 100.0, 100.0, 2600.0), "within [0, 2500] rad/s, got 2600"),
                        ((100.0, -5.0, 100.0, 100.0), "got -5"),
                        ((100.0, float("nan"), 100.0, 100.0), "finite")):
        with pytest.raises(ProtocolError) as err:
            bot.rotors.set_rotors(*args)
        assert err.value.code == OUT_OF_RANGE and words in str(err.value)
    with pytest.raises(ProtocolError) as err:
        bot.rotors.set_thrust_rates(5.0, 0.0, 0.0, 0.0)
    assert err.value.code == OUT_OF_RANGE and "thrust must be within [0, 0.55" in str(err.value)


def test_the_same_flight_twice_is_the_same_bits(tmp_path):
    path = scenario(tmp_path, "shape eight size 0.5 period 4 takeoff 0.2")
    runs = [fly(path, 1.0)[2].snapshot for _ in range(2)]
    assert runs[0].pose3d.tobytes() == runs[1].pose3d.tobytes()
    assert runs[0].readings["imu"].tobytes() == runs[1].readings["imu"].tobytes()


@pytest.mark.slow
def test_a_crazyflie_on_the_pymunk_engine_is_refused_at_its_line(tmp_path):
    path = scenario(tmp_path, "shape hover", engine="pymunk", dt=0.02)
    code = ("from coopsim.app.cli import main\n"
            f"main(['run', {str(path)!r}, '--headless', '--port', '0', '--no-controllers', "
            "'--duration', '1'])")
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, cwd=ROOT, env=env)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [f"coopsim: {path}:8: robot cf1 (crazyflie): the pymunk engine is 2D and "
                     "this robot flies in 3D: use an engine with the flight feature (engine "
                     "mujoco)"]


def test_the_layout_offers_only_the_types_its_engine_builds():
    """/sim state's ``types`` (what the viewer's robot manager offers for insert_robot): a 2D
    engine leaves the flying types out, a flight engine keeps them."""
    from coopsim.model.plugins import ENGINES
    from coopsim.sim.describe import buildable_types

    flat = buildable_types(ENGINES.get("pymunk"))
    assert "single" in flat and "crazyflie" not in flat and "quadrotor" not in flat
    assert {"crazyflie", "quadrotor"} <= set(buildable_types(ENGINES.get("mujoco")))
