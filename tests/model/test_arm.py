"""The arm contract's kinematics (coopsim.model.arm): frames, Jacobian, bounded IK, checks."""

import math

import numpy as np
import pytest

from coopsim.model.arm import (ArmSpec, LinkSpec, base_in_world, frames, jacobian, limit_reason,
                               move_time, rotation_error, solve_ik, tool_pose, world_frames)
from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, ShapeSpec


def six_axis() -> ArmSpec:
    """An IRB 120-like chain: base yaw, shoulder, elbow, wrist roll, wrist pitch, flange roll."""
    y, x, z = (0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)
    links = (LinkSpec("j1", (0, 0, 0.29), axis=z, limits=(-2.87, 2.87), max_speed=4.36),
             LinkSpec("j2", (0, 0, 0), axis=y, limits=(-1.92, 1.92), max_speed=4.36),
             LinkSpec("j3", (0, 0, 0.27), axis=y, limits=(-1.92, 1.22), max_speed=4.36),
             LinkSpec("j4", (0.302, 0, 0.07), axis=x, limits=(-2.79, 2.79), max_speed=5.58),
             LinkSpec("j5", (0, 0, 0), axis=y, limits=(-2.09, 2.09), max_speed=5.58),
             LinkSpec("j6", (0.072, 0, 0), axis=x, limits=(-6.98, 6.98), max_speed=7.33))
    return ArmSpec("arm", links, tool=(0.05, 0.0, 0.0))


def test_frames_at_zero_stack_the_offsets():
    arm = six_axis()
    f = frames(arm, np.zeros(6))
    assert f.shape == (8, 4, 4)
    np.testing.assert_allclose(f[-1, :3, 3], (0.302 + 0.072 + 0.05, 0, 0.29 + 0.27 + 0.07))
    np.testing.assert_allclose(f[-1, :3, :3], np.eye(3), atol=1e-12)


def test_a_turn_of_the_first_joint_turns_the_tool_about_z():
    arm = six_axis()
    q = np.zeros(6)
    q[0] = math.pi / 2
    x, y, z = tool_pose(arm, q)[:3, 3]
    assert abs(x) < 1e-12 and y == pytest.approx(0.424) and z == pytest.approx(0.63)


def test_jacobian_matches_finite_differences():
    arm = six_axis()
    q = np.random.default_rng(3).uniform(-1, 1, 6)
    j = jacobian(arm, q)
    eps = 1e-7
    for i in range(6):
        dq = np.zeros(6)
        dq[i] = eps
        numeric = (tool_pose(arm, q + dq)[:3, 3] - tool_pose(arm, q - dq)[:3, 3]) / (2 * eps)
        np.testing.assert_allclose(j[:3, i], numeric, atol=1e-6)
        r = tool_pose(arm, q + dq)[:3, :3] @ tool_pose(arm, q - dq)[:3, :3].T
        w = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]) / 2
        np.testing.assert_allclose(j[3:, i], w / (2 * eps), atol=1e-6)


def test_ik_reaches_a_position_and_an_orientation_within_limits():
    arm = six_axis()
    down = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])  # tool x points down
    r = solve_ik(arm, (0.35, 0.1, 0.2), down)
    assert r.ok and r.position_error < 1e-4 and r.angle_error < 1e-3
    assert np.all(r.q >= arm.lower) and np.all(r.q <= arm.upper)
    np.testing.assert_allclose(tool_pose(arm, r.q)[:3, 3], (0.35, 0.1, 0.2), atol=1e-4)


def test_ik_says_how_far_off_an_unreachable_point_is():
    arm = six_axis()
    r = solve_ik(arm, (2.0, 0.0, 0.3))
    assert not r.ok
    assert r.position_error == pytest.approx(2.0 - 0.27 - 0.374 - 0.05, abs=0.1)


def test_rotation_error_of_half_a_turn():
    flip = np.diag([1.0, -1.0, -1.0])
    np.testing.assert_allclose(np.abs(rotation_error(np.eye(3), flip)), (math.pi, 0, 0),
                               atol=1e-6)


def test_limit_reason_names_the_joint_and_range():
    arm = six_axis()
    assert limit_reason(arm, np.zeros(6)) == ""
    q = np.zeros(6)
    q[2] = 1.5
    reason = limit_reason(arm, q)
    assert "joint j3 of arm" in reason and "[-1.92, 1.22] rad" in reason and "1.5" in reason


def test_move_time_is_set_by_the_slowest_joint():
    arm = six_axis()
    q1 = np.zeros(6)
    q1[0], q1[5] = 4.36, 7.33
    assert move_time(arm, np.zeros(6), q1) == pytest.approx(1.0)
    assert move_time(arm, np.zeros(6), q1, 0.5) == pytest.approx(2.0)


def test_world_frames_follow_the_body_it_stands_on():
    arm = ArmSpec("arm", six_axis().links, tool=(0.05, 0, 0), mount=(0.1, 0.0, 0.2))
    state = np.zeros(13)
    state[0:3] = 1.0, 2.0, 0.5
    state[3], state[6] = math.cos(math.pi / 4), math.sin(math.pi / 4)  # yaw 90 degrees
    np.testing.assert_allclose(base_in_world(arm, state)[:3, 3], (1.0, 2.1, 0.7), atol=1e-12)
    tip = world_frames(arm, state, np.zeros(6))[-1, :3, 3]
    np.testing.assert_allclose(tip, (1.0, 2.1 + 0.424, 0.7 + 0.63), atol=1e-12)


@pytest.mark.parametrize("change, words", [
    ({"links": ()}, "1 to 7 joints"),
    ({"home": (0.0,)}, "home needs 6 angles"),
    ({"base": ""}, "has no base"),
    ({"payload": 0.0}, "payload, reach and base mass"),
])
def test_a_bad_arm_is_refused_with_a_sentence(change, words):
    spec = dict(key="arm", links=six_axis().links)
    spec.update(change)
    with pytest.raises(ValueError, match=words):
        ArmSpec(**spec).validate()


def test_an_assembly_refuses_an_arm_on_a_body_it_lacks():
    body = BodySpec("base", "static", 0.0, (ShapeSpec("circle", radius=0.1),), (0.0, 0.0))
    member = MemberSpec("r", "base", ("joints",), 0.1, refs={"arm": "arm"})
    Assembly((member,), (body,), arms=(six_axis(),)).validate()
    lost = ArmSpec("arm", six_axis().links, base="pedestal")
    with pytest.raises(ValueError, match="arm arm has no base"):
        Assembly((member,), (body,), arms=(lost,)).validate()
