"""The step: time of one whole tick against the robot count on each engine, a small world's
tick, and the tick's scaling with the kernels' threads (was benchmarks/small_world_bench.py,
threads_bench.py, one_thread_bench.py, scaling_bench.py's swarms, ``coopsim bench step``)."""

from .common import SMOKE, Case, sizes, swarm, threads, tick_ms, unit

ENGINES = ("pymunk", "kinematic", "mujoco")


class Step(Case):
    """N driving robots of the reference type (11-ray sonar; on mujoco without the arena's
    obstacles, which its 3D start check refuses), one thread: ms per tick (x real
    time = 20 / ms; agent-steps/s = N x 1000 / ms: ``common.x_real_time``, ``agent_steps_per_s``)."""

    params = (list(ENGINES), sizes(1, 100, 1000, 5000, 10000, 100000, smoke=2))
    param_names = ("engine", "robots")

    def setup(self, engine, robots):
        if robots > {"pymunk": 5000, "mujoco": 1000}.get(engine, robots):
            raise NotImplementedError(f"{engine} is not built for {robots} robots")  # skipped
        threads(1)
        self.stepper = swarm(robots, engine, obstacles=engine != "mujoco")
        self.ms = tick_ms(self.stepper, max(2, 2000 // robots))

    @unit("ms")
    def track_ms(self, engine, robots):
        return self.ms


class SmallWorld(Case):
    """One ``single`` robot (7 modules, 11 sonar rays) on the kinematic engine: one tick, us
    (the goal: <= 20 us)."""

    def setup(self):
        threads(1)
        self.stepper = swarm(1, "kinematic", warm=50)

    @unit("us")
    def track_tick_us(self):
        return tick_ms(self.stepper, 2000, blocks=9) * 1e3


class Threads(Case):
    """10,000 robots on the kinematic engine with the kernels on 1 or 2 threads: ms per tick
    (speed-up = the 1-thread figure over the 2-thread one)."""

    params = (sizes(1, 2, smoke=2),)
    param_names = ("threads",)

    def setup(self, count):
        threads(count)
        self.stepper = swarm(2 if SMOKE else 10000, "kinematic")

    @unit("ms")
    def track_ms(self, count):
        return tick_ms(self.stepper, 10)


class Drivers(Case):
    """N robots of the reference type on the kinematic engine, each under its own in-process
    ``wander`` driver (Python called every step through the robot API, as a scenario's
    walkers), one thread: us per robot-step of the whole tick."""

    params = (sizes(10, 400, smoke=2),)
    param_names = ("robots",)

    def setup(self, robots):
        from dataclasses import replace

        from coopsim.app.bench import swarm_scenario
        from coopsim.model.specs import DriverSetting

        from .common import build

        threads(1)
        spec = swarm_scenario(robots)
        spec = replace(spec, robots=tuple(replace(r, drivers=(DriverSetting("wander"),))
                                          for r in spec.robots),
                       settings=replace(spec.settings, engine="kinematic"))
        self.ms = tick_ms(build(spec), max(2, 4000 // robots))

    @unit("us")
    def track_us_per_robot_step(self, robots):
        return self.ms * 1e3 / robots
