"""JitRayCaster, the sensing phase's caster, against pymunk's ``Space.segment_query_first``
(``test_raycast.reference``, which applies the caster's one documented difference: a start
inside a circle hits it at 0), and against itself (cell sizes, static or moving shapes, thread
counts: the same bits)."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from test_raycast import box_edges, random_scene, reference, unit

from coopsim.model import threads as policy
from coopsim.raycast.jitcast import JitRayCaster, make_caster, sonar_distances
from coopsim.plugins.modules.sonar import ANGLES as SONAR_ANGLES

# NaN or division warnings fail the tests (only those: a file another test left open, collected
# here, is not this test's)
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
TOL = 1e-9  # m, against pymunk


def both(origins, directions, max_range, circles=None, segments=None, cell_size=2.0,
         static=None, **groups):
    """Distances from a fresh JitRayCaster, checked equal to those of one with four times the
    cell size (which changes the speed only). ``static`` = (circles, segments, circle_group,
    segment_group) given to set_static of both."""
    out = []
    for cell in (cell_size, 4 * cell_size):
        caster = JitRayCaster(cell)
        if static is not None:
            caster.set_static(*static)
        out.append(caster.cast(origins, directions, max_range, circles, segments, **groups))
    assert out[0].dtype == np.float64 and out[0].shape == (len(origins),)
    assert np.array_equal(out[0], out[1])
    return out[0]


@pytest.mark.parametrize("seed", range(20))
def test_random_scenes_match_pymunk(seed):
    rng = np.random.default_rng(seed)
    side = rng.uniform(5.0, 40.0)
    circles, segments, cg, sg = random_scene(rng, rng.integers(0, 60), rng.integers(0, 12), side)
    n = 300
    origins = rng.uniform(-0.2 * side, 1.2 * side, (n, 2))
    directions = unit(rng.uniform(-math.pi, math.pi, n))
    directions[:20] = unit(rng.integers(-4, 4, 20) * (math.pi / 2))  # axis-aligned rays
    max_range = rng.uniform(0.5, side * 0.6, n)
    ray_group = rng.integers(0, 4, n)
    cell = rng.choice([0.3, 1.0, 2.0, 5.0])
    inputs = [a.copy() for a in (origins, directions, max_range, circles, ray_group, cg)]
    out = both(origins, directions, max_range, circles, None, cell, (None, segments, None, sg),
               ray_group=ray_group, circle_group=cg)
    for before, after in zip(inputs, (origins, directions, max_range, circles, ray_group, cg)):
        assert np.array_equal(before, after)  # inputs are left untouched
    ref = reference(origins, directions, max_range, circles, segments, ray_group, cg, sg)
    assert np.abs(out - ref).max() <= TOL
    assert (out < max_range).mean() > 0.05 and (out == max_range).any()
    moved = JitRayCaster(cell * 3.7)  # cell size and static/moving split never matter
    moved.set_static(circles, None, cg)
    assert np.array_equal(out, moved.cast(origins, directions, max_range, None, segments,
                                          ray_group, None, sg))


def test_swarm_with_walls_obstacles_and_own_groups():
    """The simulator's load: robots inside static walls (one shared grid), 11 rays each."""
    rng = np.random.default_rng(11)
    n, side = 400, 30.0
    centres = rng.uniform(0.3, side - 0.3, (n, 2))
    circles = np.column_stack([centres, np.full(n, 0.2)])
    groups = np.arange(1, n + 1)
    walls = np.array([[0, 0, side, 0], [side, 0, side, side], [side, side, 0, side],
                      [0, side, 0, 0]], float)
    boxes = np.vstack([box_edges(*rng.uniform(2, side - 2, 2), 0.5, 0.5, a)
                       for a in rng.uniform(0, 3, 16)])
    angles = (rng.uniform(-math.pi, math.pi, n)[:, None] + SONAR_ANGLES).ravel()
    origins, directions = np.repeat(centres, 11, axis=0), unit(angles)
    ray_group = np.repeat(groups, 11)
    static = (rng.uniform(2, side - 2, (16, 3)) * [1, 1, 0.01], np.vstack([walls, boxes]))
    out = both(origins, directions, 2.2, circles, None, 2.0, static, ray_group=ray_group,
               circle_group=groups)
    ref = reference(origins, directions, 2.2, np.vstack([circles, static[0]]), static[1],
                    ray_group, np.concatenate([groups, np.zeros(16, int)]))
    assert np.abs(out - ref).max() <= TOL and 0.1 < (out < 2.2).mean() < 0.9


