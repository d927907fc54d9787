"""The sensing phase's caster: its sonar fans match pymunk's queries, and its kernels' branches
(all pairs, the grid walk, the fan gather) give the same bits."""

from __future__ import annotations

import math

import numpy as np
import pymunk
import pytest

from coopsim.app.bench import swarm_scenario
from coopsim.plugins.modules.sonar import ANGLES
from coopsim.raycast import jitcast
from coopsim.raycast.jitcast import JitRayCaster, sonar_distances
from coopsim.sim.simulation import Simulation

TOL = 1e-9  # m, against pymunk


def _scene(rng, n_robots: int, side: float):
    """Robots (poses, radii, groups) among circles and box walls in a square of ``side`` m."""
    poses = np.column_stack((rng.uniform(0, side, (n_robots, 2)),
                             rng.uniform(-math.pi, math.pi, n_robots)))
    radius = rng.uniform(0.1, 0.3, n_robots)
    groups = np.arange(1, n_robots + 1)
    static_c = np.column_stack((rng.uniform(0, side, (5, 2)), rng.uniform(0.1, 0.6, 5)))
    walls = np.array([[0, 0, side, 0], [side, 0, side, side], [side, side, 0, side],
                      [0, side, 0, 0]], dtype=float)
    inner = np.column_stack((rng.uniform(0, side, (6, 2)), rng.uniform(0, side, (6, 2))))
    return poses, radius, groups, static_c, np.vstack((walls, inner))


def _cast_all(poses, radius, groups, static_c, static_s, reach):
    """Sonar distances from the caster."""
    robots = np.column_stack((poses[:, :2], radius))
    caster = JitRayCaster()
    caster.set_static(static_c, static_s)
    return sonar_distances(caster, poses, radius, ANGLES, reach, groups, robots, groups,
                           None, None)


def _pymunk_fan(poses, radius, groups, static_c, static_s, reach):
    """The same readings from pymunk segment queries, one per ray."""
    space = pymunk.Space()
    shapes = [pymunk.Circle(space.static_body, r, (x, y)) for x, y, r in static_c.tolist()]
    shapes += [pymunk.Segment(space.static_body, (a, b), (c, d), 0) for a, b, c, d in
               static_s.tolist()]
    for (x, y, _), r, g in zip(poses.tolist(), radius.tolist(), groups.tolist()):
        shapes.append(pymunk.Circle(space.static_body, r, (x, y)))
        shapes[-1].filter = pymunk.ShapeFilter(group=g)
    space.add(*shapes)
    out = np.empty((len(poses), len(ANGLES)))
    for i, ((x, y, yaw), r, g, m) in enumerate(zip(poses.tolist(), radius.tolist(),
                                                   groups.tolist(), reach.tolist())):
        for k, a in enumerate(ANGLES.tolist()):
            length = m + r
            end = (x + math.cos(yaw + a) * length, y + math.sin(yaw + a) * length)
            hit = space.segment_query_first((x, y), end, 0, pymunk.ShapeFilter(group=g))
            out[i, k] = m if hit is None else min(m, hit.alpha * length - r)
    return out


@pytest.mark.parametrize("seed, n_robots", [(0, 1), (1, 3), (2, 40), (3, 400)])
def test_the_fans_match_pymunk(seed, n_robots):
    rng = np.random.default_rng(seed)
    side = 3.0 + n_robots ** 0.5 * 1.5
    poses, radius, groups, static_c, static_s = _scene(rng, n_robots, side)
    reach = rng.uniform(0.5, 3.0, n_robots)
    jit_out = _cast_all(poses, radius, groups, static_c, static_s, reach)
    # a robot may start inside another or a static circle: pymunk skips such a shape, the
    # casters hit it at 0 (their documented convention); compare the rays of robots outside
    centres = np.vstack((static_c, np.column_stack((poses[:, :2], radius))))
    gap = np.hypot(*(poses[:, None, :2] - centres[None, :, :2]).transpose(2, 0, 1)) \
        - centres[None, :, 2]
    gap[:, len(static_c):][np.eye(n_robots, dtype=bool)] = np.inf  # its own chassis
    clear = gap.min(axis=1) > 1e-6
    ref = _pymunk_fan(poses, radius, groups, static_c, static_s, reach)
    assert clear.any()
    assert np.abs(jit_out[clear] - ref[clear]).max() <= TOL


