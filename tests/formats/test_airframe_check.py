"""``coopsim check`` refuses implausible airframes: a ``rotors`` set whose
thrust-to-weight is outside [1, 20] or whose moments of inertia break the triangle inequality
or lie more than 100:1 apart, at the ``param`` line completing it or the timed event setting
it (file:line, exit 2, the bound and the value in the sentence, one line, no traceback); the
published Crazyflie sets (thrust-to-weight 1.49 to 2.11) and the bundled airframes pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.plugins.robots.crazyflie import Crazyflie, Quadrotor

ROOT = Path(__file__).resolve().parents[2]
CF = Crazyflie.defaults["rotors"]
WEIGHT = Crazyflie.MASS * 9.81  # N
WEAK = (0.85 * WEIGHT / (4.0 * CF["kf"])) ** 0.5  # rad/s: thrust-to-weight 0.85


def ratio(kf: float = CF["kf"], top: float = CF["max_speed"]) -> str:
    """The Crazyflie's thrust-to-weight as the refusal prints it."""
    return f"{4.0 * kf * top * top / WEIGHT:.6g}"


HEAD = ("[WORLD]\nfile w.world\n[SETTINGS]\nengine aerial\nduration 10\n"
        "[ROBOT_1]\ntype crazyflie\nname cf1\nposition 0 0 1\n")


def check(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    path = tmp_path / "a.scenario"
    path.write_text(text)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "coopsim", "check", str(path)],
                          capture_output=True, text=True, timeout=300, env=env)


BAD = [
    ("the issue's kf", "param rotors.kf 0.01\n", 10,
     f"thrust-to-weight 4 kf max_speed^2 / (m g) = {ratio(0.01)} (kf 0.01 N s^2, max_speed "
     f"{CF['max_speed']:.6g} rad/s, mass {Crazyflie.MASS:.6g} kg) is outside [1, 20]"),
    ("the issue's max_speed", "param rotors.max_speed 1e5\n", 10, f"= {ratio(top=1e5)} "),
    ("too weak to hover", f"param rotors.max_speed {WEAK!r}\n", 10,
     f"= 0.85 (kf {CF['kf']:.6g} N s^2, max_speed {WEAK:.6g} rad/s, mass "
     f"{Crazyflie.MASS:.6g} kg) is outside [1, 20]: no airframe flies like that (below 1 it "
     "cannot hover)"),
    ("completed at the second line", "param rotors.kf 1e-6\ncolor 9 9 9\n"
     "param rotors.max_speed 1500\n", 12, f"= {ratio(1e-6, 1500.0)} "),
    ("no rigid body", "param rotors.ixx 1e-3\n", 10,
     "inertia ixx = 0.001 kg m^2 is larger than the other two together "
     f"({CF['iyy'] + CF['izz']:.6g} kg m^2)"),
    ("too far apart", "param rotors.ixx 1e-3\nparam rotors.iyy 1e-3\nparam rotors.izz 9e-6\n",
     12, "the largest moment of inertia is 111.111 times the smallest (ixx, iyy, izz = "
     "0.001, 0.001, 9e-06 kg m^2), beyond the bound of 100"),
    ("a timed event", "[EVENT_1]\nat 2\nparam cf1.rotors.kf 0.01\n", 12, f"= {ratio(0.01)} "),
]


@pytest.mark.slow
@pytest.mark.parametrize("case, lines, line, said", BAD, ids=[c[0] for c in BAD])
def test_an_implausible_airframe_is_refused_at_its_line(tmp_path, case, lines, line, said):
    result = check(tmp_path, HEAD + lines)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(f"{tmp_path / 'a.scenario'}:{line}: "), result.stderr
    assert said in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


@pytest.mark.slow
def test_plausible_airframes_pass(tmp_path):
    # the bounds themselves, two airframes that need both lines, and a flat frame (izz = ixx
    # + iyy exactly)
    weak = 1.14 * WEIGHT / (4.0 * CF["max_speed"] ** 2)  # N s^2: weak, but it hovers
    lines = (f"param rotors.kf {weak!r}\n"
             "param rotors.ixx 1e-5\nparam rotors.iyy 1e-5\nparam rotors.izz 2e-5\n"
             "[ROBOT_2]\ntype crazyflie\nname cf2\nposition 1 0 1\n"
             "param rotors.kf 1e-6\nparam rotors.max_speed 800\n")
    result = check(tmp_path, HEAD + lines)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("ratio", [1.49, 1.95, 2.11])
def test_the_published_crazyflie_range_passes(ratio):
    from coopsim.plugins.modules.rotors import airframe_problem

    values = dict(Crazyflie.defaults["rotors"])
    values["kf"] = ratio * values["mass"] * 9.81 / (4 * values["max_speed"] ** 2)
    assert airframe_problem(values) == ""
    assert airframe_problem(dict(Quadrotor.defaults["rotors"])) == ""  # 2.7
    assert airframe_problem(dict(Crazyflie.defaults["rotors"])) == ""
