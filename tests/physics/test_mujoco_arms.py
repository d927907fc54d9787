"""Arms on the ``mujoco`` engine, on real MuJoCo models built from ArmSpecs in the test: link
frames as the kinematics say, a pose held under gravity, a step set point answered in the first
step and reached, joint limits, efforts capped at max_effort, a grasp that lifts a cube and a
release that stacks it on another, the wrist's wrench of a held weight, state across
recompiles, a mobile base carrying an arm, a pedestal robot's state, 2D engines' refusal, and
the same bits twice."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.model.arm import (MAX_JOINTS, ArmSpec, GripperSpec, LinkSpec,  # noqa: E402
                               solve_ik, world_frames)
from coopsim.model.errors import SimulationError  # noqa: E402
from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, ShapeSpec  # noqa: E402
from coopsim.model.specs import FloorSpec, ObjectSpec  # noqa: E402
from coopsim.physics.kinematic.engine import KinematicEngine  # noqa: E402
from coopsim.physics.mujoco.engine import GRAVITY, MujocoEngine  # noqa: E402
from coopsim.physics.pymunk.engine import PymunkEngine  # noqa: E402
from coopsim.plugins.robots.single import chassis  # noqa: E402
from coopsim.sim.access import Access  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402

from helpers import box, robot, scenario  # noqa: E402

DT = 0.002  # s
CUBE, CUBE_MASS = 0.04, 0.2  # m, kg


def picker(key: str = "arm") -> ArmSpec:
    """A 4-joint arm (turn, shoulder, elbow, wrist pitch) with a gripper, 0.7 m reach."""
    pitch = dict(axis=(0.0, 1.0, 0.0), max_speed=3.0)
    links = (LinkSpec("j1", (0.0, 0.0, 0.1), axis=(0.0, 0.0, 1.0), limits=(-3.0, 3.0),
                      max_speed=3.0, max_effort=60.0, mass=2.0, radius=0.05),
             LinkSpec("j2", (0.0, 0.0, 0.05), limits=(-2.0, 2.0), max_effort=60.0, mass=2.0,
                      radius=0.04, **pitch),
             LinkSpec("j3", (0.0, 0.0, 0.3), limits=(-2.6, 2.6), max_effort=30.0, mass=1.2,
                      radius=0.035, **pitch),
             LinkSpec("j4", (0.0, 0.0, 0.3), limits=(-2.2, 2.2), max_effort=8.0, mass=0.4,
                      radius=0.03, **pitch))
    return ArmSpec(key, links, tool=(0.0, 0.0, 0.14), mount=(0.0, 0.0, 0.05),
                   home=(0.0, 0.3, 1.2, 1.2), payload=1.0, reach=0.7,
                   gripper=GripperSpec(stroke=0.08, force=60.0, length=0.06))


def irb(key: str = "arm") -> ArmSpec:
    """A 6-joint arm laid out like an ABB IRB 120 (0.58 m reach, 3 kg payload)."""
    y, x, z = (0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)
    links = (LinkSpec("joint_1", (0, 0, 0.29), axis=z, limits=(-2.87, 2.87), max_speed=4.36,
                      max_effort=80.0, mass=3.0, radius=0.06),
             LinkSpec("joint_2", (0, 0, 0), axis=y, limits=(-1.92, 1.92), max_speed=4.36,
                      max_effort=80.0, mass=3.0, radius=0.05),
             LinkSpec("joint_3", (0, 0, 0.27), axis=y, limits=(-1.92, 1.22), max_speed=4.36,
                      max_effort=40.0, mass=2.0, radius=0.045),
             LinkSpec("joint_4", (0.07, 0, 0.07), axis=x, limits=(-2.79, 2.79), max_speed=5.58,
                      max_effort=10.0, mass=1.0, radius=0.035),
             LinkSpec("joint_5", (0.302, 0, 0), axis=y, limits=(-2.09, 2.09), max_speed=5.58,
                      max_effort=10.0, mass=0.5, radius=0.03),
             LinkSpec("joint_6", (0.072, 0, 0), axis=x, limits=(-6.98, 6.98), max_speed=7.33,
                      max_effort=5.0, mass=0.2, radius=0.025))
    return ArmSpec(key, links, tool=(0.06, 0.0, 0.0), mount=(0.0, 0.0, 0.1),
                   home=(0.0, 0.6, -0.3, 0.0, 0.5, 0.0), payload=3.0, reach=0.58)


def fixed(arm: ArmSpec, name: str = "a1", x: float = 0.0, y: float = 0.0, yaw: float = 0.0,
          z: float = 0.0) -> Assembly:
    """One member on a static pedestal body ``base`` carrying ``arm``."""
    body = BodySpec("base", "static", 0.0, (ShapeSpec("circle", radius=0.08),), (x, y), yaw,
                    z=z, height=0.05)
    member = MemberSpec(name, "base", (), 0.08, refs={"arm": arm.key})
    assembly = Assembly((member,), (body,), arms=(arm,))
    assembly.validate()
    return assembly


def mobile(arm: ArmSpec, name: str = "m1") -> Assembly:
    """A differential chassis carrying ``arm`` on its top."""
    body, member = chassis(name, "chassis", 0.0, 0.0, 0.0)
    member = MemberSpec(name, "chassis", (), member.radius, member.axle, member.drive,
                        member.max_force, member.max_torque, refs={"arm": arm.key})
    arm = ArmSpec(arm.key, arm.links, arm.tool, "chassis", (0.0, 0.0, 0.2), 0.0, arm.home,
                  arm.payload, arm.reach, arm.gripper, 2.0, 0.06)
    assembly = Assembly((member,), (body,), arms=(arm,))
    assembly.validate()
    return assembly


def cube(name: str, x: float, y: float, z: float = CUBE / 2) -> ObjectSpec:
    return ObjectSpec(name, "box", (CUBE, CUBE, CUBE), (x, y, z), 0.0, CUBE_MASS)


def world(*assemblies, objects=()):
    """An engine with ``assemblies`` (robots in order) and ``objects``; the arms' handles
    (in order) and the objects'."""
    engine = MujocoEngine(FloorSpec(6.0, 6.0))
    things = [engine.add_object(o) for o in objects]
    robots, arms = [], []
    for k, assembly in enumerate(assemblies):
        handles = engine.add_assembly(assembly, k + 1)
        robots += [handles.robots[m.name] for m in assembly.members]
        arms += [handles.arms[a.key] for a in assembly.arms]
    engine.set_robots(robots, ["" for _ in robots])
    return engine, arms, things


