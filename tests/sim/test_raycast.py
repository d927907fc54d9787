"""The ray caster (JitRayCaster) against pymunk's ``Space.segment_query_first`` on the same scenes.

Every scene is built twice: as numpy arrays for ``RayCaster`` and as static shapes in a real
``pymunk.Space`` (circles, and boxes as radius-0 segments or polygons), each shape with a
``ShapeFilter`` group so that both honour the group rule. Distances must agree within 1e-6 m.
pymunk ignores a circle that contains the query's start; RayCaster reports 0 there, so the
reference applies that one documented difference explicitly.
"""

from __future__ import annotations

import math

import numpy as np
import pymunk
import pytest

from coopsim.raycast import jitcast as raycast
from coopsim.raycast.jitcast import JitRayCaster as RayCaster

# NaN or division warnings fail the tests (only those: a file another test left open, collected
# here, is not this test's)
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
TOL = 1e-6  # m


def reference(origins, directions, max_range, circles=(), segments=(), ray_group=None,
              circle_group=None, segment_group=None, polys=()):
    """Distances of the rays (m) from pymunk segment queries, one per ray."""
    circles, segments = np.reshape(circles, (-1, 3)), np.reshape(segments, (-1, 4))
    n = len(origins)
    ray_group = np.zeros(n, int) if ray_group is None else np.asarray(ray_group)
    circle_group = np.zeros(len(circles), int) if circle_group is None else np.asarray(circle_group)
    segment_group = np.zeros(len(segments), int) if segment_group is None else segment_group
    space = pymunk.Space()
    shapes = []
    for (x, y, r), g in zip(circles.tolist(), np.asarray(circle_group).tolist()):
        shapes.append(pymunk.Circle(space.static_body, r, (x, y)))
        shapes[-1].filter = pymunk.ShapeFilter(group=g)
    for (x1, y1, x2, y2), g in zip(segments.tolist(), np.asarray(segment_group).tolist()):
        shapes.append(pymunk.Segment(space.static_body, (x1, y1), (x2, y2), 0))
        shapes[-1].filter = pymunk.ShapeFilter(group=g)
    shapes += [pymunk.Poly(space.static_body, p, radius=0) for p in polys]
    if shapes:
        space.add(*shapes)
    max_range = np.broadcast_to(np.asarray(max_range, float), (n,))
    out = max_range.copy()
    for i in range(n):
        a, d, m, g = origins[i], directions[i], float(max_range[i]), int(ray_group[i])
        hit = space.segment_query_first(tuple(a), (a[0] + d[0] * m, a[1] + d[1] * m), 0,
                                        pymunk.ShapeFilter(group=g))
        if hit is not None:
            out[i] = hit.alpha * m
    if len(circles) and n:  # RayCaster's convention: a start inside a circle hits it at 0
        inside = np.hypot(*(origins[:, None, :] - circles[None, :, :2]).transpose(2, 0, 1))
        inside = inside < circles[None, :, 2] - 1e-9
        inside &= (ray_group[:, None] == 0) | (ray_group[:, None] != circle_group[None, :])
        out[inside.any(axis=1)] = 0.0
    return out


def box_edges(cx, cy, w, h, angle=0.0):
    """(4, 4) segments of a w x h box centred on (cx, cy), rotated by angle (rad)."""
    c, s = math.cos(angle), math.sin(angle)
    corners = [(cx + c * x - s * y, cy + s * x + c * y)
               for x, y in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))]
    return np.array([[*corners[i], *corners[(i + 1) % 4]] for i in range(4)])


def cast(circles, segments, origins, directions, max_range, cell_size=2.0, **groups):
    """Casts with a fresh RayCaster; shapes passed per call (dynamic)."""
    return RayCaster(cell_size).cast(origins, directions, max_range, circles, segments, **groups)


def unit(angles):
    return np.column_stack([np.cos(angles), np.sin(angles)])


