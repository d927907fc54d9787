"""Range sensing in 3D: lidars with vertical channels cast against the 3D
geometry on the mujoco engine (``mujoco.mj_multiRay``), whole steps beside the same world
whose lidars cast nothing new (their rate far below the run's)."""

from .common import Case, count, per_call_ms, sizes, swarm, threads, tick_ms, unit, x_real_time

DT = 0.02  # s: the arena's step (coopsim bench step's world)
#: the issue's lidar: 16 channels x 360 beams at 10 Hz
LIDAR = (("lidar", "channels", 16), ("lidar", "beams", 360), ("lidar", "rate", 10.0),
         ("lidar", "max_range", 8.0))


def _world(robots: int, lidar: tuple, engine: str = "mujoco"):
    """``robots`` driving TurtleBot3s on ``engine`` in the bench arena (no static obstacles:
    the 3D start check), each lidar set by ``lidar``; 10 ticks taken."""
    return swarm(robots, engine, robot_type="turtlebot3", params=lidar, obstacles=False,
                 warm=10)


class Lidar3D(Case):
    """10 TurtleBot3s on mujoco, each with a 16 x 360 lidar at 10 Hz (5,760 rays a scan,
    57,600 rays a second a robot), dt 0.02 s, one thread: ms per tick and x real time (the
    issue's goal: >= 1); ``idle``: the same world, its lidars at 0.01 Hz (one scan in 100 s:
    the cost of everything but the casting)."""

    params = (sizes(10, smoke=2), ["cast", "idle"])
    param_names = ("robots", "lidar")
    engine = "mujoco"

    def setup(self, robots, lidar):
        threads(1)
        rate = 10.0 if lidar == "cast" else 0.01
        self.stepper = _world(robots, LIDAR[:2] + (("lidar", "rate", rate),) + LIDAR[3:],
                              self.engine)
        _warm_aerial_rays()
        self.ms = tick_ms(self.stepper, 50)

    @unit("ms")
    def track_ms(self, robots, lidar):
        return self.ms

    @unit("x real time")
    def track_x_real_time(self, robots, lidar):
        return x_real_time(DT, self.ms)


class Rays(Case):
    """One 16 x 360 scan of each of 10 TurtleBot3s on mujoco cast at once (the ``lidar``'s
    ``measure``, noiseless): us per ray."""

    params = (sizes(10, smoke=2),)
    param_names = ("robots",)

    def setup(self, robots):
        import numpy as np

        from coopsim.plugins.modules.lidar import Lidar

        threads(1)
        sim = _world(robots, LIDAR).sim
        frame = sim._frame(sim.world.engine.robot_state(), {}, geometry=False)
        rows = np.arange(robots)
        values = {k: v for k, v in sim.params.values["lidar"].items()}
        rng = np.random.default_rng(0)
        self.rays = robots * 16 * 360
        self.cast = lambda: Lidar.measure(frame, rows, values, None, rng)

    @unit("us/ray")
    def track_us_per_ray(self, robots):
        return per_call_ms(self.cast, count(10, 1)) * 1e3 / self.rays


class AerialLidar3D(Lidar3D):
    """:class:`Lidar3D` on the ``aerial`` engine (coopsim.physics.aerial.rays: one compiled cast
    of every ray against the floor, its walls and the other robots): 10 driving TurtleBot3s,
    each with a 16 x 360 lidar at 10 Hz, dt 0.02 s, one thread (the goal: >= 1x real time)."""

    engine = "aerial"


class AerialAltimeters(Case):
    """N hovering Crazyflies on the ``aerial`` engine (500 Hz, ``flight``; altimeters every
    step): ms per tick with the altimeters cast in 3D (against the floor, the other drones...)
    and with the same world casting in the floor slice as before (``ranges3d = False``),
    measured alternately in one process; ``track_ratio`` is 3D / slice."""

    params = (sizes(1000, smoke=2),)
    param_names = ("drones",)

    def setup(self, drones):
        from .common import build, flyers

        threads(1)
        _warm_aerial_rays()
        self.steppers = {"3d": build(flyers(drones), warm=10),
                         "slice": build(flyers(drones), warm=10)}
        self.steppers["slice"].sim.world.engine.ranges3d = False
        ticks = count(max(5, 5000 // drones), 5)
        self.ms = {"3d": [], "slice": []}
        for _ in range(count(3)):
            for key, stepper in self.steppers.items():
                self.ms[key].append(tick_ms(stepper, ticks))

    @unit("ms")
    def track_ms_3d(self, drones):
        return min(self.ms["3d"])

    @unit("ms")
    def track_ms_slice(self, drones):
        return min(self.ms["slice"])

    @unit("x")
    def track_ratio(self, drones):
        return min(self.ms["3d"]) / min(self.ms["slice"])


def _warm_aerial_rays() -> None:
    """Load the aerial ray kernel now (a run loads it as its world is made), so the case times
    its calls and not its compile."""
    from coopsim.physics.aerial import raykernel as ark

    if ark.WARM is not None:
        ark._load()
        ark.WARM.ready = True
