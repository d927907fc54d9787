"""Formation geometry (counts, spacing, heading, anchors) and optimal slot assignment."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from coopsim.model.errors import CoopsimError
from coopsim.swarm import SwarmError, assign, formations
from coopsim.swarm.formations import FORMATIONS, Formation

D = 0.6


def unit(angle):
    return np.array([math.cos(angle), math.sin(angle)])


@pytest.mark.parametrize("name", sorted(FORMATIONS))
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_every_formation_gives_n_distinct_slots_at_least_spacing_apart(name, n):
    slots = FORMATIONS[name](n, D, (1.0, -2.0), 0.7)
    assert slots.shape == (n, 2)
    if n > 1:
        gaps = np.linalg.norm(slots[:, None] - slots[None], axis=2)[np.triu_indices(n, 1)]
        assert gaps.min() >= D - 1e-9


@pytest.mark.parametrize("name", sorted(FORMATIONS))
def test_empty_formation_is_refused_with_a_reason(name):
    with pytest.raises(SwarmError, match="empty formation.*n = 0"):
        FORMATIONS[name](0, D)
    assert issubclass(SwarmError, CoopsimError)


@pytest.mark.parametrize("heading", [0.0, 0.9, -2.4])
def test_line_is_abreast_perpendicular_to_heading_and_centred(heading):
    slots = formations.line(4, D, (3.0, 1.0), heading)
    steps = np.diff(slots, axis=0)
    assert np.allclose(np.linalg.norm(steps, axis=1), D)
    assert np.allclose(steps @ unit(heading), 0.0)  # no step along the heading
    assert np.allclose(steps / D, unit(heading + math.pi / 2))  # right to left
    assert np.allclose(slots.mean(axis=0), (3.0, 1.0))


@pytest.mark.parametrize("heading", [0.0, 2.0])
def test_column_is_one_behind_the_other(heading):
    slots = formations.column(5, D, (0.0, 0.0), heading)
    steps = np.diff(slots, axis=0)
    assert np.allclose(steps, -D * unit(heading))  # each one spacing further back
    assert np.allclose(slots.mean(axis=0), 0.0)


@pytest.mark.parametrize("heading", [0.0, 1.2])
def test_wedge_points_along_heading_with_45_degree_arms(heading):
    n = 7
    slots = formations.wedge(n, D, (2.0, 2.0), heading)
    fwd, left = unit(heading), unit(heading + math.pi / 2)
    rel = slots - slots[0]
    along, across = rel @ fwd, rel @ left
    assert np.argmax(slots @ fwd) == 0 and np.all(along[1:] < 0)  # apex in front
    assert np.allclose(np.abs(along[1:]), np.abs(across[1:]))  # 45 degrees
    left_arm = np.r_[[0], np.nonzero(across > 0)[0]]
    right_arm = np.r_[[0], np.nonzero(across < 0)[0]]
    assert len(left_arm) == 4 and len(right_arm) == 4
    for arm in (left_arm, right_arm):
        pts = slots[arm[np.argsort(-along[arm])]]
        assert np.allclose(np.linalg.norm(np.diff(pts, axis=0), axis=1), D)
    assert np.allclose(slots.mean(axis=0), (2.0, 2.0))


def test_inverse_wedge_opens_forward():
    fwd = unit(0.5)
    slots = formations.inverse_wedge(5, D, (0.0, 0.0), 0.5)
    along = (slots - slots[0]) @ fwd
    assert np.argmin(slots @ fwd) == 0 and np.all(along[1:] > 0)  # apex at the rear
    wedge = formations.wedge(5, D, (0.0, 0.0), 0.5)
    left = unit(0.5 + math.pi / 2)
    assert np.allclose(slots @ left, wedge @ left)  # same spread sideways
    assert np.allclose(slots @ fwd, -(wedge @ fwd))  # mirrored front to back


@pytest.mark.parametrize("n", [1, 3, 8])
def test_circle_uses_the_papers_radius_n_times_d(n):
    slots = formations.circle(n, D, (1.0, 1.0), 0.3)
    rel = slots - (1.0, 1.0)
    assert np.allclose(np.linalg.norm(rel, axis=1), n * D)
    angles = np.arctan2(rel[:, 1], rel[:, 0])
    assert np.allclose(np.cos(angles - 0.3 - 2 * math.pi * np.arange(n) / n), 1.0)
    assert np.allclose(np.linalg.norm(formations.circle(n, D, radius=1.5), axis=1), 1.5)


@pytest.mark.parametrize("n", [1, 3, 6])
def test_half_circle_is_the_papers_270_degree_arc_centred_behind(n):
    heading = 1.0
    slots = formations.half_circle(n, D, (0.0, 0.0), heading)
    assert np.allclose(np.linalg.norm(slots, axis=1), n * D)
    angles = np.unwrap(np.arctan2(slots[:, 1], slots[:, 0]))
    if n > 1:
        assert np.allclose(np.diff(angles), math.radians(270) / n)  # the paper's step
    mid = (angles[0] + angles[-1]) / 2
    assert math.isclose(math.cos(mid - (heading + math.pi)), 1.0)  # arc on the near side
    assert np.all(slots @ unit(heading) < 0.75 * n * D)  # the far side stays open


def test_block_is_compact_and_centred():
    slots = formations.block(50, D, (0.0, 0.0), 0.0)
    assert np.allclose(slots.mean(axis=0), 0.0)
    assert np.ptp(slots[:, 1]) <= 7 * D + 1e-9 and np.ptp(slots[:, 0]) <= 6 * D + 1e-9


def test_formation_dataclass_checks_its_name_and_dispatches():
    with pytest.raises(SwarmError, match="unknown formation"):
        Formation("square")
    assert np.allclose(Formation("circle", 0.5, radius=2.0).slots(4, (1, 1), 0.0)[0], (3, 1))
    assert np.allclose(Formation("line", 0.5).offsets(3), formations.line(3, 0.5))


@pytest.mark.parametrize("seed", range(12))
def test_assignment_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    k = n + int(rng.integers(0, 2))
    pos, slots = rng.uniform(-5, 5, (n, 2)), rng.uniform(-5, 5, (k, 2))
    got = assign(pos, slots)
    assert len(set(got.tolist())) == n
    cost = np.linalg.norm(pos - slots[got], axis=1).sum()
    best = min(sum(np.linalg.norm(pos[i] - slots[p[i]]) for i in range(n))
               for p in itertools.permutations(range(k), n))
    assert cost == pytest.approx(best, abs=1e-9)


def test_assignment_refuses_empty_squads_and_too_few_slots():
    with pytest.raises(SwarmError, match="0 robots"):
        assign(np.zeros((0, 2)), np.zeros((3, 2)))
    with pytest.raises(SwarmError, match="only 1 slots"):
        assign(np.zeros((2, 2)), np.zeros((1, 2)))
