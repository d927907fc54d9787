"""Soak: memory over a long live run, and what inserting and removing robots leaves behind
(was benchmarks/soak_bench.py; its hostile, SIGKILLed client crowd is not carried over: the
reliability tests under tests/net/ send such requests)."""

import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from .common import Case, count, unit


def _rss() -> int:
    """This process's resident set size, bytes."""
    with open("/proc/self/status") as status:
        return int(next(x for x in status if x.startswith("VmRSS:")).split()[1]) * 1024


def _fds() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


class LongRun(Case):
    """A whole live run (``coopsim.app.run.Run``: stepper, name server, /sim, robot hub, state
    stream) of 100 reference robots each driven by an in-process ``wander`` driver, recording
    every step, dt 0.01 s, unpaced: resident memory sampled every 1,000 steps after a 5,000-step
    warm-up; the least-squares growth, bytes per step (goal < 1)."""

    timeout = 1200

    def setup(self):
        from coopsim.app.bench import swarm_scenario
        from coopsim.app.run import Run, RunOptions
        from coopsim.model.specs import DriverSetting

        base = swarm_scenario(count(100, 2), seed=3, dt=0.01)
        spec = replace(base, robots=tuple(replace(r, drivers=(DriverSetting("wander"),))
                                          for r in base.robots),
                       settings=replace(base.settings, mode="realtime", speed=0.0))
        steps, every, warm = count(40_000, 30), count(1000, 10), count(5000, 10)
        with tempfile.TemporaryDirectory() as tmp:
            options = RunOptions(port=0, controllers=False, record=str(Path(tmp) / "s.mcap"),
                                 mode="realtime", speed=0.0, duration=steps * 0.01 * 2)
            with Run(spec, options) as run:
                run.start()
                samples = []
                for target in range(warm, steps + 1, every):
                    run.stepper.wait_step(target - 1, 600.0)
                    samples.append((run.stepper.stats().steps, _rss()))
                run.stepper.stop()
        x, y = np.array(samples, dtype=float).T
        self.slope = float(np.polyfit(x, y, 1)[0]) if len(samples) > 2 else 0.0

    @unit("bytes/step")
    def track_rss_growth(self):
        return self.slope


class Churn(Case):
    """1,000 ``single`` robots inserted and removed through ``/sim`` (commands 16 and 18) of a
    live run, 100 at a time: what stays behind, file descriptors and resident MB."""

    def setup(self):
        from coopsim.app.run import Run, RunOptions
        from coopsim.client import Client
        from coopsim.model.specs import FloorSpec, ScenarioSpec, Settings, WorldSpec

        world = ScenarioSpec(WorldSpec(FloorSpec(24.0, 24.0)), settings=Settings(dt=0.01),
                             name="churn")
        batch = count(100, 2)
        with Run(world, RunOptions(port=0, controllers=False)) as run:
            run.stepper.pause()
            run.start()
            with Client(run.network.endpoint, timeout=60.0) as client:
                sim = client.sim()
                sim.status()
                fds, rss = _fds(), _rss()
                for start in range(0, count(1000, 4), batch):
                    names = [f"c{start + i}" for i in range(batch)]
                    for i, name in enumerate(names):
                        client.request(sim.endpoint, 16, f"{name} single",
                                       data=(-10.0 + 2.0 * (i % 10), -10.0 + 2.0 * (i // 10),
                                             0.0, 0.0))
                    for name in names:
                        client.request(sim.endpoint, 18, name)
                time.sleep(0.5)
                self.fds, self.mb = _fds() - fds, (_rss() - rss) / 2**20

    @unit("descriptors")
    def track_fds_left(self):
        return self.fds

    @unit("MB")
    def track_rss_left_mb(self):
        return self.mb
