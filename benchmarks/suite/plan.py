"""The step as a plan: the Python calls a tick makes must not grow with the robots
(was benchmarks/step_plan_bench.py's ``calls``; its timed cases are aerial.Flight,
aerial.OneCrazyflie, arms.Pick, step.SmallWorld, step.Step, step.Threads; its crazyflow peer
is peers.py's)."""

import sys

from .common import Case, build, count, flyers, sizes, unit


class Calls(Case):
    """Python calls per tick (``sys.setprofile`` 'call' events over 10 ticks / 10) of N
    hovering Crazyflies on the aerial engine (goal: the same count at 1 and 1,000: O(module
    kinds), not O(robots))."""

    params = (sizes(1, 1000, smoke=2),)
    param_names = ("drones",)

    def setup(self, drones):
        self.stepper = build(flyers(drones), warm=10)  # its kernels loaded as it was built
        for _ in range(10):
            self.stepper.tick()

    @unit("calls/tick")
    def track_calls(self, drones):
        calls, ticks = [0], count(10)

        def seen(frame, event, arg):
            if event == "call":
                calls[0] += 1
        sys.setprofile(seen)
        try:
            for _ in range(ticks):
                self.stepper.tick()
        finally:
            sys.setprofile(None)
        return calls[0] / ticks