def test_origin_inside_circle_and_group_rule():
    circles = np.array([[0.0, 0.0, 1.0], [3.0, 0.0, 0.5], [6.0, 0.0, 0.5]])
    segments = np.array([[2.0, -1.0, 2.0, 1.0]])
    origins, directions = np.full((5, 2), [0.2, 0.1]), unit(np.zeros(5))
    kw = dict(ray_group=np.array([0, 7, 1, 2, 3]), circle_group=np.array([7, 0, 2]),
              segment_group=np.array([1]))
    out = both(origins, directions, 10.0, circles, segments, **kw)
    assert out[0] == 0.0 and out[2] == 0.0  # starts inside circle 0 (not its group)
    assert out[1] == 1.8  # own circle skipped, then the segment
    ref = reference(origins, directions, 10.0, circles, segments, **kw)
    assert np.abs(out - ref).max() <= TOL
    ray_group = np.array([7, 7])  # own circle: skipped even from inside, as static shapes too
    out = both(origins[:2], directions[:2], 10.0, static=(circles, segments, kw["circle_group"]),
               ray_group=ray_group)
    assert np.array_equal(out, [1.8, 1.8])


def test_rays_along_and_parallel_to_segments_and_box_edges():
    segments = np.array([[1.0, 0.0, 4.0, 0.0], [1.0, 0.5, 4.0, 0.5], [6.0, -1.0, 6.0, 1.0],
                         [2.0, 0.0, 2.0, 0.0]])  # on the ray's line, parallel, crossing, point
    origins, directions = np.zeros((3, 2)), unit(np.array([0.0, math.pi, math.pi / 2]))
    out = both(origins, directions, 10.0, None, segments)
    assert np.array_equal(out, [6.0, 10.0, 10.0])  # the third passes beside the segments
    box = box_edges(5.0, 0.5, 2.0, 1.0)  # the ray runs along its bottom edge
    origins = np.array([[0.0, 0.0], [0.0, 1.0], [5.0, -3.0], [4.0, 0.0]])
    directions = unit(np.array([0.0, 0.0, math.pi / 2, 0.0]))  # the last starts on a corner
    out = both(origins, directions, 10.0, None, box, cell_size=0.5)
    assert np.allclose(out, [4.0, 4.0, 3.0, 0.0], atol=1e-12)
    assert np.abs(out - reference(origins, directions, 10.0, (), box)).max() <= TOL