def padded(q) -> np.ndarray:
    out = np.zeros((1, MAX_JOINTS))
    out[0, :len(q)] = q
    return out


def hold(engine, arm, q, seconds: float = 0.6, qd=None) -> np.ndarray:
    """Set ``q`` and step ``seconds``; the state then."""
    engine.set_arm_targets([arm], padded(q), padded(np.zeros(len(q)) if qd is None else qd))
    for _ in range(round(seconds / DT)):
        engine.step(DT)
    return engine.arm_state([arm])[0]


def link_frames(engine, arm) -> np.ndarray:
    """(dof + 1, 4, 4) world frames of the arm's link bodies and of its tool site."""
    import mujoco
    m, d = engine.model, engine.data
    mujoco.mj_kinematics(m, d)  # frames of the state now (a step leaves them a substep behind)
    out = []
    for link in arm.spec.links:
        i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"{arm.prefix}/{link.key}")
        t = np.eye(4)
        t[:3, :3], t[:3, 3] = d.xmat[i].reshape(3, 3), d.xpos[i]
        out.append(t)
    s = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f"{arm.prefix}/tool")
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = d.site_xmat[s].reshape(3, 3), d.site_xpos[s]
    return np.array(out + [t])


# -- building and the kinematics ---------------------------------------------------------------

@pytest.mark.parametrize("make", [picker, irb])
def test_the_links_stand_where_the_kinematics_put_them_at_the_start(make):
    engine, (arm,), _ = world(fixed(make(), x=0.5, y=-0.4, yaw=0.7))
    state = engine.arm_state([arm])[0]
    spec = arm.spec
    assert state.shape == (MAX_JOINTS, 3)
    assert np.allclose(state[:spec.dof, 0], spec.start) and not state[spec.dof:].any()
    want = world_frames(spec, engine.state3d()[0], spec.start)[1:]
    assert np.allclose(link_frames(engine, arm), want, atol=1e-9)


