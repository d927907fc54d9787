"""The Crazyflie's airframe is the published one (docs/robots.md, "Quadrotors in 3D"): its thrust
coefficient is the least-squares fit of Bitcraze's measured (rpm, thrust) table, its fastest
propeller speed that table's fastest row, its torque-to-thrust ratio and inertia Förster's, its
motor lag Bitcraze's step read as a first-order lag, its mass the data sheet's; the ``rotors``
module's defaults are that airframe; and it is plausible beside the peers' published sets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.plugins.modules.rotors import Rotors
from coopsim.plugins.robots.crazyflie import Crazyflie

G = 9.81  # m/s^2
# Bitcraze, crazyflie-firmware docs, "PWM to thrust", the 2015 thrust-measurement table: the
# four rotors' thrust (g) and the average propeller speed (rpm), PWM 0 to 93.75 % in 16 steps
THRUST_G = (0.0, 1.6, 4.8, 7.9, 10.9, 13.9, 17.3, 21.0, 24.4, 28.6, 32.8, 37.3, 41.7, 46.0,
            51.9, 57.9)
RPM = (0, 4485, 7570, 9374, 10885, 12277, 13522, 14691, 15924, 17174, 18179, 19397, 20539,
       21692, 22598, 23882)


def airframe() -> dict:
    return dict(Crazyflie.defaults["rotors"])


def table() -> tuple[np.ndarray, np.ndarray]:
    """(propeller speed rad/s, one rotor's thrust N) of the table's rows."""
    w = np.array(RPM, dtype=float) * 2.0 * math.pi / 60.0
    return w, np.array(THRUST_G) / 4.0 * 1e-3 * G


def test_kf_is_the_least_squares_fit_of_bitcrazes_measured_table():
    w, thrust = table()
    fit = float((thrust * w ** 2).sum() / (w ** 4).sum())
    assert airframe()["kf"] == pytest.approx(fit, rel=0.005)
    residual = np.sqrt(np.mean((thrust - airframe()["kf"] * w ** 2) ** 2))
    assert residual < 0.25e-3 * G  # under a quarter gram a rotor over the whole table


def test_the_fastest_speed_is_the_tables_fastest_row_and_its_thrust_the_measured_one():
    w, thrust = table()
    a = airframe()
    assert a["max_speed"] == pytest.approx(w[-1], rel=0.001)
    assert a["kf"] * a["max_speed"] ** 2 == pytest.approx(thrust[-1], rel=0.03)


def test_hover_falls_between_the_measured_rows_that_bracket_the_weight():
    a = airframe()
    hover = math.sqrt(a["mass"] * G / 4.0 / a["kf"]) * 60.0 / (2.0 * math.pi)  # rpm
    grams = a["mass"] * 1e3
    below = max(i for i, g in enumerate(THRUST_G) if g <= grams)
    assert RPM[below] <= hover <= RPM[below + 1]


def test_the_other_numbers_are_the_cited_ones():
    a = airframe()
    assert a["km"] / a["kf"] == pytest.approx(0.005964552)  # Förster's torque-to-thrust ratio
    assert (a["ixx"], a["iyy"], a["izz"]) == (1.657171e-5, 1.6655602e-5, 2.9261652e-5)
    assert a["mass"] == Crazyflie.MASS == 0.027  # the data sheet's take-off weight
    assert a["arm"] == 0.046  # half the 92 mm motor to motor
    # Bitcraze's step: 0 to 25,000 rpm in about 180 ms, read as 2.5 time constants
    assert a["tau"] == pytest.approx(0.180 / 2.5)


def test_the_rotors_modules_defaults_are_the_crazyflies():
    defaults = {spec.name: spec.default for spec in Rotors.params}
    for name, value in airframe().items():
        assert defaults[name] == pytest.approx(value, rel=1e-3), name


def test_thrust_to_weight_and_inertia_sit_among_the_published_sets():
    a = airframe()
    ratio = 4.0 * a["kf"] * a["max_speed"] ** 2 / (a["mass"] * G)
    # crazyflow 0.4.0's cf2x_L250 1.49 .. RotorPy 3.0.0's crazyflie 1.95; 27 g against 30-33 g
    assert 1.9 < ratio < 2.2
    assert a["izz"] / a["ixx"] == pytest.approx(1.77, abs=0.05)  # crazyflow 1.77, RotorPy 2.02