def test_zero_directions_zero_range_and_tangents():
    circles = np.array([[5.0, 1.0, 1.0], [0.0, 0.0, 0.5], [8.0, 0.0, 0.5]])
    segments = np.array([[3.0, -1.0, 3.0, 1.0]])
    origins = np.array([[0.1, 0.0], [2.0, 0.0], [0.0, 0.0], [2.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    directions = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [3.0, 0.0],
                           [1.0, 0.0]])
    max_range = np.array([5.0, 5.0, 0.0, 0.0, 20.0, 0.0])
    out = both(origins, directions, max_range, circles, segments)
    # inside, nothing (zero direction), inside at range 0, nothing at range 0, the segment
    # (direction normalised), the segment at its start with range 0
    assert np.array_equal(out, [0.0, 5.0, 0.0, 0.0, 1.0, 0.0])
    tangent = both(np.zeros((1, 2)), unit(np.zeros(1)), 20.0, circles[:1])
    assert tangent[0] == 5.0


def test_empty_inputs():
    empty = np.zeros((0, 2))
    assert both(empty, empty, 1.0).shape == (0,)
    assert both(empty, empty, 1.0, np.ones((3, 3)), np.ones((2, 4))).shape == (0,)
    origins, directions = np.array([[0.0, 0.0], [3.0, -1.0]]), unit(np.array([0.3, 2.0]))
    assert np.array_equal(both(origins, directions, [2.0, 5.0]), [2.0, 5.0])
    assert np.array_equal(both(origins, directions, [2.0, 5.0], np.zeros((0, 3)),
                               np.zeros((0, 4))), [2.0, 5.0])
    # only never-binned shapes: zero-length segments
    assert np.array_equal(both(origins, directions, 3.0, None, [[0.0, 0.0, 0.0, 0.0]]),
                          [3.0, 3.0])


@pytest.mark.parametrize("offset", [1e4, 1e6, 1e9])
def test_huge_coordinates(offset):
    rng = np.random.default_rng(int(math.log10(offset)))
    circles, segments, cg, sg = random_scene(rng, 40, 8, 20.0)
    circles[:, :2] += offset
    segments += offset
    origins = rng.uniform(-4, 24, (200, 2)) + offset
    directions = unit(rng.uniform(-math.pi, math.pi, 200))
    max_range = rng.uniform(0.5, 15.0, 200)
    out = both(origins, directions, max_range, circles, segments, circle_group=cg,
               segment_group=sg, static=(np.array([[0.0, 0.0, 1.0]]), None))  # a far shape
    assert (out < max_range).mean() > 0.2
    if offset <= 1e4:  # pymunk's float arithmetic differs: 1e-9 m needs small coordinates
        ref = reference(origins, directions, max_range, circles, segments, None, cg, sg)
        assert np.abs(out - ref).max() <= TOL


def test_shapes_spanning_many_cells_and_long_rays():
    rng = np.random.default_rng(3)
    segments = np.array([[-30.0, -20.0, 30.0, 25.0], [0.0, 1e4, 1.0, 1e4],  # long, far
                         [-40.0, 0.0, 40.0, 0.5]])
    circles = np.array([[5.0, 0.0, 12.0], [1e4, 1e4, 1.0], [2.0, 9.0, 0.3]])
    origins = np.vstack([rng.uniform(-40, 40, (150, 2)), rng.uniform(9990, 10010, (50, 2)),
                         rng.uniform(-1e5, 1e5, (20, 2))])  # the last from far away
    directions = unit(rng.uniform(-math.pi, math.pi, 220))
    max_range = np.concatenate([rng.uniform(1.0, 80.0, 200), np.full(20, 3e5)])
    for cell in (0.01, 0.5, 2.0):  # 0.01 m: always buckets, coarsened grids
        out = both(origins, directions, max_range, circles, segments, cell)
    ref = reference(origins, directions, max_range, circles, segments)
    assert np.abs(out - ref).max() <= TOL and (out < max_range).mean() > 0.2


def test_moving_shapes_outside_the_static_grid():
    """Two grids (no shared geometry): static walls here, robots elsewhere and both."""
    rng = np.random.default_rng(8)
    walls = box_edges(0.0, 0.0, 10.0, 10.0)
    circles = np.column_stack([rng.uniform(-30, 30, (80, 2)), rng.uniform(0.1, 0.6, 80)])
    origins = rng.uniform(-30, 30, (400, 2))
    directions = unit(rng.uniform(-math.pi, math.pi, 400))
    out = both(origins, directions, 12.0, circles, None, 1.0, (None, walls))
    ref = reference(origins, directions, 12.0, circles, walls)
    assert np.abs(out - ref).max() <= TOL and (out < 12.0).mean() > 0.15


@pytest.mark.slow
def test_thread_counts_give_the_same_distances():
    rng = np.random.default_rng(4)
    circles, segments, cg, sg = random_scene(rng, 300, 30, 40.0)
    n = 20000  # above the threshold of the threads
    origins = rng.uniform(0, 40, (n, 2))
    directions = unit(rng.uniform(-math.pi, math.pi, n))
    caster, threads = JitRayCaster(), numba.get_num_threads()
    caster.set_static(None, segments, None, sg)
    args = (origins, directions, 5.0, circles, None, rng.integers(0, 4, n), cg)
    ref = reference(origins, directions, np.full(n, 5.0), circles, segments, args[5], cg, sg)
    policy.use(1)  # what the kernels read (coopsim/model/threads.py)
    try:
        one = caster.cast(*args)
    finally:
        policy.use(None)
    assert np.abs(one - ref).max() <= TOL
    policy.use(numba.config.NUMBA_NUM_THREADS)
    try:
        assert np.array_equal(caster.cast(*args), one)
    finally:
        policy.use(None)
    caster.cast(*(a[:10] if isinstance(a, np.ndarray) else a for a in args))  # one thread
    assert numba.get_num_threads() == threads  # ... and the count restored


def test_sonar_distances_as_the_sonar_module():
    rng = np.random.default_rng(9)
    n = 300
    poses = np.column_stack([rng.uniform(0, 20, (n, 2)), rng.uniform(-math.pi, math.pi, n)])
    radius, reach, groups = np.full(n, 0.2), rng.uniform(0.5, 3.0, n), np.arange(1, n + 1)
    circles = np.column_stack([poses[:, :2], radius])
    walls = box_edges(10.0, 10.0, 20.0, 20.0)
    caster = JitRayCaster()
    caster.set_static(None, walls)
    jit = sonar_distances(caster, poses, radius, SONAR_ANGLES, reach, groups, circles, groups,
                          None, None)
    # modules.Sonar's formula, with pymunk's distances
    k = len(SONAR_ANGLES)
    angles = (poses[:, 2:3] + SONAR_ANGLES).ravel()
    dist = reference(np.repeat(poses[:, :2], k, axis=0), unit(angles),
                     np.repeat(reach + radius, k), circles, walls, np.repeat(groups, k), groups)
    edge, r = np.repeat(radius, k), np.repeat(reach, k)
    sonar = np.where(dist >= r + edge, r, dist - edge).reshape(n, k)
    assert jit.shape == (n, k)
    assert np.abs(jit - sonar).max() <= TOL and 0.05 < (jit < reach[:, None]).mean() < 0.95


def test_make_caster():
    assert type(make_caster()) is JitRayCaster and make_caster(0.5).cell_size == 0.5


BAD = [
    ("cast", (np.zeros((2, 2)), np.zeros((3, 2)), 1.0, None, None), {}),
    ("cast", (np.zeros((1, 2)), np.ones((1, 2)), -1.0, None, None), {}),
    ("cast", (np.zeros((1, 2)), np.ones((1, 2)), np.inf, None, None), {}),
    ("cast", (np.zeros((1, 2)), np.ones((1, 2)), [1.0, 2.0], None, None), {}),
    ("cast", (np.zeros((1, 2)), np.ones((1, 2)), 1.0, np.zeros((1, 2)), None), {}),
    ("cast", (np.zeros((1, 2)), np.ones((1, 2)), 1.0, None, [[0.0, 0.0, 1.0]]), {}),
    ("cast", (np.zeros((1, 2)), np.ones((1, 2)), 1.0, [[0.0, 0.0, -1.0]], None), {}),
    ("cast", ([[np.nan, 0.0]], np.ones((1, 2)), 1.0, None, None), {}),
    ("cast", (np.zeros((1, 2)), [[np.inf, 0.0]], 1.0, None, None), {}),
    ("cast", (np.zeros((1, 2)), np.ones((1, 2)), 1.0, None, None), {"ray_group": [1, 2]}),
    ("cast", (np.zeros((1, 2)), np.ones((1, 2)), 1.0, [[0.0, 0.0, 1.0]], None),
     {"circle_group": [1, 2]}),
    ("set_static", (), {"segments": [[0.0, 0.0, np.nan, 1.0]]}),
    ("set_static", (), {"circles": [[0.0, 0.0, -1.0]]}),
    ("set_static", (), {"segments": np.zeros((2, 4)), "segment_group": [1]}),
]


@pytest.mark.parametrize("method, args, kwargs", BAD)
def test_invalid_input_raises(method, args, kwargs):
    with pytest.raises(ValueError):
        getattr(JitRayCaster(), method)(*args, **kwargs)


@pytest.mark.parametrize("cell_size", [0.0, -1.0, np.nan, np.inf])
def test_invalid_cell_size(cell_size):
    with pytest.raises(ValueError, match="cell_size"):
        JitRayCaster(cell_size)


def test_the_public_face_casts_a_fan():
    """coopsim.raycast: make a caster, give it the walls, cast a fan (sonar-style readings from
    the chassis edge)."""
    import coopsim.raycast as rc

    walls = np.array([[1.5, -5.0, 1.5, 5.0], [-5.0, 2.0, 5.0, 2.0]])  # x = 1.5 and y = 2 (m)
    poses = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, math.pi / 2]])
    angles = np.array([-0.5, 0.0, 0.5])
    caster = rc.make_caster()
    caster.set_static(segments=walls)
    out = [rc.cast_fan(caster, poses, np.full(2, 0.2), angles, np.full(2, 3.0),
                       np.array([1, 2]), None, None, None, None)]
    assert out[0][0, 1] == pytest.approx(1.5 - 0.2) and out[0][1, 1] == pytest.approx(2.0 - 0.2)
    assert out[0][0, 0] == pytest.approx(1.5 / math.cos(0.5) - 0.2)
    assert set(rc.__all__) <= set(dir(rc))