def test_a_pedestal_robot_stands_still_where_it_was_built():
    engine, (arm,), _ = world(fixed(picker(), x=1.0, y=2.0, yaw=0.5, z=0.3))
    hold(engine, arm, picker().start, 0.1)
    assert engine.robot_state()[0].tolist() == pytest.approx([1.0, 2.0, 0.5, 0, 0, 0])
    s = engine.state3d()[0]
    assert s[:3].tolist() == pytest.approx([1.0, 2.0, 0.3])
    assert s[3:7].tolist() == pytest.approx([math.cos(0.25), 0, 0, math.sin(0.25)])
    assert not s[7:].any()
    assert engine.contacts(engine.robot_state()[:, :3]).shape == (1, 2)


def test_the_ray_caster_sees_the_joints_of_an_arm_low_enough_to_hit():
    engine, (arm, _), _ = world(fixed(picker(), x=1.0, y=-1.0), fixed(irb("high"), name="h",
                                                                      z=1.2))
    circles, groups, _, _ = engine.moving_geometry()
    spec = arm.spec
    want = world_frames(spec, engine.state3d()[0], spec.start)[1:-1, :3, 3]
    assert np.allclose(circles, [[x, y, link.radius] for (x, y, _), link in zip(want,
                                                                                spec.links)])
    assert groups.tolist() == [1] * spec.dof  # the high arm (1.2 m up) is out of the slice


# -- the servo ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [picker, irb])
def test_a_still_arm_holds_its_pose_under_gravity_within_a_milliradian(make):
    engine, (arm,), _ = world(fixed(make()))
    start = arm.spec.start
    state = hold(engine, arm, start, 1.0)
    assert np.abs(state[:arm.spec.dof, 0] - start).max() < 1e-3
    assert np.abs(state[:arm.spec.dof, 2]).max() > 1.0  # it holds against gravity


def test_a_step_set_point_moves_the_arm_in_the_first_step_and_is_reached():
    engine, (arm,), _ = world(fixed(irb()))
    start = arm.spec.start
    goal = start + np.array([0.4, -0.3, 0.3, 0.5, -0.4, 1.0])
    engine.set_arm_targets([arm], padded(goal), padded(np.zeros(6)))
    engine.step(DT)
    first = engine.arm_state([arm])[0][:6]
    assert (np.sign(first[:, 0] - start) == np.sign(goal - start)).all()
    assert (np.sign(first[:, 1]) == np.sign(goal - start)).all()
    state = hold(engine, arm, goal, 1.0)
    assert np.abs(state[:6, 0] - goal).max() < 2e-3
    assert np.abs(state[:6, 1]).max() < 0.02


def test_a_rate_set_point_feeds_forward_a_moving_joint():
    engine, (arm,), _ = world(fixed(picker()))
    start = arm.spec.start.copy()
    engine.set_arm_targets([arm], padded(start), padded(np.zeros(4)))
    q = start.copy()
    for _ in range(250):  # j1 follows a 1 rad/s ramp, set each step
        q[0] += 1.0 * DT
        rate = np.array([1.0, 0.0, 0.0, 0.0])
        engine.set_arm_targets([arm], padded(q), padded(rate))
        engine.step(DT)
    state = engine.arm_state([arm])[0]
    assert state[0, 1] == pytest.approx(1.0, abs=0.02)
    assert state[0, 0] == pytest.approx(q[0], abs=0.01)


def test_joint_limits_hold_a_set_point_beyond_them():
    engine, (arm,), _ = world(fixed(picker()))
    goal = arm.spec.start.copy()
    goal[0] = 5.0  # j1 stops at 3.0 rad
    state = hold(engine, arm, goal, 2.0)
    assert state[0, 0] == pytest.approx(3.0, abs=2e-3)


def test_a_blocked_joint_pushes_with_its_max_effort_and_no_more():
    wall = ObjectSpec("wall", "box", (0.2, 1.0, 1.5), (0.0, 0.45, 0.75), 0.0, 0.0)
    engine, (arm,), _ = world(fixed(picker()), objects=[wall])
    goal = arm.spec.start.copy()
    goal[0] = 2.5  # j1 turns the arm into the wall on its left
    state = hold(engine, arm, goal, 1.5)
    assert state[0, 0] < 1.6  # stopped by the wall
    assert abs(state[0, 2]) == pytest.approx(60.0, rel=1e-6)
    assert np.abs(state[:4, 2]).max() <= 60.0 + 1e-9


