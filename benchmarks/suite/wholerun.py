"""Whole runs: a headless lockstep ``coopsim run`` as the command builds it (its servers up,
nobody attached, the progress watcher following it), by the process's CPU time a step, against
the bare ``Stepper.tick`` of the same world in the same process (a run nobody
listens to costs what its tick costs)."""

import resource

from .common import (Case, alternate, count, flyers, kernels_ready, root, sizes, threads,
                     unit)


def _cpu() -> float:
    """The process's CPU time so far, s (every thread: the servers' too)."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _spec(name: str):
    """``scenarios/<name>.scenario``, or ``flyers_<n>``: n Crazyflies hovering on ``aerial``
    under the flight driver every step, 500 Hz physics (:func:`.common.flyers`, the
    whole-run rows)."""
    from coopsim.app.run import load_scenario_or_world

    if name.startswith("flyers_"):
        return flyers(int(name.split("_")[1]))
    return load_scenario_or_world(str(root() / "scenarios" / f"{name}.scenario"))


def whole_us(spec, steps: int) -> float:
    """us of the process's CPU a step of a headless lockstep :class:`~coopsim.app.run.Run`
    of ``spec`` (network up, no controllers, unpaced) followed by ``watch`` to its end, start-up
    left out (the clock starts once the world is built and warm)."""
    from coopsim.app.run import Run, RunOptions, watch

    dt = spec.settings.dt
    options = RunOptions(mode="lockstep", port=0, controllers=False, speed=0)
    with Run(spec, options) as live:
        stepper = live.stepper
        kernels_ready()
        for _ in range(20):  # kernels loaded, first-use costs out of the figure
            stepper.tick()
        first, start = stepper.snapshot.step, _cpu()
        stepper.start(duration=stepper.snapshot.time + steps * dt - dt / 2)
        watch(stepper)
        return (_cpu() - start) / max(1, stepper.snapshot.step - first) * 1e6


def tick_us(spec, steps: int) -> float:
    """us of CPU a bare ``Stepper.tick`` of ``spec`` (no network, no watcher), the same way."""
    from coopsim.app.run import Run, RunOptions

    stepper = Run(spec, RunOptions(mode="lockstep", network=False, controllers=False)).stepper
    kernels_ready()
    for _ in range(20):
        stepper.tick()
    start = _cpu()
    for _ in range(steps):
        stepper.tick()
    return (_cpu() - start) / steps * 1e6


class Headless(Case):
    """``scenarios/<name>.scenario`` (or ``flyers_<n>``, :func:`_spec`) run headless in
    lockstep with nobody attached: us of the process's CPU a step (goal for ``one_robot``:
    <= 50), x real time by that CPU (goals: ``crazyflie`` and ``flyers_1`` >= 10,
    ``flyers_1000`` >= 2), and over the bare tick (goal: ~1), blocks alternating."""

    params = (sizes("one_robot", "crazyflie", "flyers_1", "flyers_1000", smoke="one_robot"),)
    param_names = ("scenario",)
    timeout = 900

    def setup(self, scenario):
        threads(1)
        spec = _spec(scenario)
        steps = count(4000 if scenario == "one_robot" else 200 if scenario == "flyers_1000"
                      else 2000, 20)
        self.dt = spec.settings.dt
        self.whole, self.tick = alternate(lambda: whole_us(spec, steps),
                                          lambda: tick_us(spec, steps), 3)

    @unit("us")
    def track_cpu_us_per_step(self, scenario):
        return self.whole

    @unit("x real time")
    def track_x_real_time(self, scenario):
        return self.dt * 1e6 / self.whole

    @unit("x tick")
    def track_over_tick(self, scenario):
        return self.whole / self.tick
