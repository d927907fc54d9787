"""The ``mujoco`` engine's batched reads and the arm modules' batched paths, each against the
per-body or per-robot loop it replaces, bit for bit, in a real world of several IRB 120 arms
picking cubes (arm_pick) beside spheres, cylinders, a tilted box and a static box: the moving
geometry the ray caster gets, the bodies' planar and 3D poses, the robots' state, the modules'
engine access by role."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.model.specs import (DriverSetting, FloorSpec, ObjectSpec,  # noqa: E402
                                 RobotSpec, ScenarioSpec, Settings, WorldSpec)
from coopsim.physics.mujoco import state as ms  # noqa: E402
from coopsim.physics.shapes import as_geometry  # noqa: E402
from coopsim.physics.mujoco.engine import SLICE_TOP  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402

ARMS = 4


def world() -> Simulation:
    """Four irb120 arms 1.5 m apart with arm_pick, a cube each, and more objects about."""
    robots, objects = [], []
    for k in range(ARMS):
        x, y = (k % 2) * 1.5 - 0.75, (k // 2) * 1.5 - 0.75
        robots.append(RobotSpec("irb120", f"arm{k}", (x, y, 0.0),
                                drivers=(DriverSetting("arm_pick", (("speed", 1.0),)),)))
        objects.append(ObjectSpec(f"CUBE_{k}", "box", (0.04, 0.04, 0.04),
                                  (x + 0.3, y + 0.12, 0.02), yaw=0.3 * k, mass=0.1))
    objects += [ObjectSpec("BALL", "sphere", (0.1, 0.1, 0.1), (2.0, 0.5, 0.3), mass=0.2),
                ObjectSpec("CAN", "cylinder", (0.08, 0.08, 0.12), (-2.0, 0.5, 0.06), mass=0.3),
                ObjectSpec("HIGH", "box", (0.1, 0.2, 0.1), (0.0, 2.2, 1.6), yaw=0.7, mass=0.2),
                ObjectSpec("SHELF", "box", (0.3, 0.3, 0.4), (2.0, -2.0, 0.2), yaw=0.4)]
    spec = ScenarioSpec(WorldSpec(FloorSpec(6.0, 6.0)), robots=tuple(robots),
                        objects=tuple(objects),
                        settings=Settings(dt=0.002, mode="lockstep", seed=1, engine="mujoco"))
    return Simulation(spec)


@pytest.fixture(scope="module")
def moved() -> Simulation:
    """The world after 0.6 s of picking: cubes lifted and turned, the ball fallen and rolled."""
    sim = world()
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(300):
        stepper.tick()
    return sim


def handles(sim) -> list:
    return [h for _, h in sim.world.objects.values()]


def test_moving_geometry_is_the_per_body_loops(moved):
    engine = moved.world.engine
    got = engine.moving_geometry()  # no module of the world casts rays: built here first
    circles, segments = [], []
    for body in engine._rows.movers.bodies:  # the loop the batched outlines replace
        if body.lowest(engine.data) <= SLICE_TOP:
            ms.outline(body.shapes, *body.pose(engine.data), body.group, circles, segments)
    want = as_geometry(circles, segments)
    arms = len(got[0]) - len(want[0])
    assert arms == 6 * ARMS  # every arm's links low enough, after the objects
    assert got[0][:len(want[0])].tobytes() == want[0].tobytes()
    assert got[1][:len(want[1])].tolist() == want[1].tolist()
    assert got[2].tobytes() == want[2].tobytes() and got[3].tolist() == want[3].tolist()
    # the cubes and the box that fell from 1.6 m into the slice (the static shelf is not moving)
    assert len(want[2]) == 4 * (ARMS + 1)


def test_poses_and_poses3d_are_the_per_body_reads(moved):
    engine, bodies = moved.world.engine, handles(moved)
    want = np.array([b.pose(engine.data) for b in bodies])
    assert engine.poses(bodies).tobytes() == want.tobytes()
    want3d = np.array([b.pose3d(engine.data) for b in bodies])
    assert engine.poses3d(bodies).tobytes() == want3d.tobytes()
    part = bodies[::-2]  # another list, another order
    assert engine.poses(part).tobytes() == want[::-2].tobytes()
    assert not math.isclose(want[0, 2], 0.0)  # the cubes turned


def test_robot_state_is_read_once_a_step_and_given_as_copies(moved):
    engine = moved.world.engine
    a, b = engine.state3d(), engine.state3d()
    assert a is not b and a.tobytes() == b.tobytes()
    a[:] = np.nan  # a caller's copy: the engine's stays
    assert np.isfinite(engine.state3d()).all()
    rows = engine._rows
    want = ms.state3d(engine.data.qpos, engine.data.qvel, rows.qadr, rows.dadr, rows.free,
                      rows.z, rows.static, rows.fixed)
    assert engine.state3d().tobytes() == want.tobytes()
    assert engine.robot_state().tobytes() == ms.planar(want).tobytes()


def test_access_finds_the_parts_by_role_once_per_layout_and_rows(moved):
    access, world = moved._access, moved.world
    rows = np.arange(ARMS)
    handles, where = access._handles(rows, "arm")
    again = access._handles(np.arange(ARMS), "arm")  # equal rows, another array
    assert again[0] is handles and again[1] is where  # no loop over the robots again
    assert list(handles) == [r.refs["arm"] for r in world.robots] and where.tolist() == [0, 1, 2, 3]
    assert not where.flags.writeable
    assert access.arms(rows) is access.arms(rows)
    picked = access._handles(np.array([3, 1]), "arm")
    assert list(picked[0]) == [world.robots[3].refs["arm"], world.robots[1].refs["arm"]]
    assert access._handles(rows.astype(np.int32), "arm")[1].tolist() == [0, 1, 2, 3]
    state = access.arm_state(rows)
    assert state.shape == (ARMS, 7, 3) and np.isfinite(state).all()
    moved.world.add_object(ObjectSpec("LATE", "box", (0.1, 0.1, 0.1), (2.5, 2.5, 0.05), mass=0.1))
    fresh = access._handles(rows, "arm")  # a new layout: found again, the same parts
    assert fresh[0] is not handles and list(fresh[0]) == list(handles)
