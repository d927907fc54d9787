"""The ``tool`` reading's compiled forward kinematics (coopsim.model.armkernel): the same bits
as its Python source (what runs without numba), the numpy chain it replaces to within 1e-12,
and a mixed world of arm kinds read row by row by the kind's kernel (armkernels)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model import armkernel
from coopsim.plugins.modules import tool as tool_module
from coopsim.plugins.robots.arms import IRB120, LWA, MH5, MOBILE_LWA


def cases(arm, n: int, seed: int):
    """Random angles within the limits and bodies at random poses (unit quaternions)."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(arm.lower, arm.upper, (n, arm.dof))
    state = np.zeros((n, 13))
    state[:, :3] = rng.normal(size=(n, 3))
    quat = rng.normal(size=(n, 4))
    state[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return q, state


@pytest.mark.parametrize("arm", [IRB120, MH5, LWA, MOBILE_LWA], ids=lambda a: a.key + str(a.dof))
def test_the_kernel_is_its_python_source_bit_for_bit_and_the_numpy_chain(arm):
    q, state = cases(arm, 200, arm.dof)
    constants = tool_module._constants(arm)
    got = armkernel.run(*constants, state, q)
    plain = np.empty_like(got)
    source = getattr(armkernel.tool_poses, "py_func", armkernel.tool_poses)
    source(*constants, np.ascontiguousarray(state), np.sin(q), np.cos(q), plain)
    assert got.tobytes() == plain.tobytes()
    rot, pos = tool_module.world_tool(arm, state, q)
    assert np.allclose(got[:, :3], pos, rtol=0, atol=1e-12)
    want = tool_module.matrix_quat(rot)
    assert np.allclose(got[:, 3:], want, rtol=0, atol=1e-12)
    assert (got[:, 3] >= 0).all()


def test_half_turns_read_a_unit_quaternion():
    arm = IRB120
    q = np.zeros((3, arm.dof))
    q[:, 0] = [math.pi / 2, -math.pi / 2, 0.0]
    state = np.zeros((3, 13))
    state[:, 3] = 1.0
    state[2, 3:7] = [0.0, 0.0, 0.0, 1.0]  # the body turned by a half turn about z
    got = armkernel.run(*tool_module._constants(arm), state, q)
    assert np.allclose(np.linalg.norm(got[:, 3:], axis=1), 1.0)
    rot, pos = tool_module.world_tool(arm, state, q)
    assert np.allclose(got[:, :3], pos, atol=1e-12)


def test_the_tool_kernel_reads_mixed_arm_kinds_row_by_row_as_each_kinds_chain():
    """``tool``'s kernel over a world of several arm kinds and a robot without an arm (its
    chain per row: coopsim.model.armviews) gives each kind's forward kinematics bit for bit,
    and the origin and identity for the robot without one."""
    from coopsim.model.arm import MAX_JOINTS
    from coopsim.model.armviews import arm_chain
    from coopsim.plugins.modules.armkernels import tool_sense

    arms = (IRB120, None, LWA, MH5, IRB120)
    n = len(arms)
    arm = np.zeros((n, MAX_JOINTS, 3))
    state = np.zeros((n, 13))
    want = np.zeros((n, 7))
    want[:, 3] = 1.0
    for r, kind in enumerate(arms):
        q, s = cases(kind or IRB120, 1, r)
        state[r] = s[0]
        if kind is not None:
            arm[r, :kind.dof, 0] = q[0]
            want[r] = armkernel.run(*tool_module._constants(kind), s, q)[0]
    arm[1] = np.nan
    chain = arm_chain(arms)
    assert chain[0].tolist() == [6, 0, 7, 6, 6] and arm_chain(arms) is chain  # once a tuple
    rows = np.arange(n)
    out = np.empty((n, 7))
    tool_sense((arm, chain, state), rows, np.zeros((n, 3)), (), np.zeros((n, 0)), np.zeros(0),
               np.zeros((n, 7)), out)
    assert out.tobytes() == want.tobytes()


def plans(n: int, seed: int) -> tuple[dict, np.ndarray]:
    """Random joints plans (moves, trajectories, rates; some over, some under way)."""
    from coopsim.plugins.modules.joints import MAX_POINTS, POSITIONS, TRAJECTORY, VELOCITIES

    rng = np.random.default_rng(seed)
    count = rng.integers(2, MAX_POINTS + 2, n).astype(float)
    times = np.full((n, MAX_POINTS + 1), np.inf)
    for r in range(n):
        k = int(count[r])
        times[r, :k] = np.r_[0.0, np.cumsum(rng.uniform(0.01, 0.5, k - 1))]
    lo, hi = np.full((n, 7), -2.0), np.full((n, 7), 2.0)
    plan = {"times": times, "points": rng.uniform(-2, 2, (n, MAX_POINTS + 1, 7)),
            "count": count, "mode": rng.choice([POSITIONS, TRAJECTORY, VELOCITIES], n),
            "rates": rng.uniform(-3, 3, (n, 7)), "lo": lo, "hi": hi}
    e = rng.uniform(-0.1, 4.0, n)
    e[:5] = times[:5, 1]  # exactly at a waypoint
    return plan, e


def test_the_joints_plans_kernel_follows_each_plan():
    """The plans' set points: a plan over holds its last waypoint at rest; one under way
    lies on the segment between the waypoints around ``e`` and moves along it; a rate command
    moves at its rates within the joints' limits (at a limit: still)."""
    from coopsim.plugins.modules import joints

    plan, e = plans(500, 41)
    q, qd, done = joints._evaluate(plan, e)
    vel = plan["mode"] == joints.VELOCITIES
    assert 0 < done.sum() < 500 and not done[vel].any()  # some plans over, some under way
    for r in range(500):
        times, points = plan["times"][r], plan["points"][r]
        if vel[r]:
            want = np.clip(points[0] + plan["rates"][r] * e[r], -2.0, 2.0)
            assert np.allclose(q[r], want, rtol=0, atol=1e-12)
            inside = (want > -2.0) & (want < 2.0)
            assert np.array_equal(qd[r], np.where(inside, plan["rates"][r], 0.0))
        elif done[r]:
            last = int(plan["count"][r]) - 1
            assert np.array_equal(q[r], points[last]) and not qd[r].any()
        else:
            i = int(np.searchsorted(times[1:], e[r], side="right"))
            a, b = points[i], points[i + 1]
            frac = min(max((e[r] - times[i]) / (times[i + 1] - times[i]), 0.0), 1.0)
            assert np.allclose(q[r], a + frac * (b - a), rtol=0, atol=1e-9)
            assert np.allclose(qd[r], (b - a) / (times[i + 1] - times[i]), rtol=1e-9, atol=0)
