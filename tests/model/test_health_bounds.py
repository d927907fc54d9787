"""coopsim.model.health's first test of planar rows (healthy_planar): any non-finite coordinate
or a bound broken fails it, on the row-by-row path of a few rows and the numpy path of many."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.model import health

HALF = (5.0, 4.0)


@pytest.mark.parametrize("n", [1, 3, 100])
@pytest.mark.parametrize("col", range(6))
def test_a_nan_anywhere_fails(n, col):
    state = np.zeros((n, 6))
    assert health.healthy_planar(state, HALF)
    state[n // 2, col] = np.nan
    assert not health.healthy_planar(state, HALF)  # a NaN y passed a max() before


@pytest.mark.parametrize("n", [1, 3, 100])
def test_the_bounds_are_the_same_on_both_paths(n):
    rng = np.random.default_rng(3)
    for _ in range(200):
        state = rng.normal(0.0, 1.0, (n, 6)) * rng.choice([1.0, 10.0, 1e3, 1e5], (n, 6))
        rows = state.tolist()
        expected = all(max(abs(r[3]), abs(r[4]), abs(r[5])) <= min(health.MAX_SPEED,
                                                                   health.MAX_RATE)
                       and abs(r[0]) - HALF[0] <= health.BEYOND
                       and abs(r[1]) - HALF[1] <= health.BEYOND for r in rows)
        assert health.healthy_planar(state, HALF) == expected
