"""Flying robots: Crazyflies on the aerial engine at 500 Hz under the batch ``flight`` driver,
whole steps (was benchmarks/flight_goals_bench.py, aerial_bench.py, step_plan_bench.py's cf1,
cf1000, cf1000_rt)."""

from .common import Case, build, flyers, realtime, scenario, sizes, threads, tick_ms, unit, \
    us_per_agent_step


class Flight(Case):
    """N hovering Crazyflies (imu, mocap, altimeter), aerial engine, dt 0.002 s, one thread:
    us per drone-step (drone-steps/s = 1e6 / it; x real time = 2000 / (us x N))."""

    params = (sizes(1, 10, 100, 1000, smoke=2),)
    param_names = ("drones",)

    def setup(self, drones):
        threads(1)
        stepper = build(flyers(drones), warm=1)  # its kernels loaded as it was built
        for _ in range(10):
            stepper.tick()
        self.ms = tick_ms(stepper, max(5, 5000 // drones))

    @unit("us/drone-step")
    def track_us_per_drone_step(self, drones):
        return us_per_agent_step(drones, self.ms)


class FlightRealtime(Case):
    """1,000 hovering Crazyflies in real time for 5 s of sim time: the share of late steps
    (the goal: < 1 %)."""

    params = (sizes(1000, smoke=2),)
    param_names = ("drones",)

    def setup(self, drones):
        threads(None)
        self.stepper = build(flyers(drones), mode="realtime", warm=10)

    @unit("% late")
    def track_late_percent(self, drones):
        return realtime(self.stepper, 5.0)[0]


class OneCrazyflie(Case):
    """scenarios/crazyflie.scenario (one Crazyflie, mujoco engine, 500 Hz, ``flight`` every
    step): ms per tick (x real time = 2 / ms; the goal >= 10)."""

    def setup(self):
        threads(1)
        self.stepper = scenario("crazyflie", warm=20)

    @unit("ms")
    def track_ms(self):
        return tick_ms(self.stepper, 500)