def test_a_non_finite_set_point_is_refused():
    engine, (arm,), _ = world(fixed(picker()))
    q = padded(arm.spec.start)
    q[0, 1] = math.nan
    with pytest.raises(SimulationError, match="not a number"):
        engine.set_arm_targets([arm], q, padded(np.zeros(4)))


def test_a_diverging_arm_is_put_back_naming_its_robot(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)  # MuJoCo's own handler would write MUJOCO_LOG.TXT here
    engine, (arm,), _ = world(fixed(picker(), name="ab"))
    engine.step(DT)
    before = engine.data.qpos[arm.qadr].copy()
    engine.data.qvel[arm.dadr[2]] = math.inf  # what no servo survives
    engine.step(DT)
    (found,) = engine.diverged()
    assert found.row == 0 and "non-finite" in found.why
    assert engine.data.qpos[arm.qadr].tolist() == before.tolist()  # where the step began
    assert engine.data.qvel[arm.dadr].tolist() == [0.0] * len(arm.dadr)
    # its warning reached the log, not a file in the user's working folder
    assert any("unstable" in r.getMessage() for r in caplog.records
               if r.name == "coopsim.mujoco")
    assert list(tmp_path.iterdir()) == []


# -- grasp, release, the wrist ---------------------------------------------------------------

def _above(spec: ArmSpec, x: float, y: float, z: float, q0) -> np.ndarray:
    """Joint angles putting the tool point at (x, y, z) (world = base frame but for the
    mount's height), its z pointing at the floor, its x away from the arm."""
    c, s = math.cos(math.atan2(y, x)), math.sin(math.atan2(y, x))
    down = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.diag([-1.0, 1.0, -1.0])
    fit = solve_ik(spec, (x, y, z - spec.mount[2]), down, q0)
    assert fit.ok, fit
    return fit.q


def _moves(engine, arm, x, y, heights, q):
    for z in heights:
        q = _above(arm.spec, x, y, z, q)
        hold(engine, arm, q, 0.6)
    return q


def test_a_grasp_lifts_a_cube_and_a_release_stacks_it_on_another():
    engine, (arm,), (c1, c2) = world(fixed(picker()), objects=[cube("c1", 0.4, 0.0),
                                                               cube("c2", 0.3, 0.3)])
    q = _moves(engine, arm, 0.4, 0.0, (0.2, CUBE / 2), arm.spec.start)
    held = engine.attach(arm, c1, "weld", (0.4, 0.0))
    q = _moves(engine, arm, 0.4, 0.0, (0.2,), q)
    assert engine.poses3d([c1])[0, 2] == pytest.approx(0.2, abs=5e-3)
    q = _moves(engine, arm, 0.3, 0.3, (0.2, 1.5 * CUBE + 0.002), q)
    engine.detach(held)
    _moves(engine, arm, 0.3, 0.3, (0.2,), q)
    for _ in range(500):
        engine.step(DT)
    top, bottom = engine.poses3d([c1, c2])
    assert top[2] == pytest.approx(1.5 * CUBE, abs=2e-3)  # on c2, not on the floor
    assert np.hypot(*(top[:2] - bottom[:2])) < 0.01
    assert bottom[2] == pytest.approx(CUBE / 2, abs=1e-3)


def test_the_wrist_reads_the_weight_of_a_held_cube_along_the_tool_z():
    engine, (arm,), (c1,) = world(fixed(picker()), objects=[cube("c1", 0.4, 0.0)])
    q = _moves(engine, arm, 0.4, 0.0, (0.2, CUBE / 2), arm.spec.start)
    empty = engine.wrist_wrench([arm])[0]
    engine.attach(arm, c1, "weld", (0.4, 0.0))
    _moves(engine, arm, 0.4, 0.0, (0.25,), q)
    loaded = engine.wrist_wrench([arm])[0]
    # the tool's z points down: the cube's weight pulls the flange along +z of the tool frame
    assert loaded[2] - empty[2] == pytest.approx(CUBE_MASS * GRAVITY, rel=0.03)
    assert np.abs(loaded[:2] - empty[:2]).max() < 0.05
    assert empty[2] > 0  # the fingers' own weight


