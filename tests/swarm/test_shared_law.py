"""Shared control's group law (coopsim.swarm.shared): nearest points of boxes, cylinders and
spheres, the obstacles' push away from them, the neighbours' pushes cancelling inside the group,
the formation kept about the centroid, the person's velocity passed on, the speed cap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model.errors import ProtocolError
from coopsim.model.steering import Feedback, Steer
from coopsim.swarm.formations import line
from coopsim.swarm.shared import (SharedLaw, group_velocity, nearest_points, neighbour_push,
                                  obstacle_push)

# kind, x, y, z, yaw, half length, half width, half height
BOX = (0, 0.0, 0.0, 1.0, math.pi / 4, 0.5, 0.1, 1.0)
CYLINDER = (1, 2.0, 0.0, 1.0, 0.0, 0.25, 0.25, 1.0)
SPHERE = (2, 0.0, 3.0, 1.0, 0.0, 0.5, 0.5, 0.5)


def test_nearest_points_and_clearances_match_the_geometry():
    shapes = np.array([BOX, CYLINDER, SPHERE])
    p = np.array([[2.0, 1.0, 1.5],     # 1 m beside the cylinder's axis
                  [0.0, 3.0, 2.5],     # 1.5 m above the sphere's centre
                  [0.5, -0.5, 1.0]])   # off the box turned by 45 degrees
    nearest, clear = nearest_points(p, shapes)
    assert nearest[0, 1] == pytest.approx([2.0, 0.25, 1.5])
    assert clear[0, 1] == pytest.approx(0.75)
    assert nearest[1, 2] == pytest.approx([0.0, 3.0, 1.5])
    assert clear[1, 2] == pytest.approx(1.0)
    # the box's long side runs along (1, 1)/sqrt 2: the point (0.5, -0.5) is 1/sqrt 2 from
    # its axis, across its middle, its half width 0.1 nearer
    assert clear[2, 0] == pytest.approx(1 / math.sqrt(2) - 0.1)
    inside, clear_inside = nearest_points(np.array([[2.0, 0.1, 1.0]]), shapes)
    assert clear_inside[0, 1] == 0.0 and inside[0, 1] == pytest.approx([2.0, 0.1, 1.0])


def test_obstacles_push_away_within_their_influence_only():
    law = SharedLaw(influence=0.8)
    shapes = np.array([CYLINDER])
    push = obstacle_push(np.array([[2.0, 0.55, 1.0], [2.0, 1.5, 1.0], [2.0, 0.35, 3.0]]),
                         shapes, law)
    assert push[0, 1] > 0 and push[0, [0, 2]] == pytest.approx([0.0, 0.0])
    assert push[1] == pytest.approx([0.0, 0.0, 0.0])  # 1.25 m away: beyond its influence
    assert push[2] == pytest.approx([0.0, 0.0, 0.0])  # flying 1 m above its top


def test_the_groups_own_pushes_cancel_and_outsiders_push():
    law = SharedLaw(spacing=0.6)
    p = np.array([[0.0, 0.0, 1.0], [0.4, 0.0, 1.0], [0.0, 0.3, 1.0]])
    assert neighbour_push(p, np.zeros((0, 3)), law).sum(axis=0) == pytest.approx([0, 0, 0])
    outsider = neighbour_push(p, np.array([[-0.3, 0.0, 1.0]]), law).sum(axis=0)
    assert outsider[0] > 0  # away from the robot behind the group


def test_the_formation_rides_on_the_centroid_and_the_person_steers():
    law = SharedLaw(k_slot=1.0, v_max=10.0)
    offsets = line(3, 0.6)  # abreast across the heading, centred
    p = np.column_stack((offsets, np.ones(3)))
    v, obstacles, neighbours = group_velocity(p, offsets, 0.0, (0.5, 0.0, 0.0), 1.0,
                                              np.zeros((0, 8)), np.zeros((0, 3)), law)
    assert v == pytest.approx(np.tile([0.5, 0.0, 0.0], (3, 1)))  # in formation: just go
    assert obstacles == pytest.approx([0, 0, 0]) and neighbours == pytest.approx([0, 0, 0])
    moved = p + [3.0, 2.0, 0.0]  # anywhere: the slots move with the group
    v2, *_ = group_velocity(moved, offsets, 0.0, (0.5, 0.0, 0.0), 1.0, np.zeros((0, 8)),
                            np.zeros((0, 3)), law)
    assert v2 == pytest.approx(v)
    turned, *_ = group_velocity(p, offsets, math.pi / 2, (0.0, 0.0, 0.0), 1.0,
                                np.zeros((0, 8)), np.zeros((0, 3)), law)
    # a quarter turn: each robot heads for its slot turned about the centroid
    slots = offsets @ np.array([[0.0, 1.0], [-1.0, 0.0]])
    assert turned[:, :2] == pytest.approx(slots - p[:, :2])
    fast, *_ = group_velocity(p, offsets, 0.0, (9.0, 9.0, 0.0), 1.0, np.zeros((0, 8)),
                              np.zeros((0, 3)), SharedLaw(v_max=1.0))
    assert np.linalg.norm(fast, axis=1) == pytest.approx([1.0, 1.0, 1.0])


def test_steer_commands_are_checked_and_feedback_travels_as_data():
    assert Steer.parse("A", (0.5, 0.1)).velocity == (0.5, 0.1, 0.0)
    for data in ((60.0, 0.0), (0.0, 0.0, 0.0, 11.0), (float("nan"), 0.0)):
        with pytest.raises(ProtocolError) as err:
            Steer.parse("A", data)
        assert err.value.code == 4
    fb = Feedback("A", 7, 0.07, 2, (1.0, 2.0, 3.0), (1.0, 2.0, 3.0), (0.0, 0.0, 0.0),
                  (0.0, 0.0, 1.0), (0.5, 0.0, 0.0))
    assert Feedback.of_wire("A", (7, 2), fb.data) == fb
