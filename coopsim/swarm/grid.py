"""An occupancy grid of the floor, inflated by the robot radius, for path planning.

Frames and layout:
    * The grid covers the floor (centred on the origin). Cell ``(row, col)`` spans
      ``x in [x0 + col * res, x0 + (col + 1) * res)`` and ``y in [y0 + row * res, ...)`` with
      ``(x0, y0) = (-length / 2, -width / 2)``; rows go along +y, columns along +x.
    * A cell is *blocked* when its centre lies within ``robot_radius + clearance`` m of an
      obstacle (a static object, a no-go polygon) or of the floor's edge, so a robot whose centre
      stays in free cells keeps at least ``robot_radius + clearance - res / sqrt(2)`` m clear.
    * For the search, cells also have *flat* indices into a copy padded by one blocked cell on
      every side (``(row + 1) * stride + col + 1``), so a neighbour lookup never leaves the array.

Rasterising (:mod:`coopsim.swarm.raster`) is exact per cell centre: the signed distance to each box, circle or polygon is
evaluated with numpy in the shape's bounding window only (a 20 m x 20 m grid at 0.1 m builds in
a few milliseconds). An obstacle thinner than a cell is still caught when the inflation is at
least half a cell diagonal (``res / sqrt(2)``), as a 0.2 m robot radius is at 0.1 m cells.
"""

from __future__ import annotations

import math
import threading
from array import array
from typing import Iterable, Sequence

import numpy as np
from scipy import ndimage
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from ..model.specs import FloorSpec, ObjectSpec

from . import raster
from .errors import SwarmError

_EPS = 1e-9  # cells: a segment this close to a cell border touches the cells on both sides
#: Cost of a straight move in the search's integer units (2**20 units per cell side). Integer
#: costs make equal path lengths compare exactly equal, so ties break by the heuristic as meant;
#: with floats, rounding noise in sums of 1 and sqrt(2) made A* wander over the many
#: equal-length paths of an 8-connected grid (thousands of extra expansions).
STEP = 1 << 20
#: Cost of a diagonal move: sqrt(2) * STEP rounded (relative error 3e-7).
DIAGONAL_STEP = round(math.sqrt(2.0) * STEP)
_UNREACHED = -1  # landmark table entry of a cell in another region