def test_attach_refuses_what_an_arm_cannot_hold():
    wall = ObjectSpec("wall", "box", (0.2, 0.2, 0.2), (1.0, 1.0, 0.1), 0.0, 0.0)
    engine, (arm,), (c1, w) = world(fixed(picker()), objects=[cube("c1", 0.4, 0.0), wall])
    with pytest.raises(SimulationError, match="only a movable body"):
        engine.attach(arm, w, "weld", (1.0, 1.0))
    with pytest.raises(SimulationError, match="arm's handle"):
        engine.attach(engine.poses3d, c1, "weld", (0.0, 0.0))
    engine.attach(arm, c1, "weld", (0.4, 0.0))
    with pytest.raises(SimulationError, match="held already"):
        engine.attach(arm, c1, "weld", (0.4, 0.0))


def test_removing_a_held_object_or_the_arm_holding_one_drops_the_grasp():
    engine, (arm,), (c1, c2) = world(fixed(picker()), objects=[cube("c1", 0.4, 0.0),
                                                               cube("c2", 1.5, 1.5)])
    engine.attach(arm, c1, "weld", (0.4, 0.0))
    engine.step(DT)
    engine.remove_object(c1)
    engine.step(DT)
    assert arm.grasps == []
    handles = engine.add_assembly(fixed(picker("other"), name="o", x=-1.0), 2)
    other = handles.arms["other"]
    engine.attach(other, c2, "weld", (1.5, 1.5))
    engine.remove_assembly(handles)
    for _ in range(100):  # c2 stays on the floor where it was, nothing holds it
        engine.step(DT)
    assert engine.poses3d([c2])[0, :3].tolist() == pytest.approx([1.5, 1.5, CUBE / 2],
                                                                  abs=1e-3)


# -- layout changes, a mobile base, refusals, bits -------------------------------------------

def test_a_recompile_keeps_the_angles_rates_and_set_points():
    engine, (arm,), _ = world(fixed(irb()))
    goal = arm.spec.start + 0.5
    engine.set_arm_targets([arm], padded(goal), padded(np.zeros(6)))
    for _ in range(20):
        engine.step(DT)
    before = engine.arm_state([arm])[0]
    box_ = engine.add_object(cube("new", 2.0, 2.0))  # the model is compiled again
    after = engine.arm_state([arm])[0]
    assert np.array_equal(before[:, :2], after[:, :2])
    assert engine.poses3d([box_])[0, 2] == pytest.approx(CUBE / 2)
    state = hold(engine, arm, goal, 1.0)  # the set point held through the compile
    assert np.abs(state[:6, 0] - goal).max() < 2e-3


def test_an_arm_rides_on_a_mobile_base_and_removing_it_leaves_the_rest():
    other = fixed(picker("other"), name="p1", x=2.0)
    engine, (arm, arm2), _ = world(mobile(picker()), other)
    start = arm.spec.start
    engine.drive(np.array([0]), np.array([0.3]), np.array([0.0]))
    state = hold(engine, arm, start, 1.0)
    base = engine.state3d()[0]
    assert base[0] == pytest.approx(0.3, abs=0.03)
    assert np.abs(state[:4, 0] - start).max() < 5e-3
    assert np.allclose(link_frames(engine, arm), world_frames(arm.spec, base, state[:4, 0])[1:],
                       atol=1e-6)
    handles = engine.add_assembly(fixed(irb("third"), name="t1", x=-2.0), 3)
    engine.remove_assembly(handles)
    assert engine.arm_state([arm2])[0][:4, 0] == pytest.approx(arm2.spec.start, abs=1e-3)


@pytest.mark.parametrize("engine_cls", [PymunkEngine, KinematicEngine])
def test_2d_engines_refuse_an_assembly_with_an_arm_in_one_sentence(engine_cls):
    engine = engine_cls(FloorSpec(6.0, 6.0))
    with pytest.raises(SimulationError) as error:
        engine.add_assembly(fixed(picker()), 1)
    message = str(error.value)
    assert "has no arms" in message and "engine mujoco" in message and "\n" not in message


def _run() -> bytes:
    engine, (a1, a2), (c1,) = world(fixed(irb()), fixed(picker("p"), name="p1", x=0.8),
                                    objects=[cube("c1", 0.4, 0.3)])
    for k in range(300):
        q = a1.spec.start + 0.5 * math.sin(k * 0.02)
        engine.set_arm_targets([a1], padded(q), padded(np.zeros(6)))
        if k == 100:
            engine.attach(a2, c1, "weld", (0.0, 0.0))
        engine.step(DT)
    return b"".join(np.ascontiguousarray(a).tobytes() for a in (
        engine.arm_state([a1, a2]), engine.wrist_wrench([a1, a2]), engine.poses3d([c1])))


