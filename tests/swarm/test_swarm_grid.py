"""Rasterising boxes, circles and polygons with inflation, and line-of-sight checks.

References are computed here independently of the code under test: distances to a box through
its four corner segments (not its signed-distance formula), polygon insideness by the winding
number (not the even-odd crossing rule), and line of sight by dense sampling.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model.specs import FloorSpec, ObjectSpec
from coopsim.swarm import SwarmError, build_grid
from coopsim.swarm.grid import Grid

RES = 0.05


def seg_dist(px, py, a, b):
    ex, ey = b[0] - a[0], b[1] - a[1]
    t = np.clip(((px - a[0]) * ex + (py - a[1]) * ey) / (ex * ex + ey * ey), 0, 1)
    return np.hypot(px - a[0] - t * ex, py - a[1] - t * ey)


def winding(px, py, verts):
    """Winding number of each point around the polygon (0 outside)."""
    total = np.zeros(px.shape)
    for a, b in zip(verts, np.roll(verts, -1, axis=0)):
        a1 = np.arctan2(a[1] - py, a[0] - px)
        a2 = np.arctan2(b[1] - py, b[0] - px)
        total += (a2 - a1 + np.pi) % (2 * np.pi) - np.pi
    return np.round(total / (2 * np.pi))


def reference(grid: Grid, dist_fn, inside_fn, inflate):
    """Expected blocked map from an outline distance and an inside test, and a mask of cells
    too close to the threshold to judge (float ties)."""
    rows, cols = grid.shape
    px, py = np.meshgrid(grid.origin[0] + (np.arange(cols) + 0.5) * RES,
                         grid.origin[1] + (np.arange(rows) + 0.5) * RES)
    d = dist_fn(px, py)
    return inside_fn(px, py) | (d <= inflate), np.abs(d - inflate) > 1e-6


def border_cells(grid: Grid, floor: FloorSpec, inflate: float):
    rows, cols = grid.shape
    px, py = np.meshgrid(grid.origin[0] + (np.arange(cols) + 0.5) * RES,
                         grid.origin[1] + (np.arange(rows) + 0.5) * RES)
    return (np.abs(px) > floor.length / 2 - inflate) | (np.abs(py) > floor.width / 2 - inflate)


FLOOR = FloorSpec(4.0, 3.0)


def test_rotated_box_is_inflated_by_the_robot_radius():
    box = ObjectSpec("b", "box", (1.2, 0.4, 0.5), (0.3, -0.2, 0.25), yaw=math.radians(30))
    grid = build_grid(FLOOR, [box], resolution=RES, robot_radius=0.2, clearance=0.05)
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    corners = [(box.position[0] + c * x - s * y, box.position[1] + s * x + c * y)
               for x, y in ((0.6, 0.2), (-0.6, 0.2), (-0.6, -0.2), (0.6, -0.2))]
    poly = np.array(corners)
    expect, judge = reference(
        grid, lambda px, py: np.min([seg_dist(px, py, a, b) for a, b in
                                     zip(poly, np.roll(poly, -1, axis=0))], axis=0),
        lambda px, py: winding(px, py, poly) != 0, 0.25)
    expect |= border_cells(grid, FLOOR, 0.25)
    assert np.array_equal(grid.blocked[judge], expect[judge])
    assert grid.blocked.sum() > 0 and not grid.blocked.all()


def test_cylinder_and_sphere_are_inflated_circles():
    objs = [ObjectSpec("c", "cylinder", (0.6, 0.6, 0.5), (-1.0, 0.5, 0.25)),
            ObjectSpec("s", "sphere", (0.4, 0.4, 0.4), (1.0, -0.5, 0.2))]
    grid = build_grid(FLOOR, objs, resolution=RES, robot_radius=0.2)
    expect, judge = reference(
        grid, lambda px, py: np.minimum(np.hypot(px + 1.0, py - 0.5) - 0.3,
                                        np.hypot(px - 1.0, py + 0.5) - 0.2),
        lambda px, py: np.zeros(px.shape, bool), 0.2)
    expect |= border_cells(grid, FLOOR, 0.2)
    assert np.array_equal(grid.blocked[judge], expect[judge])


def test_concave_polygon_blocks_inside_and_a_band_around_it():
    u_shape = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [0.5, 1.0], [0.5, -0.5],
                        [-0.5, -0.5], [-0.5, 1.0], [-1.0, 1.0]])
    grid = build_grid(FLOOR, no_go=[u_shape[::-1]], resolution=RES, robot_radius=0.1)
    expect, judge = reference(
        grid, lambda px, py: np.min([seg_dist(px, py, a, b) for a, b in
                                     zip(u_shape, np.roll(u_shape, -1, axis=0))], axis=0),
        lambda px, py: winding(px, py, u_shape) != 0, 0.1)
    expect |= border_cells(grid, FLOOR, 0.1)
    assert np.array_equal(grid.blocked[judge], expect[judge])
    assert not grid.is_free(0.75, 0.0) and grid.is_free(0.0, 0.5)  # the U's inside is open


def test_thin_wall_leaves_no_gap_and_movable_objects_only_on_request():
    wall = ObjectSpec("w", "box", (0.01, 2.0, 0.5), (0.012, 0.0, 0.25))
    crate = ObjectSpec("m", "box", (0.3, 0.3, 0.3), (-1.2, 0.8, 0.15), mass=2.0)
    # Caught whenever the inflation reaches half a cell diagonal (0.0707 m here).
    grid = build_grid(FLOOR, [wall, crate], resolution=0.1, robot_radius=0.075)
    column_blocked = grid.blocked[:, grid.cell_of(0.012, 0.0)[1]]
    rows = [grid.cell_of(0.0, y)[0] for y in np.linspace(-0.95, 0.95, 20)]
    assert column_blocked[rows].all()
    assert grid.is_free(-1.2, 0.8)
    assert not build_grid(FLOOR, [crate], resolution=0.1, include_movable=True).is_free(-1.2, 0.8)


def test_bad_inputs_raise_swarm_errors():
    with pytest.raises(SwarmError, match="resolution"):
        build_grid(FLOOR, resolution=0.0)
    with pytest.raises(SwarmError, match="k >= 3"):
        build_grid(FLOOR, no_go=[np.array([[0, 0], [1, 1]])])
    with pytest.raises(SwarmError, match="unknown shape"):
        build_grid(FLOOR, [ObjectSpec("x", "cone", (1, 1, 1), (0, 0, 0))])


def sampled_clear(grid: Grid, a, b) -> bool:
    """Line of sight by sampling the segment every 1/200 of a cell (misses only grazes)."""
    n = int(np.hypot(*(np.subtract(b, a))) / grid.resolution * 200) + 2
    pts = np.linspace(a, b, n)
    return bool(grid.free_at(pts).all())


def test_line_of_sight_agrees_with_dense_sampling():
    rng = np.random.default_rng(3)
    blocked = rng.random((30, 30)) < 0.08
    grid = Grid(blocked, 0.1, (-1.5, -1.5))
    a = rng.uniform(-1.6, 1.6, (400, 2))
    b = a + rng.uniform(-1.0, 1.0, (400, 2))
    got = grid.segments_free(a, b)
    want = np.array([sampled_clear(grid, p, q) for p, q in zip(a, b)])
    assert not np.any(got & ~want)  # never claims a blocked segment is clear
    disagree = np.nonzero(~got & want)[0]
    assert len(disagree) <= 4  # only grazes of a corner that sampling can step over
    assert got.sum() > 50 and (~got).sum() > 50


def test_line_of_sight_through_a_corner_counts_as_blocked():
    blocked = np.zeros((4, 4), bool)
    blocked[1, 2] = True  # cell spanning x in [0.2, 0.3), y in [0.1, 0.2)
    grid = Grid(blocked, 0.1, (0.0, 0.0))
    assert not grid.segment_free((0.1, 0.0), (0.3, 0.2))  # exactly through the corner (0.2, 0.1)
    assert grid.segment_free((0.05, 0.05), (0.15, 0.35))
    assert not grid.segment_free((0.05, 0.05), (0.05, 0.45))  # leaves the grid at the top


def test_snap_moves_to_the_nearest_free_cell_within_the_bound():
    blocked = np.zeros((10, 10), bool)
    blocked[3:7, 3:7] = True
    grid = Grid(blocked, 0.1, (0.0, 0.0))
    index = grid.snap(0.41, 0.52, max_distance=0.3)
    assert grid.unflat(index) == (5, 2)
    with pytest.raises(SwarmError, match="unreachable: .*inside an obstacle"):
        grid.snap(0.5, 0.5, max_distance=0.05)
