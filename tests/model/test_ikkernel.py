"""The compiled inverse kinematics (coopsim.model.ikkernel): it reaches what SciPy's bounded
least squares reaches, keeps the joints within their limits, finds the same nearest point for a
point out of reach, and never spends more than its budget (iterations; no restart after its
time); the same bits twice."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model.arm import solve_ik, tool_pose
from coopsim.model.ikkernel import CHUNK, Budget, solve
from coopsim.plugins.robots.arms import IRB120, MH5

TOL, ANGLE_TOL = 1e-3, 1e-2


@pytest.mark.parametrize("arm", [IRB120, MH5], ids=["irb120", "mh5"])
def test_random_poses_within_the_limits_are_reached(arm):
    rng = np.random.default_rng(5)
    lo, hi = arm.lower, arm.upper
    for k in range(40):
        goal = tool_pose(arm, lo + rng.random(arm.dof) * (hi - lo))
        rotation = goal[:3, :3] if k % 2 else None
        fit = solve(arm, goal[:3, 3], rotation, arm.start, TOL, ANGLE_TOL)
        assert fit.ok, (k, fit)
        assert np.all(fit.q >= lo) and np.all(fit.q <= hi)
        reached = tool_pose(arm, fit.q)
        assert np.linalg.norm(reached[:3, 3] - goal[:3, 3]) == pytest.approx(fit.position_error)
        assert fit.position_error <= TOL * 1e-2  # converged well inside the tolerance


def test_out_of_reach_the_nearest_point_is_scipys_and_the_budget_holds():
    far = (2.0, 0.0, 0.3)  # beyond the chain's full stretch: two restarts do
    fit = solve(IRB120, far, None, IRB120.start, TOL, ANGLE_TOL)
    exact = solve_ik(IRB120, far)
    assert not fit.ok and fit.position_error == pytest.approx(exact.position_error, abs=1e-3)
    assert fit.seeds == 2 and not fit.cut
    under = (0.0, 0.0, -0.4)  # within the stretch, below the pedestal: every restart runs
    full = solve(IRB120, under, None, IRB120.start, TOL, ANGLE_TOL)
    assert not full.ok and full.iterations <= Budget().iterations
    assert full.position_error == pytest.approx(solve_ik(IRB120, under).position_error,
                                                abs=2e-3)
    tight = solve(IRB120, under, None, IRB120.start, TOL, ANGLE_TOL, Budget(iterations=50))
    assert tight.iterations <= 50 and tight.cut and tight.seeds == 2
    timed = solve(IRB120, under, None, IRB120.start, TOL, ANGLE_TOL, Budget(seconds=0.0))
    assert timed.seeds == CHUNK and timed.cut  # no restarts begin after the time cap


def test_the_same_bits_twice_and_the_angles_now_come_first():
    down = np.diag([1.0, -1.0, -1.0])
    one = solve(IRB120, (0.35, 0.1, 0.2), down, IRB120.start, TOL, ANGLE_TOL)
    two = solve(IRB120, (0.35, 0.1, 0.2), down, IRB120.start, TOL, ANGLE_TOL)
    assert one.q.tobytes() == two.q.tobytes() and one.iterations == two.iterations
    again = solve(IRB120, (0.35, 0.1, 0.2), down, one.q, TOL, ANGLE_TOL)
    assert again.ok and again.seeds == 1 and again.iterations == 0  # already there
    assert math.isclose(again.position_error, one.position_error)
