"""Formation keeping (coopsim/swarm/structure.py) in the unicycle simulation of
tests/swarm/swarm_sim.py: the shape holds on the way, the squad paces on its slowest member,
it arrives formed facing the ordered heading; and the squad_shape rule's rigid fit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model.specs import FloorSpec, ObjectSpec
from coopsim.swarm.formations import shape_error
from coopsim.swarm import Formation, Squad, SquadGoTo, build_grid
from coopsim.swarm.structure import VirtualStructure

from swarm_sim import KinematicRobot, run

FLOOR = FloorSpec(16.0, 10.0)


@pytest.fixture(scope="module")
def grid():
    return build_grid(FLOOR, [], resolution=0.1, robot_radius=0.2, clearance=0.1)


def _rms_shape(robots, offsets) -> float:
    pos = np.array([(r.x, r.y) for r in robots])
    heading = math.atan2(sum(math.sin(r.yaw) for r in robots),
                         sum(math.cos(r.yaw) for r in robots))
    return float(np.sqrt(np.mean(shape_error(pos, offsets, heading) ** 2)))


@pytest.mark.slow
@pytest.mark.parametrize("formation", ["line", "column", "wedge", "inverse_wedge", "circle",
                                       "half_circle"])
def test_a_squad_keeps_its_shape_on_the_way_and_arrives_formed(grid, formation):
    robots = [KinematicRobot(-6.0, y, 0.0) for y in (-1.6, -0.8, 0.0, 0.8, 1.6)]
    # circles with neighbours about a spacing apart (the paper's n * d radius is 4 m here)
    shape = Formation(formation, 0.8, 1.0 if "circle" in formation else None)
    squad = Squad(robots, grid, shape)
    squad.command(SquadGoTo(4.0, 1.0, heading=math.pi / 2))
    offsets = shape.offsets(len(robots))
    errors = []

    def step():
        squad.step()
        if squad.structure.s > 0.5 and squad.structure.target < squad.structure.length - 0.5:
            errors.append(_rms_shape(robots, offsets))
    t = run(robots, step, squad.arrived, dt=0.05, max_time=150)
    assert squad.arrived(), f"not there after {t:.0f} s"
    assert errors and float(np.sqrt(np.mean(np.square(errors)))) < 0.1
    slots = squad.structure.slots()
    got = np.array([(r.x, r.y) for r in robots])
    want = slots[squad.last_plan.slot_of]
    assert np.hypot(*(got - want).T).max() <= squad.structure.gains.tolerance + 1e-9
    assert all(abs(math.remainder(r.yaw - math.pi / 2, 2 * math.pi)) < math.radians(8)
               for r in robots)


class _Clock:
    """Sim time for the robots' states (the stall of a blocked member is measured in it)."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _line_of_three(grid):
    from coopsim.swarm.arbitrator import RobotController
    clock = _Clock()
    robots = [KinematicRobot(-6.0, y, 0.0) for y in (-0.8, 0.0, 0.8)]
    squad = Squad(robots, grid, Formation("line", 0.8),
                  controllers=[RobotController(r, clock=clock) for r in robots])
    squad.command(SquadGoTo(4.0, 0.0))

    def step():
        squad.step()
        clock.t += 0.05
    run(robots, step, lambda: squad.structure.s > 2.0, dt=0.05, max_time=60)
    return robots, squad, clock


def _hold(robots, squad, clock, steps: int) -> None:
    """``steps`` steps of 0.05 s with robot 0 held where it is (blocked)."""
    slow = robots[0]
    stuck_at = (slow.x, slow.y)
    for _ in range(steps):
        squad.step()
        clock.t += 0.05
        for r in robots[1:]:
            r.integrate(0.05)
        slow.x, slow.y = stuck_at


