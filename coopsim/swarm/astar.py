"""A* on a :class:`~coopsim.swarm.grid.Grid`: shortest 8-connected paths, smoothing, re-planning.

Moves go to the 8 neighbours, straight ones costing one cell side and diagonal ones sqrt(2); a
diagonal move is allowed only when both cells beside it are free (no corner cutting), so a robot
centre never slips between two blocked cells that touch at a corner. The heuristic is the octile
distance (admissible and consistent for these moves), raised where the grid's landmark tables give
a larger lower bound (ALT: still admissible and consistent, much tighter behind a long obstacle
such as a river). Ties on f break towards the smaller heuristic, so the search runs straight at
the goal across open floor instead of widening over the many equal-length paths of a grid.

Speed: with numba (a dependency of coopsim), :func:`best_search` and :func:`smooth` run the
compiled kernels of :mod:`coopsim.swarm.kernels` (same costs and results; about 30 times faster
per expanded cell). Without it (a controller on a machine without numba), pure Python, numpy and
scipy serve:
    * The inner loop works on padded flat indices (one blocked border, so neighbours never leave
      the array) with precomputed neighbour offsets, a ``bytearray`` free map and list g-scores.
    * Costs are integers (:data:`~coopsim.swarm.grid.STEP` per cell side), so equal lengths tie
      exactly; with floats, rounding noise alone made A* expand ten times more cells.
    * Reachability is decided in O(1) by the grid's connected-region labels before any search.
    * A search that exceeds a budget of expansions (see :func:`_budget`) hands over to scipy's
      compiled Dijkstra on the same move graph, which costs a fixed ~3 ms on 40,000 cells: the
      Python A* wins when the heuristic is tight, the compiled search bounds the bad cases. Both
      return optimal paths.

Re-planning when the goal moves (:func:`replan`): the previous path is kept up to a cut point a
little before its end (``backoff``: twice the goal's move plus one metre of path), and a bounded
search joins the cut point to the new goal. If the previous path was optimal, the result costs at
most ``fresh optimum + 2 * D`` where D is the grid distance between the old and the new goal (the
prefix is an optimal sub-path; the triangle inequality bounds the rest). Each re-plan adds its 2 D
to :attr:`Path.excess`; past ``max_excess`` m, or when the bounded search fails, a fresh search
runs instead.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from scipy.sparse.csgraph import dijkstra

from . import kernels
from .errors import SwarmError
from .grid import DIAGONAL_STEP, STEP, Grid

SQRT2 = math.sqrt(2.0)
#: Default bound on how far a start or goal inside an obstacle may be moved to a free cell, m.
SNAP_DISTANCE = 1.0


@dataclass(frozen=True, eq=False)
class Path:
    """A planned path.

    Attributes:
        cells: Padded flat indices of the grid cells, start cell to goal cell.
        points: (k, 2) waypoints, m, world frame: the start point, the cell centres between, the
            goal point (a start or goal that had to be snapped is replaced by its cell centre).
        cost: Length of the cell path, m (moves between cell centres).
        excess: Proven bound on ``cost - optimal cost``, m (0 for a fresh search).
    """

    cells: tuple[int, ...]
    points: np.ndarray = field(repr=False)
    cost: float
    excess: float = 0.0

    @property
    def length(self) -> float:
        """Length of the polyline through :attr:`points`, m."""
        return float(np.linalg.norm(np.diff(self.points, axis=0), axis=1).sum())


def neighbour_moves(stride: int) -> tuple[tuple[int, ...], tuple[tuple[int, int, int], ...]]:
    """Flat offsets of the 4 straight moves, and (offset, side 1, side 2) of the 4 diagonals."""
    straight = (1, -1, stride, -stride)
    diagonal = tuple((dr * stride + dc, dc, dr * stride) for dr in (1, -1) for dc in (1, -1))
    return straight, diagonal


def search(grid: Grid, start: int, goal: int, max_expansions: int | None = None,
           landmarks: bool = True) -> tuple[list[int], float] | None:
    """A* between two free padded flat indices.

    Args:
        max_expansions: Give up after expanding this many cells (None: no bound).
        landmarks: Raise the octile heuristic to the grid's landmark bounds (see
            :meth:`Grid.landmark_bounds`); the result is optimal either way.

    Returns:
        (cells start..goal, cost in cells), or None when no path exists or the bound was hit.
    """
    free, stride = grid.free, grid.stride
    (d1, h1), (d2, h2) = _landmark_pair(grid, start, goal, landmarks)
    g_row, g_col = divmod(goal, stride)
    k = DIAGONAL_STEP - STEP  # octile: STEP * max(dx, dy) + k * min(dx, dy), in integers
    moves = [(off, STEP, 0, 0) for off in neighbour_moves(stride)[0]]
    moves += [(off, DIAGONAL_STEP, s1, s2) for off, s1, s2 in neighbour_moves(stride)[1]]
    unreached = 1 << 62
    gscore = [unreached] * len(free)  # a list beats a dict here: one C-level index per lookup
    parent = {start: -1}
    closed = bytearray(len(free))
    gscore[start] = 0
    heap = [(0, 0, start)]
    pop, push = heapq.heappop, heapq.heappush
    budget = -1 if max_expansions is None else max_expansions
    while heap:
        _, _, i = pop(heap)
        if closed[i]:
            continue  # a stale entry: this cell was already expanded with a lower g
        if i == goal:
            return _walk_back(parent, goal), gscore[goal] / STEP
        if budget == 0:
            return None
        budget -= 1
        closed[i] = 1
        gi = gscore[i]
        for off, step, side1, side2 in moves:
            j = i + off
            # side1 == side2 == 0 for straight moves: the test then reads the cell itself.
            if free[j] and free[i + side1] and free[i + side2]:
                ng = gi + step
                if ng < gscore[j]:  # also false for expanded cells (consistent heuristic)
                    gscore[j], parent[j] = ng, i
                    r, c = divmod(j, stride)  # the heuristic, inlined for speed
                    dx, dy = abs(c - g_col), abs(r - g_row)
                    hj = STEP * dx + k * dy if dx > dy else STEP * dy + k * dx
                    a, b = abs(d1[j] - h1), abs(d2[j] - h2)
                    if a > hj:
                        hj = a
                    if b > hj:
                        hj = b
                    push(heap, (ng + hj, hj, j))
    return None


class _Zero:
    """A table that reads 0 everywhere: a landmark that bounds nothing."""

    def __getitem__(self, index: int) -> int:
        return 0


def _landmark_pair(grid: Grid, start: int, goal: int, landmarks: bool):
    """The two landmark tables tightest at ``start`` (two keep each evaluation cheap), padded
    with all-zero tables when the grid has fewer or ``landmarks`` is off."""
    tables = grid.landmark_bounds(start, goal, 2) if landmarks else []
    zero = (_Zero(), 0)
    return (tables + [zero, zero])[:2]


def _budget(grid: Grid, start: int, goal: int) -> int:
    """Expansions the Python A* may spend before handing over to :func:`_dijkstra`.

    With a tight heuristic A* expands little more than the path's own cells (an expansion costs
    about 1.5 us); when obstacles mislead the heuristic it would flood thousands of cells, and
    scipy's compiled Dijkstra over the whole grid (about 0.08 us a cell, 3 ms for 40,000) is
    cheaper. Short searches get a generous margin (a short detour rarely needs the fallback);
    long ones little beyond their length, so a misled long search gives up early."""
    h = _octile(grid, start, goal)
    return int(h + 60) if h > 100 else int(2 * h + 200)


def compiled_search(grid: Grid, start: int, goal: int, max_expansions: int | None = None,
                    landmarks: bool = True) -> tuple[list[int], float] | None:
    """:func:`search` by the compiled kernel (:func:`coopsim.swarm.kernels.astar`): the same
    costs, arguments and result; needs numba (:data:`coopsim.swarm.kernels.COMPILED`)."""
    tables = grid.landmark_bounds(start, goal, 2) if landmarks else []
    work = grid.workspace()
    views = [(work.table(d), int(h)) for d, h in tables] + [(work.zero, 0)] * 2
    (d1, h1), (d2, h2) = views[:2]
    bound = -1 if max_expansions is None else int(max_expansions)
    with work.lock:
        work.mark += 1
        cells, cost = kernels.astar(work.free, grid.stride, start, goal, d1, h1, d2, h2, bound,
                                    STEP, DIAGONAL_STEP, work.g, work.parent, work.seen,
                                    work.closed, work.mark)
    return None if cost < 0 else (cells.tolist(), cost / STEP)


def best_search(grid: Grid, start: int, goal: int,
                max_expansions: int | None = None) -> tuple[list[int], float] | None:
    """The fastest search available: the compiled one, else the Python A* (handing over to
    scipy's Dijkstra past its budget when no bound is given). Same result as :func:`search`."""
    if kernels.COMPILED:
        return compiled_search(grid, start, goal, max_expansions)
    if max_expansions is None:
        return search(grid, start, goal, _budget(grid, start, goal)) or _dijkstra(grid, start, goal)
    return search(grid, start, goal, max_expansions)


def _dijkstra(grid: Grid, start: int, goal: int) -> tuple[list[int], float] | None:
    """The same shortest path as :func:`search`, by scipy's Dijkstra (compiled) over the grid's
    move graph: a fixed cost (all cells nearer than the goal) for the hard cases where obstacles
    mislead the heuristic and the Python A* would expand thousands of cells."""
    dist, pred = dijkstra(grid.graph(), indices=start, return_predecessors=True)
    if not math.isfinite(dist[goal]):
        return None
    cells = [goal]
    while cells[-1] != start:
        cells.append(int(pred[cells[-1]]))
    cells.reverse()
    return cells, float(dist[goal]) / STEP


def _walk_back(parent: dict[int, int], goal: int) -> list[int]:
    cells = [goal]
    while parent[cells[-1]] != -1:
        cells.append(parent[cells[-1]])
    cells.reverse()
    return cells


def _endpoints(grid: Grid, start: Sequence[float], goal: Sequence[float], snap: float,
               ) -> tuple[int, int]:
    """Snap start and goal to free cells; the goal must lie in the start's region."""
    s = grid.snap(float(start[0]), float(start[1]), snap)
    label = int(grid.labels[s])
    g = grid.snap(float(goal[0]), float(goal[1]), snap, label=label)
    return s, g


def _make_path(grid: Grid, cells: list[int], cost_cells: float, start, goal,
               excess: float = 0.0) -> Path:
    """A Path through ``cells``; it begins at ``start`` and ends at ``goal`` themselves when they
    lie in the first and last cell (they were not snapped), else at those cells' centres."""
    centres = grid.points(cells)
    first = start if grid.flat(*grid.cell_of(*start)) == cells[0] else centres[0]
    last = goal if grid.flat(*grid.cell_of(*goal)) == cells[-1] else centres[-1]
    pts = np.vstack([np.asarray(first, dtype=float), centres[1:-1], np.asarray(last, dtype=float)])
    return Path(tuple(cells), pts, cost_cells * grid.resolution, excess)


def find_path(grid: Grid, start: Sequence[float], goal: Sequence[float],
          snap: float = SNAP_DISTANCE, max_expansions: int | None = None) -> Path:
    """Shortest path from world point ``start`` to world point ``goal``, m.

    A start or goal inside a blocked cell is moved to the nearest free cell within ``snap`` m
    (the goal to one the start can reach).

    Raises:
        SwarmError: ``unreachable: ...`` when no free cell lies within ``snap`` m of an end, the
            goal is cut off from the start, or the search gave up after ``max_expansions``.
    """
    start = (float(start[0]), float(start[1]))
    goal = (float(goal[0]), float(goal[1]))
    s, g = _endpoints(grid, start, goal, snap)
    found = best_search(grid, s, g, max_expansions)
    if found is None:
        raise SwarmError(f"unreachable: no path from ({start[0]:.2f}, {start[1]:.2f}) to "
                         f"({goal[0]:.2f}, {goal[1]:.2f}) m within {max_expansions} expansions")
    return _make_path(grid, found[0], found[1], start, goal)


def replan(grid: Grid, previous: Path, goal: Sequence[float], snap: float = SNAP_DISTANCE,
           max_excess: float = 2.0, backoff: float | None = None) -> Path:
    """Re-plan ``previous`` for a goal that moved, reusing its beginning (see the module doc).

    Args:
        previous: The path to the old goal (its start stays the start).
        goal: The new goal, m, world frame.
        max_excess: Largest accepted :attr:`Path.excess`, m; beyond it a fresh A* runs.
        backoff: Path length (m) cut from the end of ``previous`` before re-joining; None uses
            ``2 * move + 1`` where move is the octile distance the goal moved.

    Raises:
        SwarmError: ``unreachable: ...`` as :func:`find_path`.
    """
    goal = (float(goal[0]), float(goal[1]))
    start = (float(previous.points[0][0]), float(previous.points[0][1]))
    s = previous.cells[0]
    g = grid.snap(goal[0], goal[1], snap, label=int(grid.labels[s]))
    old = previous.cells[-1]
    moved = _octile(grid, old, g) * grid.resolution
    excess = previous.excess + 2.0 * _grid_distance(grid, old, g)
    if excess > max_excess:
        return find_path(grid, start, goal, snap)
    cut = _cut_index(previous.cells, grid.stride,
                     (2.0 * moved + 1.0 if backoff is None else backoff) / grid.resolution)
    # A join needing many more expansions than its length is no longer a local repair.
    span = _octile(grid, previous.cells[cut], g)
    found = best_search(grid, previous.cells[cut], g, max_expansions=int(4 * span) + 400)
    if found is None:
        return find_path(grid, start, goal, snap)
    cells = list(previous.cells[:cut]) + found[0]
    cost = _cells_cost(cells, grid.stride)
    return _make_path(grid, cells, cost, start, goal, excess)


def _grid_distance(grid: Grid, a: int, b: int) -> float:
    """Grid distance between cells a and b, m, by a bounded A*; inf when the bound is hit (the
    caller then plans afresh, as the goal moved too far for a local repair)."""
    if a == b:
        return 0.0
    found = best_search(grid, a, b, max_expansions=4000)
    return math.inf if found is None else found[1] * grid.resolution


def _octile(grid: Grid, a: int, b: int) -> float:
    ar, ac = divmod(a, grid.stride)
    br, bc = divmod(b, grid.stride)
    dx, dy = abs(ac - bc), abs(ar - br)
    return max(dx, dy) + (SQRT2 - 1.0) * min(dx, dy)


def _cells_cost(cells: Sequence[int], stride: int) -> float:
    """Cost in cells of a chain of neighbouring cells."""
    idx = np.asarray(cells, dtype=np.int64)
    steps = np.abs(np.diff(idx))
    return float(np.where((steps == 1) | (steps == stride), 1.0, SQRT2).sum())


def _cut_index(cells: Sequence[int], stride: int, backoff_cells: float) -> int:
    """Index of the last cell at least ``backoff_cells`` of path before the end (0 at least)."""
    idx = np.asarray(cells, dtype=np.int64)
    steps = np.abs(np.diff(idx))
    cost = np.where((steps == 1) | (steps == stride), 1.0, SQRT2)
    from_end = np.concatenate([np.cumsum(cost[::-1])[::-1], [0.0]])
    ok = np.nonzero(from_end >= backoff_cells)[0]
    return int(ok[-1]) if len(ok) else 0


def smooth(grid: Grid, points: np.ndarray) -> np.ndarray:
    """Shortcut a polyline by line of sight on the grid: from each kept point, jump to the
    farthest later point reachable in a straight line through free cells.

    Every new segment passes :meth:`Grid.segments_free`, so when the input's own segments are
    free (those of a path from :func:`find_path` are) the result never crosses a blocked cell; by the
    triangle inequality it is never longer than the input.

    Args:
        points: (k, 2) waypoints, m, world frame (a path's :attr:`Path.points`).

    Returns:
        (j, 2) waypoints, j <= k, the same first and last point.
    """
    pts = _turn_points(np.asarray(points, dtype=float))
    if kernels.COMPILED and len(pts) > 2:
        work = grid.workspace()
        return pts[kernels.smooth_indices(work.padded, grid.origin[0], grid.origin[1],
                                          grid.resolution, np.ascontiguousarray(pts))]
    keep = [0]
    while keep[-1] < len(pts) - 1:
        i = keep[-1]
        later = np.arange(i + 1, len(pts))
        clear = grid.segments_free(np.repeat(pts[i:i + 1], len(later), axis=0), pts[later])
        visible = np.nonzero(clear)[0]
        # The input's own segments are free (a grid path's are), so i + 1 is always a fallback.
        keep.append(int(later[visible[-1]]) if len(visible) else i + 1)
    return pts[keep]


def _turn_points(pts: np.ndarray) -> np.ndarray:
    """Drop the points where the path goes straight on (same step before and after)."""
    if len(pts) < 3:
        return pts
    step = np.diff(pts, axis=0)
    turn = np.abs(step[1:, 0] * step[:-1, 1] - step[1:, 1] * step[:-1, 0]) > 1e-9
    turn |= np.einsum("ij,ij->i", step[1:], step[:-1]) <= 0
    return np.concatenate([pts[:1], pts[1:-1][turn], pts[-1:]])