class Grid:
    """A blocked/free raster of the floor (see the module docstring for the layout).

    Attributes:
        blocked: (rows, cols) bool array, True where a robot centre may not go.
        resolution: Cell side, m.
        origin: (x0, y0), world coordinates of cell (0, 0)'s lower-left corner, m.
        inflation: Distance kept from obstacles, m (robot radius plus clearance).
        stride: Row length of the padded flat layout (cols + 2).
        free: Padded flat free map (1 = free), a bytearray for the search's inner loop.
        labels: Padded flat 4-connected component label of every free cell (0 when blocked).
    """

    def __init__(self, blocked: np.ndarray, resolution: float, origin: Sequence[float],
                 inflation: float = 0.0) -> None:
        self.blocked = np.asarray(blocked, dtype=bool)
        self.resolution = float(resolution)
        self.origin = (float(origin[0]), float(origin[1]))
        self.inflation = float(inflation)
        rows, cols = self.blocked.shape
        self.stride = cols + 2
        padded = np.pad(self.blocked, 1, constant_values=True)
        self._padded_blocked = padded
        self.free = bytearray((~padded).astype(np.uint8).ravel().tobytes())
        # Moves that never cut a corner connect exactly the 4-connected free regions (a diagonal
        # step needs both side cells free), so these labels decide reachability in O(1).
        labels, _ = ndimage.label(~padded)
        self.labels = labels.ravel()
        self._landmarks: list[tuple[int, array]] | None = None
        self._csr: csr_matrix | None = None
        self._work: Workspace | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols)."""
        return self.blocked.shape

    # --- coordinates -------------------------------------------------------------------------
    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        """(row, col) of the cell holding world point (x, y), m; may lie outside the grid."""
        return (math.floor((y - self.origin[1]) / self.resolution),
                math.floor((x - self.origin[0]) / self.resolution))

    def centre(self, row: int, col: int) -> tuple[float, float]:
        """World (x, y) of a cell's centre, m."""
        res = self.resolution
        return self.origin[0] + (col + 0.5) * res, self.origin[1] + (row + 0.5) * res

    def flat(self, row: int, col: int) -> int:
        """Padded flat index of (row, col)."""
        return (row + 1) * self.stride + col + 1

    def unflat(self, index: int) -> tuple[int, int]:
        """(row, col) of a padded flat index."""
        r, c = divmod(index, self.stride)
        return r - 1, c - 1

    def points(self, indices: Iterable[int]) -> np.ndarray:
        """(k, 2) world centres of padded flat indices, m."""
        idx = np.fromiter(indices, dtype=np.int64)
        r, c = np.divmod(idx, self.stride)
        res = self.resolution
        return np.column_stack([self.origin[0] + (c - 0.5) * res, self.origin[1] + (r - 0.5) * res])

    def inside(self, row: int, col: int) -> bool:
        """True when (row, col) is a cell of the grid."""
        rows, cols = self.blocked.shape
        return 0 <= row < rows and 0 <= col < cols

    def is_free(self, x: float, y: float) -> bool:
        """True when world point (x, y), m, lies in a free cell."""
        r, c = self.cell_of(x, y)
        return self.inside(r, c) and not self.blocked[r, c]

    def workspace(self) -> "Workspace":
        """The arrays the compiled search works in (built once per grid; see
        :mod:`coopsim.swarm.kernels`)."""
        if self._work is None:
            self._work = Workspace(self)
        return self._work

    # --- landmarks ---------------------------------------------------------------------------
    def landmark_bounds(self, start: int, goal: int, count: int = 2,
                        ) -> list[tuple[array, float]]:
        """The ``count`` landmark tables giving the largest lower bound on the start-goal distance.

        A landmark L stores its exact grid distance D to every cell (integer units of
        :data:`STEP` per cell side); for any cells
        a, b of its region, ``|D[a] - D[b]| <= distance(a, b)`` (triangle inequality), a lower
        bound the search adds to the octile distance. It is much tighter behind long obstacles
        such as a river, where the octile distance ignores the detour.

        Returns:
            [(D indexed by padded flat index, D[goal]), ...], best first, in integer units;
            empty when the goal's region holds no landmark.
        """
        if self._landmarks is None:
            self._landmarks = self._choose_landmarks()
        label = self.labels[goal]
        useful = [(abs(d[start] - d[goal]), d) for lab, d in self._landmarks
                  if lab == label and d[goal] != _UNREACHED]
        useful.sort(key=lambda item: -item[0])
        return [(d, d[goal]) for _, d in useful[:count]]

    def prepare(self, per_region: int | None = None, min_cells: int = 400) -> None:
        """Compute the landmark tables now (else the first search does it: about 4 ms per
        landmark on 40,000 cells, with scipy's Dijkstra).

        Args:
            per_region: Landmarks in each connected free region; None picks 16, fewer on grids
                over 250,000 cells so that the tables (8 bytes a cell each) stay under 32 MB.
            min_cells: Regions with fewer free cells get none (searches there are short).
        """
        self._landmarks = self._choose_landmarks(per_region, min_cells)

    def _choose_landmarks(self, per_region: int | None = None, min_cells: int = 400,
                          ) -> list[tuple[int, array]]:
        """Farthest-point landmarks: each new one is the cell farthest (by grid distance) from
        those already chosen in its region, which spreads them along the region's rim."""
        if per_region is None:
            per_region = int(min(16, max(1, 4_000_000 // len(self.free))))
        graph = self.graph()
        sizes = np.bincount(self.labels)
        out = []
        for label in np.nonzero(sizes >= min_cells)[0]:
            if label == 0:
                continue  # blocked cells
            seed = int(np.argmax(self.labels == label))
            nearest = dijkstra(graph, indices=seed)
            for k in range(per_region):
                pick = int(np.argmax(np.where(np.isfinite(nearest), nearest, -1.0)))
                dist = dijkstra(graph, indices=pick)
                exact = np.where(np.isfinite(dist), dist, _UNREACHED).astype(np.int64)
                table = array("q")
                table.frombytes(exact.tobytes())  # 8 bytes a cell, not a list's 32
                out.append((int(label), table))
                nearest = dist if k == 0 else np.minimum(nearest, dist)
        return out

    def graph(self) -> csr_matrix:
        """The move graph on padded flat indices (straight moves cost :data:`STEP`, diagonal
        ones :data:`DIAGONAL_STEP`, no corner cutting), as a sparse matrix for scipy's graph
        routines (its float64 sums of these integers stay exact); built once."""
        if self._csr is None:
            self._csr = self._build_graph()
        return self._csr

    def _build_graph(self) -> csr_matrix:
        free = np.frombuffer(bytes(self.free), dtype=np.uint8).astype(bool)
        idx = np.nonzero(free)[0]
        st = self.stride
        rows, cols, weights = [], [], []
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                if dr == dc == 0:
                    continue
                j = idx + dr * st + dc
                ok = free[j] & free[idx + dc] & free[idx + dr * st]  # side cells (or self)
                rows.append(idx[ok])
                cols.append(j[ok])
                weights.append(np.full(int(ok.sum()), float(DIAGONAL_STEP if dr and dc else STEP)))
        n = len(free)
        return csr_matrix((np.concatenate(weights), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(n, n))

    # --- snapping ----------------------------------------------------------------------------
    def snap(self, x: float, y: float, max_distance: float, label: int | None = None) -> int:
        """Padded flat index of the free cell nearest to (x, y) within ``max_distance`` m.

        Args:
            label: Only consider cells of this connected region (see :attr:`labels`).

        Raises:
            SwarmError: ``unreachable: ...`` when no such cell lies within ``max_distance``, or
                (x, y) is free but in another region than ``label``.
        """
        r, c = self.cell_of(x, y)
        if self.inside(r, c) and not self.blocked[r, c]:
            index = self.flat(r, c)
            if label is None or self.labels[index] == label:
                return index
            # A free point walled off from the start is not moved out: it is unreachable.
            raise SwarmError(f"unreachable: ({x:.2f}, {y:.2f}) m is in a region cut off from "
                             "the start")
        reach = int(math.ceil(max_distance / self.resolution)) + 1
        rows, cols = self.blocked.shape
        r0, r1 = max(0, r - reach), min(rows, r + reach + 1)
        c0, c1 = max(0, c - reach), min(cols, c + reach + 1)
        if r0 < r1 and c0 < c1:
            found = self._nearest_in_window(x, y, r0, r1, c0, c1, max_distance, label)
            if found is not None:
                return found
        where = "inside an obstacle" if self.inside(r, c) else "off the floor"
        raise SwarmError(f"unreachable: ({x:.2f}, {y:.2f}) m is {where} and no reachable free "
                         f"cell lies within {max_distance:g} m")

    def free_near(self, x: float, y: float, radius: float, label: int | None = None,
                  ) -> np.ndarray:
        """Centres (m, world) of the free cells within ``radius`` m of (x, y), nearest first.

        Args:
            label: Only cells of this connected region.

        Returns:
            (k, 2) array, possibly empty.
        """
        r, c = self.cell_of(x, y)
        reach = int(math.ceil(radius / self.resolution)) + 1
        rows, cols = self.blocked.shape
        r0, r1 = max(0, r - reach), min(rows, r + reach + 1)
        c0, c1 = max(0, c - reach), min(cols, c + reach + 1)
        if r0 >= r1 or c0 >= c1:
            return np.zeros((0, 2))
        rr, cc = np.mgrid[r0:r1, c0:c1]
        ok = ~self.blocked[r0:r1, c0:c1]
        if label is not None:
            ok &= self.labels.reshape(self._padded_blocked.shape)[r0 + 1:r1 + 1, c0 + 1:c1 + 1] \
                == label
        pts = np.column_stack([self.origin[0] + (cc[ok] + 0.5) * self.resolution,
                               self.origin[1] + (rr[ok] + 0.5) * self.resolution])
        d = np.hypot(pts[:, 0] - x, pts[:, 1] - y)
        order = np.argsort(d, kind="stable")
        return pts[order[d[order] <= radius]]

    def region(self, label: int) -> np.ndarray:
        """(rows, cols) bool: the free cells of connected region ``label``."""
        return self.labels.reshape(self._padded_blocked.shape)[1:-1, 1:-1] == label

    def free_at(self, points: np.ndarray, label: int | None = None) -> np.ndarray:
        """(k,) bool: which world points (k, 2), m, lie in free cells (of region ``label``)."""
        pts = np.asarray(points, dtype=float).reshape(-1, 2)
        cols = np.floor((pts[:, 0] - self.origin[0]) / self.resolution).astype(np.int64)
        rows = np.floor((pts[:, 1] - self.origin[1]) / self.resolution).astype(np.int64)
        ok = ~self._blocked_at(rows, cols)
        if label is not None:
            h, w = self._padded_blocked.shape
            flat = np.clip(rows + 1, 0, h - 1) * w + np.clip(cols + 1, 0, w - 1)
            ok &= self.labels[flat] == label
        return ok

    def _nearest_in_window(self, x, y, r0, r1, c0, c1, max_distance, label) -> int | None:
        rr, cc = np.mgrid[r0:r1, c0:c1]
        ok = ~self.blocked[r0:r1, c0:c1]
        if label is not None:
            ok &= self.labels.reshape(self._padded_blocked.shape)[r0 + 1:r1 + 1, c0 + 1:c1 + 1] \
                == label
        if not ok.any():
            return None
        cx = self.origin[0] + (cc + 0.5) * self.resolution
        cy = self.origin[1] + (rr + 0.5) * self.resolution
        d2 = np.where(ok, (cx - x) ** 2 + (cy - y) ** 2, np.inf)
        k = int(np.argmin(d2))
        if d2.flat[k] > max_distance ** 2:
            return None
        return self.flat(int(rr.flat[k]), int(cc.flat[k]))

    # --- line of sight -----------------------------------------------------------------------
    def segments_free(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """For each segment a[i] -> b[i] (world, m), True when every cell it touches is free.

        The test is exact (a supercover of the segment: every cell whose square the segment
        meets), and conservative where the segment runs exactly along a cell border or through a
        corner: the cells on both sides count. Points off the grid count as blocked.

        Args:
            a, b: (m, 2) segment ends, m, world frame.

        Returns:
            (m,) bool array.
        """
        a = np.asarray(a, dtype=float).reshape(-1, 2)
        b = np.asarray(b, dtype=float).reshape(-1, 2)
        m = len(a)
        ua, ub = self._to_cell_units(a), self._to_cell_units(b)
        # Border crossings of both axes in one pass: the y-crossings are the x-crossings of the
        # segments with their coordinates swapped.
        seg, lower, across = _crossings(np.vstack([ua, ua[:, ::-1]]),
                                        np.vstack([ub, ub[:, ::-1]]), 0)
        vertical = seg < m
        n0, n1 = _around_one(across)
        sides = (lower, lower + 1)
        rows = [np.where(vertical, n, side) for n in (n0, n1) for side in sides]
        cols = [np.where(vertical, side, n) for n in (n0, n1) for side in sides]
        ends = np.vstack([ua, ub])  # the cells holding the two ends
        (r0, r1), (c0, c1) = _around_one(ends[:, 1]), _around_one(ends[:, 0])
        rows += [r0, r0, r1, r1]
        cols += [c0, c1, c0, c1]
        owner = np.concatenate([np.tile(seg % m, 4), np.tile(np.arange(2 * m) % m, 4)])
        hit = self._blocked_at(np.concatenate(rows), np.concatenate(cols))
        return np.bincount(owner, weights=hit, minlength=m) == 0

    def segment_free(self, a: Sequence[float], b: Sequence[float]) -> bool:
        """True when the segment a -> b (world, m) touches only free cells."""
        return bool(self.segments_free(np.asarray([a]), np.asarray([b]))[0])

    def _to_cell_units(self, p: np.ndarray) -> np.ndarray:
        """World (x, y) -> (u, v) in cells where cell (row, col) has its centre at (col, row)."""
        return (p - np.asarray(self.origin)) / self.resolution - 0.5

    def _blocked_at(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        h, w = self._padded_blocked.shape
        return self._padded_blocked[np.clip(rows + 1, 0, h - 1), np.clip(cols + 1, 0, w - 1)]


class Workspace:
    """A grid's views and work arrays for the compiled kernels: the free map and the padded
    blocked map as numpy arrays (no copies), landmark tables as int64 arrays, and the search's
    per-cell arrays, reused by every search under a lock (a grid shared by two threads stays
    correct; each search takes a new mark, so nothing is cleared between searches)."""

    def __init__(self, grid: Grid) -> None:
        n = len(grid.free)
        self.free = np.frombuffer(grid.free, dtype=np.uint8)
        self.padded = grid._padded_blocked.view(np.uint8)
        self.g = np.zeros(n, dtype=np.int64)
        self.parent = np.zeros(n, dtype=np.int64)
        self.seen = np.zeros(n, dtype=np.int64)
        self.closed = np.zeros(n, dtype=np.int64)
        self.zero = np.zeros(n, dtype=np.int64)  # a landmark table that bounds nothing
        self.mark = 0
        self.lock = threading.Lock()
        self._views: dict[int, np.ndarray] = {}

    def table(self, table: array) -> np.ndarray:
        """A landmark table (``array('q')``) as an int64 array sharing its memory."""
        view = self._views.get(id(table))
        if view is None:
            view = self._views[id(table)] = np.frombuffer(table, dtype=np.int64)
        return view


def _around_one(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cell index of each coordinate v (cell units), taken on both sides when v is a border."""
    return (np.floor(v + 0.5 - _EPS).astype(np.int64), np.floor(v + 0.5 + _EPS).astype(np.int64))


def _crossings(ua: np.ndarray, ub: np.ndarray, axis: int):
    """Where the segments ua -> ub cross the cell borders normal to ``axis`` (cell units).

    Returns:
        (segment index, cell index on the lower side of the border, the other coordinate there).
    """
    a0, a1 = ua[:, axis], ub[:, axis]
    lo = np.ceil(np.minimum(a0, a1) - 0.5).astype(np.int64)
    hi = np.floor(np.maximum(a0, a1) - 0.5).astype(np.int64)
    delta = a1 - a0
    count = np.where(delta != 0, np.maximum(hi - lo + 1, 0), 0)
    seg = np.repeat(np.arange(len(ua)), count)
    first = np.cumsum(count) - count
    lower = np.repeat(lo, count) + (np.arange(int(count.sum())) - np.repeat(first, count))
    t = (lower + 0.5 - a0[seg]) / delta[seg]
    o = 1 - axis
    across = ua[seg, o] + t * (ub[seg, o] - ua[seg, o])
    return seg, lower, across


# --- building ------------------------------------------------------------------------------------
def build_grid(floor: FloorSpec, objects: Iterable[ObjectSpec] = (),
               no_go: Iterable[np.ndarray] = (), resolution: float = 0.1,
               robot_radius: float = 0.2, clearance: float = 0.0,
               include_movable: bool = False) -> Grid:
    """Rasterise a floor, its static objects and no-go polygons into an inflated :class:`Grid`.

    Args:
        floor: The floor; its edges are walls.
        objects: Objects; only static ones (mass 0) unless ``include_movable``.
        no_go: Polygons robots must not enter (water...), each a (k, 2) array of vertices, m,
            world frame, in either winding order, k >= 3.
        resolution: Cell side, m per cell.
        robot_radius: Robot chassis radius, m.
        clearance: Extra distance kept from obstacles, m.
        include_movable: Also block movable objects where they are now.

    Raises:
        SwarmError: a non-positive resolution, a polygon with fewer than 3 vertices, an unknown
            shape.
    """
    if not resolution > 0:
        raise SwarmError(f"grid resolution must be > 0 m per cell, got {resolution}")
    inflate = robot_radius + clearance
    blocked, origin = raster.blocked_cells(floor, objects, no_go, resolution, inflate,
                                           include_movable)
    return Grid(blocked, resolution, origin, inflate)