def test_the_structure_waits_for_a_robot_that_falls_behind(grid):
    robots, squad, clock = _line_of_three(grid)
    before = squad.structure.s
    _hold(robots, squad, clock, 50)  # 2.5 s: slow, not yet blocked (stall: 3 s)
    assert squad.structure.s - before < 0.3  # it did not leave robot 0 behind
    others = np.array([(r.x, r.y) for r in robots[1:]])
    assert np.hypot(*(others - np.array([robots[0].x, robots[0].y])).T).max() < 2.0
    assert squad.structure.stats.left == 0


def test_a_blocked_member_is_left_behind_and_rejoins(grid):
    robots, squad, clock = _line_of_three(grid)
    before = squad.structure.s
    _hold(robots, squad, clock, 200)  # 10 s held: blocked after 3 s
    s = squad.structure
    assert s.stats.left == 1 and 0 in s.blocked
    assert s.s - before > 1.0  # the others went on

    def step():
        squad.step()
        clock.t += 0.05
    run(robots, step, squad.arrived, dt=0.05, max_time=150)
    assert squad.arrived() and s.stats.rejoined == 1 and not s.blocked
    got = np.array([(r.x, r.y) for r in robots])
    want = s.slots()[squad.last_plan.slot_of]
    assert np.hypot(*(got - want).T).max() <= s.gains.tolerance + 1e-9


def test_slots_narrow_in_a_gap_and_widen_after_it():
    path = np.array([(-5.0, 0.0), (5.0, 0.0)])
    offsets = Formation("line", 1.0).offsets(3)  # side by side, 1 m apart

    def free(points):
        points = np.asarray(points)
        in_gap = (np.abs(points[:, 0]) < 1.0) & (np.abs(points[:, 1]) > 0.6)
        return ~in_gap
    vs = VirtualStructure(path, offsets, free=free)
    vs.s = 4.8  # the slots' target at 5.0 m along: x = 0, in the gap
    vs._pull_in()
    # the shape slides half a metre (two slots free instead of one) and the third goes in file
    assert vs.slide == pytest.approx(0.5) and vs.stats.breaks == 1
    assert np.asarray(free(vs.slots()[vs.fractions > 0])).all()
    vs.s = 7.5  # past the gap
    vs._pull_in()
    assert vs.stats.reforms == 1 and (vs.fractions == 1).all() and vs.slide == 0.0


def test_shape_error_is_zero_for_the_formation_turned_and_moved_and_says_a_displacement():
    offsets = Formation("wedge", 0.8).offsets(5)
    c, s = math.cos(1.0), math.sin(1.0)
    placed = offsets @ np.array([[c, s], [-s, c]]) + (3.0, -2.0)
    shuffled = placed[[3, 0, 4, 1, 2]]
    assert shape_error(shuffled, offsets, heading=0.0).max() < 1e-9
    moved = shuffled.copy()
    moved[0] += (0.5, 0.0)
    err = shape_error(moved, offsets, heading=1.0)
    assert 0.2 < err.max() < 0.5 and np.sqrt(np.mean(err ** 2)) < 0.25


def test_control_all_drives_every_member_as_control_does_one_by_one(grid):
    """The squad_follow driver's batch (one call per squad) and the robots' own stacks (one
    call per robot) agree, for every member, wherever they stand about their slots."""
    import copy

    robots = [KinematicRobot(-6.0, y, 0.0) for y in (-1.6, -0.8, 0.0, 0.8, 1.6)]
    squad = Squad(robots, grid, Formation("wedge", 0.8))
    squad.command(SquadGoTo(4.0, 1.0))
    run(robots, squad.step, lambda: squad.structure.s > 1.0, dt=0.05, max_time=60)
    rng = np.random.default_rng(3)
    for r in robots:  # off their slots, some ahead, some behind, turned
        r.x, r.y = r.x + rng.normal(0, 0.3), r.y + rng.normal(0, 0.3)
        r.yaw += rng.normal(0, 1.0)
    slots = [int(k) for k in squad.last_plan.slot_of]
    x, y, yaw = ([getattr(r, a) for r in robots] for a in ("x", "y", "yaw"))
    one = squad.structure
    many = copy.copy(one)  # its own mutable state; the path, grid and gains shared
    for name in ("progress", "fractions", "behind"):
        setattr(many, name, getattr(one, name).copy())
    many.states, many.moved, many.blocked = dict(one.states), dict(one.moved), set(one.blocked)
    many.stats = copy.deepcopy(one.stats)
    one.report_all(slots, x, y, yaw, 10.0)
    many.report_all(slots, x, y, yaw, 10.0)
    from coopsim.swarm.behaviours import RobotState
    each = np.array([one.control(k, RobotState(r.x, r.y, r.yaw, time=10.0))
                     for k, r in zip(slots, robots)])
    assert np.array_equal(each, many.control_all(slots, x, y, yaw, 10.0))
    assert np.abs(each).max() > 0.05  # they do move


