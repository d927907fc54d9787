"""Arms on the mujoco engine: whole ticks of ``irb120`` arms picking cubes, and inverse
kinematics (was benchmarks/arm_bench.py, arm_modules_bench.py, arm_goals_bench.py's figures,
ik_bench.py, step_plan_bench.py's arm1 and arm100)."""

import math

from .common import Case, arms, build, count, per_call_ms, sizes, threads, tick_ms, unit


class Pick(Case):
    """N ``irb120`` arms under ``arm_pick`` (modules joints, tool, gripper, force, pose), one
    thread, dt 0.001 s for one arm and 0.002 s for more: ms per tick (goals: one arm >= 3x
    real time, 100 arms >= 0.5x)."""

    params = (sizes(1, 100, smoke=1),)
    param_names = ("arms",)

    def setup(self, n):
        threads(1)
        self.stepper = build(arms(n, dt=0.001 if n == 1 else 0.002), warm=20)

    @unit("ms")
    def track_ms(self, n):
        return tick_ms(self.stepper, max(5, 1000 // n))


class Ik(Case):
    """The compiled IK solver (``tool.ik``'s path) on the IRB 120: tool pointing down within
    reach, from the start pose, ms per solve."""

    def setup(self):
        import numpy as np

        from coopsim.model.arm import rpy_matrix
        from coopsim.model.ikkernel import solve
        from coopsim.plugins.robots.arms import IRB120

        rotation = rpy_matrix((math.pi, 0.0, 0.0))
        q0 = np.asarray(IRB120.start, dtype=float)
        self.solve = lambda: solve(IRB120, (0.35, 0.1, 0.25), rotation, q0, 1e-4, 1e-3)
        self.solve()  # compiled or loaded from the cache

    @unit("ms")
    def track_ms(self):
        return per_call_ms(self.solve, 500, blocks=7)
