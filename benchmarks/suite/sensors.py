"""Sensing: one cast of every sonar ray of a swarm on each caster, and whole ticks of robots
with lidars, cameras or slow sonars (was benchmarks/raycast_bench.py, jitcast_bench.py,
sensors_bench.py)."""

from .common import Case, count, per_call_ms, sizes, swarm, threads, tick_ms, unit

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