def test_empty_scene_returns_max_range():
    origins = np.array([[0.0, 0.0], [3.0, -1.0]])
    directions = unit(np.array([0.3, 2.0]))
    out = cast(np.zeros((0, 3)), np.zeros((0, 4)), origins, directions, np.array([2.0, 5.0]))
    assert out.dtype == np.float64 and out.shape == (2,)
    assert np.array_equal(out, [2.0, 5.0])
    assert np.array_equal(reference(origins, directions, [2.0, 5.0]), out)
    assert cast(None, None, np.zeros((0, 2)), np.zeros((0, 2)), 1.0).shape == (0,)


def test_simple_hits_match_pymunk():
    circles = np.array([[5.0, 0.0, 1.0], [0.0, 7.0, 0.5]])
    segments = np.array([[-3.0, -5.0, -3.0, 5.0]])
    origins = np.zeros((4, 2))
    directions = unit(np.array([0.0, math.pi / 2, math.pi, -math.pi / 2]))
    out = cast(circles, segments, origins, directions, 10.0)
    assert np.allclose(out, [4.0, 6.5, 3.0, 10.0], atol=1e-12)
    assert np.allclose(out, reference(origins, directions, 10.0, circles, segments), atol=TOL)


def test_origin_inside_circle_hits_at_zero_unless_own_group():
    circles = np.array([[0.0, 0.0, 1.0], [3.0, 0.0, 0.5]])
    origins = np.array([[0.2, 0.1], [0.2, 0.1]])
    directions = unit(np.array([0.0, 0.0]))
    out = cast(circles, None, origins, directions, 5.0, ray_group=np.array([0, 7]),
               circle_group=np.array([7, 0]))
    assert out[0] == 0.0
    assert out[1] == pytest.approx(3.0 - math.sqrt(0.24) - 0.2, abs=1e-12)  # own one skipped
    ref = reference(origins, directions, 5.0, circles, ray_group=[0, 7], circle_group=[7, 0])
    assert np.allclose(out, ref, atol=TOL)


def test_tangent_hits_and_segment_endpoints():
    circles = np.array([[5.0, 1.0, 1.0], [5.0, -4.0, 1.0 - 1e-9]])  # tangent, and just missed
    segments = np.array([[8.0, 0.0, 8.0, 5.0], [3.0, -4.0, 6.0, -4.0]])  # endpoint on ray 0
    origins = np.array([[0.0, 0.0], [0.0, -3.0], [0.0, -4.0]])
    directions = unit(np.zeros(3))
    out = cast(circles, segments, origins, directions, 20.0)
    assert out[0] == 5.0  # tangent point, before the segment endpoint at 8
    assert out[1] == 20.0
    ref = reference(origins, directions, 20.0, circles, segments)
    assert np.allclose(out, ref, atol=TOL)
    out = cast(None, segments[:1], origins[:1], directions[:1], 20.0)
    assert out[0] == 8.0 and reference(origins[:1], directions[:1], 20.0, (), segments[:1]) == 8.0


def test_hits_at_max_range():
    circles = np.array([[6.0, 0.0, 1.0]])  # entry at exactly 5
    origins, directions = np.zeros((3, 2)), unit(np.zeros(3))
    max_range = np.array([5.0, 5.0 - 1e-6, 5.0 + 1e-6])
    out = cast(circles, None, origins, directions, max_range)
    assert np.array_equal(out, [5.0, 5.0 - 1e-6, 5.0])
    assert np.allclose(out, reference(origins, directions, max_range, circles), atol=TOL)
    segments = np.array([[4.0, -1.0, 4.0, 1.0]])
    out = cast(None, segments, origins, directions, max_range - 1.0)
    assert np.array_equal(out, [4.0, 4.0 - 1e-6, 4.0])
    assert np.allclose(out, reference(origins, directions, max_range - 1, (), segments), atol=TOL)


