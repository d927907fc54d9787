"""Sensing: one cast of every sonar ray of a swarm on each caster, and whole ticks of robots
with lidars, cameras or slow sonars (was benchmarks/raycast_bench.py, jitcast_bench.py,
sensors_bench.py)."""

import math
import statistics
import time

from .common import Case, build, count, grid, per_call_ms, root, sizes, swarm, threads, tick_ms, \
    unit

#: case -> (robot type, engine, robots, (module, parameter, value) on every robot)
WORLDS = {
    "lidar": ("turtlebot3", "pymunk", 100, (("lidar", "rate", 5.0),)),
    "camera": ("epuck", "pymunk", 1000, (("camera", "rate", 10.0),)),
    "sonar_10hz": (None, "kinematic", 10000, (("sonar", "rate", 10.0),)),
}


class Raycast(Case):
    """The 11 sonar rays (2 m) of each of 1,000 robots in ``coopsim bench step``'s arena cast
    at once by the caster, one thread: us per ray."""

    params = (["jit"],)
    param_names = ("caster",)

    def setup(self, caster):
        import numpy as np

        from coopsim.plugins.modules.sonar import ANGLES

        threads(1)
        n = count(1000, 2)
        sim = swarm(n, "kinematic", caster=caster, warm=1).sim
        frame = sim._frame(sim.world.engine.robot_state(), {}, geometry=True)
        rows, reach = np.arange(n), np.full(n, 2.0)
        self.rays = n * len(ANGLES)
        self.cast = lambda: frame.geometry.cast_fan(rows, ANGLES, reach)

    @unit("us/ray")
    def track_us_per_ray(self, caster):
        return per_call_ms(self.cast, 20) * 1e3 / self.rays


class Sensors(Case):
    """Whole ticks, one thread: 100 ``turtlebot3`` with 360-beam lidars at 5 Hz, 1,000
    ``epuck`` with cameras at 10 Hz (pymunk), 10,000 ``single`` with sonar at 10 Hz
    (kinematic); robots staggered over the rate's steps. ms per tick."""

    params = (list(WORLDS),)
    param_names = ("world",)

    def setup(self, world):
        kind, engine, n, params = WORLDS[world]
        threads(1)
        self.stepper = swarm(count(n, 2), engine, robot_type=kind, params=params, warm=10)

    @unit("ms")
    def track_ms(self, world):
        return tick_ms(self.stepper, 20)


class PluginKernel(Case):
    """What a plugin kind with a compiled kernel costs a robot against a built-in doing the
    same work: examples/plugin-kernel's ``beacon`` (range and bearing to a point, noise) and
    ``target`` (range and bearing to the one target, noise), each on ``single``'s robot with
    ``motors`` alone, on the kinematic engine, one thread; the ticks of the three worlds
    alternate.
    The ratio of their per-robot costs over the bare world's tick (goal: <= 1.2)."""

    params = (sizes(100, 1000, smoke=2),)
    param_names = ("robots",)

    def setup(self, robots):
        threads(1)
        self.worlds = [_kernel_world(robots, kind) for kind in ("", "target", "beacon")]

    @unit("x built-in")
    def track_ratio(self, robots):
        ticks = count(max(40, 40000 // robots), 1)
        cpu = [[], [], []]  # s of process CPU a tick: bare, target, beacon
        for _ in range(count(25, 1)):
            for stepper, out in zip(self.worlds, cpu):
                t0 = time.process_time()
                for _ in range(ticks):
                    stepper.tick()
                out.append((time.process_time() - t0) / ticks)
        # each pass's extra over the bare world's tick of that pass: a slow spell of the
        # machine spoils a pass, not the medians
        target = statistics.median(t - b for b, t, _ in zip(*cpu))
        beacon = statistics.median(k - b for b, _, k in zip(*cpu))
        return beacon / target if target > 0 else math.nan


def _kernel_world(n: int, kind: str):
    """``n`` static ``single`` robots carrying ``motors`` alone, plus module ``kind`` (noise 0.01),
    on a grid 1.5 m apart, one red target, kinematic engine: a stepper, 20 ticks taken."""
    import sys

    from coopsim.model.plugins import MODULES, ROBOT_TYPES
    from coopsim.model.specs import (FloorSpec, ParamSetting, RobotSpec, ScenarioSpec,
                                     Settings, TargetSpec, WorldSpec)
    from coopsim.plugins.robots.single import Single

    if "beacon" not in MODULES:  # as its entry point registers it once installed
        sys.path.insert(0, str(root() / "examples" / "plugin-kernel"))
        from coopsim_beacon.modules import Beacon

        MODULES.register("beacon")(Beacon)
    label = f"bench_{kind or 'bare'}"
    if label not in ROBOT_TYPES:  # single's robot with these modules
        modules = ("motors",) + ((kind,) if kind else ())
        ROBOT_TYPES.register(label)(type(label, (Single,), {"label": label, "modules": modules}))
    params = (ParamSetting(kind, "noise", 0.01),) if kind else ()
    side = math.sqrt(n) * 1.5 + 4.0
    robots = tuple(RobotSpec(label, f"r{k}", (x, y, 0.0), params=params)
                   for k, (x, y) in enumerate(grid(n, 1.5)))
    return build(ScenarioSpec(WorldSpec(FloorSpec(side, side)), robots=robots,
                              targets=(TargetSpec("red", (1.0, 1.0, 0.0)),),
                              settings=Settings(dt=0.02, mode="lockstep", seed=1,
                                                engine="kinematic")), warm=20)
