"""The compiled kernels against the Python code they replace: line of sight, smoothing, bounded
searches, and the nearest open cell of a formation slot."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.swarm import astar, kernels, search, smooth
from coopsim.swarm.astar import compiled_search
from coopsim.swarm.grid import Grid

pytestmark = pytest.mark.skipif(not kernels.COMPILED, reason="numba is not installed")


def random_grid(seed: int, size: int = 30, density: float = 0.2) -> Grid:
    rng = np.random.default_rng(seed)
    return Grid(rng.random((size, size)) < density, 0.1, (-1.5, -1.5))


@pytest.mark.parametrize("seed", range(4))
def test_segment_clear_equals_the_vectorised_supercover(seed):
    grid = random_grid(seed)
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1.7, 1.7, (400, 2))
    b = rng.uniform(-1.7, 1.7, (400, 2))
    b[:50] = a[:50] + rng.integers(-5, 6, (50, 2)) * 0.1  # along cell borders and diagonals
    a[50:100] = np.round(a[50:100] / 0.05) * 0.05  # on borders and centres
    b[50:100] = np.round(b[50:100] / 0.05) * 0.05
    want = grid.segments_free(a, b)
    work = grid.workspace()
    got = [kernels.segment_clear(work.padded, -1.5, -1.5, 0.1, *p, *q) for p, q in zip(a, b)]
    assert list(want) == got
    assert 0 < want.sum() < len(want)  # both answers occur


@pytest.mark.parametrize("seed", range(4))
def test_compiled_smoothing_keeps_the_python_points(seed, monkeypatch):
    grid = Grid(np.zeros((40, 40), dtype=bool), 0.1, (0.0, 0.0))
    grid.blocked[10:30, 18:21] = True
    grid = Grid(grid.blocked, 0.1, (0.0, 0.0))
    rng = np.random.default_rng(seed)
    start, goal = rng.uniform(0.2, 1.5, 2), rng.uniform(2.5, 3.8, 2)
    path = astar.find_path(grid, start, goal)
    fast = smooth(grid, path.points)
    monkeypatch.setattr(kernels, "COMPILED", False)
    slow = smooth(grid, path.points)
    assert np.array_equal(fast, slow)


def test_a_bounded_compiled_search_gives_up_like_the_python_one():
    grid = Grid(np.zeros((60, 60), dtype=bool), 0.1, (0.0, 0.0))
    grid.blocked[5:55, 30] = True
    grid = Grid(grid.blocked, 0.1, (0.0, 0.0))
    s, g = grid.flat(30, 10), grid.flat(30, 50)
    assert compiled_search(grid, s, g, max_expansions=50, landmarks=False) is None
    assert search(grid, s, g, max_expansions=50, landmarks=False) is None
    cells, cost = compiled_search(grid, s, g)
    assert cost == pytest.approx(search(grid, s, g)[1], abs=1e-4)
    assert cells[0] == s and cells[-1] == g


def test_nearest_open_finds_the_closest_allowed_cell_and_claim_clears_a_disc():
    ok = np.zeros((20, 20), dtype=np.uint8)
    ok[3, 17] = ok[15, 4] = 1
    x, y = kernels.nearest_open(ok, 0.0, 0.0, 0.1, 0.5, 1.2)
    assert (x, y) == pytest.approx((0.45, 1.55))
    ok[:] = 1
    kernels.claim(ok, 0.0, 0.0, 0.1, 1.0, 1.0, 0.3)
    rows, cols = np.nonzero(ok == 0)
    d = np.hypot((cols + 0.5) * 0.1 - 1.0, (rows + 0.5) * 0.1 - 1.0)
    assert len(d) and d.max() < 0.3
    assert math.isnan(kernels.nearest_open(np.zeros((5, 5), np.uint8), 0, 0, 0.1, 0.2, 0.2)[0])
