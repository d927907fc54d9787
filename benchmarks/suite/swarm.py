"""Swarm scale: the engine's bare step beside the whole tick, and a thousand robots tracking
paths in real time (was benchmarks/swarmscale_bench.py; the whole ticks at 5,000 and 100,000
robots are ``step.Step``)."""

from .common import Case, build, count, grid, per_call_ms, realtime, sizes, swarm, threads, unit


class Bare(Case):
    """5,000 driving robots on pymunk (10,000 on kinematic): the engine's step alone
    (``engine.step(dt)``), ms; whole tick / bare step is the sensing and bookkeeping's share
    (goal on pymunk: <= 4, the whole tick is ``step.Step``)."""

    params = (["pymunk", "kinematic"],)
    param_names = ("engine",)

    def setup(self, engine):
        threads(1)
        sim = swarm(count(5000 if engine == "pymunk" else 10000, 2), engine).sim
        self.step = lambda: sim.world.engine.step(sim.dt)

    @unit("ms")
    def track_ms(self, engine):
        return per_call_ms(self.step, 10)


class Tracking(Case):
    """1,000 ``holonomic`` robots on pymunk, each tracking an eight (the batch ``tracking``
    driver, 11-ray sonar), in real time at 50 Hz for 10 s: late % (goal < 1 %)."""

    params = (sizes(1000, smoke=2),)
    param_names = ("robots",)

    def setup(self, n):
        from dataclasses import replace

        from coopsim.app.bench import swarm_scenario
        from coopsim.model.specs import DriverSetting, FloorSpec, RobotSpec, WorldSpec

        threads(None)
        drive = (DriverSetting("tracking", (("shape", "eight"), ("size", 2.0),
                                            ("period", 12.0))),)
        points = grid(n, 6.0)
        robots = tuple(RobotSpec("holonomic", f"q{k}", (x, y, 0.0), drivers=drive)
                       for k, (x, y) in enumerate(points))
        side = 2 * max(abs(v) for p in points for v in p) + 8.0
        self.stepper = build(replace(swarm_scenario(1), robots=robots,
                                     world=WorldSpec(FloorSpec(side, side))), mode="realtime")

    @unit("% late")
    def track_late_percent(self, n):
        return realtime(self.stepper, 10.0)[0]