def _copy_structure(one):
    """A structure with its own mutable state (path, grid and gains shared)."""
    import copy

    many = copy.copy(one)
    for name in ("progress", "fractions", "behind"):
        setattr(many, name, getattr(one, name).copy())
    many.states, many.moved, many.blocked = dict(one.states), dict(one.moved), set(one.blocked)
    many.stats = copy.deepcopy(one.stats)
    return many


def test_control_squads_drives_every_squad_as_each_squads_control_all(grid):
    """The squad_follow driver's one call for all squads gives each squad's members the wheel
    speeds of that squad's own call, and moves each structure as that call does."""
    from coopsim.swarm.slotlaw import control_squads

    squads, groups = [], []
    rng = np.random.default_rng(5)
    for y0, shape in ((-2.5, "wedge"), (2.5, "line")):
        robots = [KinematicRobot(-6.0, y0 + y, 0.0) for y in (-0.8, 0.0, 0.8)]
        squad = Squad(robots, grid, Formation(shape, 0.8))
        squad.command(SquadGoTo(4.0, y0))
        run(robots, squad.step, lambda s=squad: s.structure.s > 0.8, dt=0.05, max_time=60)
        for r in robots:
            r.x, r.y, r.yaw = r.x + rng.normal(0, 0.3), r.y + rng.normal(0, 0.3), \
                r.yaw + rng.normal(0, 1.0)
        slots = [int(k) for k in squad.last_plan.slot_of]
        pose = [np.array([getattr(r, a) for r in robots]) for a in ("x", "y", "yaw")]
        squads.append((squad.structure, _copy_structure(squad.structure), slots, pose))
    each = np.vstack([one.control_all(slots, *pose, 12.0) for one, _, slots, pose in squads])
    together = control_squads([(many, slots, *pose) for _, many, slots, pose in squads], 12.0)
    assert np.array_equal(each, together)
    assert np.abs(together).max() > 0.05  # they do move
    for one, many, _, _ in squads:
        assert one.s == many.s and np.array_equal(one.progress, many.progress)


def test_steer_all_gives_steers_numbers_for_every_robot():
    """Gathering members of all squads are steered in one call: the same wheel speeds as
    steer() one by one, turning on the spot, slowing near the last waypoint, capped."""
    from coopsim.swarm.follower import Drive, steer, steer_all

    rng = np.random.default_rng(7)
    n = 400
    x, y, yaw = rng.uniform(-5, 5, n), rng.uniform(-5, 5, n), rng.uniform(-4, 4, n)
    tx, ty = x + rng.normal(0, 1.0, n), y + rng.normal(0, 1.0, n)
    slow = rng.random(n) < 0.5
    drive = Drive()
    dist = np.array([math.hypot(a - b, c - d) for a, b, c, d in zip(tx, x, ty, y)])
    bearing = np.array([math.atan2(c - d, a - b) for a, b, c, d in zip(tx, x, ty, y)])
    each = np.array([steer(x[k], y[k], yaw[k], (tx[k], ty[k]), drive, slow=bool(slow[k]))
                     for k in range(n)])
    assert np.array_equal(each, steer_all(yaw, bearing, dist, slow, drive))
    assert (each[:, 0] == -each[:, 1]).any() and (np.abs(each) >= 0.6 - 1e-12).any()
