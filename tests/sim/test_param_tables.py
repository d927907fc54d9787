"""The parameter table (coopsim.sim.tables.ParamTable) after a reset: a module no robot
carries gets its empty rows and values made once and shared (a reset lays out every registered
module again); a run where no parameter was set and nothing was inserted or removed
hands its whole table to the next (the same scenario lays out the same one); otherwise a carried
module's arrays are made anew and hold the scenario's values."""

from __future__ import annotations

import numpy as np

from coopsim.sim.simulation import Simulation

from helpers import robot, scenario


def test_a_reset_shares_the_tables_of_modules_nobody_carries_and_keeps_the_values():
    sim = Simulation(scenario([robot("a"), robot("b", 2, 0)]))
    before = sim.params
    sim.reset()
    after = sim.params
    carried = set(sim.world.robots[0].modules)
    nobody = [label for label, _ in after.modules if label not in carried]
    assert nobody and carried
    for label in nobody:
        assert after.rows[label] is before.rows[label]  # made once
        assert after.values[label] is before.values[label]
        assert after.rows[label].shape == (0,) and after.rows[label].dtype == np.int64
        assert after.values[label].zero == frozenset(after.values[label])
        assert all(v.shape == (0,) and v.dtype == np.float64
                   for v in after.values[label].values())
    for label in carried:
        assert after.rows[label] is before.rows[label]  # an untouched run: the table kept
        np.testing.assert_array_equal(after.rows[label], [0, 1])
    assert after is before
    kept = {label: {k: v.copy() for k, v in after.values[label].items()} for label in carried}
    sim.set_param("b", "motors", "max_speed", 0.25)
    sim.reset()
    again = sim.params
    assert again is not after  # a parameter was set: gathered again, the scenario's values
    for label in carried:
        np.testing.assert_array_equal(again.rows[label], [0, 1])
        for name, values in again.values[label].items():
            np.testing.assert_array_equal(values, kept[label][name])
