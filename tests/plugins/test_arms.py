"""The arm robot types (irb120, mh5, lwa, mobile_lwa) and their modules without an engine: the
data sheets' reach from the kinematics, every refusal of the joints commands (error 4 with
the joint and its limit, error 3 for a wrong count), the set points ``joints`` hands to the
engine step by step (a fake physics records them: synchronised moves, repeats going on,
trajectories, stops, rates held to the limits), the batched forward kinematics of ``tool``
against the model's own, and ``pose``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model.arm import MAX_JOINTS, frames, move_time, world_frames
from coopsim.model.commands import OUT_OF_RANGE, WRONG_ARITY
from coopsim.model.errors import ProtocolError
from coopsim.model.module import Frame, RobotInfo
from coopsim.model.plugins import MODULES, ROBOT_TYPES
from coopsim.model.specs import RobotSpec
from coopsim.plugins.modules.joints import Joints
from coopsim.plugins.modules.pose import Pose
from coopsim.plugins.modules.tool import Tool
from coopsim.plugins.robots.arms import IRB120, LWA, MH5, MOBILE_LWA, PLATE

ARMS = {"irb120": IRB120, "mh5": MH5, "lwa": LWA}


def command(name: str):
    return next(c for c in Joints.commands if c.name == name)


def row(name: str, *data, arm=IRB120):
    return Joints.command_row(command(name), tuple(float(d) for d in data), {},
                              RobotInfo("a1", "irb120", arm=arm))


def refused(name: str, *data, arm=IRB120) -> ProtocolError:
    with pytest.raises(ProtocolError) as err:
        row(name, *data, arm=arm)
    return err.value


class Physics:
    """A fake engine side: arms at angles ``q`` that follow the set points exactly."""

    def __init__(self, arms, q=None):
        self._arms = list(arms)
        self.q = np.zeros((len(arms), MAX_JOINTS))
        for i, arm in enumerate(self._arms):
            self.q[i, :arm.dof] = arm.start if q is None else q[i]
        self.sent = []

    def arms(self, rows):
        return [self._arms[r] for r in rows]

    def arm_state(self, rows):
        out = np.zeros((len(rows), MAX_JOINTS, 3))
        out[:, :, 0] = self.q[rows]
        return out

    def set_arm_targets(self, rows, q, qd):
        self.sent.append((np.array(rows), np.array(q), np.array(qd)))
        self.q[rows] = q


def frame(physics, time=0.0, dt=0.01, extra=None, state3d=None) -> Frame:
    n = len(physics.q)
    return Frame(dt, np.zeros((n, 3)), np.zeros((n, 3)), np.full(n, 0.1), np.zeros(n),
                 np.zeros(n, np.int64), {}, {}, np.zeros((0, 2)), np.zeros((n, 2)), None,
                 physics, {} if extra is None else extra, 0, tuple(f"a{i}" for i in range(n)),
                 time=time, state3d=state3d)


def read(module, frame) -> np.ndarray:
    """``module``'s noiseless reading of every robot of ``frame`` (its kernel, as the plain
    sensing phase runs it)."""
    n = len(frame.pose)
    return module.measure(frame, np.arange(n), {}, np.zeros((n, len(module.fields))),
                          np.random.default_rng(0))


def run(physics, commands, steps: int, dt=0.01, extra=None, t0=0.0):
    """Actuate ``steps`` steps with the stored ``commands`` (one row per arm); the set points
    of each step ((steps, MAX_JOINTS) for one arm)."""
    extra = {} if extra is None else extra
    rows = np.arange(len(physics.q))
    out = []
    for k in range(steps):
        Joints.actuate(frame(physics, t0 + k * dt, dt, extra), rows, {},
                       np.array(commands, dtype=float))
        out.append(physics.q.copy())
    out = np.array(out)
    return (out[:, 0] if len(physics.q) == 1 else out), extra


# -- the types ------------------------------------------------------------------------------------

@pytest.mark.parametrize("label", ["irb120", "mh5", "lwa", "mobile_lwa"])
def test_the_types_build_a_valid_assembly_with_their_arm(label):
    cls = ROBOT_TYPES.get(label)
    assembly = cls.build(RobotSpec(label, "a1", (1.0, 2.0, 0.75), 0.5))
    assembly.validate()
    (member,), (arm,) = assembly.members, assembly.arms
    assert member.refs == {"arm": arm.key} and assembly.body(arm.base).key == member.body
    assert {"joints", "tool", "gripper", "force", "pose"} <= set(member.modules)
    assert cls.draw["arm"] is True and cls.footprint > arm.base_radius
    body = assembly.body(member.body)
    if label == "mobile_lwa":
        assert member.drive == "differential" and body.kind == "dynamic"
        assert {"motors", "odometry"} <= set(member.modules)
    else:  # a pedestal at the section's pose, z included (an arm may stand on a table)
        assert member.drive == "" and body.kind == "static" and body.z == 0.75
        assert body.position == (1.0, 2.0) and body.yaw == 0.5 and arm.mount[2] == PLATE
    for module in member.modules:
        MODULES.get(module)  # every module is registered


def test_the_reach_of_the_kinematics_is_the_data_sheets():
    """The wrist centre's farthest distance from the shoulder axis: 0.58 m (IRB 120, to axis
    5), 0.706 m (MH5, from the S axis to the B axis, arm stretched forward)."""
    f = frames(IRB120, [0.0, 0.0, -math.atan2(0.302, 0.07), 0.0, 0.0, 0.0])
    shoulder, wrist = f[2, :3, 3], f[5, :3, 3]
    assert np.linalg.norm(wrist - shoulder) == pytest.approx(0.58, abs=0.001)
    f = frames(MH5, [0.0, math.pi / 2, math.atan2(0.305, 0.04), 0.0, 0.0, 0.0])
    assert f[5, 0, 3] == pytest.approx(0.706, abs=0.001)  # horizontal, from the S axis
    assert np.linalg.norm(frames(LWA, np.zeros(7))[-2, :3, 3] - [0, 0, 0.25]) == \
        pytest.approx(LWA.reach)
    for arm in (IRB120, MH5, LWA, MOBILE_LWA):  # home: the tool points down
        assert np.allclose(frames(arm, arm.start)[-1, :3, 2], [0.0, 0.0, -1.0], atol=1e-9)


# -- joints: refusals -----------------------------------------------------------------------------

def test_a_target_beyond_a_limit_is_refused_with_the_limit():
    err = refused("set_positions", 0.0, 2.0, 0.0, 0.0, 0.0, 0.0)  # joint 2: +-110 deg
    assert err.code == OUT_OF_RANGE
    assert "joint joint_2 of arm takes angles in [-1.92, 1.92] rad ([-110.0, 110.0] deg), " \
           "not 2" in str(err)
    err = refused("set_positions", 0.0, 0.0, 1.3, 0.0, 0.0, 0.0)  # joint 3: -110..+70 deg
    assert "[-110.0, 70.0] deg" in str(err)
    assert "not nan" in str(refused("set_positions", math.nan, 0, 0, 0, 0, 0))
    err = refused("set_positions", 0, 0, 0, 0, 0, 0, 1.5)
    assert err.code == OUT_OF_RANGE and "speed fraction must be within [0.001, 1]" in str(err)
    err = refused("set_positions", 0, 0, 0, 0, 0)
    assert err.code == WRONG_ARITY and "6 angles" in str(err)
    assert refused("set_positions", *[0.0] * 6, arm=LWA).code == WRONG_ARITY
    assert row("set_positions", *[0.1] * 7, arm=LWA)[:3] == (1.0, 0.5, 1.0)


def test_rates_beyond_a_joints_top_speed_are_refused_naming_it():
    err = refused("set_velocities", 0.0, 0.0, 0.0, 0.0, 0.0, 7.5)  # joint 6: 420 deg/s
    assert err.code == OUT_OF_RANGE
    assert "joint joint_6 of arm turns at most 7.33 rad/s (420 deg/s), not 7.5" in str(err)
    assert refused("set_velocities", 0.1, 0.1).code == WRONG_ARITY
    assert row("set_velocities", 4.3, 0, 0, 0, 0, 0)[:3] == (2.0, 0.0, 1.0)


def test_a_trajectory_faster_than_the_arm_is_refused_naming_the_segment_and_joint():
    fast = (0.5, 0, 0, 0, 0, 0, 0, 0.6, 1.0, 0, 0, 0, 0, 0)  # joint 1: 1 rad in 0.1 s
    err = refused("set_trajectory", *fast)
    assert err.code == OUT_OF_RANGE and "segment 1-2" in str(err)
    assert "joint joint_1 of arm turns at most 4.363 rad/s (250 deg/s), not 10" in str(err)
    err = refused("set_trajectory", 0.5, 0, 0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0, 0)
    assert "strictly increasing" in str(err)
    err = refused("set_trajectory", 1.0, 0, 3.0, 0, 0, 0, 0)
    assert "waypoint 1" in str(err) and "joint_2" in str(err)
    assert refused("set_trajectory", 1.0, 0, 0).code == WRONG_ARITY
    assert refused("set_trajectory", *[1.0] * 63).code == WRONG_ARITY  # 9 waypoints
    ok = row("set_trajectory", 1.0, 0.5, 0, 0, 0, 0, 0, 2.0, 1.0, 0, 0, 0, 0, 0)
    assert ok[:3] == (3.0, 0.0, 2.0) and ok[3:5] == (1.0, 0.5)


def test_a_robot_without_an_arm_is_told_so():
    with pytest.raises(ProtocolError, match="has no arm"):
        Joints.command_row(command("stop"), (), {}, RobotInfo("r1", "single"))


# -- joints: set points ---------------------------------------------------------------------------

def test_a_synchronised_move_starts_in_the_first_step_and_ends_at_move_time():
    physics = Physics([IRB120])
    q0 = physics.q[0, :6].copy()
    q1 = np.array([0.5, 0.3, -0.2, 0.1, 1.0, 0.0])
    steps, _ = run(physics, [row("set_positions", *q1, 1.0)], 40)
    t = move_time(IRB120, q0, q1, 1.0)  # joint 1 at 250 deg/s: 0.115 s
    dt = 0.01
    assert np.allclose(steps[0, :6], q0 + (q1 - q0) * dt / t)  # moving in the first step
    k = math.ceil(t / dt)
    assert not np.allclose(steps[k - 2, :6], q1) and np.allclose(steps[k - 1, :6], q1)
    rates = np.abs(np.diff(steps[:k, :6], axis=0)) / dt
    assert (rates <= IRB120.speeds * (1 + 1e-9)).all()  # no joint beyond its top speed
    assert np.allclose(physics.sent[0][2][0, :6], (q1 - q0) / t)  # rate set points too
    assert np.allclose(physics.sent[-1][2], 0.0)


def test_the_same_command_again_goes_on_and_a_new_one_starts_from_where_the_arm_is():
    physics = Physics([IRB120])
    cmd = row("set_positions", 1.0, 0, 0, 0, math.pi / 2, 0, 0.5)
    extra = {}
    first, _ = run(physics, [cmd], 5, extra=extra)
    again, _ = run(physics, [cmd], 5, extra=extra, t0=0.05)  # the client's repeat()
    path = np.concatenate([first, again])[:, 0]
    assert np.allclose(np.diff(path), path[0])  # one move at one rate: not restarted
    other = row("set_positions", 0.0, 0, 0, 0, math.pi / 2, 0, 0.5)
    back, _ = run(physics, [other], 3, extra=extra, t0=0.10)
    assert back[0, 0] < path[-1] and back[2, 0] < back[1, 0]  # turned back at once
    held, _ = run(physics, [row("stop")], 3, extra=extra, t0=0.13)
    assert np.allclose(held[:, 0], back[-1, 0])
    waited, _ = run(physics, [row("wait")], 2, extra=extra, t0=0.16)
    assert np.allclose(waited[:, 0], back[-1, 0])  # wait changes nothing (still stopped)


def test_a_trajectory_passes_its_waypoints_at_their_times():
    physics = Physics([LWA], q=[np.zeros(7)])
    w1, w2 = np.full(7, 0.2), np.array([0.4, -0.2, 0.1, 0.5, 0.0, 0.3, -0.1])
    steps, _ = run(physics, [row("set_trajectory", 0.5, *w1, 1.0, *w2, arm=LWA)], 120)
    assert np.allclose(steps[49, :7], w1)  # after step k the set point is at t = (k+1) dt
    assert np.allclose(steps[24, :7], w1 / 2)
    assert np.allclose(steps[74, :7], (w1 + w2) / 2)
    assert np.allclose(steps[99:, :7], w2)


def test_a_first_segment_too_fast_for_the_arm_starts_the_trajectory_later():
    physics = Physics([LWA], q=[np.zeros(7)])
    w1 = np.array([1.0, 0, 0, 0, 0, 0, 0])  # 1 rad at 2 rad/s takes 0.5 s, asked in 0.1 s
    steps, _ = run(physics, [row("set_trajectory", 0.1, *w1, 0.3, *w1, arm=LWA)], 80)
    assert np.allclose(np.diff(steps[:50, 0]), 0.02)  # top speed, 2 rad/s
    assert np.allclose(steps[49:, 0], 1.0)


def test_rates_are_held_until_a_joint_limit():
    physics = Physics([IRB120], q=[np.array([2.8, 0, 0, 0, 0, 0])])
    steps, _ = run(physics, [row("set_velocities", 1.0, 0, 0, 0, 0, -0.5)], 30)
    assert steps[0, 0] == pytest.approx(2.81) and steps[0, 5] == pytest.approx(-0.005)
    assert steps[-1, 0] == pytest.approx(IRB120.upper[0])  # stopped at +165 deg
    assert physics.sent[-1][2][0, 0] == 0.0 and physics.sent[-1][2][0, 5] == -0.5


def test_many_arms_move_in_one_call_each_from_its_own_plan():
    arms = [IRB120, MH5, LWA] * 3
    physics = Physics(arms)
    cmds = [row("set_positions", *(a.start + 0.2), arm=a) if i % 2 else row("wait", arm=a)
            for i, a in enumerate(arms)]
    run(physics, cmds, 60)
    assert physics.sent[0][0].tolist() == [1, 3, 5, 7]
    # once a move's last set point is sent the engine holds it: nothing more goes out
    assert 0 < len(physics.sent) < 60 and np.allclose(physics.sent[-1][2], 0.0)
    for i, a in enumerate(arms):
        assert np.allclose(physics.q[i, :a.dof], a.start + (0.2 if i % 2 else 0.0))


def test_a_cleared_command_drops_the_plan():
    physics = Physics([IRB120])
    extra = {}
    run(physics, [row("set_positions", 0.3, 0, 0, 0, 1.0, 0)], 2, extra=extra)
    physics.sent.clear()
    run(physics, [np.zeros(len(Joints.command_fields))], 3, extra=extra, t0=0.02)
    assert physics.sent == []  # restored layout: the engine holds the arm's start


def test_joints_reads_angles_rates_and_torques_and_records_the_angles():
    physics = Physics([MH5, LWA])
    out = read(Joints, frame(physics))
    assert out.shape == (2, 22) and out[0, 0] == 6 and out[1, 0] == 7
    assert np.allclose(out[0, 1:7], MH5.start) and out[0, 7] == 0.0
    assert [c.name for c in Joints.columns] == [f"arm_q{j}" for j in range(1, 8)]
    assert all(c.stream and c.unit == 1e-4 for c in Joints.columns)
    assert [c.field for c in Joints.columns] == list(range(1, 8))


# -- tool, pose ------------------------------------------------------------------------------------

def test_the_tool_reading_is_the_models_forward_kinematics_on_its_base():
    yaw = 0.7
    state = np.zeros((2, 13))
    state[:, :3] = [[1.0, 2.0, 0.75], [-1.0, 0.5, 0.0]]
    state[:, 3], state[:, 6] = math.cos(yaw / 2), math.sin(yaw / 2)
    physics = Physics([IRB120, MOBILE_LWA])
    physics.q[0, :6] = [0.3, 0.2, -0.4, 0.5, 1.0, -0.2]
    out = read(Tool, frame(physics, state3d=state))
    for i, arm in enumerate((IRB120, MOBILE_LWA)):
        want = world_frames(arm, state[i], physics.q[i, :arm.dof])[-1]
        assert np.allclose(out[i, :3], want[:3, 3])
        from coopsim.model.arm import quat_matrix
        assert np.allclose(quat_matrix(out[i, 3:]), want[:3, :3])
    pose = read(Pose, frame(physics, state3d=state))
    assert np.allclose(pose[:, :3], state[:, :3]) and np.allclose(pose[:, 3], yaw)


def test_tool_arities_are_checked_before_any_solving():
    from coopsim.plugins.modules.tool import _target

    with pytest.raises(ProtocolError) as err:
        _target("move_to", IRB120, (0.3, 0.0, 0.4, 1.0, 2.0))
    assert err.value.code == WRONG_ARITY
    with pytest.raises(ProtocolError) as err:
        _target("ik", IRB120, (0.3, 0.0, 0.4, 0.5))
    assert err.value.code == WRONG_ARITY
    with pytest.raises(ProtocolError) as err:
        _target("move_to", IRB120, (0.3, 0.0, 0.4, 0.0))
    assert err.value.code == OUT_OF_RANGE and "[0.001, 1]" in str(err.value)
    position, rotation, speed = _target("move_to", IRB120, (0.3, 0.0, 0.4, math.pi, 0, 0, 1))
    assert speed == 1.0 and np.allclose(rotation @ [0, 0, 1], [0, 0, -1])


def test_quaternions_of_any_turn_one_arm_or_many():
    from coopsim.model.arm import quat_matrix, rpy_matrix
    from coopsim.plugins.modules.tool import matrix_quat

    rng = np.random.default_rng(3)
    turns = [rpy_matrix(rng.uniform(-3.2, 3.2, 3)) for _ in range(50)]
    turns += [rpy_matrix((math.pi, 0.0, yaw)) for yaw in np.linspace(-3.0, 3.0, 7)]  # half turns
    for batch in (np.array(turns), np.array(turns[-3:])):  # numpy's path and Python's
        quats = matrix_quat(batch)
        assert (quats[:, 0] >= 0).all() and np.allclose(np.linalg.norm(quats, axis=1), 1.0)
        assert all(np.allclose(quat_matrix(q), r) for q, r in zip(quats, batch))


def test_an_arm_without_a_base_is_refused_with_a_sentence():
    from dataclasses import replace

    assembly = ROBOT_TYPES.get("irb120").build(RobotSpec("irb120", "a1", (0.0, 0.0, 0.0)))
    lost = replace(assembly, arms=(replace(IRB120, base="table"),))
    with pytest.raises(ValueError, match="arm arm has no base: its base 'table' is not a body"):
        lost.validate()
    with pytest.raises(ValueError, match="has no base: name the body it is mounted on"):
        replace(IRB120, base="").validate()