def test_small_and_large_compiled_paths_agree():
    """The all-pairs kernel (few rays) and the grid walk (many) give the same bits."""
    rng = np.random.default_rng(7)
    poses, radius, groups, static_c, static_s = _scene(rng, 3, 6.0)
    reach = np.full(3, 2.0)
    robots = np.column_stack((poses[:, :2], radius))
    caster = JitRayCaster()
    caster.set_static(static_c, static_s)
    small = sonar_distances(caster, poses, radius, ANGLES, reach, groups, robots, groups,
                            None, None)
    saved = jitcast._ALL_PAIRS
    try:
        jitcast._ALL_PAIRS = 0  # force the grid
        large = sonar_distances(caster, poses, radius, ANGLES, reach, groups, robots, groups,
                                None, None)
    finally:
        jitcast._ALL_PAIRS = saved
    assert np.array_equal(small, large)


def _run(caster, n: int, steps: int) -> list[np.ndarray]:
    sim = Simulation(swarm_scenario(n, seed=3), caster=caster)
    rng = np.random.default_rng(1)
    sonar = []
    for step in range(steps):
        sim.commands["motors"][:] = rng.uniform(-0.6, 0.6, sim.commands["motors"].shape)
        sim.command({})
        sim.actuate()
        sim.physics()
        sonar.append(sim.sense().readings["sonar"].copy())
    return sonar, sim


@pytest.mark.parametrize("n", [1, 60])
def test_a_simulation_s_sonar_agrees_with_pymunk(n):
    _, sim = _run(JitRayCaster(), n, 25)
    engine = sim.world.engine  # pymunk: query its own space along each robot's rays
    snap = sim.snapshot
    for i, name in enumerate(snap.robots):
        robot = sim.world.robot(name)
        x, y, yaw = snap.poses[i]
        for k, a in enumerate(ANGLES.tolist()):
            length = 2.0 + robot.radius
            end = (x + math.cos(yaw + a) * length, y + math.sin(yaw + a) * length)
            hit = engine.space.segment_query_first((x, y), end, 0,
                                                   pymunk.ShapeFilter(group=robot.group))
            expect = 2.0 if hit is None else min(2.0, max(0.0, hit.alpha * length - robot.radius))
            assert abs(snap.readings["sonar"][i, k] - expect) <= TOL  # Sonar.clip: 0..range


@pytest.mark.parametrize("case", ["long_rays", "outside_static", "moving_segments", "dense",
                                  "all_round", "map_walls"])
def test_fan_gather_equals_the_walk(case, monkeypatch):
    """The fan kernel (each robot's rays against the shapes around it) against the per-ray
    walk: the same bits, in the cases that take its other branches."""
    rng = np.random.default_rng(11)
    n, side, cell = 300, 30.0, jitcast.CELL_SIZE
    poses, radius, groups, static_c, static_s = _scene(rng, n, side)
    reach = rng.uniform(0.5, 3.0, n)
    moving_s, angles = None, ANGLES
    if case == "all_round":  # rays behind the robot too: no circle behind it may be dropped
        angles = np.linspace(-math.pi, math.pi, 13)[:-1]
    elif case == "long_rays":  # reach over many cells: those robots' rays are walked
        reach[::3], cell = 9.0, 0.3
    elif case == "outside_static":  # robots beyond the static grid: two grids
        poses[:, :2] += 25.0
    elif case == "map_walls":  # a map's axis-aligned walls, long across many cells, some
        # on cell sides: each is tested in one cell only, which must not change a bit
        ticks = np.concatenate((rng.uniform(0, side, 12), np.arange(0.0, side, cell)[:8]))
        starts, ends = rng.uniform(0, side / 2, len(ticks)), rng.uniform(side / 2, side,
                                                                          len(ticks))
        static_s = np.vstack((static_s[:4], np.column_stack((ticks, starts, ticks, ends)),
                              np.column_stack((starts, ticks, ends, ticks))))
    elif case == "moving_segments":
        moving_s = np.column_stack((rng.uniform(0, side, (40, 2)), rng.uniform(0, side, (40, 2))))
    else:  # robots overlapping each other and the walls
        poses[:, :2] = rng.uniform(0, 6.0, (n, 2))
    robots = np.column_stack((poses[:, :2], radius))
    out = []
    for gather in (True, False):
        monkeypatch.setattr(jitcast, "GATHER", gather)
        caster = JitRayCaster(cell)
        caster.set_static(static_c, static_s)
        out.append(sonar_distances(caster, poses, radius, angles, reach, groups, robots, groups,
                                   moving_s, None))
    assert np.array_equal(out[0], out[1])
    assert (out[0] < reach[:, None]).mean() > 0.05  # the fans do hit things
