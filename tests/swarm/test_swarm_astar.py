"""A* against a brute-force Dijkstra written here, unreachable goals, smoothing and re-planning.

The reference search is deliberately plain: a dict of distances over (row, col) cells with the
same move rules (8 neighbours, sqrt(2) diagonals, no diagonal past a blocked side cell).
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest

from coopsim.swarm import SwarmError, find_path, replan, search, smooth
from coopsim.swarm.astar import _dijkstra, compiled_search
from coopsim.swarm.grid import Grid

RES = 0.1
TOL = 1e-4  # cells; the search's integer costs round sqrt(2) to 3e-7


def brute_force(blocked: np.ndarray, start, goal=None) -> dict:
    """Shortest distance (cells) from ``start`` to every reachable cell."""
    rows, cols = blocked.shape
    dist = {start: 0.0}
    heap = [(0.0, start)]
    while heap:
        d, (r, c) = heapq.heappop(heap)
        if d > dist[(r, c)]:
            continue
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                nr, nc = r + dr, c + dc
                if (dr, dc) == (0, 0) or not (0 <= nr < rows and 0 <= nc < cols):
                    continue
                if blocked[nr, nc] or blocked[r, nc] or blocked[nr, c]:
                    continue
                nd = d + (math.sqrt(2) if dr and dc else 1.0)
                if nd < dist.get((nr, nc), math.inf):
                    dist[(nr, nc)] = nd
                    heapq.heappush(heap, (nd, (nr, nc)))
    return dist


def random_grid(seed: int, size: int = 14, density: float = 0.28) -> Grid:
    rng = np.random.default_rng(seed)
    return Grid(rng.random((size, size)) < density, RES, (0.0, 0.0))


def check_chain(grid: Grid, cells) -> float:
    """Assert the cells form a legal move chain; return its cost in cells."""
    cost = 0.0
    for a, b in zip(cells, cells[1:]):
        (r0, c0), (r1, c1) = grid.unflat(a), grid.unflat(b)
        dr, dc = r1 - r0, c1 - c0
        assert max(abs(dr), abs(dc)) == 1
        assert not grid.blocked[r1, c1]
        if dr and dc:
            assert not grid.blocked[r0, c1] and not grid.blocked[r1, c0]  # no corner cutting
        cost += math.sqrt(2) if dr and dc else 1.0
    return cost


def free_cells(grid: Grid):
    return [tuple(int(v) for v in rc) for rc in np.argwhere(~grid.blocked)]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("method", ["octile", "landmarks", "dijkstra", "compiled"])
def test_search_is_optimal_against_brute_force(seed, method):
    grid = random_grid(seed)
    if method in ("landmarks", "compiled"):
        grid.prepare(per_region=4, min_cells=10)
    cells = free_cells(grid)
    rng = np.random.default_rng(100 + seed)
    for _ in range(6):
        start = cells[rng.integers(len(cells))]
        truth = brute_force(grid.blocked, start)
        for goal in [cells[i] for i in rng.integers(len(cells), size=6)]:
            s, g = grid.flat(*start), grid.flat(*goal)
            if method == "dijkstra":
                found = _dijkstra(grid, s, g)
            elif method == "compiled":
                found = compiled_search(grid, s, g)
            else:
                found = search(grid, s, g, landmarks=method == "landmarks")
            if goal not in truth:
                assert found is None
                continue
            path, cost = found
            assert path[0] == s and path[-1] == g
            assert cost == pytest.approx(truth[goal], abs=TOL)
            assert check_chain(grid, path) == pytest.approx(truth[goal], abs=TOL)


def test_find_path_goes_between_world_points_around_a_wall():
    blocked = np.zeros((20, 20), bool)
    blocked[2:20, 10] = True  # a wall with a gap at the bottom
    grid = Grid(blocked, RES, (-1.0, -1.0))
    path = find_path(grid, (-0.53, 0.77), (0.61, 0.74))
    assert np.allclose(path.points[0], (-0.53, 0.77)) and np.allclose(path.points[-1], (0.61, 0.74))
    truth = brute_force(blocked, grid.cell_of(-0.53, 0.77))[grid.cell_of(0.61, 0.74)]
    assert path.cost == pytest.approx(truth * RES, abs=TOL * RES)
    assert path.points[:, 1].min() < -0.75  # went round by the gap
    check_chain(grid, path.cells)


def test_unreachable_goal_raises_with_the_reason():
    blocked = np.zeros((12, 12), bool)
    blocked[3:9, 3] = blocked[3:9, 8] = blocked[3, 3:9] = blocked[8, 3:9] = True  # a closed box
    grid = Grid(blocked, RES, (0.0, 0.0))
    with pytest.raises(SwarmError, match="^unreachable: .*cut off from the start"):
        find_path(grid, (0.05, 0.05), (0.55, 0.55))
    with pytest.raises(SwarmError, match="^unreachable: .*off the floor"):
        find_path(grid, (0.05, 0.05), (5.0, 5.0), snap=0.5)


def test_goal_inside_an_obstacle_snaps_to_the_nearest_reachable_free_cell():
    blocked = np.zeros((12, 12), bool)
    blocked[4:8, 4:8] = True
    grid = Grid(blocked, RES, (0.0, 0.0))
    path = find_path(grid, (0.05, 0.05), (0.42, 0.62), snap=0.3)
    assert grid.unflat(path.cells[-1]) == (6, 3)  # the free cell just left of the goal
    assert np.allclose(path.points[-1], grid.centre(6, 3))
    with pytest.raises(SwarmError, match="^unreachable: .*inside an obstacle"):
        find_path(grid, (0.05, 0.05), (0.6, 0.6), snap=0.1)


def densely_clear(grid: Grid, a, b) -> bool:
    """No sample of the segment, nor any point 1e-6 cell beside one, is in a blocked cell."""
    n = int(np.hypot(*np.subtract(b, a)) / grid.resolution * 100) + 2
    pts = np.linspace(a, b, n)
    eps = 1e-6 * grid.resolution
    around = np.vstack([pts + (dx, dy) for dx in (-eps, eps) for dy in (-eps, eps)])
    return bool(grid.free_at(around).all())


@pytest.mark.parametrize("seed", range(10))
def test_smoothing_never_crosses_obstacles_and_never_lengthens(seed):
    grid = random_grid(seed, size=24, density=0.22)
    cells = free_cells(grid)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        a, b = (cells[i] for i in rng.integers(len(cells), size=2))
        try:
            path = find_path(grid, grid.centre(*a), grid.centre(*b))
        except SwarmError:
            continue
        short = smooth(grid, path.points)
        assert np.allclose(short[0], path.points[0]) and np.allclose(short[-1], path.points[-1])
        for p, q in zip(short, short[1:]):
            assert densely_clear(grid, p, q)
        length = lambda pts: np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()  # noqa: E731
        assert length(short) <= length(path.points) + 1e-9


def test_smoothing_cuts_an_open_staircase_to_one_segment():
    grid = Grid(np.zeros((30, 30), bool), RES, (0.0, 0.0))
    path = find_path(grid, (0.05, 0.05), (2.55, 1.05))
    assert len(smooth(grid, path.points)) == 2


@pytest.mark.parametrize("seed", range(6))
def test_replanning_costs_at_most_the_fresh_plan_plus_twice_the_goal_move(seed):
    rng = np.random.default_rng(seed)
    blocked = rng.random((40, 40)) < 0.15
    blocked[:, :2] = blocked[:, -2:] = False
    grid = Grid(blocked, RES, (0.0, 0.0))
    start, goal = grid.centre(20, 0), grid.centre(20, 39)
    try:
        first = find_path(grid, start, goal)
    except SwarmError:
        pytest.skip("random map without a way through")
    free_near_goal = [rc for rc in free_cells(grid) if abs(rc[0] - 20) <= 5 and rc[1] >= 33]
    for rc in [free_near_goal[i] for i in rng.integers(len(free_near_goal), size=5)]:
        moved = grid.centre(*rc)
        again = replan(grid, first, moved)
        fresh = find_path(grid, start, moved)
        d_goals = brute_force(blocked, grid.unflat(first.cells[-1])).get(rc, math.inf) * RES
        assert again.cells[0] == first.cells[0] and again.cells[-1] == fresh.cells[-1]
        assert check_chain(grid, again.cells) * RES == pytest.approx(again.cost, abs=1e-6)
        assert fresh.cost - 1e-6 <= again.cost <= fresh.cost + 2 * d_goals + 1e-6
        assert again.excess <= 2 * d_goals + 1e-6


def test_replanning_a_far_move_falls_back_to_a_fresh_plan():
    grid = Grid(np.zeros((30, 30), bool), RES, (0.0, 0.0))
    first = find_path(grid, (0.05, 0.05), (2.95, 2.95))
    again = replan(grid, first, (2.95, 0.05), max_excess=0.5)
    assert again.excess == 0.0
    assert again.cost == pytest.approx(2.9, abs=1e-6)
