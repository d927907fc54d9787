"""Squads: decomposition into per-robot orders, unreachable goals, and whole squad moves in the
unicycle simulation of tests/swarm/swarm_sim.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model.specs import FloorSpec, ObjectSpec
from coopsim.swarm import (Attack, Formation, GoTo, Sequence, Squad, SquadGoTo, SwarmError,
                           build_grid)
from coopsim.swarm.structure import Track

from swarm_sim import KinematicRobot, run

FLOOR = FloorSpec(10.0, 8.0)
PILLAR = ObjectSpec("p", "cylinder", (1.0, 1.0, 0.5), (0.0, 0.0, 0.25))
WALL = ObjectSpec("w", "box", (0.3, 4.0, 0.5), (2.5, 2.0, 0.25))  # leaves a way below it
SPACING = 0.7


@pytest.fixture(scope="module")
def grid():
    return build_grid(FLOOR, [PILLAR, WALL], resolution=0.1, robot_radius=0.2, clearance=0.1)


def squad_of(grid, starts, formation="wedge", keep=True):
    robots = [KinematicRobot(x, y, 0.0) for x, y in starts]
    return Squad(robots, grid, Formation(formation, SPACING), keep=keep), robots


def positions(robots):
    return np.array([(r.x, r.y) for r in robots])


def legs_clear(grid, start, order: Sequence) -> bool:
    pts = np.vstack([start] + [(c.x, c.y) for c in order.commands])
    return bool(grid.segments_free(pts[:-1], pts[1:]).all())


def test_without_keeping_a_command_is_one_clear_goto_sequence_per_robot(grid):
    squad, robots = squad_of(grid, [(-4.0, 1.0), (-4.0, 0.0), (-4.0, -1.0)], keep=False)
    orders = squad.command(SquadGoTo(4.0, 1.0))
    assert len(orders) == 3 and all(isinstance(o, Sequence) for o in orders)
    assert all(isinstance(c, GoTo) for o in orders for c in o.commands)
    for robot, order in zip(robots, orders):
        assert legs_clear(grid, (robot.x, robot.y), order)
        assert robot is squad.robots[orders.index(order)]
    assert squad.current == SquadGoTo(4.0, 1.0)
    assert [c.command for c in squad.controllers] == list(orders)
    ends = np.array([(o.commands[-1].x, o.commands[-1].y) for o in orders])
    assert np.allclose(ends.mean(axis=0), (4.0, 1.0), atol=0.05)  # formation centred on goal


def test_keeping_gathers_clear_then_tracks_a_slot_ending_on_the_goal(grid):
    squad, robots = squad_of(grid, [(-4.0, 1.0), (-4.0, 0.0), (-4.0, -1.0)])
    orders = squad.command(SquadGoTo(4.0, 1.0))
    assert len(orders) == 3 and all(isinstance(o, Sequence) for o in orders)
    for robot, order in zip(robots, orders):
        *gather, track = order.commands
        assert all(isinstance(c, GoTo) for c in gather) and isinstance(track, Track)
        assert track.structure is squad.structure
        pts = np.vstack([(robot.x, robot.y)] + [(c.x, c.y) for c in gather])
        assert bool(grid.segments_free(pts[:-1], pts[1:]).all())
    ends = np.array([(o.commands[-1].x, o.commands[-1].y) for o in orders])
    assert np.allclose(ends.mean(axis=0), (4.0, 1.0), atol=0.05)  # formation centred on goal
    assert sorted(t.index for t in (o.commands[-1] for o in orders)) == [0, 1, 2]


def test_unreachable_goal_raises_and_the_squad_keeps_its_command(grid):
    squad, robots = squad_of(grid, [(-4.0, 1.0), (-4.0, 0.0), (-4.0, -1.0)])
    squad.snap = 0.3  # the pillar's inflated edge is 0.8 m from its centre
    first = squad.command(SquadGoTo(-2.0, 2.0))
    for goal in [(0.0, 0.0), (30.0, 0.0)]:  # inside the pillar; off the floor
        with pytest.raises(SwarmError, match="^unreachable: "):
            squad.command(SquadGoTo(*goal))
    assert squad.current == SquadGoTo(-2.0, 2.0)
    assert [c.command for c in squad.controllers] == list(first)


def test_empty_squad_is_refused(grid):
    with pytest.raises(SwarmError, match="empty squad"):
        Squad([], grid).command(SquadGoTo(1.0, 1.0))


def arrive(squad, robots, max_time=90.0):
    t = run(robots, squad.step, squad.arrived, max_time=max_time)
    assert squad.arrived(), f"not there after {t:.0f} s"
    return t


def test_squad_goto_arrives_in_formation(grid):
    squad, robots = squad_of(grid, [(-4.2, 1.5), (-3.5, -0.5), (-4.0, -2.5)])
    orders = squad.goto(4.0, -1.0)
    arrive(squad, robots)
    got = positions(robots)
    want = Formation("wedge", SPACING).slots(3, (4.0, -1.0), squad.heading)
    assert np.abs(got - want[squad.last_plan.slot_of]).max() <= squad.tolerance + 0.02
    gaps = np.linalg.norm(got[:, None] - got[None], axis=2)[np.triu_indices(3, 1)]
    assert gaps.min() >= SPACING - 2 * squad.tolerance
    assert got[:, 0].min() > 2.5  # they went round the wall
    assert all(len(o.commands) >= 2 for o in orders)  # gathered first, then travelled


def test_squad_gathers_at_its_centroid(grid):
    starts = [(-4.0, 3.0), (-1.0, -3.0), (-3.5, -2.0), (-2.0, 2.5)]
    squad, robots = squad_of(grid, starts, "line")
    squad.gather(heading=math.pi / 2)
    arrive(squad, robots)
    got = positions(robots)
    want = Formation("line", SPACING).slots(4, np.mean(starts, axis=0), math.pi / 2)
    assert np.abs(got - want[squad.last_plan.slot_of]).max() <= squad.tolerance + 0.02


def test_defend_surrounds_the_object_at_the_radius(grid):
    squad, robots = squad_of(grid, [(-4.0, 1.0), (-4.0, 0.0), (-4.0, -1.0)])
    squad.defend((0.0, 0.0), radius=1.2)
    arrive(squad, robots)
    dist = np.linalg.norm(positions(robots), axis=1)
    assert np.allclose(dist, 1.2, atol=squad.tolerance + 0.02)
    got = positions(robots)
    angles = np.sort(np.arctan2(got[:, 1], got[:, 0]))
    assert np.diff(np.r_[angles, angles[0] + 2 * math.pi]).min() > 1.8  # about 120 deg apart


def test_attack_re_plans_from_where_the_squad_is_and_keeps_the_slots(grid):
    squad, robots = squad_of(grid, [(-4.0, -2.0), (-4.0, -3.0), (-3.0, -2.5)])
    squad.attack((4.0, -2.0))
    first = squad.last_plan
    run(robots, squad.step, lambda: positions(robots)[:, 0].mean() > -1.0, max_time=40)
    orders = squad.command(Attack((4.0, -1.5)))  # the target moved 0.5 m
    plan = squad.last_plan
    assert np.array_equal(plan.slot_of, first.slot_of)
    assert plan.path.cells[0] == first.path.cells[0]  # the previous path was re-used...
    assert np.allclose(plan.turns[0], positions(robots).mean(axis=0))  # ...from here on
    for robot, order in zip(robots, orders):
        assert legs_clear(grid, (robot.x, robot.y), order)
    arrive(squad, robots)
    dist = np.linalg.norm(positions(robots) - (4.0, -1.5), axis=1)
    assert np.allclose(dist, 3 * SPACING, atol=squad.tolerance + 0.02)  # the paper's n * d
