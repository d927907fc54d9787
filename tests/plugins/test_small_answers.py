"""Small wrong answers a client author tripped on: ``set_rotors`` with 5 or 6
values is a wrong count (error 3, as every command's count is), a refused value prints with the
digits that tell it from the bound it broke (2200.0001, not 2200) wherever a range error shows
one, and a speed fraction too small for a finite move (5e-324) is refused with a sentence
instead of a move time of ``inf``."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from coopsim.model.commands import OUT_OF_RANGE, WRONG_ARITY
from coopsim.model.errors import ProtocolError
from coopsim.model.limits import SIZE, shown
from coopsim.model.specs import check_dt
from coopsim.plugins.modules.motors import Motors
from coopsim.plugins.modules.rotors import Rotors
from coopsim.plugins.robots.crazyflie import Crazyflie
from coopsim.sim.drivers import LocalRobot
from coopsim.sim.simulation import Simulation

from helpers import robot, scenario


def _rotors(name: str, data):
    params = {p.name: p.default for p in Rotors.params}
    params.update(Crazyflie.defaults.get("rotors", {}))
    command = next(c for c in Rotors.commands if c.name == name)
    return Rotors.command_row(command, data, params, None)


@pytest.mark.parametrize("count", [5, 6])
def test_set_rotors_with_five_or_six_values_is_a_wrong_count(count):
    with pytest.raises(ProtocolError) as err:
        _rotors("set_rotors", (100.0,) * count)
    assert err.value.code == WRONG_ARITY == 3, err.value
    assert f"got {count} values" in str(err.value)


def test_a_value_just_past_its_bound_prints_with_the_digits_that_show_it():
    with pytest.raises(ProtocolError) as err:
        _rotors("set_rotors", (100.0, 100.0, 100.0, 2500.0001))
    assert err.value.code == OUT_OF_RANGE
    assert "must be within [0, 2500] rad/s, got 2500.0001" in str(err.value)
    with pytest.raises(ProtocolError, match=r"got 100\.00000001, 0"):
        Motors.command_row(next(c for c in Motors.commands if c.name == "set_power"),
                           (100.00000001, 0.0), {"max_speed": 0.5}, None)
    assert SIZE.problem(1000.0001) == "must be between 0.001 and 1000 m, got 1000.0001 m"
    assert check_dt(0.1000001).endswith("not 0.1000001")


def test_the_shared_formatter_keeps_short_numbers_short():
    assert [shown(v, 0.0, 2200.0) for v in (2200.0001, 2200.5, 2300.0, -1e-300, 5e-324)] == [
        "2200.0001", "2200.5", "2300", "-1e-300", "4.94066e-324"]
    assert shown(1.0 + 2 ** -52, 1.0) == "1.0000000000000002"  # 17 digits at most
    assert shown(400 * math.pi / 180, -2 * math.pi, 2 * math.pi) == "6.98132"
    assert [shown(v) for v in (math.nan, math.inf, -math.inf)] == ["nan", "inf", "-inf"]


def _arm() -> tuple[Simulation, LocalRobot]:
    pytest.importorskip("mujoco")
    s = scenario([robot("a1", 0.0, 0.0, type="irb120")], dt=0.002)
    sim = Simulation(replace(s, settings=replace(s.settings, engine="mujoco")))
    return sim, LocalRobot(sim, "a1")


def test_a_speed_fraction_too_small_for_a_finite_move_is_refused_with_a_sentence():
    sim, bot = _arm()
    for tiny in (5e-324, 1e-300, 0.000999):
        with pytest.raises(ProtocolError) as err:
            bot.tool.move_to(0.35, 0.1, 0.15, math.pi, 0.0, 0.0, tiny)
        assert err.value.code == OUT_OF_RANGE, err.value
        assert "speed fraction must be within [0.001, 1]" in str(err.value)
        assert f"got {shown(tiny)}" in str(err.value) and "inf" not in str(err.value)
        with pytest.raises(ProtocolError) as err:
            bot.joints.set_positions(0.1, 0.0, 0.0, 0.0, 0.5, 0.0, tiny)
        assert err.value.code == OUT_OF_RANGE and "[0.001, 1]" in str(err.value)
    seconds = float(bot.tool.move_to(0.35, 0.1, 0.15, math.pi, 0.0, 0.0, 0.001).split()[0])
    assert math.isfinite(seconds) and seconds > 0


def test_a_sweep_setting_out_of_range_prints_its_digits():
    from coopsim.formats import sweep
    from coopsim.model.errors import FileFormatError

    with pytest.raises(FileFormatError, match=r"setting dt = 0\.1000001 is out of range"):
        sweep._setting("dt", 0.1000001, "grid.sweep", 3)