def test_parallel_and_collinear_segments_are_never_hit():
    segments = np.array([[1.0, 0.0, 4.0, 0.0],  # on the ray's line
                         [1.0, 0.5, 4.0, 0.5],  # parallel
                         [6.0, -1.0, 6.0, 1.0]])  # crossing, behind the others
    origins, directions = np.zeros((2, 2)), unit(np.array([0.0, math.pi]))
    out = cast(None, segments, origins, directions, 10.0)
    assert np.array_equal(out, [6.0, 10.0])
    assert np.allclose(out, reference(origins, directions, 10.0, (), segments), atol=TOL)
    box = box_edges(5.0, 0.5, 2.0, 1.0)  # the ray runs along its bottom edge
    out = cast(None, box, origins[:1], directions[:1], 10.0)
    assert out[0] == 4.0
    assert np.allclose(out, reference(origins[:1], directions[:1], 10.0, (), box), atol=TOL)


def test_zero_length_segments_are_ignored_without_warnings():
    segments = np.array([[2.0, 0.0, 2.0, 0.0], [3.0, -1.0, 3.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    origins, directions = np.zeros((2, 2)), unit(np.array([0.0, 1.0]))
    out = cast(None, segments, origins, directions, 5.0)
    assert np.array_equal(out, [3.0, 5.0])
    # pymunk agrees, except for a zero-length segment at the start, which it reports hit at 0
    assert np.array_equal(reference(origins, directions, 5.0, (), segments[:2]), out)


def test_rays_without_candidates_and_degenerate_rays():
    circles = np.array([[0.0, 0.0, 1.0]])
    origins = np.array([[100.0, 100.0], [3.0, 0.0], [-50.0, 0.0], [2.0, 0.0]])
    directions = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])  # last: no direction
    out = cast(circles, None, origins, directions, np.array([5.0, 5.0, 5.0, 5.0]))
    assert np.array_equal(out, [5.0, 5.0, 5.0, 5.0])
    back = np.array([[-1.0, -1.0], [-1.0, 0.0]])  # towards the circle
    out = cast(circles, None, origins[:2], back, np.array([200.0, 5.0]))
    assert out[1] == 2.0 and out[0] == pytest.approx(math.hypot(100, 100) - 1.0, abs=1e-9)


def test_only_unbinned_shapes_and_near_vertical_rays():
    circles = np.array([[0.0, 0.0, 30.0]])  # spans > 1024 cells of 0.05 m: tested by all rays
    segments = np.array([[40.0, 1.0, 40.0, 1.0]])  # zero length: never binned
    origins = np.array([[35.0, 0.0], [35.0, 0.0], [31.0, 0.0], [0.0, 0.0]])
    directions = np.array([[-1.0, 0.0], [1e-310, 1.0], [1e-300, -1.0], [1.0, 0.0]])
    out = cast(circles, segments, origins, directions, 10.0, cell_size=0.05)
    assert np.allclose(out, [5.0, 10.0, 10.0, 0.0], atol=1e-12)
    circles = np.vstack([circles, [[35.0, 5.0, 0.5], [0.5, 35.0, 0.5]]])  # binned, grid x >= 0
    origins[2], directions[2] = (0.0, 31.0), (1e-310, 1.0)  # x moves by a subnormal amount
    out = cast(circles, segments, origins, directions, 10.0, cell_size=0.05)
    assert np.allclose(out, [5.0, 4.5, 4.0, 0.0], atol=1e-12)
    segments = np.array([[1.0, -1.0, 1.0 + 1e-300, 1.0], [1.0, 0.0, 3.0, 1e-310]])
    out = cast(None, segments, np.zeros((2, 2)), np.array([[1.0, 0.0], [-1.0, 0.0]]), 5.0)
    assert np.array_equal(out, [1.0, 5.0])  # nearly vertical and nearly parallel segments
    out = cast(circles, None, np.zeros((0, 2)), np.zeros((0, 2)), 1.0)
    assert out.shape == (0,)


def test_directions_are_normalised_and_max_range_may_vary():
    circles = np.array([[5.0, 0.0, 1.0]])
    out = cast(circles, None, np.zeros((2, 2)), np.array([[3.0, 0.0], [0.5, 0.0]]), [3.0, 10.0])
    assert np.array_equal(out, [3.0, 4.0])


def test_group_rule():
    circles = np.array([[3.0, 0.0, 0.5], [6.0, 0.0, 0.5]])
    segments = np.array([[2.0, -1.0, 2.0, 1.0]])
    origins, directions = np.zeros((4, 2)), unit(np.zeros(4))
    kw = dict(ray_group=np.array([0, 1, 2, 3]), circle_group=np.array([2, 0]),
              segment_group=np.array([1]))
    out = cast(circles, segments, origins, directions, 10.0, **kw)
    assert np.array_equal(out, [2.0, 2.5, 2.0, 2.0])
    assert np.allclose(out, reference(origins, directions, 10.0, circles, segments, **kw),
                       atol=TOL)
    kw["segment_group"] = np.array([2])
    out = cast(circles, segments, origins, directions, 10.0, **kw)
    assert out[2] == 5.5  # own segment and own circle skipped, group-0 circle hit


def random_scene(rng, n_circles, n_boxes, side):
    """Random circles, rotated boxes (as segments) and a few long walls, with groups."""
    circles = np.column_stack([rng.uniform(0, side, (n_circles, 2)),
                               rng.uniform(0.05, 1.0, n_circles)])
    boxes = [box_edges(*rng.uniform(0, side, 2), *rng.uniform(0.1, 3.0, 2),
                       rng.uniform(0, math.pi)) for _ in range(n_boxes)]
    walls = rng.uniform(-side * 0.2, side * 1.2, (3, 4))
    segments = np.vstack(boxes + [walls, [[1.0, 1.0, 1.0, 1.0]]])
    circle_group = rng.integers(0, 4, n_circles)
    segment_group = rng.integers(0, 4, len(segments))
    return circles, segments, circle_group, segment_group


@pytest.mark.parametrize("seed", range(24))
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
    caster = RayCaster(cell)
    caster.set_static(segments=segments, segment_group=sg)
    inputs = [a.copy() for a in (origins, directions, max_range, circles, ray_group, cg)]
    out = caster.cast(origins, directions, max_range, circles, None, ray_group, cg)
    for before, after in zip(inputs, (origins, directions, max_range, circles, ray_group, cg)):
        assert np.array_equal(before, after)  # inputs are left untouched
    ref = reference(origins, directions, max_range, circles, segments, ray_group, cg, sg)
    assert np.abs(out - ref).max() <= TOL
    assert (out < max_range).mean() > 0.05 and (out == max_range).any()
    same = RayCaster(cell * 3.7).cast(origins, directions, max_range, circles, segments,
                                     ray_group, cg, sg)
    assert np.array_equal(out, same)  # the cell size and static/dynamic split never matter


def test_boxes_as_polygons_match_their_edges():
    rng = np.random.default_rng(7)
    centres = rng.uniform(2, 18, (15, 2))
    boxes = [box_edges(x, y, 1.0, 0.6, a) for (x, y), a in zip(centres, rng.uniform(0, 3, 15))]
    polys = [[tuple(e[:2]) for e in b] for b in boxes]
    origins = rng.uniform(-2, 22, (400, 2))
    inside = np.zeros(len(origins), bool)
    for (x, y) in centres:
        inside |= np.hypot(origins[:, 0] - x, origins[:, 1] - y) < 0.6
    origins = origins[~inside]  # pymunk polygons ignore a start inside them
    directions = unit(rng.uniform(-math.pi, math.pi, len(origins)))
    out = cast(None, np.vstack(boxes), origins, directions, 6.0, cell_size=1.5)
    ref = reference(origins, directions, 6.0, polys=polys)
    assert np.abs(out - ref).max() <= TOL and (out < 6.0).mean() > 0.1


def test_huge_shapes_long_rays_and_coarse_tables():
    rng = np.random.default_rng(3)
    segments = np.array([[-30.0, -20.0, 30.0, 25.0], [0.0, 1e4, 1.0, 1e4]])  # far apart
    circles = np.array([[5.0, 0.0, 12.0], [1e4, 1e4, 1.0], [2.0, 9.0, 0.3]])
    origins = np.vstack([rng.uniform(-40, 40, (150, 2)), rng.uniform(9990, 10010, (50, 2))])
    directions = unit(rng.uniform(-math.pi, math.pi, 200))
    max_range = rng.uniform(1.0, 80.0, 200)
    # 0.01 m cells: the wall and big circle span > 1024 cells (always tested), the long rays
    # span > 1024 columns (tested against everything), the table is merged k x k.
    out = cast(circles, segments, origins, directions, max_range, cell_size=0.01)
    ref = reference(origins, directions, max_range, circles, segments)
    assert np.abs(out - ref).max() <= TOL and (out < max_range).mean() > 0.2
    assert np.array_equal(out, cast(circles, segments, origins, directions, max_range))


def test_long_rays_on_a_fine_grid():
    rng = np.random.default_rng(5)
    circles = np.column_stack([rng.uniform(0, 16, (60, 2)), rng.uniform(0.05, 0.4, 60)])
    segments = np.vstack([box_edges(*rng.uniform(0, 16, 2), 0.8, 0.5, a)
                          for a in rng.uniform(0, 3, 8)])
    origins = rng.uniform(-1, 17, (200, 2))
    directions = unit(rng.uniform(-math.pi, math.pi, 200))
    max_range = rng.uniform(0.5, 25.0, 200)  # the longest span > 1024 columns of 0.01 m
    out = cast(circles, segments, origins, directions, max_range, cell_size=0.01)
    ref = reference(origins, directions, max_range, circles, segments)
    assert np.abs(out - ref).max() <= TOL and (out < max_range).mean() > 0.3


def test_swarm_load_with_own_chassis_groups():
    rng = np.random.default_rng(11)
    n = 150
    side = math.sqrt(n) * 1.5
    centres = rng.uniform(0.2, side - 0.2, (n, 2))
    circles = np.column_stack([centres, np.full(n, 0.2)])
    angles = (rng.uniform(-math.pi, math.pi, n)[:, None] + np.linspace(-1.57, 1.57, 11)).ravel()
    directions = unit(angles)
    origins = np.repeat(centres, 11, axis=0) + 0.2 * directions  # on the chassis edge
    groups = np.arange(1, n + 1)
    walls = np.array([[0, 0, side, 0], [side, 0, side, side], [side, side, 0, side],
                      [0, side, 0, 0]], float)
    caster = RayCaster()
    caster.set_static(segments=walls)
    out = caster.cast(origins, directions, 2.0, circles, None, np.repeat(groups, 11), groups)
    ref = reference(origins, directions, 2.0, circles, walls, np.repeat(groups, 11), groups)
    assert np.abs(out - ref).max() <= TOL and 0.1 < (out < 2.0).mean() < 0.9


def test_invalid_input_is_rejected():
    caster = RayCaster()
    with pytest.raises(ValueError):
        caster.cast(np.zeros((2, 2)), np.zeros((3, 2)), 1.0, None, None)
    with pytest.raises(ValueError):
        caster.cast(np.zeros((1, 2)), np.ones((1, 2)), -1.0, None, None)
    with pytest.raises(ValueError):
        caster.cast(np.zeros((1, 2)), np.ones((1, 2)), 1.0, np.zeros((1, 2)), None)
    with pytest.raises(ValueError):
        caster.set_static(segments=[[0.0, 0.0, np.nan, 1.0]])
    with pytest.raises(ValueError):
        caster.set_static(circles=[[0.0, 0.0, -1.0]])
    with pytest.raises(ValueError):
        caster.cast(np.zeros((1, 2)), np.ones((1, 2)), 1.0, None, None, ray_group=[1, 2])
    with pytest.raises(ValueError):
        RayCaster(0.0)


@pytest.fixture(autouse=True, params=["grid", "all-pairs"])
def _path(request, monkeypatch):
    """Run every test through both ways of casting: the grid and testing all pairs."""
    monkeypatch.setattr(raycast, "_ALL_PAIRS", 0 if request.param == "grid" else 10**9)