def test_the_same_run_twice_gives_the_same_bits():
    assert _run() == _run()


def test_the_snapshot_carries_the_objects_3d_poses_on_mujoco_only():
    objects = [ObjectSpec("c", "box", (0.2, 0.2, 0.2), (1.0, 0.0, 0.5), 0.0, 1.0),
               box("b", -2.0, 0.0, size=(0.5, 0.5))]
    sim = Simulation(scenario([robot("a", 0.0, 0.0)], objects), engine="mujoco")
    for _ in range(100):  # the cube falls 0.4 m onto the floor in 1 s
        sim.command({})
        sim.actuate()
        sim.physics()
        sim.sense()
    poses = sim.snapshot.object_pose3d
    assert poses.shape == (2, 7)
    assert poses[0, 2] == pytest.approx(0.1, abs=2e-3) and poses[1, 2] == pytest.approx(0.25)
    assert Simulation(scenario([robot("a")], objects[1:])).snapshot.object_pose3d is None


def _pedestal_type() -> str:
    """A robot type (registered once) of one picker arm on a pedestal: how a whole
    Simulation gets an arm robot without the shipped arm types."""
    from coopsim.model.plugins import ROBOT_TYPES
    from coopsim.model.robot_type import RobotType

    def build(cls, spec):
        return fixed(picker(), spec.name, spec.position[0], spec.position[1], spec.yaw)

    label = "test_pedestal_arm"
    if label not in ROBOT_TYPES:
        ROBOT_TYPES.register(label)(type(label, (RobotType,), {
            "label": label, "modules": (), "footprint": 0.3, "build": classmethod(build)}))
    return label


def test_a_simulation_drives_an_arm_robot_through_access_beside_a_ground_robot():
    sim = Simulation(scenario([robot("g", -2.0, 0.0), robot("p", 1.0, 1.0, yaw=0.4,
                                                             type=_pedestal_type())]),
                     engine="mujoco")
    access, rows = Access(sim.world, sim.dt), np.array([0, 1])
    spec = access.arms(rows)[1]
    assert access.arms(rows)[0] is None and spec.key == "arm"
    state = access.arm_state(rows)
    assert np.isnan(state[0]).all() and state[1, :4, 0] == pytest.approx(spec.start)
    goal = np.zeros((2, MAX_JOINTS))
    goal[:, :4] = spec.start + 0.3
    access.set_arm_targets(rows, goal, np.zeros((2, MAX_JOINTS)))
    for _ in range(100):  # 1 s
        sim.command({})
        sim.actuate()
        sim.physics()
        sim.sense()
    state = access.arm_state(rows)
    assert state[1, :4, 0] == pytest.approx(goal[1, :4], abs=2e-3)
    assert np.isnan(access.wrist_wrench(rows)[0]).all()
    fingers = np.linalg.norm(access.wrist_wrench(rows)[1, :3])  # their weight, 2 x 0.05 kg
    assert fingers == pytest.approx(0.1 * GRAVITY, rel=0.02)
    snap = sim.snapshot
    assert snap.poses[1] == pytest.approx((1.0, 1.0, 0.4))
    assert snap.pose3d[1, 2] == pytest.approx(0.0) and not snap.twist3d[1].any()


def _simulation_run() -> bytes:
    objects = [cube("c1", 1.4, 1.0), cube("c2", 1.0, 1.4)]
    sim = Simulation(scenario([robot("g", -2.0, 0.0), robot("p", 1.0, 1.0,
                                                          type=_pedestal_type())], objects),
                     engine="mujoco")
    access, rows = Access(sim.world, sim.dt), np.array([1])
    start = access.arms(rows)[0].start
    for k in range(150):
        goal = np.zeros((1, MAX_JOINTS))
        goal[0, :4] = start + 0.4 * math.sin(0.05 * k)
        access.set_arm_targets(rows, goal, np.zeros((1, MAX_JOINTS)))
        sim.command({})
        sim.actuate()
        sim.physics()
        sim.sense()
    snap = sim.snapshot
    return b"".join(np.ascontiguousarray(a).tobytes() for a in (
        access.arm_state(rows), access.wrist_wrench(rows), snap.pose3d, snap.object_pose3d))


def test_the_same_simulation_with_an_arm_twice_gives_the_same_bits():
    assert _simulation_run() == _simulation_run()
